//! Input from the client — a form for the user (elicitation), a completion from the model
//! (sampling), the client's roots — in both protocol versions, with one API for tools.
//!
//! - 2025-11-25 and earlier: a request to the client on the session, answered by a response.
//! - 2026-07-28: the request that runs the tool ends with an `InputRequiredResult` listing what
//!   it needs; the client retries it with the answers, and the tool runs again from the start.
//!   An input request answered already returns at once, so the tool reaches the point it
//!   stopped at. A round ends as soon as the tool waits with an input request outstanding:
//!   several requests made together (`tokio::join!`) go in one round, requests made one after
//!   another take one round each.
//!
//! So, in 2026-07-28, code before a tool's last input request runs once per round: do work
//! with side effects after it, or make that work idempotent.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};

use serde_json::{Map, Value};

use crate::protocol::wire::InputRequest;
use crate::protocol::{RpcError, code};
use crate::sync::lock;

use crate::tool::result::ToolError;

/// What a tool can ask the client for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputKind {
    Elicitation,
    Sampling,
    Roots,
}

impl InputKind {
    pub(crate) fn method(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation/create",
            InputKind::Sampling => "sampling/createMessage",
            InputKind::Roots => "roots/list",
        }
    }

    /// The client capability the request needs.
    pub(crate) fn capability(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation",
            InputKind::Sampling => "sampling",
            InputKind::Roots => "roots",
        }
    }

    fn key_prefix(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation",
            InputKind::Sampling => "sampling",
            InputKind::Roots => "roots",
        }
    }

    /// Checks the shape of an answer (the client's result); the error says what is wrong.
    pub(crate) fn check(self, answer: &Value) -> Result<(), String> {
        let Value::Object(m) = answer else {
            return Err("the answer is not an object".into());
        };
        match self {
            InputKind::Elicitation => match m.get("action").and_then(Value::as_str) {
                Some("accept" | "decline" | "cancel") => match m.get("content") {
                    None | Some(Value::Object(_)) => Ok(()),
                    Some(_) => Err("`content` must be an object".into()),
                },
                Some(other) => Err(format!("unknown action `{other}`")),
                None => Err("it has no `action`".into()),
            },
            InputKind::Sampling => {
                let blocks = match m.get("content") {
                    Some(Value::Array(blocks)) => blocks.iter().collect::<Vec<_>>(),
                    Some(block @ Value::Object(_)) => vec![block],
                    None => return Err("it has no `content`".into()),
                    Some(_) => {
                        return Err("its `content` is neither a block nor a list of blocks".into());
                    }
                };
                if let Some(bad) = blocks.iter().position(|b| !b["type"].is_string()) {
                    return Err(format!("content block {bad} has no `type`"));
                }
                if !m.get("role").is_some_and(Value::is_string) {
                    return Err("it has no `role`".into());
                }
                if !m.get("model").is_some_and(Value::is_string) {
                    return Err("it has no `model`".into());
                }
                Ok(())
            }
            InputKind::Roots => match m.get("roots") {
                Some(Value::Array(roots)) if roots.iter().all(|r| r["uri"].is_string()) => Ok(()),
                Some(Value::Array(_)) => Err("every root needs a `uri`".into()),
                _ => Err("it has no `roots` list".into()),
            },
        }
    }
}

/// The input of one round of a stateless request: the answers it came with, and what the tool
/// asked for that was not answered.
pub(crate) struct InputRound {
    /// Answers from earlier rounds (in the sealed request state) and from this retry (none
    /// for a first round: most requests make no other, and an empty map costs its drop).
    answers: Option<Map<String, Value>>,
    /// What the round gathered, made on first use (most rounds gather nothing, and every
    /// call's context holds this).
    gathered: Mutex<Option<Box<Gathered>>>,
    /// The number of input requests made without a key of their own (they get `kind-n`).
    unnamed: AtomicU32,
}

/// What a round gathered while the tool ran.
#[derive(Default)]
struct Gathered {
    /// The answers the tool used, carried to the next round's state.
    used: Map<String, Value>,
    /// The input requests the tool made that are not answered yet, by key.
    asked: Map<String, Value>,
    /// A protocol error the request ends with (a capability the client did not declare, an
    /// answer of the wrong shape).
    refusal: Option<RpcError>,
}

/// The prefix of the keys under which the server keeps values of its own between rounds (see
/// [`InputRound::remember`]). They travel only in the sealed request state: a client's
/// `inputResponses` under such a key are dropped.
pub(crate) const MEMO_PREFIX: &str = "mcp-tool.memo/";

/// How a round ended, beside the tool's own result.
pub(crate) struct RoundEnd {
    /// The input requests to send, by key (empty: the tool finished).
    pub(crate) asked: Map<String, Value>,
    /// The answers used so far, for the next round.
    pub(crate) used: Map<String, Value>,
    /// The protocol error to answer with, if any.
    pub(crate) refusal: Option<RpcError>,
}

