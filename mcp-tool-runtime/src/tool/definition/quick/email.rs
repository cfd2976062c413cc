//! The `email` format as the full validator asserts it (after RFC 5321's mailbox, without
//! comments or folding): a local part of at most 64 bytes, either quoted or dot-separated
//! atoms, an `@`, and a domain that is a host name or an IP address in brackets; 254 bytes
//! in all.

use std::net::{Ipv4Addr, Ipv6Addr};

/// Whether `s` is an email address.
pub(super) fn valid(s: &str) -> bool {
    plain(s) || full(s)
}

/// The whole rule: the local part is everything before the last `@`.
fn full(s: &str) -> bool {
    if s.len() > 254 {
        return false;
    }
    let Some(at) = s.rfind('@') else {
        return false;
    };
    let (local, domain) = (&s[..at], &s[at + 1..]);
    if local.len() > 64 {
        return false;
    }
    let quoted = local.len() > 1 && local.starts_with('"') && local.ends_with('"');
    let local_valid = if quoted {
        !local[1..local.len() - 1].contains(['\\', '"'])
    } else {
        !(local.starts_with('.') || local.ends_with('.') || local.contains(".."))
            && local
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ATEXT_SYMBOLS.contains(c))
    };
    if !local_valid {
        return false;
    }
    if domain.len() >= 2 && domain.starts_with('[') && domain.ends_with(']') {
        let literal = &domain[1..domain.len() - 1];
        return match literal.strip_prefix("IPv6:") {
            Some(v6) => v6.parse::<Ipv6Addr>().is_ok(),
            None => literal.parse::<Ipv4Addr>().is_ok(),
        };
    }
    host_name(domain)
}

/// The symbols an unquoted local part may hold besides letters, digits and dots (RFC 5322's
/// `atext`).
const ATEXT_SYMBOLS: &str = ".!#$%&'*+-/=?^_`{|}~";

/// A host name (RFC 1123): at most 253 bytes without one trailing dot, labels of 1 to 63
/// letters, digits and hyphens, none starting or ending with a hyphen.
pub(super) fn host_name(s: &str) -> bool {
    let s = s.strip_suffix('.').unwrap_or(s);
    s.len() <= 253
        && s.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// Whether `s` is an email address of the plainest kind, which boon's `email` format
/// accepts: one `@`; before it 1 to 64 letters, digits and `._+-`, with no dot first, last
/// or twice in a row; after it dot-separated labels of 1 to 63 letters, digits and hyphens,
/// neither starting nor ending with a hyphen; 254 bytes in all. Most addresses are; any
/// other string is judged by [`full`].
fn plain(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.len() > 254 {
        return false;
    }
    // The local part: `last` starts as a dot, so that a dot first counts as a dot twice.
    let mut last = b'.';
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        let class = BYTES[usize::from(b)];
        if class & LOCAL == 0 {
            if b == b'@' {
                break;
            }
            return false;
        }
        if b == b'.' && last == b'.' {
            return false;
        }
        last = b;
        at += 1;
    }
    if at == bytes.len() || at == 0 || at > 64 || last == b'.' {
        return false;
    }
    // The domain, label by label (a second `@` is no label's character).
    let (mut label, mut last) = (0, b'.');
    for &b in &bytes[at + 1..] {
        if BYTES[usize::from(b)] & ALNUM != 0 || (b == b'-' && label != 0) {
            label += 1;
        } else if b == b'.' && label != 0 && last != b'-' {
            label = 0;
        } else {
            return false;
        }
        if label > 63 {
            return false;
        }
        last = b;
    }
    label > 0 && last != b'-'
}

/// [`BYTES`]: a letter or a digit.
const ALNUM: u8 = 1;
/// [`BYTES`]: a byte of a plain local part (a letter, a digit or `._+-`).
const LOCAL: u8 = 2;

/// The classes of the bytes [`plain`] tells apart.
const BYTES: [u8; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        #[allow(clippy::cast_possible_truncation)]
        let byte = b as u8;
        if byte.is_ascii_alphanumeric() {
            table[b] = ALNUM | LOCAL;
        } else if matches!(byte, b'.' | b'_' | b'+' | b'-') {
            table[b] = LOCAL;
        }
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_by_the_rules() {
        for good in [
            "jane.doe@example.com",
            "@example.com",
            "a!#$%&'*+-/=?^_`{|}~@b",
            "\"a b\"@c.com",
            "\"a@b\"@c.com",
            "a@[127.0.0.1]",
            "a@[IPv6:::1]",
            "a@b.",
        ] {
            assert!(valid(good), "{good}");
        }
        for bad in [
            "",
            "no-at.example.com",
            ".a@c.com",
            "a.@c.com",
            "a..b@c.com",
            "a b@c.com",
            "\"a\\b\"@c.com",
            "a@[300.0.0.1]",
            "a@[IPv6:zz]",
            "a@-b.com",
            "a@b-.com",
            "a@b..com",
            "a@",
            "a@b@c.com",
            "é@b.com",
            "a@é.com",
        ] {
            assert!(!valid(bad), "{bad}");
        }
        assert!(valid(&format!("{}@b.com", "a".repeat(64))));
        assert!(!valid(&format!("{}@b.com", "a".repeat(65))));
        assert!(!valid(&format!("a@{}.com", "b".repeat(64))));
    }
}
