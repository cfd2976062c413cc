//! The string formats the rules assert, each by the grammar its RFC gives: dates and times
//! (RFC 3339 and its appendix A), `uuid` (RFC 4122's text), IP addresses (RFC 2673/4291 as the
//! standard library reads them), host names (RFC 1123), URIs (RFC 3986), JSON pointers
//! (RFC 6901, and the relative ones of JSON Schema) and regular expressions (ECMA-262 as
//! [`pattern`](super::pattern) compiles them). `email` has a module of its own.
//!
//! Formats JSON Schema does not define (schemars' `ip`, `partial-date-time`, …) are
//! annotations: the full validator does not assert them either. The internationalized ones
//! (`idn-hostname`, `idn-email`, `iri`, `iri-reference`) and `uri-template` are the full
//! validator's.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::{email, pattern};

/// A string format the rules assert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Email,
    Date,
    Time,
    DateTime,
    Duration,
    Period,
    Uuid,
    Ipv4,
    Ipv6,
    Hostname,
    Uri,
    UriReference,
    JsonPointer,
    RelativeJsonPointer,
    Regex,
}

/// What a `format` is to the rules.
pub(crate) enum Known {
    /// Asserted here.
    Asserted(Format),
    /// A format the full validator asserts and the rules do not.
    Elsewhere,
    /// Not a format JSON Schema defines: an annotation.
    Annotation,
}

impl Format {
    const ALL: [Format; 15] = [
        Format::Email,
        Format::Date,
        Format::Time,
        Format::DateTime,
        Format::Duration,
        Format::Period,
        Format::Uuid,
        Format::Ipv4,
        Format::Ipv6,
        Format::Hostname,
        Format::Uri,
        Format::UriReference,
        Format::JsonPointer,
        Format::RelativeJsonPointer,
        Format::Regex,
    ];

    /// What the format named `name` is to the rules.
    pub(crate) fn of(name: &str) -> Known {
        if let Some(format) = Format::ALL.into_iter().find(|f| f.name() == name) {
            Known::Asserted(format)
        } else if matches!(
            name,
            "idn-hostname" | "idn-email" | "iri" | "iri-reference" | "uri-template"
        ) {
            Known::Elsewhere
        } else {
            Known::Annotation
        }
    }

    /// The format's name in a schema.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Email => "email",
            Format::Date => "date",
            Format::Time => "time",
            Format::DateTime => "date-time",
            Format::Duration => "duration",
            Format::Period => "period",
            Format::Uuid => "uuid",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Hostname => "hostname",
            Format::Uri => "uri",
            Format::UriReference => "uri-reference",
            Format::JsonPointer => "json-pointer",
            Format::RelativeJsonPointer => "relative-json-pointer",
            Format::Regex => "regex",
        }
    }

    /// Whether `s` is of the format.
    pub(crate) fn valid(self, s: &str) -> bool {
        match self {
            Format::Email => email::valid(s),
            Format::Date => date(s),
            Format::Time => time(s),
            Format::DateTime => date_time(s),
            Format::Duration => duration(s),
            Format::Period => period(s),
            Format::Uuid => uuid(s),
            Format::Ipv4 => s.parse::<Ipv4Addr>().is_ok(),
            Format::Ipv6 => s.parse::<Ipv6Addr>().is_ok(),
            Format::Hostname => email::host_name(s),
            Format::Uri => uri::reference(s) == Some(true),
            Format::UriReference => uri::reference(s).is_some(),
            Format::JsonPointer => json_pointer(s),
            Format::RelativeJsonPointer => relative_json_pointer(s),
            Format::Regex => pattern::Pattern::compile(s).is_ok(),
        }
    }
}

/// `digits` ASCII digits at the start of `s`, as a number, and the rest.
fn digits(s: &[u8], count: usize) -> Option<(u32, &[u8])> {
    let (head, rest) = s.split_at_checked(count)?;
    let mut n = 0;
    for &b in head {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u32::from(b - b'0');
    }
    Some((n, rest))
}

/// RFC 3339 `full-date`: `yyyy-mm-dd`, a day the month has.
fn date(s: &str) -> bool {
    full_date(s.as_bytes()) == Some(&[][..])
}

fn full_date(s: &[u8]) -> Option<&[u8]> {
    let (year, s) = digits(s, 4)?;
    let s = s.strip_prefix(b"-")?;
    let (month, s) = digits(s, 2)?;
    let s = s.strip_prefix(b"-")?;
    let (day, s) = digits(s, 2)?;
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days).contains(&day).then_some(s)
}

