//! A call's arguments as its parameters take them: a map of values, or, for a plain call
//! whose arguments' text the validator found valid and plain (`Quick::valid_text`), that
//! text, each parameter read from its member's text straight into its type. The map is
//! built from the text only when something asks for it (a parameter whose type did not read
//! from its text, `Args<T>` after other parameters, [`Arguments::map`]), with the members
//! already taken left out: what each parameter receives, and each error's words, are those
//! of the map.

use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::tool::definition::quick::{Member, Members};

mod read;

/// A call's arguments (see the module's documentation).
#[derive(Default)]
pub(crate) struct Arguments {
    /// The arguments, when they are not [`Arguments::text`].
    map: Map<String, Value>,
    /// Boxed: arguments move with the call's future, through each of its layers.
    text: Option<Box<Text>>,
}

/// Arguments kept as their text: one allocation for the usual call, whose text is short and
/// whose members are few.
struct Text {
    /// An object's text, whose keys have no escape and are distinct.
    text: Stored,
    /// Where its members are.
    members: Members,
    /// The members taken by a parameter, one bit each by their places.
    taken: u64,
    /// The place after the member taken last: where the next parameter is looked for first
    /// (parameters are most often given in their order).
    next: usize,
    /// The map of the members not taken, built when [`Arguments::map`] asked for it.
    map: OnceLock<Map<String, Value>>,
}

/// How long a text [`Stored`] keeps in place.
const INLINE: usize = 96;

/// The arguments' text, in place when it is short.
enum Stored {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

/// A part of the text (kept from a `str`, cut where its members begin and end: so `Some`).
fn part(part: Option<&[u8]>) -> Option<&str> {
    std::str::from_utf8(part?).ok()
}

impl Stored {
    fn new(text: &str) -> Stored {
        let mut bytes = [0; INLINE];
        match (bytes.get_mut(..text.len()), u8::try_from(text.len())) {
            (Some(place), Ok(len)) => {
                place.copy_from_slice(text.as_bytes());
                Stored::Inline { len, bytes }
            }
            _ => Stored::Heap(text.into()),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Stored::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Stored::Heap(text) => text.as_bytes(),
        }
    }

    fn whole(&self) -> &str {
        part(Some(self.bytes())).unwrap_or_default()
    }
}

impl From<Map<String, Value>> for Arguments {
    fn from(map: Map<String, Value>) -> Self {
        Arguments { map, text: None }
    }
}

impl Arguments {
    /// Arguments kept as `text`, an object's text, when `valid` finds it valid and plain
    /// for the tool's schema (`Quick::valid_text`), putting its members (at most 64) in
    /// place; `None` when it does not.
    pub(crate) fn text(text: &str, valid: impl FnOnce(&mut Members) -> bool) -> Option<Arguments> {
        let mut kept = Box::new(Text {
            text: Stored::new(text),
            members: Members::default(),
            taken: 0,
            next: 0,
            map: OnceLock::new(),
        });
        valid(&mut kept.members).then(|| Arguments {
            map: Map::new(),
            text: Some(kept),
        })
    }

    /// Whether the arguments are kept as text (checked against the schema already).
    pub(crate) fn is_text(&self) -> bool {
        self.text.is_some()
    }

    /// The arguments not taken yet, as a map.
    pub(crate) fn map(&self) -> &Map<String, Value> {
        match &self.text {
            Some(text) => text.map.get_or_init(|| text.to_map()),
            None => &self.map,
        }
    }

    /// The arguments not taken yet, as a map that parameters take from from now on.
    pub(crate) fn map_mut(&mut self) -> &mut Map<String, Value> {
        if let Some(mut text) = self.text.take() {
            self.map = text.map.take().unwrap_or_else(|| text.to_map());
        }
        &mut self.map
    }

    /// The arguments not taken yet, as a map.
    pub(crate) fn into_map(mut self) -> Map<String, Value> {
        std::mem::take(self.map_mut())
    }

    /// The text of argument `name` when the arguments are kept as text: `Some(None)` when
    /// there is no such argument (or it was taken), `None` when they are a map.
    fn text_of(&self, name: &str) -> Option<Option<(usize, &[u8])>> {
        let text = self.text.as_ref().filter(|t| t.map.get().is_none())?;
        Some(
            text.find(name)
                .filter(|(at, _)| text.taken & (1 << at) == 0),
        )
    }

    /// Argument `name` read as a `T` from its text, and taken: `Some(None)` when there is no
    /// such argument; `None` when the arguments are a map or the text does not read as a
    /// `T` (the map then decides, and words the error).
    pub(crate) fn take<T: DeserializeOwned>(&mut self, name: &str) -> Option<Option<T>> {
        let (at, value) = match self.text_of(name)? {
            None => return Some(None),
            Some(found) => found,
        };
        let value = T::deserialize(read::Value(value, None, None)).ok()?;
        if let Some(text) = &mut self.text {
            text.taken |= 1 << at;
            text.next = at + 1;
        }
        Some(Some(value))
    }

    /// All the arguments read as a `T` from their text, all taken; `None` when they are a
    /// map, when some were taken already, or when the text does not read as a `T`.
    pub(crate) fn take_all<T: DeserializeOwned>(&mut self) -> Option<T> {
        let text = self
            .text
            .as_ref()
            .filter(|t| t.taken == 0 && t.map.get().is_none())?;
        let (whole, members) = (text.text.whole(), &text.members);
        let member = |(at, m): (usize, Member)| {
            let value = m.value_str(whole)?;
            let inner = members.inner(at).map(|inner| (whole, inner));
            Some((
                m.key_str(whole)?,
                read::Value(value.as_bytes(), Some(value), inner),
            ))
        };
        let object = read::Object {
            text: whole.as_bytes(),
            members: members.iter().enumerate().map(member),
        };
        let value = T::deserialize(object).ok()?;
        *self = Arguments::default();
        Some(value)
    }

    /// Whether argument `name` is missing or `null`.
    pub(crate) fn is_absent(&self, name: &str) -> bool {
        match self.text_of(name) {
            Some(found) => found.is_none_or(|(_, value)| value == b"null"),
            None => self.map().get(name).is_none_or(Value::is_null),
        }
    }
}

impl Text {
    /// The place and the value's text of the member whose key is `name`: looked for from
    /// the place after the member taken last, then from the start.
    fn find(&self, name: &str) -> Option<(usize, &[u8])> {
        let bytes = self.text.bytes();
        let members = self.members.as_slice();
        let is = |m: &Member| m.key(bytes) == Some(name.as_bytes());
        let next = self.next.min(members.len());
        let at = match members[next..].iter().position(is) {
            Some(at) => next + at,
            None => members[..next].iter().position(is)?,
        };
        let value = self.members.get(at)?.value(bytes)?;
        Some((at, value))
    }

    /// The members not taken, as a map.
    fn to_map(&self) -> Map<String, Value> {
        // The text read as a `Value` when it was checked (`Quick::valid_text`), so this
        // does not fail.
        let mut map: Map<String, Value> =
            serde_json::from_str(self.text.whole()).unwrap_or_default();
        for (at, member) in self.members.iter().enumerate() {
            if self.taken & (1 << at) != 0
                && let Some(key) = part(member.key(self.text.bytes()))
            {
                map.remove(key);
            }
        }
        map
    }
}
