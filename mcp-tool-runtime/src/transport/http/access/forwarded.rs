//! The address a request really comes from when a trusted proxy forwards it: [`TrustedProxies`]
//! (addresses and CIDR blocks), and the walk of `Forwarded` (RFC 7239) or `X-Forwarded-For`
//! that only their connections get.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;

/// The reverse proxies (load balancers) whose forwarding headers are believed: addresses and
/// CIDR blocks, such as `10.0.0.0/8, 127.0.0.254, fd00::/8`.
///
/// A request whose connection comes from one of them counts for the client these headers
/// name — in per-client shares, rate limits, kept results, the audit log — instead of for
/// the proxy. `Forwarded` (RFC 7239: its `for=` parameters) is read when the request has
/// one, else `X-Forwarded-For`: the list is walked from the right (the hop nearest this
/// server), passing addresses that are themselves trusted proxies; the first address that is
/// not is the client. A hop the list does not name by address (`unknown`, an obfuscated
/// `_name`, an element without `for=`) ends the walk: the client is then the last trusted hop
/// passed (the proxy that could not name it), never an address the client wrote. A header
/// that cannot be read whole leaves the request counted for its connection's address.
///
/// A client may send either header itself: a proxy in the list must append to the one it
/// sets (nginx: `X-Forwarded-For $proxy_add_x_forwarded_for`) and remove the other
/// (`Forwarded ""`), else a client could name itself through it. From any other peer both
/// headers are ignored. Empty (the default): the connection's address is the client.
/// `MCP_TOOL_TRUSTED_PROXIES` sets it for a server binary.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    blocks: Vec<Block>,
}

/// An address and how many of its leading bits a peer must share with it.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Block {
    address: IpAddr,
    bits: u8,
}

impl Block {
    fn contains(self, ip: IpAddr) -> bool {
        match (self.address, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.bits)).unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.bits))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = if self.address.is_ipv4() { 32 } else { 128 };
        if self.bits == whole {
            write!(f, "{}", self.address)
        } else {
            write!(f, "{}/{}", self.address, self.bits)
        }
    }
}

impl fmt::Debug for TrustedProxies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.blocks.iter().map(ToString::to_string))
            .finish()
    }
}

/// A list of trusted proxies that could not be read: the entry that is no address or block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an address or a CIDR block such as `10.0.0.0/8` or `fd00::/8`")]
pub struct TrustedProxiesError(String);

impl TrustedProxies {
    /// None: every request counts for its connection's address.
    pub fn none() -> Self {
        TrustedProxies::default()
    }

    /// Reads `10.0.0.0/8, 127.0.0.254, fd00::/8` (addresses and CIDR blocks, separated by
    /// commas or spaces): the form of `MCP_TOOL_TRUSTED_PROXIES`.
    pub fn parse(text: &str) -> Result<Self, TrustedProxiesError> {
        let mut blocks = Vec::new();
        for entry in text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|e| !e.is_empty())
        {
            let bad = || TrustedProxiesError(entry.to_owned());
            let (address, bits) = match entry.split_once('/') {
                Some((address, bits)) => (address, Some(bits)),
                None => (entry, None),
            };
            let address: IpAddr = address.parse().map_err(|_| bad())?;
            let address = address.to_canonical();
            let whole = if address.is_ipv4() { 32 } else { 128 };
            let bits = match bits {
                Some(bits) if bits.bytes().all(|b| b.is_ascii_digit()) => {
                    bits.parse::<u8>().map_err(|_| bad())?
                }
                Some(_) => return Err(bad()),
                None => whole,
            };
            if bits > whole {
                return Err(bad());
            }
            blocks.push(Block { address, bits });
        }
        Ok(TrustedProxies { blocks })
    }

    /// Whether none is trusted.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Whether `ip` is a trusted proxy's address.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.blocks.iter().any(|b| b.contains(ip))
    }

    /// The address the request with `headers` that reached this server from `peer` comes
    /// from: `peer`, unless `peer` is trusted and the headers name another.
    pub fn client(&self, peer: SocketAddr, headers: &HeaderMap) -> SocketAddr {
        if !self.contains(peer.ip()) {
            return peer;
        }
        let hops = if headers.contains_key("forwarded") {
            forwarded_hops(headers)
        } else if headers.contains_key("x-forwarded-for") {
            x_forwarded_for_hops(headers)
        } else {
            return peer;
        };
        let Some(hops) = hops else { return peer };
        let mut client = peer;
        for hop in hops.iter().rev() {
            match hop {
                Some(hop) if self.contains(hop.ip()) => client = *hop,
                Some(hop) => return *hop,
                None => return client,
            }
        }
        client
    }
}

