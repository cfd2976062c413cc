//! One incoming request, read once. The envelope ([`super::jsonrpc::parse`]) gives the id,
//! the method and the params as borrowed text; [`Request::read`] then goes over the params a
//! single time and keeps, still as borrowed text, the members any reader before the handler
//! needs: `_meta` (read in the same pass into its fields: the version's keys, the progress
//! token, the trace context), and the name, URI, task id and arguments the HTTP headers
//! mirror and telemetry names. Every later reader (the HTTP header checks, telemetry,
//! dispatch, the handler) gets this value; none reads the text again. A handler turns exactly
//! the members it uses into its own types.
//!
//! [`super::inbound::read_line`] reads a line so in one pass: the envelope, the params and
//! their `_meta` are walked ([`super::walk`]), each byte once.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use super::error::{RpcError, code};
use super::jsonrpc;
use super::meta::{CLIENT_CAPABILITIES, MetaFields, PROTOCOL_VERSION, RequestMeta};
use super::walk::{JsonText, Object, Seen};

/// The methods a client may send; [`Method::Other`] is any other name (answered -32601).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Method {
    Initialize,
    Ping,
    SetLevel,
    ToolsList,
    ToolsCall,
    ResourcesList,
    ResourceTemplatesList,
    ResourcesRead,
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    DirectoryRead,
    PromptsList,
    PromptsGet,
    Complete,
    TasksGet,
    TasksResult,
    TasksList,
    TasksCancel,
    TasksUpdate,
    SkillsList,
    SkillsGet,
    Discover,
    Listen,
    /// `notifications/initialized`.
    Initialized,
    /// `notifications/cancelled`.
    Cancelled,
    Other,
}

impl Method {
    /// Every method but [`Method::Other`], with its name on the wire; the most requested
    /// first, as [`Method::parse`] looks in order.
    const NAMES: [(Method, &'static str); 25] = [
        (Method::ToolsCall, "tools/call"),
        (Method::Initialize, "initialize"),
        (Method::Ping, "ping"),
        (Method::SetLevel, "logging/setLevel"),
        (Method::ToolsList, "tools/list"),
        (Method::ResourcesList, "resources/list"),
        (Method::ResourceTemplatesList, "resources/templates/list"),
        (Method::ResourcesRead, "resources/read"),
        (Method::ResourcesSubscribe, "resources/subscribe"),
        (Method::ResourcesUnsubscribe, "resources/unsubscribe"),
        (Method::DirectoryRead, "resources/directory/read"),
        (Method::PromptsList, "prompts/list"),
        (Method::PromptsGet, "prompts/get"),
        (Method::Complete, "completion/complete"),
        (Method::TasksGet, "tasks/get"),
        (Method::TasksResult, "tasks/result"),
        (Method::TasksList, "tasks/list"),
        (Method::TasksCancel, "tasks/cancel"),
        (Method::TasksUpdate, "tasks/update"),
        (Method::SkillsList, "skills/list"),
        (Method::SkillsGet, "skills/get"),
        (Method::Discover, "server/discover"),
        (Method::Listen, "subscriptions/listen"),
        (Method::Initialized, "notifications/initialized"),
        (Method::Cancelled, "notifications/cancelled"),
    ];

    /// The method named `name` on the wire.
    pub(crate) fn parse(name: &str) -> Method {
        Self::NAMES
            .iter()
            .find(|(_, n)| n.len() == name.len() && *n == name)
            .map_or(Method::Other, |(m, _)| *m)
    }

    /// The method's name on the wire (`""` for [`Method::Other`]: use the name as sent).
    #[cfg(test)]
    fn as_str(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(m, _)| *m == self)
            .map_or("", |(_, n)| n)
    }

    /// Whether the method exists only in the stateless versions (2026-07-28): a request of
    /// it speaks them whatever its `_meta` says.
    pub(crate) fn only_stateless(self) -> bool {
        matches!(self, Method::Discover | Method::Listen)
    }
}

