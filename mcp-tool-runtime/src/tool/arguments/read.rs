//! Deserializers over arguments' text checked already (`Quick::valid_text`): a value's text
//! read as serde_json reads it, the plain scalars (`null`, booleans, integers, strings with
//! no escape) here without setting up a parser, anything else by serde_json itself; and the
//! arguments' object, its members found already, read member by member so.
//!
//! Each gives exactly the values serde_json gives for the same text: where this reading
//! could differ (`-0`, an integer past 64 bits, a float, an escape) serde_json reads it.
//! Their errors are not shown to anyone: a parameter that does not read here is read from
//! the map, which words the error.

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Error;
use serde_json::de::SliceRead;

use crate::tool::definition::quick::{Integer, Member, Members, integer, members_of};

/// serde_json's reading of `text`, whole.
fn json<'de, T>(
    text: &'de [u8],
    read: impl FnOnce(&mut serde_json::Deserializer<SliceRead<'de>>) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let value = read(&mut de)?;
    de.end()?;
    Ok(value)
}

/// A string's contents when its text has no escape.
fn unescaped(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    match inner.contains('\\') {
        true => None,
        false => Some(inner),
    }
}

/// A value's text (cut out of a `str`), valid JSON with no whitespace around it; the same
/// text as a `str` when it is at hand (else it is checked where one is needed); and, for an
/// object whose members were found already, those members and the text of their places.
pub(super) struct Value<'de>(
    pub(super) &'de [u8],
    pub(super) Option<&'de str>,
    pub(super) Option<(&'de str, &'de Members)>,
);

impl<'de> Value<'de> {
    /// The text as a `str`.
    fn text(&self) -> Option<&'de str> {
        self.1.or_else(|| std::str::from_utf8(self.0).ok())
    }

    /// A string's contents when its text has no escape.
    fn unescaped(&self) -> Option<&'de str> {
        match self.1 {
            Some(text) => unescaped(text),
            None => {
                let inner = self.0.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
                match inner.contains(&b'\\') {
                    true => None,
                    false => std::str::from_utf8(inner).ok(),
                }
            }
        }
    }

    /// The object's text and where its members are, when it is an object whose keys have
    /// no escape.
    fn nested(&self) -> Option<(&'de str, Members)> {
        if self.0.first() != Some(&b'{') {
            return None;
        }
        let mut members = Members::default();
        members_of(self.0, &mut members).then_some(())?;
        Some((self.text()?, members))
    }
}