impl InputRound {
    /// A round with the answers a retry came with.
    pub(crate) fn new(answers: Map<String, Value>) -> Self {
        InputRound {
            answers: (!answers.is_empty()).then_some(answers),
            ..InputRound::first()
        }
    }

    /// The round of a request that is no retry: it has no answers yet.
    pub(crate) fn first() -> Self {
        InputRound {
            answers: None,
            gathered: Mutex::new(None),
            unnamed: AtomicU32::new(0),
        }
    }

    /// Whether the request came with answers (a retry).
    pub(crate) fn answered(&self) -> bool {
        self.answers.is_some()
    }

    /// Whether the tool is waiting for input this round cannot give.
    pub(crate) fn blocked(&self) -> bool {
        lock(&self.gathered)
            .as_ref()
            .is_some_and(|g| !g.asked.is_empty())
    }

    /// How the round ended: what it asks, what it used, and its refusal.
    pub(crate) fn end(&self) -> RoundEnd {
        let gathered = lock(&self.gathered)
            .take()
            .map_or_else(Gathered::default, |g| *g);
        RoundEnd {
            asked: gathered.asked,
            used: gathered.used,
            refusal: gathered.refusal,
        }
    }

    /// The protocol error the round ends with, if any (all a round that finished needs of
    /// [`InputRound::end`]).
    pub(crate) fn refusal(&self) -> Option<RpcError> {
        lock(&self.gathered).as_mut()?.refusal.take()
    }

    /// What the round gathered so far, to add to.
    fn gather<R>(&self, add: impl FnOnce(&mut Gathered) -> R) -> R {
        add(lock(&self.gathered).get_or_insert_with(Box::default))
    }

    /// Records a used answer, or a value kept for the next round.
    fn use_value(&self, key: String, value: Value) {
        self.gather(|g| g.used.insert(key, value));
    }

    /// The answer under `key`, if the request came with one.
    fn answer(&self, key: &str) -> Option<&Value> {
        self.answers.as_ref()?.get(key)
    }

    fn refuse(&self, error: RpcError) {
        self.gather(|g| {
            g.refusal.get_or_insert(error);
        });
    }

    /// Asks for input: the answer when this round has it; otherwise the request is recorded
    /// and the returned future never completes (the round ends with the request). `declared`
    /// says whether the client declared the capability `kind` needs: if not, the request is
    /// refused.
    pub(crate) async fn ask(
        &self,
        key: Option<&str>,
        kind: InputKind,
        params: Value,
        declared: bool,
    ) -> Result<Value, ToolError> {
        let capability = kind.capability();
        if !declared {
            self.refuse(RpcError::missing_capability(
                format!("Missing required client capability: this request needs `{capability}`"),
                Value::Object(Map::from_iter([(
                    capability.to_owned(),
                    Value::Object(Map::new()),
                )])),
            ));
            return Err(missing_capability(capability));
        }
        let key = match key {
            Some(k) => k.to_owned(),
            None => {
                let n = self.unnamed.fetch_add(1, Ordering::Relaxed) + 1;
                format!("{}-{n}", kind.key_prefix())
            }
        };
        // An answer that is not an object is no answer (asked again); one of the wrong shape
        // is the client's error.
        if let Some(answer) = self.answer(&key).filter(|a| a.is_object()) {
            if let Err(why) = kind.check(answer) {
                self.refuse(RpcError::new(
                    code::INVALID_PARAMS,
                    format!(
                        "`inputResponses.{key}` is not a result of `{}`: {why}",
                        kind.method()
                    ),
                ));
                return Err(ToolError::new(
                    "BAD_INPUT_RESPONSE",
                    format!("the answer to `{key}` is malformed: {why}"),
                ));
            }
            self.use_value(key, answer.clone());
            return Ok(answer.clone());
        }
        let request = InputRequest {
            method: kind.method(),
            params,
        };
        if let Ok(request) = serde_json::to_value(request) {
            self.gather(|g| g.asked.insert(key, request));
        }
        std::future::pending().await
    }
}

/// What the gateway (feature `client`) keeps across the rounds of a request: the remote call
/// it holds, named by a value carried in the sealed request state.
#[cfg(feature = "client")]
impl InputRound {
    /// A value the server kept under `name` in an earlier round (and keeps for the next).
    pub(crate) fn recall(&self, name: &str) -> Option<Value> {
        let key = format!("{MEMO_PREFIX}{name}");
        let value = self.answer(&key)?.clone();
        self.use_value(key, value.clone());
        Some(value)
    }

