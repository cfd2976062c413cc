//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640): a folder of Agent Skills
//! ([`Server::skills`](crate::server::Server::skills), feature `skills`) served over resources —
//! `skills/list` (every skill's frontmatter and the manifest of its files), `skills/get` (one
//! skill by the URI of its `SKILL.md`), `resources/directory/read` (a skill's folders), and
//! `resources/read` of `skill://<name>/<path>` — in both protocol versions, with 2026-07-28's
//! cache hints. Without skills these methods are -32601. The methods are served by
//! `methods::skills`; the skills are offered (as resources) by `resources`.

#[cfg(feature = "skills")]
pub(crate) mod load;
#[cfg(feature = "skills")]
mod resources;

/// The skills extension's identifier (`capabilities.extensions`).
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";