/// The members of a request's params that readers before the handler need, and those a
/// handler of `tools/call` takes, as borrowed text (read in one pass; any other member is
/// skipped). A member sent as `null` counts as absent.
#[derive(Deserialize, Default, Debug)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Members<'a> {
    #[serde(rename = "_meta", borrow, default)]
    pub(crate) meta: Option<JsonText<'a>>,
    #[serde(borrow, default)]
    pub(crate) name: Option<JsonText<'a>>,
    #[serde(borrow, default)]
    pub(crate) uri: Option<JsonText<'a>>,
    #[serde(borrow, default)]
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // the Mcp-Name header's
    pub(crate) task_id: Option<JsonText<'a>>,
    #[serde(borrow, default)]
    pub(crate) arguments: Option<JsonText<'a>>,
    #[serde(borrow, default)]
    pub(crate) task: Option<JsonText<'a>>,
    #[serde(borrow, default)]
    pub(crate) input_responses: Option<JsonText<'a>>,
    #[serde(borrow, default)]
    pub(crate) request_state: Option<JsonText<'a>>,
}

/// The params' keys, found by comparing them (numbered so in [`Members::walk_object`]).
const PARAMS: [&str; 8] = [
    "name",
    "arguments",
    "_meta",
    "uri",
    "taskId",
    "task",
    "inputResponses",
    "requestState",
];

impl<'a> Members<'a> {
    /// The members of `params`, walked (the envelope's parse checked their text), and the
    /// fields of their `_meta` when the walk could read those too; `None` when only serde's
    /// derive reads the members as it does: a key written with an escape, a member given
    /// twice (refused, naming it).
    fn walk(params: JsonText<'a>) -> Option<(Members<'a>, Option<MetaFields<'a>>)> {
        let mut members = Members::default();
        let fields = Members::walk_object(&mut Object::of(params)?, &mut members)?;
        Some((members, fields))
    }

    /// [`Members::walk`], of the params' object being walked, into `members` (a default
    /// value): the fields of their `_meta` when the walk could read those too; `None` when
    /// serde is to read the params.
    pub(super) fn walk_object(
        walk: &mut Object<'a>,
        members: &mut Members<'a>,
    ) -> Option<Option<MetaFields<'a>>> {
        let mut fields = None;
        let mut seen = Seen::default();
        while let Some(key) = walk.key_of(&PARAMS) {
            let Some(n) = key.known else {
                if key.escaped {
                    return None;
                }
                // Skipped by the next key.
                continue;
            };
            seen.first(n)?;
            let slot = match n {
                0 => &mut members.name,
                1 => &mut members.arguments,
                2 => {
                    // A client sends the same `_meta` with each stateless request: one read
                    // just before is recognized by its text.
                    if let Some(known) = MetaFields::recall(walk) {
                        let (value, known) = known?;
                        fields = Some(known);
                        members.meta = value.present();
                        continue;
                    }
                    let value = match walk.nested() {
                        Some(mut inner) => {
                            fields = MetaFields::walk(&mut inner);
                            let value = walk.after(&inner)?;
                            if let Some(fields) = &fields {
                                fields.remember(value);
                            }
                            value
                        }
                        None => walk.value()?,
                    };
                    members.meta = value.present();
                    continue;
                }
                3 => &mut members.uri,
                4 => &mut members.task_id,
                5 => &mut members.task,
                6 => &mut members.input_responses,
                _ => &mut members.request_state,
            };
            *slot = walk.value()?.present();
        }
        (!walk.broken()).then_some(fields)
    }
}

/// One request (or notification), read once.
#[derive(Debug)]
pub(crate) struct Request<'a> {
    /// The id as sent; `None` for a notification.
    pub(crate) id: Option<JsonText<'a>>,
    pub(crate) method: Method,
    /// The method's name as sent (for [`Method::Other`], and in messages).
    pub(crate) name: Cow<'a, str>,
    /// The params as sent.
    pub(crate) params: Option<JsonText<'a>>,
    /// What the one pass over the params found.
    pub(crate) members: Members<'a>,
    /// `_meta`'s fields (empty without one).
    pub(crate) meta: MetaFields<'a>,
    /// Why the params or their `_meta` could not be read: answered -32602 by every handler
    /// that reads them.
    pub(crate) malformed: Option<RpcError>,
    /// Whether the request speaks a stateless version (2026-07-28): its `_meta` names the
    /// version's keys, or its method exists only there.
    pub(crate) stateless: bool,
    /// The id's key (see [`Request::key`]), made when first asked for.
    pub(crate) key: OnceLock<Arc<str>>,
}