/// The most hops read from a forwarding header: a longer chain keeps the peer's address.
const MAX_HOPS: usize = 64;

/// The hops of every `X-Forwarded-For` line, in order (`None`: a hop that is no address);
/// `None` when one cannot be read.
fn x_forwarded_for_hops(headers: &HeaderMap) -> Option<Vec<Option<SocketAddr>>> {
    let mut hops = Vec::new();
    for line in headers.get_all("x-forwarded-for") {
        for hop in line.to_str().ok()?.split(',') {
            let hop = hop.trim();
            if hop.is_empty() {
                return None;
            }
            hops.push(if hop.eq_ignore_ascii_case("unknown") {
                None
            } else {
                Some(node_address(hop)?)
            });
            if hops.len() > MAX_HOPS {
                return None;
            }
        }
    }
    Some(hops)
}

/// The `for=` of each element of every `Forwarded` line, in order (`None`: an element
/// without one, or naming no address); `None` when a line cannot be read.
fn forwarded_hops(headers: &HeaderMap) -> Option<Vec<Option<SocketAddr>>> {
    let mut hops = Vec::new();
    for line in headers.get_all("forwarded") {
        for element in split_outside_quotes(line.to_str().ok()?, ',')? {
            let mut node = None;
            for pair in split_outside_quotes(element, ';')? {
                let pair = pair.trim();
                if pair.is_empty() {
                    continue;
                }
                let (name, value) = pair.split_once('=')?;
                let value = unquote(value.trim())?;
                if name.trim().eq_ignore_ascii_case("for") {
                    if node.is_some() {
                        return None;
                    }
                    node = Some(value);
                }
            }
            let hop = match node {
                Some(node) if node.eq_ignore_ascii_case("unknown") || node.starts_with('_') => None,
                Some(node) => Some(node_address(&node)?),
                None => None,
            };
            hops.push(hop);
            if hops.len() > MAX_HOPS {
                return None;
            }
        }
    }
    Some(hops)
}

/// `text` split at `separator`s outside double quotes; `None` when a quote is not closed.
fn split_outside_quotes(text: &str, separator: char) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == separator && !quoted => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted {
        return None;
    }
    parts.push(&text[start..]);
    Some(parts)
}

/// A `Forwarded` value: a token (RFC 9110 `tchar`s: an IPv6 address or a port must be
/// quoted), or a quoted string with its escapes undone.
fn unquote(value: &str) -> Option<String> {
    let Some(inner) = value.strip_prefix('"') else {
        let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        return (!value.is_empty() && value.bytes().all(tchar)).then(|| value.to_owned());
    };
    let inner = inner.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' { chars.next()? } else { c });
    }
    Some(out)
}

