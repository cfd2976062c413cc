//! The methods of the skills extension (`skills/list`, `skills/get`,
//! `resources/directory/read`), answered from the skills loaded at start.

use crate::protocol::request::Request;
use crate::server::core::request::Cx;

/// `skills/list`: the skills, a page at a time.
pub(crate) fn list(cx: &Cx<'_>, request: &Request<'_>) {
    skills(cx, request);
}

/// `skills/get`: one skill, by the URI of its `SKILL.md`.
pub(crate) fn get(cx: &Cx<'_>, request: &Request<'_>) {
    skills(cx, request);
}

/// `resources/directory/read`: the files of a skill's directory, a page at a time.
pub(crate) fn directory(cx: &Cx<'_>, request: &Request<'_>) {
    skills(cx, request);
}

/// The methods of the skills extension, answered from the skills loaded at start (the
/// dispatch table refuses them with -32601 when the server has none).
fn skills(cx: &Cx<'_>, request: &Request<'_>) {
    let offerings = cx.server().offerings();
    if let Some(response) = serve::answer(cx, &offerings, request) {
        cx.respond(response);
    }
}

#[cfg(feature = "skills")]
mod serve {
    use std::borrow::Cow;

    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use crate::protocol::jsonrpc::Reply;
    use crate::protocol::request::{Method, Request};
    use crate::protocol::{RpcError, code, jsonrpc};
    use crate::server::core::request::Cx;
    use crate::server::offerings::Offerings;
    use crate::server::offerings::catalog::page_index;
    use crate::server::offerings::skills::load::{Child, SKILL_MD, Skill, Skills};

    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, default)]
        uri: Option<Cow<'a, str>>,
        #[serde(borrow, default)]
        cursor: Option<Cow<'a, str>>,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct ListSkills<'a> {
        skills: &'a [Skill],
        #[serde(skip_serializing_if = "Option::is_none")]
        next_cursor: Option<String>,
    }

    #[derive(Serialize)]
    struct GetSkill<'a> {
        skill: &'a Skill,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Directory<'a> {
        resources: &'a [Child],
        #[serde(skip_serializing_if = "Option::is_none")]
        next_cursor: Option<String>,
    }

    fn invalid(message: String, uri: Option<&str>) -> RpcError {
        let e = RpcError::new(code::INVALID_PARAMS, message);
        match uri {
            Some(uri) => e.with_data(json!({ "uri": uri })),
            None => e,
        }
    }

    /// One page of `items`, paginated like the other lists; `None` for a bad cursor.
    fn page<'a, T>(
        items: &'a [T],
        size: usize,
        cursor: Option<&str>,
    ) -> Option<(&'a [T], Option<String>)> {
        let index = page_index(cursor, items.len().div_ceil(size).max(1))?;
        let start = index * size;
        let end = (start + size).min(items.len());
        Some((
            &items[start..end],
            (end < items.len()).then(|| (index + 1).to_string()),
        ))
    }

    /// The response to a skills method, if the server has skills.
    pub(super) fn answer(
        cx: &Cx<'_>,
        offerings: &Offerings,
        request: &Request<'_>,
    ) -> Option<Reply> {
        let skills = offerings.skills.as_ref()?;
        Some(respond(cx, skills, request))
    }

    /// The response to a skills method.
    fn respond(cx: &Cx<'_>, skills: &Skills, request: &Request<'_>) -> Reply {
        let (method, params) = (request.method, request.params);
        let size = cx.server().catalog().page_size();
        let id = cx.id();
        let params = match jsonrpc::parse_params::<Params<'_>>(params) {
            Ok(p) => p.unwrap_or(Params {
                uri: None,
                cursor: None,
            }),
            Err(e) => return Reply::error(id, &e),
        };
        let cursor = params.cursor.as_deref();
        let bad_cursor = || invalid("Invalid cursor".into(), None);
        fn reply<T: Serialize>(cx: &Cx<'_>, outcome: Result<T, RpcError>) -> Reply {
            cx.reply(outcome, Some(cx.server().shared.hints))
        }
        let needs_uri = || invalid(format!("`{}` needs a `uri`", request.name), None);
        match method {
            Method::SkillsList => reply(
                cx,
                page(&skills.skills, size, cursor)
                    .map(|(skills, next_cursor)| ListSkills {
                        skills,
                        next_cursor,
                    })
                    .ok_or_else(bad_cursor),
            ),
            Method::SkillsGet => reply(cx, params.uri.ok_or_else(needs_uri).and_then(|uri| {
                skills
                    .skill(&uri)
                    .map(|skill| GetSkill { skill })
                    .ok_or_else(|| unknown_skill(&uri))
            })),
            _ => reply(cx, params.uri.ok_or_else(needs_uri).and_then(|uri| {
                let children = skills.directories.get(&*uri).ok_or_else(|| {
                    invalid(
                        format!(
                            "`{uri}` is not a directory of a skill (a skill's directory is its `SKILL.md` URI without `/{SKILL_MD}`)"
                        ),
                        Some(&uri),
                    )
                })?;
                page(children, size, cursor)
                    .map(|(resources, next_cursor)| Directory {
                        resources,
                        next_cursor,
                    })
                    .ok_or_else(bad_cursor)
            })),
        }
    }

    /// -32602 for a URI that is no skill's `SKILL.md`, saying which ones are.
    fn unknown_skill(uri: &str) -> RpcError {
        invalid(
            format!(
                "Unknown skill: `{uri}` (a skill is named by the URI of its `SKILL.md`, as `skills/list` gives it: `skill://<name>/{SKILL_MD}`)"
            ),
            Some(uri),
        )
    }
}

/// Without skills (the `skills` feature) no server has any: dispatch answers -32601 before
/// these methods would come here.
#[cfg(not(feature = "skills"))]
mod serve {
    use crate::protocol::jsonrpc::Reply;
    use crate::protocol::request::Request;
    use crate::server::core::request::Cx;
    use crate::server::offerings::Offerings;

    pub(super) fn answer(_: &Cx<'_>, _: &Offerings, _: &Request<'_>) -> Option<Reply> {
        None
    }
}