fn invalid(why: String) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, why)
}

/// A string member's text: borrowed when it has no escape, else unescaped; -32602 naming
/// the member when it is not a string.
pub(crate) fn text<'a>(raw: JsonText<'a>, member: &str) -> Result<Cow<'a, str>, RpcError> {
    let s = raw.get();
    if let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"'))
        && !inner.contains('\\')
    {
        return Ok(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(s)
        .map(Cow::Owned)
        .map_err(|_| invalid(format!("Invalid params: `{member}` must be a string")))
}

impl<'a> Request<'a> {
    /// Reads a request (`id`) or a notification (no `id`) from its envelope's parts.
    pub(crate) fn read(
        id: Option<JsonText<'a>>,
        name: Cow<'a, str>,
        params: Option<JsonText<'a>>,
    ) -> Request<'a> {
        Request::read_with(id, name, params, true)
    }

    /// [`Request::read`], with `walk` false reading the params by serde alone (as the walk
    /// leaves them to it when unsure): the two must read any params alike.
    fn read_with(
        id: Option<JsonText<'a>>,
        name: Cow<'a, str>,
        params: Option<JsonText<'a>>,
        walk: bool,
    ) -> Request<'a> {
        let (members, fields) = params.filter(|_| walk).and_then(Members::walk).unzip();
        Request::read_walked(id, name, params, members, fields.flatten())
    }

    /// [`Request::read`], the params walked already: their `members` when the walk could
    /// read them, and their `_meta`'s `fields` when it could read those too. Inlined, so the
    /// request is built where the caller keeps it, not built then copied there.
    #[inline(always)]
    pub(super) fn read_walked(
        id: Option<JsonText<'a>>,
        name: Cow<'a, str>,
        params: Option<JsonText<'a>>,
        members: Option<Members<'a>>,
        walked: Option<MetaFields<'a>>,
    ) -> Request<'a> {
        let method = Method::parse(&name);
        let mut malformed = None;
        let members = match (params, members) {
            (None, _) => Members::default(),
            (Some(_), Some(members)) => members,
            (Some(p), None) => serde_json::from_str::<Members<'_>>(p.get()).unwrap_or_else(|e| {
                malformed = Some(invalid(format!("Invalid params: {e}")));
                Members::default()
            }),
        };
        let mut stateless = method.only_stateless();
        let meta = match members.meta {
            None => MetaFields::default(),
            Some(raw) if !raw.get().starts_with('{') => {
                malformed.get_or_insert_with(|| invalid("`_meta` must be an object".into()));
                MetaFields::default()
            }
            Some(raw) => {
                walked.unwrap_or_else(|| MetaFields::parse(raw, &mut stateless, &mut malformed))
            }
        };
        stateless |= meta.speaks_stateless();
        Request {
            id,
            method,
            name,
            params,
            members,
            meta,
            malformed,
            stateless,
            key: OnceLock::new(),
        }
    }

    /// The id's key ([`jsonrpc::id_key`]): made once, however many readers ask (the HTTP
    /// route of its answer, the call's context, the response); `None` for a notification.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn key(&self) -> Option<&Arc<str>> {
        let id = self.id?;
        Some(self.key.get_or_init(|| jsonrpc::id_key(id.get())))
    }

    /// The id's text (`"null"` for a notification).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn id_text(&self) -> &'a str {
        self.id.map_or("null", JsonText::get)
    }

    /// The params could be read (-32602 otherwise).
    pub(crate) fn check(&self) -> Result<(), RpcError> {
        self.malformed.clone().map_or(Ok(()), Err)
    }

    /// A stateless request's `_meta`, checked the way the version orders it (required
    /// fields first, -32602; the version is checked by [`RequestMeta::version`]).
    pub(crate) fn stateless_meta(&self) -> Result<RequestMeta<'a>, RpcError>
    where
        Self: 'a,
    {
        self.check()?;
        if self.members.meta.is_none() {
            return Err(invalid(format!(
                "a request of protocol 2026-07-28 carries `_meta` with `{PROTOCOL_VERSION}` and `{CLIENT_CAPABILITIES}`"
            )));
        }
        RequestMeta::from_fields(&self.meta)
    }

    /// The `name` member's text (tools/call, prompts/get).
    pub(crate) fn name_member(&self) -> Result<Option<Cow<'a, str>>, RpcError> {
        self.members.name.map(|r| text(r, "name")).transpose()
    }

    /// The `uri` member's text (resources/read, subscribe, unsubscribe).
    pub(crate) fn uri_member(&self) -> Result<Option<Cow<'a, str>>, RpcError> {
        self.members.uri.map(|r| text(r, "uri")).transpose()
    }

    /// The `taskId` member's text (the tasks methods).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn task_id_member(&self) -> Result<Option<Cow<'a, str>>, RpcError> {
        self.members.task_id.map(|r| text(r, "taskId")).transpose()
    }

    /// The member the `Mcp-Name` header mirrors for this method, if it has one.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn target(&self) -> Option<Result<Option<Cow<'a, str>>, RpcError>> {
        match self.method {
            Method::ToolsCall | Method::PromptsGet => Some(self.name_member()),
            Method::ResourcesRead => Some(self.uri_member()),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
                Some(self.task_id_member())
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;

    fn read(method: &str, params: &str) -> Request<'static> {
        let raw: &'static RawValue =
            Box::leak(serde_json::from_str::<Box<RawValue>>(params).unwrap());
        Request::read(None, Cow::Owned(method.to_owned()), Some(raw.into()))
    }

    #[test]
    fn every_method_reads_back_its_name() {
        for (method, name) in Method::NAMES {
            assert_eq!(Method::parse(name), method);
            assert_eq!(method.as_str(), name);
        }
        assert_eq!(Method::parse("tools/cal"), Method::Other);
        assert_eq!(Method::Other.as_str(), "");
    }

    #[test]
    fn the_walk_reads_params_as_serde_reads_them() {
        let meta = |fields: &str| {
            format!(
                r#"{{"name":"add","_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}{fields}}},"arguments":{{"a":1}}}}"#
            )
        };
        let mut cases: Vec<String> = [
            "{}",
            r#"{"name":"add","arguments":{"a":2,"b":3}}"#,
            r#"{ "name" : "a\"b" , "arguments" : [ 1 ] , "x" : { "name" : 1 } }"#,
            r#"{"name":null,"uri":"u","taskId":"t","task":{"ttl":5},"inputResponses":{"k":{}},"requestState":"s"}"#,
            r#"{"name":"a","name":"b"}"#,
            r#"{"name":null,"name":"b"}"#,
            r#"{"n\u0061me":"a"}"#,
            r#"{"_meta":5}"#,
            r#"{"_meta":null,"name":"a"}"#,
            r#"{"_meta":{},"_meta":{}}"#,
            r#"{"_meta":{"progressToken":"p","other":[1,{"a":"}"}]}}"#,
            r#"{"_meta":{"progressToken":7,"progressToken":8}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/logLevel":7,"progressToken":1}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
        ]
        .map(str::to_owned)
        .to_vec();
        for fields in [
            "",
            r#","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}"#,
            r#","io.modelcontextprotocol/clientInfo":null,"io.modelcontextprotocol/logLevel":"info""#,
            r#","io.modelcontextprotocol/logLevel":"in\u0066o""#,
            r#","io.modelcontextprotocol/logLevel":null,"progressToken":null"#,
            r#","progressToken":{"t":[1]},"traceparent":"00-x","tracestate":"a=b","baggage":"k=v""#,
            r#","traceparent":5"#,
            r#","io.modelcontextprotocol/client\u0049nfo":{}"#,
        ] {
            cases.push(meta(fields));
        }
        for text in &cases {
            assert_walked_as_serde_reads(text);
        }
        // The walk reads the common params itself, and leaves the others to serde.
        let walked = |text: &str| {
            let raw: &'static RawValue =
                Box::leak(serde_json::from_str::<Box<RawValue>>(text).unwrap());
            Members::walk(raw.into()).map(|(_, fields)| fields.is_some())
        };
        assert_eq!(walked(&cases[1]), Some(false));
        assert_eq!(walked(&meta("")), Some(true));
        assert_eq!(walked(&meta(r#","progressToken":1"#)), Some(true));
        assert_eq!(
            walked(&meta(r#","traceparent":5"#)),
            Some(!cfg!(feature = "otel"))
        );
        assert_eq!(walked(r#"{"n\u0061me":"a"}"#), None);
        assert_eq!(walked(r#"{"name":"a","name":"b"}"#), None);
    }

    /// `text`, read as params with the walk and without it, gives the same request.
    fn assert_walked_as_serde_reads(text: &str) {
        let raw: &'static RawValue =
            Box::leak(serde_json::from_str::<Box<RawValue>>(text).unwrap());
        let read = |walk| {
            let r = Request::read_with(None, "tools/call".into(), Some(raw.into()), walk);
            format!(
                "{:?} {:?} {:?} {}",
                r.members, r.meta, r.malformed, r.stateless
            )
        };
        assert_eq!(read(true), read(false), "{text}");
    }

    #[test]
    fn a_meta_read_before_is_recognized_by_its_text_and_read_as_serde_reads_it() {
        let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x":[1]},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info","other":"}"}"#;
        let cases = [
            format!(r#"{{"name":"a","_meta":{meta},"arguments":{{}}}}"#),
            format!(r#"{{"_meta":{meta}}}"#),
            format!(r#"{{"_meta":{meta} , "name":"b","_meta":1}}"#),
            format!(r#"{{"_meta":{meta} , "name":"b","name":"c"}}"#),
            // The same text and more: another `_meta`, walked.
            format!(
                r#"{{"_meta":{},"name":"d"}}"#,
                meta.replace(r#""}"}"#, r#""}","z":2}"#)
            ),
            format!(r#"{{"_meta":{}}}"#, meta.replace("info", "debug")),
            format!(
                r#"{{"_meta":{}}}"#,
                meta.replace("\"}\"}", "\"}\",\"progressToken\":1}")
            ),
            format!(r#"{{"_meta":{meta}}}"#),
        ];
        // Each read twice: the second (and the next case's first) may find it kept.
        for text in cases.iter().flat_map(|c| [c, c]) {
            assert_walked_as_serde_reads(text);
        }
    }

    #[test]
    fn only_a_stateless_meta_a_client_repeats_is_kept() {
        use crate::protocol::meta::kept_text as kept;
        let list = |params: &str| {
            read("tools/list", params);
        };
        let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        list(&format!(r#"{{"_meta":{meta}}}"#));
        assert_eq!(kept().as_deref(), Some(meta));
        // A progress token changes from one request to the next; a session's `_meta` has
        // none of the stateless keys; a long one is not kept.
        let long = format!(r#"{{"x":"{}"}}"#, "y".repeat(4096));
        for other in [
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}"#,
            r#"{"progressToken":1}"#,
            r#"{}"#,
            &meta.replace("{}}", &format!("{long}}}")),
        ] {
            list(&format!(r#"{{"_meta":{other}}}"#));
            assert_eq!(kept().as_deref(), Some(meta), "{other}");
        }
        let again = meta.replace("{}}", r#"{"sampling":{}}}"#);
        list(&format!(r#"{{"_meta":{again}}}"#));
        assert_eq!(kept(), Some(again.clone()));
        // A call whose `_meta` is the kept one shares it; another `_meta` is not given it.
        use crate::protocol::meta::shared_text;
        let (a, b) = (shared_text(&again).unwrap(), shared_text(&again).unwrap());
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(*a, *again);
        assert!(shared_text(meta).is_none());
    }

    #[test]
    fn one_pass_finds_the_members_and_the_version() {
        let r = read(
            "tools/call",
            r#"{"name":"add","arguments":{"a":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}},"_meta":{"progressToken":7}}"#,
        );
        assert!(
            !r.stateless,
            "only `_meta`'s own keys count, not an argument's"
        );
        assert_eq!(r.name_member().unwrap().as_deref(), Some("add"));
        assert_eq!(r.meta.progress_token.map(JsonText::get), Some("7"));
        assert_eq!(
            r.members.arguments.map(JsonText::get),
            Some(r#"{"a":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}"#)
        );
        let r = read(
            "tools/list",
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        );
        assert!(r.stateless);
        assert!(r.stateless_meta().is_ok());
        assert!(read("server/discover", "{}").stateless);
    }

    #[test]
    fn unreadable_params_are_kept_as_the_error_to_answer() {
        let r = read("tools/call", r#"{"_meta":5}"#);
        assert!(
            r.check()
                .unwrap_err()
                .message
                .contains("`_meta` must be an object")
        );
        let r = read(
            "tools/call",
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}"#,
        );
        assert!(r.stateless, "it names the version's key");
        assert!(r.check().unwrap_err().message.contains("Invalid `_meta`"));
        let r = read("tools/call", r#"{"name":5}"#);
        assert!(
            r.check().is_ok(),
            "members are text until a handler reads them"
        );
        assert!(r.name_member().unwrap_err().message.contains("`name`"));
        let r = read("tools/call", r#"{"name":"a\"b"}"#);
        assert_eq!(r.name_member().unwrap().as_deref(), Some("a\"b"));
    }
}

#[cfg(test)]
mod meta_tests {
    use super::*;
    use crate::protocol::{LogLevel, ProtocolVersion};
    use serde_json::Value;
    use serde_json::value::RawValue;

    fn parse(params: &str) -> Result<RequestMeta<'static>, RpcError> {
        let raw: &'static RawValue =
            Box::leak(serde_json::from_str::<Box<RawValue>>(params).unwrap());
        let request = Box::leak(Box::new(Request::read(
            None,
            "tools/list".into(),
            Some(raw.into()),
        )));
        request.stateless_meta()
    }

    #[test]
    fn required_fields_are_checked_before_the_version() {
        assert_eq!(parse("{}").unwrap_err().code, code::INVALID_PARAMS);
        let e =
            parse(r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}"#).unwrap_err();
        assert!(e.message.contains(PROTOCOL_VERSION), "{e}");
        let e =
            parse(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999"}}"#).unwrap_err();
        assert!(e.message.contains(CLIENT_CAPABILITIES), "{e}");
        let meta = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        )
        .unwrap();
        let e = meta.version().unwrap_err();
        assert_eq!(e.code, code::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(e.data.as_ref().unwrap()["requested"], "v999");
        assert_eq!(e.data.as_ref().unwrap()["supported"][0], "2026-07-28");
    }

    #[test]
    fn the_log_level_is_read_and_checked() {
        let meta = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"warning"}}"#,
        )
        .unwrap();
        assert_eq!(meta.log_level, Some(LogLevel::Warning));
        assert_eq!(meta.version().unwrap(), ProtocolVersion::V2026_07_28);
        let e = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}"#,
        )
        .unwrap_err();
        assert_eq!(e.code, code::INVALID_PARAMS);
    }

    #[test]
    fn capabilities_must_be_an_object_and_become_values_on_demand() {
        let e = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[1]}}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("must be an object"), "{e}");
        let e = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("needs"), "{e}");
        let meta = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}"#,
        )
        .unwrap();
        let (capabilities, info) = meta.values();
        assert_eq!(capabilities, serde_json::json!({"sampling": {}}));
        assert_eq!(info, serde_json::json!({"name": "c", "version": "1"}));
        let meta = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        )
        .unwrap();
        assert_eq!(meta.values().1, Value::Null);
    }
}