/// A node as forwarding headers write it: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`,
/// `[2001:db8::1]`, `[2001:db8::1]:4711` (a port that is no number, such as an obfuscated
/// `_port`, is left out). `None` for anything else.
fn node_address(node: &str) -> Option<SocketAddr> {
    let at = |ip: IpAddr| SocketAddr::new(ip.to_canonical(), 0);
    if let Ok(ip) = node.parse::<IpAddr>() {
        return Some(at(ip));
    }
    if let Ok(address) = node.parse::<SocketAddr>() {
        return Some(SocketAddr::new(address.ip().to_canonical(), address.port()));
    }
    let (host, port) = match node.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']')?;
            let port = match after {
                "" => None,
                port => Some(port.strip_prefix(':')?),
            };
            (
                host.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6)?,
                port,
            )
        }
        None => {
            let (host, port) = node.rsplit_once(':')?;
            (
                host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)?,
                Some(port),
            )
        }
    };
    match port {
        Some(port) if port.starts_with('_') => Some(at(host)),
        Some(port) => Some(SocketAddr::new(host.to_canonical(), port.parse().ok()?)),
        None => Some(at(host)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    /// The client address `proxies` find for a request from `peer` with `pairs`.
    fn client(proxies: &str, peer: &str, pairs: &[(&'static str, &str)]) -> IpAddr {
        let proxies = TrustedProxies::parse(proxies).unwrap();
        let peer = SocketAddr::new(ip(peer), 40000);
        proxies.client(peer, &headers(pairs)).ip()
    }

    #[test]
    fn addresses_and_blocks_are_read_or_refused_by_entry() {
        let proxies = TrustedProxies::parse("10.0.0.0/8, 127.0.0.254 fd00::/8,::1").unwrap();
        for trusted in [
            "10.1.2.3",
            "127.0.0.254",
            "fd12::1",
            "::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(proxies.contains(ip(trusted)), "{trusted}");
        }
        for other in ["11.0.0.1", "127.0.0.1", "fe80::1", "::2"] {
            assert!(!proxies.contains(ip(other)), "{other}");
        }
        assert_eq!(
            format!("{proxies:?}"),
            r#"["10.0.0.0/8", "127.0.0.254", "fd00::/8", "::1"]"#
        );
        assert!(TrustedProxies::parse(" ").unwrap().is_empty());
        assert!(
            TrustedProxies::parse("0.0.0.0/0")
                .unwrap()
                .contains(ip("8.8.8.8"))
        );
        for bad in [
            "10.0.0.0/33",
            "::/129",
            "10.0.0/8",
            "nginx",
            "10.0.0.0/-1",
            "10.0.0.0/",
            "10.0.0.0/+8",
        ] {
            let e = TrustedProxies::parse(bad).unwrap_err();
            assert!(e.to_string().contains(&format!("`{bad}`")), "{e}");
        }
    }

    #[test]
    fn only_a_trusted_peers_headers_are_read() {
        let spoof = [("x-forwarded-for", "203.0.113.9")];
        assert_eq!(client("", "198.51.100.1", &spoof), ip("198.51.100.1"));
        assert_eq!(
            client("10.0.0.1", "198.51.100.1", &spoof),
            ip("198.51.100.1")
        );
        assert_eq!(client("10.0.0.1", "10.0.0.1", &spoof), ip("203.0.113.9"));
        assert_eq!(client("10.0.0.1", "10.0.0.1", &[]), ip("10.0.0.1"));
    }

    #[test]
    fn a_spoofed_chain_gives_the_first_untrusted_address_from_the_right() {
        // The client wrote 1.1.1.1 itself; the proxy appended the address it saw.
        let chain = [("x-forwarded-for", "1.1.1.1, 203.0.113.9")];
        assert_eq!(client("10.0.0.0/8", "10.0.0.1", &chain), ip("203.0.113.9"));
        // Two proxies: the second one's address is passed, the client is the one before.
        let chain = [("x-forwarded-for", "1.1.1.1, 203.0.113.9, 10.0.0.2")];
        assert_eq!(client("10.0.0.0/8", "10.0.0.1", &chain), ip("203.0.113.9"));
        // Several lines are one list, in order.
        let lines = [
            ("x-forwarded-for", "1.1.1.1"),
            ("x-forwarded-for", "203.0.113.9, 10.0.0.2"),
        ];
        assert_eq!(client("10.0.0.0/8", "10.0.0.1", &lines), ip("203.0.113.9"));
        // Every hop trusted: the leftmost.
        let inside = [("x-forwarded-for", "10.0.0.7, 10.0.0.2")];
        assert_eq!(client("10.0.0.0/8", "10.0.0.1", &inside), ip("10.0.0.7"));
        // `unknown` ends the walk at the proxy that wrote it.
        let unknown = [("x-forwarded-for", "1.1.1.1, unknown, 10.0.0.2")];
        assert_eq!(client("10.0.0.0/8", "10.0.0.1", &unknown), ip("10.0.0.2"));
    }

    #[test]
    fn forwarded_names_nodes_by_for_with_quoted_ipv6_and_ports() {
        let proxies = "127.0.0.1";
        let cases = [
            ("for=192.0.2.60;proto=http;by=203.0.113.43", "192.0.2.60"),
            (r#"for="[2001:db8:cafe::17]:4711""#, "2001:db8:cafe::17"),
            (r#"For="[2001:db8:cafe::17]""#, "2001:db8:cafe::17"),
            (r#"for="192.0.2.43:47011""#, "192.0.2.43"),
            ("for=192.0.2.43, for=198.51.100.17", "198.51.100.17"),
            (r#"for="[::1]:_port""#, "::1"),
            (r#"for="::ffff:192.0.2.9""#, "192.0.2.9"),
            // Obfuscated or unknown: the walk ends at the peer.
            ("for=192.0.2.43, for=_hidden", "127.0.0.1"),
            ("for=192.0.2.43, for=unknown", "127.0.0.1"),
            ("for=192.0.2.43, proto=https", "127.0.0.1"),
            // A quoted separator belongs to its value.
            (r#"for=192.0.2.1;x="a,b;c", for=192.0.2.2"#, "192.0.2.2"),
        ];
        for (value, expected) in cases {
            assert_eq!(
                client(proxies, "127.0.0.1", &[("forwarded", value)]),
                ip(expected),
                "{value}"
            );
        }
        // `Forwarded` is read before `X-Forwarded-For`.
        let both = [
            ("forwarded", "for=192.0.2.60"),
            ("x-forwarded-for", "203.0.113.9"),
        ];
        assert_eq!(client(proxies, "127.0.0.1", &both), ip("192.0.2.60"));
        assert_eq!(
            client("::1", "::1", &[("x-forwarded-for", "[2001:db8::5]:80")]),
            ip("2001:db8::5")
        );
        assert_eq!(
            client(
                "::1",
                "::ffff:127.0.0.1",
                &[("x-forwarded-for", "2001:db8::5")]
            ),
            ip("::ffff:127.0.0.1"),
            "the peer as it came, when it is not trusted"
        );
    }

    #[test]
    fn malformed_headers_keep_the_peers_address() {
        let long = vec!["192.0.2.1"; MAX_HOPS + 1].join(", ");
        let bad: [(&'static str, &str); 17] = [
            ("x-forwarded-for", "192.0.2.1, "),
            ("x-forwarded-for", ""),
            ("x-forwarded-for", "not-an-address"),
            ("x-forwarded-for", "192.0.2.1:port"),
            ("x-forwarded-for", "[2001:db8::1"),
            ("x-forwarded-for", "[2001:db8::1]x"),
            ("x-forwarded-for", "[192.0.2.1]"),
            ("x-forwarded-for", "192.0.2.1:99999"),
            ("x-forwarded-for", &long),
            ("forwarded", "for=2001:db8::1"),
            ("forwarded", "for=192.0.2.43:47011"),
            ("forwarded", r#"for="192.0.2.1"#),
            ("forwarded", "for"),
            ("forwarded", "for=192.0.2.1;for=192.0.2.2"),
            ("forwarded", r#"for="\"#),
            ("forwarded", "for=\"[::1]\"x"),
            ("forwarded", "for="),
        ];
        for pair in bad {
            assert_eq!(
                client("127.0.0.1", "127.0.0.1", &[pair]),
                ip("127.0.0.1"),
                "{pair:?}"
            );
        }
        // Bytes that are no text.
        let mut map = HeaderMap::new();
        map.insert(
            "x-forwarded-for",
            HeaderValue::from_bytes(b"192.0.2.1\xff").unwrap(),
        );
        let proxies = TrustedProxies::parse("127.0.0.1").unwrap();
        let peer = SocketAddr::new(ip("127.0.0.1"), 1);
        assert_eq!(proxies.client(peer, &map), peer);
    }
}
