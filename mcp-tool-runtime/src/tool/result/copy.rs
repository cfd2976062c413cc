//! A value's JSON and its text copy written in one pass ([`json_and_copy`]): the copy is the
//! JSON as the contents of a JSON string (its quotes and backslashes escaped), which is how
//! the text block of a `Json<T>` result travels. Each token serde_json writes is known here
//! for what it is (a quote, an escape, a fragment of a string that needs none, a number…),
//! so the copy is written beside the JSON without searching it for bytes to escape.

use std::io;

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter};

/// `value`'s JSON (as `serde_json::to_string` writes it) and that JSON escaped as a JSON
/// string's contents (without the quotes), as [`push_escaped`] escapes it. The copy has room
/// for the JSON after it (see `Structured::with_copy`).
pub(crate) fn json_and_copy<T: Serialize + ?Sized>(
    value: &T,
) -> Result<(String, String), serde_json::Error> {
    let mut both = Both {
        json: String::with_capacity(192),
        copy: String::with_capacity(448),
    };
    let mut serializer = serde_json::Serializer::with_formatter(io::sink(), &mut both);
    value.serialize(&mut serializer)?;
    Ok((both.json, both.copy))
}

/// Escapes `s` into `out` as a JSON string's contents: `"` and `\` and control characters,
/// the bytes serde_json escapes, written as it writes them.
pub(crate) fn push_escaped(out: &mut String, s: &str) {
    let mut start = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x09 => "\\t",
            0x0a => "\\n",
            0x0c => "\\f",
            0x0d => "\\r",
            0..=0x1f => "",
            _ => continue,
        };
        // The byte is ASCII: `i` and `i + 1` are character boundaries.
        out.push_str(&s[start..i]);
        if short.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(short);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
}

/// The two texts being written; serde_json's writer is a sink.
struct Both {
    json: String,
    copy: String,
}

impl Both {
    /// Text that needs no escape in a string: the same in both.
    #[inline]
    fn same(&mut self, s: &str) {
        self.json.push_str(s);
        self.copy.push_str(s);
    }

    /// A `,` before a member or an element, unless it is the `first`.
    #[inline]
    fn comma_unless(&mut self, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { self.byte(',') }
    }

    /// A byte that needs no escape in a string (`{`, `:`…): the same in both.
    #[inline]
    fn byte(&mut self, c: char) -> io::Result<()> {
        self.json.push(c);
        self.copy.push(c);
        Ok(())
    }

    /// A quote: escaped in the copy.
    #[inline]
    fn quote(&mut self) {
        self.json.push('"');
        self.copy.push_str("\\\"");
    }

    /// JSON text that may need escapes in a string (a quote, an escape, a raw fragment).
    fn token(&mut self, s: &str) {
        self.json.push_str(s);
        push_escaped(&mut self.copy, s);
    }

    /// What serde_json's own formatter writes for `write` (a number or an escape, short),
    /// written through a buffer on the stack.
    fn small(&mut self, write: impl FnOnce(&mut &mut [u8]) -> io::Result<()>) -> io::Result<()> {
        let mut buffer = [0u8; 64];
        let mut rest = &mut buffer[..];
        write(&mut rest)?;
        let written = 64 - rest.len();
        let text = std::str::from_utf8(&buffer[..written]).map_err(io::Error::other)?;
        self.token(text);
        Ok(())
    }
}

macro_rules! numbers {
    ($($method:ident: $t:ty),*) => {$(
        fn $method<W: ?Sized + io::Write>(&mut self, _: &mut W, value: $t) -> io::Result<()> {
            self.small(|out| CompactFormatter.$method(out, value))
        }
    )*};
}

impl Formatter for &mut Both {
    fn write_null<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.same("null");
        Ok(())
    }

    fn write_bool<W: ?Sized + io::Write>(&mut self, _: &mut W, value: bool) -> io::Result<()> {
        self.same(if value { "true" } else { "false" });
        Ok(())
    }

    numbers!(
        write_i8: i8, write_i16: i16, write_i32: i32, write_i64: i64, write_i128: i128,
        write_u8: u8, write_u16: u16, write_u32: u32, write_u64: u64, write_u128: u128,
        write_f32: f32, write_f64: f64
    );

    fn write_number_str<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        value: &str,
    ) -> io::Result<()> {
        self.token(value);
        Ok(())
    }

    fn begin_string<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.quote();
        Ok(())
    }

    fn end_string<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.quote();
        Ok(())
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // serde_json cuts a string's fragments before each byte it escapes.
        self.same(fragment);
        Ok(())
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        self.small(|out| CompactFormatter.write_char_escape(out, char_escape))
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.byte('[')
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.byte(']')
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.comma_unless(first)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.byte('{')
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.byte('}')
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.comma_unless(first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.byte(':')
    }

    fn write_raw_fragment<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        self.token(fragment);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::value::RawValue;
    use std::collections::BTreeMap;

    /// The copy is the JSON escaped as serde_json escapes a string (its text less the quotes).
    fn check<T: Serialize + ?Sized>(value: &T) {
        let (json, copy) = json_and_copy(value).unwrap();
        assert_eq!(json, serde_json::to_string(value).unwrap());
        let quoted = serde_json::to_string(&json).unwrap();
        assert_eq!(copy, quoted[1..quoted.len() - 1], "{json}");
    }

    #[test]
    fn the_copy_is_the_json_escaped_as_serde_json_escapes_it() {
        check(
            &json!({"a": "x\"y\\z\n\t\u{1}\u{1f}\u{7f}é/", "b": [1, -2, 3.5, 1e300, true, null]}),
        );
        check(&json!({"k\"ey": {"nested": ["", "\\\\", "\u{8}\u{c}\r"]}, "n": u64::MAX}));
        check(&(i128::MIN, u128::MAX, f32::MIN_POSITIVE, f64::NAN, 'q', '"'));
        check(&[0u8, 255].as_slice());
        #[derive(Serialize)]
        struct Raw<'a> {
            raw: &'a RawValue,
        }
        let raw = RawValue::from_string("{ \"a\" :\n\t[1, \"b\\\"\"] }".to_owned()).unwrap();
        check(&Raw { raw: &raw });
        check(&BTreeMap::from([(1, "one"), (2, "two")]));
        check("plain");
        check(&());
    }

    #[test]
    fn a_map_of_keys_that_are_not_strings_fails() {
        let map = std::collections::HashMap::from([((1, 2), 3)]);
        assert!(json_and_copy(&map).is_err());
    }

    #[test]
    fn escapes_are_those_of_serde_json() {
        for b in 0u8..=0x7f {
            let s = format!("a{}b", char::from(b));
            let mut out = String::new();
            push_escaped(&mut out, &s);
            let quoted = serde_json::to_string(&s).unwrap();
            assert_eq!(out, quoted[1..quoted.len() - 1], "byte {b:#x}");
        }
    }
}
