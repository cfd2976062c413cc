//! The stores behind the features that keep state outside a request — tasks, resumable
//! streams' events, what replicas share — are named by a URL: `memory` (or nothing) for this
//! process's memory, `redis://host:port/db` (feature `redis`) for a Redis that several
//! processes share. This module reads those URLs, in one way for every feature
//! ([`StoreUrlError`] says why one is refused), and with Redis holds what every Redis store
//! does alike: the client, the connection, the key names (`redis`).
//!
//! Layer: just above `sync`; imports nothing else of the crate.

#[cfg(feature = "redis")]
pub(crate) mod redis;

/// Without Redis (the `redis` feature) a Redis URL is refused, saying so.
#[cfg(not(feature = "redis"))]
mod redis {
    use super::{StoreUrl, StoreUrlError, StoreUrlProblem};

    pub(super) fn parse(store: &'static str, url: &str) -> Result<StoreUrl, StoreUrlError> {
        Err(StoreUrlError::new(store, url, StoreUrlProblem::NoRedis))
    }

    #[cfg(test)]
    mod tests {
        use crate::store::StoreUrlProblem;
        use crate::store::tests::refused;

        #[test]
        fn without_the_feature_redis_urls_say_so() {
            for url in [
                "redis://127.0.0.1:6379",
                "rediss://example.com",
                "redis+unix:///tmp/redis.sock",
            ] {
                let e = refused(url);
                assert_eq!(e.problem(), &StoreUrlProblem::NoRedis);
                assert_eq!(
                    e.to_string(),
                    format!(
                        "task store `{url}`: this server was built without Redis (the `redis` feature of mcp-tool)"
                    )
                );
            }
        }
    }
}

/// What a store URL names.
pub(crate) enum StoreUrl {
    /// This process's memory: `memory`, or nothing.
    Memory,
    /// A Redis, its URL checked (the connection is made when first needed).
    #[cfg(feature = "redis")]
    Redis(Box<redis::Redis>),
}

impl StoreUrl {
    /// Reads the URL of the `store` (`task store`, `event store`, `shared state`: what the
    /// errors call it). Surrounding blanks are ignored.
    pub(crate) fn parse(store: &'static str, url: &str) -> Result<StoreUrl, StoreUrlError> {
        let url = url.trim();
        if url.is_empty() || url == "memory" {
            return Ok(StoreUrl::Memory);
        }
        if !is_redis(url) {
            return Err(StoreUrlError::new(store, url, StoreUrlProblem::Unknown));
        }
        redis::parse(store, url)
    }
}

/// Whether `url` has a Redis scheme: `redis://`, `rediss://` (TLS), `redis+unix://` (a Unix
/// socket).
fn is_redis(url: &str) -> bool {
    url.starts_with("redis://") || url.starts_with("rediss://") || url.starts_with("redis+")
}

/// Why a store URL was refused: what it was for, the URL (its password hidden), and what is
/// wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{store}{}: {problem}", shown_url(.url))]
pub struct StoreUrlError {
    store: &'static str,
    url: String,
    problem: StoreUrlProblem,
}

/// What is wrong with a store URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreUrlProblem {
    /// Neither `memory` nor a Redis URL.
    #[error("expected `memory` or a `redis://host:port` URL")]
    Unknown,
    /// A Redis URL, and the server was built without Redis (the `redis` feature).
    #[error("this server was built without Redis (the `redis` feature of mcp-tool)")]
    NoRedis,
    /// A `rediss://` URL, and the redis crate was built without TLS.
    #[error(
        "this server was built without TLS to Redis (`rediss://`): use `redis://` \
         (through a TLS tunnel where the network needs one)"
    )]
    NoTls,
    /// A Redis URL the redis crate refuses, and why.
    #[error("not a Redis URL: {0}")]
    Invalid(String),
}

/// The URL as an error shows it after what it was for: nothing when there is none.
fn shown_url(url: &str) -> String {
    if url.is_empty() {
        String::new()
    } else {
        format!(" `{url}`")
    }
}

impl StoreUrlError {
    pub(crate) fn new(store: &'static str, url: &str, problem: StoreUrlProblem) -> Self {
        StoreUrlError {
            store,
            url: hide_password(url),
            problem,
        }
    }

