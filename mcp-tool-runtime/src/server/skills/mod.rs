//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640): a folder of Agent Skills
//! ([`Server::skills`](super::Server::skills), feature `skills`) served over resources —
//! `skills/list` (every skill's frontmatter and the manifest of its files), `skills/get` (one
//! skill by the URI of its `SKILL.md`), `resources/directory/read` (a skill's folders), and
//! `resources/read` of `skill://<name>/<path>` — in both eras, with 2026-07-28's cache hints.
//! Without skills these methods are -32601. The methods are served by `methods::skills`;
//! the skills are offered (as resources) by `offerings`.

#[cfg(feature = "skills")]
pub(crate) mod load;

/// The skills extension's identifier (`capabilities.extensions`).
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

#[cfg(feature = "skills")]
pub(crate) use load::Skills;

/// How long a skill file's contents stay fresh in a client's cache: they are fixed at start
/// (a file changed on disk is refused, not served).
#[cfg(feature = "skills")]
pub(crate) const FILE_TTL: std::time::Duration = std::time::Duration::from_secs(300);
