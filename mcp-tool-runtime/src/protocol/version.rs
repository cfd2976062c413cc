//! The MCP revisions this server speaks, and the shape of tools and results each knows.

use std::fmt;

/// A revision of the MCP specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05.
    V2024_11_05,
    /// 2025-03-26.
    V2025_03_26,
    /// 2025-06-18.
    V2025_06_18,
    /// 2025-11-25, the latest revision with an `initialize` handshake.
    V2025_11_25,
    /// 2026-07-28: stateless, every request carrying its own `_meta`.
    #[default]
    V2026_07_28,
}

impl ProtocolVersion {
    /// The newest revision this server speaks.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The newest revision with an `initialize` handshake and sessions.
    pub const LATEST_STATEFUL: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// Every revision this server speaks, newest first.
    pub const SUPPORTED: [ProtocolVersion; 5] = [
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2024_11_05,
    ];

    /// The revision's date string.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a revision's date string.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        Self::SUPPORTED.into_iter().find(|v| v.as_str() == s)
    }

    /// The answer to an `initialize` asking for `requested`: that revision when it is a
    /// supported revision with a handshake, otherwise the latest one that has it.
    pub fn negotiate(requested: &str) -> ProtocolVersion {
        Self::parse(requested)
            .filter(|v| !v.is_stateless())
            .unwrap_or(Self::LATEST_STATEFUL)
    }

    /// Whether the revision is stateless: no `initialize`, no sessions, a `_meta` on every
    /// request (2026-07-28 and later).
    pub fn is_stateless(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// Every supported revision, newest first, as one comma-separated string (for messages).
    pub(crate) fn supported_list() -> String {
        Self::SUPPORTED.map(ProtocolVersion::as_str).join(", ")
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The shapes of tools and results differ between revisions; each era is one shape, and the
/// wire model's views skip what an era does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Era {
    /// 2024-11-05: no annotations, titles, output schemas, structured content or audio.
    First,
    /// 2025-03-26: annotations and audio, but no titles, output schemas, structured content or
    /// resource links.
    Annotations,
    /// 2025-06-18 and 2025-11-25: everything, in sessions.
    Structured,
    /// 2026-07-28: stateless; every result carries `resultType` and the server's identity, and
    /// lists carry cache hints.
    Stateless,
}

impl Era {
    pub(crate) const ALL: [Era; 4] = [
        Era::First,
        Era::Annotations,
        Era::Structured,
        Era::Stateless,
    ];

    pub(crate) fn of(version: ProtocolVersion) -> Era {
        match version {
            ProtocolVersion::V2024_11_05 => Era::First,
            ProtocolVersion::V2025_03_26 => Era::Annotations,
            ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_11_25 => Era::Structured,
            ProtocolVersion::V2026_07_28 => Era::Stateless,
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// Tool annotations (`ToolAnnotations`).
    pub(crate) fn has_annotations(self) -> bool {
        self != Era::First
    }

    /// Titles, output schemas, structured content and resource links.
    pub(crate) fn has_structured(self) -> bool {
        self >= Era::Structured
    }

    /// `resultType`, the server's identity on results, cache hints on lists.
    pub(crate) fn is_stateless(self) -> bool {
        self == Era::Stateless
    }

    /// Audio content blocks.
    pub(crate) fn has_audio(self) -> bool {
        self != Era::First
    }
}