    /// Keeps `value` under `name` for the later rounds of this request: it travels in the
    /// sealed request state, which the client cannot change.
    pub(crate) fn remember(&self, name: &str, value: Value) {
        self.use_value(format!("{MEMO_PREFIX}{name}"), value);
    }
}

/// The error a tool gets for a capability the client did not declare.
pub(crate) fn missing_capability(capability: &str) -> ToolError {
    ToolError::new(
        "MISSING_CLIENT_CAPABILITY",
        format!(
            "the client did not declare the `{capability}` capability, so it cannot be asked for that"
        ),
    )
}

/// A call's future, ended early when it waits on input its round cannot give.
pub(crate) struct UntilInput<'a, F> {
    future: F,
    round: Option<&'a InputRound>,
}

/// What a call came to.
#[derive(Debug)]
pub(crate) enum Finish<T> {
    /// It finished.
    Done(T),
    /// It waits for input (the round's `asked`).
    NeedsInput,
}

impl<'a, F> UntilInput<'a, F> {
    pub(crate) fn new(future: F, round: Option<&'a InputRound>) -> Self {
        UntilInput { future, round }
    }
}

impl<F: Future + Unpin> Future for UntilInput<'_, F> {
    type Output = Finish<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match Pin::new(&mut this.future).poll(cx) {
            Poll::Ready(output) => Poll::Ready(Finish::Done(output)),
            Poll::Pending if this.round.is_some_and(InputRound::blocked) => {
                Poll::Ready(Finish::NeedsInput)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn answered_requests_return_at_once_and_unanswered_ones_end_the_round() {
        let round = InputRound::new(Map::from_iter([(
            "name".to_owned(),
            json!({"action": "accept", "content": {"name": "Alice"}}),
        )]));
        let answer = round
            .ask(Some("name"), InputKind::Elicitation, json!({}), true)
            .await
            .unwrap();
        assert_eq!(answer["content"]["name"], "Alice");
        let second = round.ask(None, InputKind::Elicitation, json!({"m": 1}), true);
        let mut second = Box::pin(second);
        let finish = UntilInput::new(&mut second, Some(&round)).await;
        assert!(matches!(finish, Finish::NeedsInput));
        let end = round.end();
        assert_eq!(
            end.asked["elicitation-1"],
            json!({"method": "elicitation/create", "params": {"m": 1}})
        );
        assert_eq!(end.used.len(), 1, "the answer used is carried on");
    }

    #[tokio::test]
    async fn undeclared_capabilities_and_malformed_answers_are_refused() {
        let round = InputRound::new(Map::from_iter([("s".to_owned(), json!({"role": "user"}))]));
        let e = round
            .ask(None, InputKind::Sampling, json!({}), false)
            .await
            .unwrap_err();
        assert_eq!(e.code(), Some("MISSING_CLIENT_CAPABILITY"));
        let refusal = round.end().refusal.unwrap();
        assert_eq!(refusal.code, code::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert_eq!(
            refusal.data.unwrap()["requiredCapabilities"],
            json!({"sampling": {}})
        );

        assert!(
            round
                .ask(Some("s"), InputKind::Sampling, json!({}), true)
                .await
                .is_err()
        );
        assert_eq!(round.end().refusal.unwrap().code, code::INVALID_PARAMS);
    }

    #[cfg(feature = "client")]
    #[tokio::test]
    async fn remembered_values_are_carried_to_later_rounds() {
        let first = InputRound::new(Map::new());
        assert_eq!(first.recall("relay"), None);
        first.remember("relay", json!("abc"));
        let mut asking = Box::pin(first.ask(None, InputKind::Elicitation, json!({}), true));
        assert!(matches!(
            UntilInput::new(&mut asking, Some(&first)).await,
            Finish::NeedsInput
        ));
        let used = first.end().used;
        assert_eq!(used[&format!("{MEMO_PREFIX}relay")], json!("abc"));

        let second = InputRound::new(used);
        assert_eq!(second.recall("relay"), Some(json!("abc")));
        assert_eq!(
            second.end().used[&format!("{MEMO_PREFIX}relay")],
            json!("abc"),
            "a value recalled is kept for the round after"
        );
    }

    #[test]
    fn answers_are_checked_by_kind() {
        assert!(
            InputKind::Roots
                .check(&json!({"roots": [{"uri": "file:///a"}]}))
                .is_ok()
        );
        assert!(InputKind::Roots.check(&json!({"roots": [{}]})).is_err());
        assert!(
            InputKind::Elicitation
                .check(&json!({"action": "decline"}))
                .is_ok()
        );
        assert!(
            InputKind::Elicitation
                .check(&json!({"action": "maybe"}))
                .is_err()
        );
        assert!(
            InputKind::Sampling
                .check(&json!({"role": "assistant", "model": "m", "content": {"type": "text", "text": "x"}}))
                .is_ok()
        );
    }
}