/// `Value`'s methods that serde_json reads as it would (`json`), with their arguments.
macro_rules! to_json {
    ($($(#[$doc:meta])* $method:ident($($arg:ident: $ty:ty),*))*) => {$(
        $(#[$doc])*
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Error> {
            json(self.0, |de| de.$method($($arg,)* visitor))
        }
    )*};
}

impl<'de> Deserializer<'de> for Value<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let text = self.0;
        match text.first() {
            Some(b'n') if text == b"null" => visitor.visit_unit(),
            Some(b't') if text == b"true" => visitor.visit_bool(true),
            Some(b'f') if text == b"false" => visitor.visit_bool(false),
            Some(b'"') => match self.unescaped() {
                Some(s) => visitor.visit_borrowed_str(s),
                None => json(text, |de| de.deserialize_any(visitor)),
            },
            Some(b'-' | b'0'..=b'9') => match integer(text) {
                Some(Integer::Unsigned(n)) => visitor.visit_u64(n),
                Some(Integer::Signed(n)) => visitor.visit_i64(n),
                None => json(text, |de| de.deserialize_any(visitor)),
            },
            _ => json(text, |de| de.deserialize_any(visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            b"null" => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            b"null" => visitor.visit_unit(),
            text => json(text, |de| de.deserialize_unit(visitor)),
        }
    }

    /// An object whose keys have no escape is read member by member, as the arguments are.
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if let Some((text, members)) = self.2 {
            return object(text, self.0, members).deserialize_map(visitor);
        }
        match self.nested() {
            Some((text, members)) => object(text, self.0, &members).deserialize_map(visitor),
            None => json(self.0, |de| de.deserialize_map(visitor)),
        }
    }

    /// An object whose keys have no escape is read member by member (an array, which
    /// serde_json reads as a struct's fields in order, is serde_json's).
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if let Some((text, members)) = self.2 {
            return object(text, self.0, members).deserialize_struct(name, fields, visitor);
        }
        match self.nested() {
            Some((text, members)) => {
                object(text, self.0, &members).deserialize_struct(name, fields, visitor)
            }
            None => json(self.0, |de| de.deserialize_struct(name, fields, visitor)),
        }
    }

    /// A string with no escape is a unit variant's name, as serde_json reads it (a variant
    /// with content then fails as it does there).
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.unescaped() {
            Some(s) => visitor.visit_enum(BorrowedStrDeserializer::<Error>::new(s)),
            None => json(self.0, |de| de.deserialize_enum(name, variants, visitor)),
        }
    }

    to_json! {
        /// serde_json skips a number without reading it (`1e400` included).
        deserialize_ignored_any()
        deserialize_i128() deserialize_u128() deserialize_bytes() deserialize_byte_buf()
        deserialize_unit_struct(name: &'static str)
        deserialize_newtype_struct(name: &'static str)
        deserialize_seq() deserialize_tuple(len: usize)
        deserialize_tuple_struct(name: &'static str, len: usize)
        /// A float is serde_json's to read whole: how it reads one for an `f32` hangs on its
        /// features (`float_roundtrip` refuses a number past `f32::MAX`, the default makes it
        /// infinite), which another crate of the build may turn on.
        deserialize_f32() deserialize_f64()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 u8 u16 u32 u64 char str string identifier
    }
}

/// The object `own` whose members are `members`, in places of `text`, to read.
fn object<'de, 'm>(
    text: &'de str,
    own: &'de [u8],
    members: &'m Members,
) -> Object<'de, impl Iterator<Item = Option<(&'de str, Value<'de>)>> + 'm>
where
    'de: 'm,
{
    Object {
        text: own,
        members: members.iter().map(move |m: Member| {
            let value = m.value_str(text)?;
            Some((m.key_str(text)?, Value(value.as_bytes(), Some(value), None)))
        }),
    }
}

/// An object's text and its members' keys and values (keys with no escape, distinct), in
/// their order: read as a map whose values are [`Value`]s. A member given as `None` (its
/// text could not be cut out) fails the reading.
pub(super) struct Object<'de, I> {
    pub(super) text: &'de [u8],
    pub(super) members: I,
}

impl<'de, I: Iterator<Item = Option<(&'de str, Value<'de>)>>> Deserializer<'de> for Object<'de, I> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let mut access = Entries {
            members: self.members,
            value: None,
        };
        let value = visitor.visit_map(&mut access)?;
        // serde_json refuses a map its visitor left unread.
        match access.members.next() {
            None => Ok(value),
            Some(_) => Err(de::Error::custom("members left unread")),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        json(self.text, |de| de.deserialize_newtype_struct(name, visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        json(self.text, |de| de.deserialize_enum(name, variants, visitor))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        json(self.text, |de| de.deserialize_ignored_any(visitor))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct identifier
    }
}

/// The entries of an [`Object`].
struct Entries<'de, I> {
    members: I,
    value: Option<Value<'de>>,
}

impl<'de, I: Iterator<Item = Option<(&'de str, Value<'de>)>>> MapAccess<'de> for Entries<'de, I> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let (key, value) = match self.members.next() {
            None => return Ok(None),
            Some(Some(member)) => member,
            Some(None) => return Err(de::Error::custom("a member not cut out")),
        };
        self.value = Some(value);
        seed.deserialize(Key(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(value),
            None => Err(de::Error::custom("a value asked for before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.members.size_hint().1
    }
}

/// A key with no escape, as serde_json gives a key to a string or a field name; a key read
/// as anything else (a number, as serde_json reads some) is not read here.
struct Key<'de>(&'de str);

/// `Key`'s methods for a key read as other than a string: left to the map (`not_here()`).
macro_rules! not_here {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
            Err(not_here())
        }
    )*};
}

impl<'de> Deserializer<'de> for Key<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_borrowed_str(self.0)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: V,
    ) -> Result<V::Value, Error> {
        Err(not_here())
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Error> {
        Err(not_here())
    }

    not_here! {
        deserialize_bool deserialize_option deserialize_bytes deserialize_byte_buf
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    serde::forward_to_deserialize_any! {
        char str string identifier unit unit_struct seq tuple tuple_struct map struct
    }
}

/// What a key read as anything but a string gets: the map then reads it.
fn not_here() -> Error {
    de::Error::custom("a key read as other than a string")
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
