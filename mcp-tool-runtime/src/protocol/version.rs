//! The MCP protocol versions this server speaks, and the shape of tools and results each knows.

use std::fmt;

/// A version of the MCP protocol (`protocolVersion`, the `MCP-Protocol-Version` header): one
/// dated edition of the specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05.
    V2024_11_05,
    /// 2025-03-26.
    V2025_03_26,
    /// 2025-06-18.
    V2025_06_18,
    /// 2025-11-25, the latest version with an `initialize` handshake.
    V2025_11_25,
    /// 2026-07-28: stateless, every request carrying its own `_meta`.
    #[default]
    V2026_07_28,
}

impl ProtocolVersion {
    /// The newest version this server speaks.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The newest version with an `initialize` handshake and sessions.
    pub const LATEST_STATEFUL: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// Every version this server speaks, newest first.
    pub const SUPPORTED: [ProtocolVersion; 5] = [
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2024_11_05,
    ];

    /// The version's date string.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a version's date string.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        Self::SUPPORTED.into_iter().find(|v| v.as_str() == s)
    }

    /// The answer to an `initialize` asking for `requested`: that version when it is a
    /// supported version with a handshake, otherwise the latest one that has it.
    pub fn negotiate(requested: &str) -> ProtocolVersion {
        Self::parse(requested)
            .filter(|v| !v.is_stateless())
            .unwrap_or(Self::LATEST_STATEFUL)
    }

    /// Whether the version is stateless: no `initialize`, no sessions, a `_meta` on every
    /// request (2026-07-28 and later).
    pub fn is_stateless(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// Every supported version, newest first, as one comma-separated string (for messages).
    pub(crate) fn supported_list() -> String {
        Self::SUPPORTED.map(ProtocolVersion::as_str).join(", ")
    }

    /// One version of each shape of tools and results, oldest first: 2024-11-05 (no
    /// annotations, titles, output schemas, structured content or audio), 2025-03-26
    /// (annotations and audio), 2025-06-18 (everything, in sessions; 2025-11-25 has the same
    /// shape), 2026-07-28 (stateless: every result carries `resultType` and the server's
    /// identity, and lists carry cache hints). The wire model's views skip what a version does
    /// not know, so what is rendered once per shape serves every version of it.
    pub(crate) const SHAPES: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2026_07_28,
    ];

    /// The index in [`SHAPES`](Self::SHAPES) of the version whose shape this one has.
    pub(crate) fn shape(self) -> usize {
        match self {
            ProtocolVersion::V2024_11_05 => 0,
            ProtocolVersion::V2025_03_26 => 1,
            ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_11_25 => 2,
            ProtocolVersion::V2026_07_28 => 3,
        }
    }

    /// Tool annotations (`ToolAnnotations`).
    pub(crate) fn has_annotations(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }

    /// Titles, output schemas, structured content and resource links.
    pub(crate) fn has_structured(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// Audio content blocks.
    pub(crate) fn has_audio(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ProtocolVersion;

    #[test]
    fn every_version_has_the_shape_it_is_rendered_in() {
        for version in ProtocolVersion::SUPPORTED {
            let shape = ProtocolVersion::SHAPES[version.shape()];
            assert_eq!(shape.shape(), version.shape(), "{version}");
            let knows = |v: ProtocolVersion| {
                (
                    v.has_annotations(),
                    v.has_structured(),
                    v.has_audio(),
                    v.is_stateless(),
                )
            };
            assert_eq!(knows(shape), knows(version), "{version} renders as {shape}");
        }
        let distinct = |a: ProtocolVersion, b: ProtocolVersion| {
            (a.has_annotations(), a.has_structured(), a.is_stateless())
                != (b.has_annotations(), b.has_structured(), b.is_stateless())
        };
        for pair in ProtocolVersion::SHAPES.windows(2) {
            assert!(distinct(pair[0], pair[1]), "{} and {}", pair[0], pair[1]);
        }
    }
}