    /// What the URL was for: `task store`, `event store` or `shared state`.
    pub fn store(&self) -> &'static str {
        self.store
    }

    /// The URL refused, its password (if it has one) replaced by `***`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// What is wrong with it.
    pub fn problem(&self) -> &StoreUrlProblem {
        &self.problem
    }
}

/// `url` with its password hidden, for error messages: the one in `user:password@` and a
/// `pass=` query parameter (how a `redis+unix://` URL gives it).
fn hide_password(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    if let Some(scheme_end) = url.find("://").map(|i| i + 3) {
        out.push_str(&url[..scheme_end]);
        rest = &url[scheme_end..];
        let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
        {
            out.push_str(&authority[..=colon]);
            out.push_str("***");
            rest = &rest[at..];
        }
    }
    let Some(query) = rest.find('?') else {
        out.push_str(rest);
        return out;
    };
    out.push_str(&rest[..=query]);
    let (query, fragment) = match rest[query + 1..].split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (&rest[query + 1..], None),
    };
    for (i, pair) in query.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some(("pass", _)) => out.push_str("pass=***"),
            _ => out.push_str(pair),
        }
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Why `url` was refused as a task store's (every test of a URL refused).
    pub(super) fn refused(url: &str) -> StoreUrlError {
        match StoreUrl::parse("task store", url) {
            Ok(_) => panic!("`{url}` was accepted"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_refusal_names_the_store_and_the_url_when_there_is_one() {
        let unknown = StoreUrlError::new("task store", "sqlite://x", StoreUrlProblem::Unknown);
        assert_eq!(
            unknown.to_string(),
            "task store `sqlite://x`: expected `memory` or a `redis://host:port` URL"
        );
        let empty = StoreUrlError::new("shared state", "", StoreUrlProblem::NoRedis);
        assert_eq!(
            empty.to_string(),
            "shared state: this server was built without Redis (the `redis` feature of mcp-tool)"
        );
        assert_eq!(
            StoreUrlProblem::Invalid("bad port".into()).to_string(),
            "not a Redis URL: bad port"
        );
        assert!(StoreUrlProblem::NoTls.to_string().starts_with(
            "this server was built without TLS to Redis (`rediss://`): use `redis://` (through"
        ));
    }

    #[test]
    fn memory_is_named_or_left_out() {
        for url in ["memory", "", "  ", " memory\n"] {
            assert!(
                matches!(StoreUrl::parse("task store", url), Ok(StoreUrl::Memory)),
                "{url:?}"
            );
        }
    }

    #[test]
    fn other_schemes_are_refused_as_such() {
        for url in [
            "Memory",
            "mem",
            "memory://",
            "redis",
            "REDIS://127.0.0.1",
            "valkey://127.0.0.1",
            "unix:///tmp/redis.sock",
            "http://127.0.0.1:6379",
            "127.0.0.1:6379",
        ] {
            let e = refused(url);
            assert_eq!(e.problem(), &StoreUrlProblem::Unknown, "{url}");
            assert_eq!(
                e.to_string(),
                format!("task store `{url}`: expected `memory` or a `redis://host:port` URL")
            );
        }
        let e = StoreUrl::parse("shared state", " nope ").err().unwrap();
        assert_eq!(
            (e.store(), e.url()),
            ("shared state", "nope"),
            "the URL is shown trimmed"
        );
    }

    #[test]
    fn passwords_are_hidden_from_errors() {
        for (url, shown) in [
            ("redis://:s3cret@h:1/x", "redis://:***@h:1/x"),
            ("redis://u:p@ss@h/x", "redis://u:***@h/x"),
            ("redis://user@h/x", "redis://user@h/x"),
            ("redis://h/x?pass=1", "redis://h/x?pass=***"),
            (
                "redis+unix:///s?db=1&pass=p&x=2#f",
                "redis+unix:///s?db=1&pass=***&x=2#f",
            ),
            ("redis://h/x#a@b:c", "redis://h/x#a@b:c"),
            ("no scheme:pw@h", "no scheme:pw@h"),
        ] {
            assert_eq!(hide_password(url), shown, "{url}");
        }
        let e = StoreUrlError::new(
            "event store",
            "redis://:s3cret@h:1/x",
            StoreUrlProblem::Unknown,
        );
        assert!(!e.to_string().contains("s3cret"), "{e}");
    }
}
