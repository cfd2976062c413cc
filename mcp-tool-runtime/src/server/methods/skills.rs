//! The methods of the skills extension (`skills/list`, `skills/get`,
//! `resources/directory/read`), answered from the skills loaded at start.

use std::sync::Arc;

use crate::protocol::request::Request;
use crate::server::request::Req;
use crate::server::session::Session;

impl Session {
    /// The methods of the skills extension: `skills/list`, `skills/get` and
    /// `resources/directory/read`.
    pub(crate) fn skills(self: &Arc<Self>, req: &Req<'_>, request: &Request<'_>) {
        let offerings = self.server.offerings();
        #[cfg(feature = "skills")]
        if let Some(skills) = &offerings.skills {
            let response = answer(self, req, skills, request);
            self.respond(req.id(), response);
        }
        #[cfg(not(feature = "skills"))]
        let _ = (req, request, offerings);
    }
}

#[cfg(feature = "skills")]
use serve::answer;

#[cfg(feature = "skills")]
mod serve {
    use std::borrow::Cow;

    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use crate::protocol::jsonrpc::Reply;
    use crate::protocol::request::{Method, Request};
    use crate::protocol::{RpcError, code, jsonrpc};
    use crate::server::catalog::page_index;
    use crate::server::request::{Req, response};
    use crate::server::session::Session;
    use crate::server::skills::load::{Child, SKILL_MD, Skill, Skills};

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

    /// The response to a skills method.
    pub(super) fn answer(
        session: &Session,
        req: &Req<'_>,
        skills: &Skills,
        request: &Request<'_>,
    ) -> Reply {
        let (method, params) = (request.method, request.params);
        let size = session.server.catalog().page_size();
        let id = req.id();
        let params = match jsonrpc::parse_params::<Params<'_>>(params) {
            Ok(p) => p.unwrap_or(Params {
                uri: None,
                cursor: None,
            }),
            Err(e) => return Reply::error(id, &e),
        };
        let cursor = params.cursor.as_deref();
        let bad_cursor = || invalid("Invalid cursor".into(), None);
        fn reply<T: Serialize>(
            session: &Session,
            req: &Req<'_>,
            outcome: Result<T, RpcError>,
        ) -> Reply {
            let shared = &session.server.shared;
            response(
                req.id(),
                session.era(req),
                &shared.info,
                outcome,
                Some(shared.hints),
            )
        }
        let needs_uri = || invalid(format!("`{}` needs a `uri`", request.name), None);
        match method {
            Method::SkillsList => reply(
                session,
                req,
                page(&skills.skills, size, cursor)
                    .map(|(skills, next_cursor)| ListSkills {
                        skills,
                        next_cursor,
                    })
                    .ok_or_else(bad_cursor),
            ),
            Method::SkillsGet => reply(session, req, params.uri.ok_or_else(needs_uri).and_then(|uri| {
                skills
                    .skill(&uri)
                    .map(|skill| GetSkill { skill })
                    .ok_or_else(|| unknown_skill(&uri))
            })),
            _ => reply(session, req, params.uri.ok_or_else(needs_uri).and_then(|uri| {
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