/// RFC 3339 `full-time`: `hh:mm:ss`, a fraction, and `Z` or an offset; a leap second only
/// where it falls at 23:59:60 UTC.
fn time(s: &str) -> bool {
    full_time(s.as_bytes())
}

fn full_time(s: &[u8]) -> bool {
    full_time_of(s).is_some()
}

/// `dd:dd` at the start of `s`: the two numbers, and the rest.
fn two(s: &[u8]) -> Option<(u32, u32, &[u8])> {
    let (a, s) = digits(s, 2)?;
    let (b, s) = digits(s.strip_prefix(b":")?, 2)?;
    Some((a, b, s))
}

fn full_time_of(s: &[u8]) -> Option<()> {
    let (hour, minute, s) = two(s)?;
    let (second, mut s) = digits(s.strip_prefix(b":")?, 2)?;
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    if let Some(fraction) = s.strip_prefix(b".") {
        let count = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if count == 0 {
            return None;
        }
        s = &fraction[count..];
    }
    // The offset, as minutes to take away to reach UTC.
    let offset = match s {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let (hours, minutes, rest) = two(rest)?;
            if !rest.is_empty() || hours > 23 || minutes > 59 {
                return None;
            }
            let offset = i64::from(hours * 60 + minutes);
            if *sign == b'+' { offset } else { -offset }
        }
        _ => return None,
    };
    if second == 60 {
        let utc = (i64::from(hour * 60 + minute) - offset).rem_euclid(24 * 60);
        return (utc == 23 * 60 + 59).then_some(());
    }
    Some(())
}

/// RFC 3339 `date-time`: a date, `T` (or `t`), a time.
fn date_time(s: &str) -> bool {
    match full_date(s.as_bytes()) {
        Some([b'T' | b't', time @ ..]) => full_time(time),
        _ => false,
    }
}

/// RFC 3339's appendix A `duration`: `P`, then weeks alone, or the date's units (years,
/// months, days) and a `T` with the time's (hours, minutes, seconds), each unit at most once,
/// in that order, at least one, each a number.
fn duration(s: &str) -> bool {
    let Some(s) = s.strip_prefix('P') else {
        return false;
    };
    if let Some(weeks) = s.strip_suffix('W') {
        return !weeks.is_empty() && weeks.bytes().all(|b| b.is_ascii_digit());
    }
    let (date, time) = match s.split_once('T') {
        Some((date, time)) if !time.is_empty() => (date, Some(time)),
        Some(_) => return false,
        None => (s, None),
    };
    if date.is_empty() && time.is_none() {
        return false;
    }
    units(date, b"YMD") && time.is_none_or(|time| units(time, b"HMS"))
}

/// Numbers each followed by one of `units`, in their order, each at most once.
fn units(mut s: &str, mut units: &[u8]) -> bool {
    while !s.is_empty() {
        let count = s.bytes().take_while(u8::is_ascii_digit).count();
        let Some(&unit) = s.as_bytes().get(count) else {
            return false;
        };
        let Some(at) = units.iter().position(|&u| u == unit) else {
            return false;
        };
        if count == 0 {
            return false;
        }
        units = &units[at + 1..];
        s = &s[count + 1..];
    }
    true
}

/// RFC 3339's appendix A `period`: two date-times, or a date-time and a duration either way,
/// split by `/`.
fn period(s: &str) -> bool {
    let Some((start, end)) = s.split_once('/') else {
        return false;
    };
    if start.starts_with('P') {
        duration(start) && date_time(end)
    } else {
        date_time(start) && (date_time(end) || duration(end))
    }
}

/// A UUID's text: 32 hexadecimal digits in groups of 8, 4, 4, 4 and 12, split by hyphens.
fn uuid(s: &str) -> bool {
    let bytes = s.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// RFC 6901: empty, or `/`-led reference tokens in which `~` is followed by `0` or `1`.
fn json_pointer(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    if !s.starts_with('/') {
        return false;
    }
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'~' && !matches!(bytes.next(), Some(b'0' | b'1')) {
            return false;
        }
    }
    true
}

/// A relative JSON pointer: a non-negative integer without leading zeros, then `#` or a JSON
/// pointer.
fn relative_json_pointer(s: &str) -> bool {
    let count = s.bytes().take_while(u8::is_ascii_digit).count();
    if count == 0 || (count > 1 && s.starts_with('0')) {
        return false;
    }
    let rest = &s[count..];
    rest == "#" || json_pointer(rest)
}

/// RFC 3986's grammar.
mod uri {
    use std::net::Ipv6Addr;

    /// Whether `s` is a URI reference: `Some(true)` for a URI (it has a scheme),
    /// `Some(false)` for a relative reference, `None` for neither.
    pub(super) fn reference(s: &str) -> Option<bool> {
        let (rest, fragment) = match s.split_once('#') {
            Some((rest, fragment)) => (rest, Some(fragment)),
            None => (s, None),
        };
        if fragment.is_some_and(|f| !all(f, QUERY)) {
            return None;
        }
        let (rest, query) = match rest.split_once('?') {
            Some((rest, query)) => (rest, Some(query)),
            None => (rest, None),
        };
        if query.is_some_and(|q| !all(q, QUERY)) {
            return None;
        }
        // A scheme is what comes before a colon that comes before any slash.
        let colon = rest.find(':').filter(|&c| !rest[..c].contains('/'));
        let (scheme, hierarchy) = match colon {
            Some(c) => (Some(&rest[..c]), &rest[c + 1..]),
            None => (None, rest),
        };
        if scheme.is_some_and(|s| !is_scheme(s)) {
            // A relative reference's first segment may not hold a colon.
            return None;
        }
        let path = match hierarchy.strip_prefix("//") {
            Some(after) => {
                let end = after.find('/').unwrap_or(after.len());
                if !authority(&after[..end]) {
                    return None;
                }
                &after[end..]
            }
            None => hierarchy,
        };
        all(path, PATH).then_some(scheme.is_some())
    }

    /// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    fn is_scheme(s: &str) -> bool {
        let mut bytes = s.bytes();
        bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
            && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    }

    /// `[ userinfo "@" ] host [ ":" port ]`.
    fn authority(s: &str) -> bool {
        let (userinfo, host_port) = match s.split_once('@') {
            Some((userinfo, rest)) => (Some(userinfo), rest),
            None => (None, s),
        };
        if userinfo.is_some_and(|u| !all(u, USERINFO)) {
            return false;
        }
        let (host, port) = if let Some(literal) = host_port.strip_prefix('[') {
            let Some((inside, after)) = literal.split_once(']') else {
                return false;
            };
            if !(inside.parse::<Ipv6Addr>().is_ok() || future(inside)) {
                return false;
            }
            match after {
                "" => ("", None),
                _ => match after.strip_prefix(':') {
                    Some(port) => ("", Some(port)),
                    None => return false,
                },
            }
        } else {
            match host_port.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (host_port, None),
            }
        };
        all(host, REG_NAME) && port.is_none_or(|p| p.bytes().all(|b| b.is_ascii_digit()))
    }

    /// `IPvFuture`: `v`, hexadecimal digits, `.`, and one or more of unreserved, sub-delims
    /// and `:`.
    fn future(s: &str) -> bool {
        let Some(rest) = s.strip_prefix(['v', 'V']) else {
            return false;
        };
        let Some((version, address)) = rest.split_once('.') else {
            return false;
        };
        !version.is_empty()
            && version.bytes().all(|b| b.is_ascii_hexdigit())
            && !address.is_empty()
            && address.bytes().all(|b| class(b) & USERINFO != 0)
    }

    /// Whether every byte of `s` is of `allowed`, or a `%` and two hexadecimal digits.
    fn all(s: &str, allowed: u8) -> bool {
        let bytes = s.as_bytes();
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            if b == b'%' {
                if !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
                {
                    return false;
                }
                i += 3;
            } else if class(b) & allowed != 0 {
                i += 1;
            } else {
                return false;
            }
        }
        true
    }

    /// `unreserved / sub-delims`: a host name's characters.
    const REG_NAME: u8 = 1;
    /// With `:`.
    const USERINFO: u8 = 2;
    /// `pchar` with `/`: with `@`.
    const PATH: u8 = 4;
    /// With `?`.
    const QUERY: u8 = 8;

    fn class(b: u8) -> u8 {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => 15,
            b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' => 15,
            b':' => USERINFO | PATH | QUERY,
            b'@' | b'/' => PATH | QUERY,
            b'?' => QUERY,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests;
