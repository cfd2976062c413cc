//! The input rounds of a 2026-07-28 request forwarded to a remote that speaks 2026-07-28
//! too: nothing is held. The remote ends its call with its own input requests and request
//! state; the gateway asks its client the same questions (under keys of its own, marked with
//! the mount's label) and keeps what it needs to go on — the remote's request state, and which
//! of its questions each key stands for — in its own sealed request state. The client's retry,
//! on whichever replica it lands, sends the remote its call again with the answers and the
//! remote's state. A remote that needs several rounds takes as many of the gateway's.

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::client::{CallOptions, CallProgress, ClientError, McpClient, Round};
use crate::tool::input::InputRound;
use crate::tool::{Ctx, ToolError};

use super::relay::{CallRelay, marked};
use crate::gateway::Mount;

/// The name the remote's round is kept under in the request state.
const MEMO: &str = "remote";

/// The most input rounds one forwarded call may take.
const MAX_ROUNDS: usize = 16;

/// What the request state keeps of the remote's round.
#[derive(Serialize, Deserialize)]
struct Pending {
    /// The remote's `requestState`, as it came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<Value>,
    /// How many questions the remote asked so far (numbers the client's keys).
    asked: u32,
    /// The remote's questions of this round.
    open: Vec<Asked>,
}

/// One question of the remote: its key there, and the key the client answers under.
#[derive(Serialize, Deserialize)]
struct Asked {
    key: String,
    remote: String,
    method: String,
    params: Value,
}

impl Mount {
    /// Forwards a call of a 2026-07-28 request to a remote speaking 2026-07-28 — or, on a
    /// retry, the answers to the remote's questions with its request state — until the remote
    /// answers, or asks what the round cannot answer (the round then ends waiting for input).
    pub(in crate::gateway) async fn call_in_rounds(
        &self,
        client: &McpClient,
        remote: &str,
        arguments: Value,
        ctx: &Ctx,
        round: &InputRound,
    ) -> Result<Result<Value, ClientError>, ToolError> {
        let (mut next, mut asked) = match round.recall(MEMO) {
            Some(memo) => {
                let pending: Pending = serde_json::from_value(memo).map_err(|_| {
                    ToolError::new(
                        "REMOTE_ERROR",
                        format!("the `{}` server's round is not one this gateway keeps; call the tool again", self.label()),
                    )
                })?;
                let responses = self.answered(ctx, &pending.open).await?;
                let next = Round {
                    responses,
                    state: pending.state,
                };
                (next, pending.asked)
            }
            None => (Round::default(), 0),
        };
        for _ in 0..MAX_ROUNDS {
            let result = match client
                .call_round(remote, arguments.clone(), next, self.options(ctx))
                .await
            {
                Ok(result) => result,
                Err(e) => return Ok(Err(e)),
            };
            if result["resultType"] != "input_required" {
                return Ok(Ok(result));
            }
            let open: Vec<Asked> = result["inputRequests"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, request)| {
                    asked += 1;
                    Asked {
                        key: format!("{}/{asked}", self.label()),
                        remote: key.clone(),
                        method: request["method"].as_str().unwrap_or_default().to_owned(),
                        params: request["params"].clone(),
                    }
                })
                .collect();
            if open.is_empty() {
                return Ok(Err(ClientError::Protocol(
                    "an input-required result without input requests".into(),
                )));
            }
            let pending = Pending {
                state: result.get("requestState").cloned(),
                asked,
                open,
            };
            round.remember(MEMO, serde_json::to_value(&pending).unwrap_or_default());
            // Every question goes in this round; an answer the round has returns at once,
            // and the first one it has not ends the round.
            let responses = self.answered(ctx, &pending.open).await?;
            next = Round {
                responses,
                state: pending.state,
            };
        }
        Ok(Err(ClientError::Protocol(format!(
            "the call still needed input after {MAX_ROUNDS} rounds"
        ))))
    }

    /// The client's answers to the remote's questions, under the remote's keys. A question
    /// the client cannot be asked fails the call (the remote would only ask it again).
    async fn answered(&self, ctx: &Ctx, open: &[Asked]) -> Result<Map<String, Value>, ToolError> {
        let answers = join_all(open.iter().map(|q| {
            let params = marked(self.label(), &q.method, q.params.clone());
            ctx.input(&q.key).relay(&q.method, params)
        }))
        .await;
        open.iter()
            .zip(answers)
            .map(|(q, answer)| Ok((q.remote.clone(), answer?)))
            .collect()
    }

    /// A forwarded request's options: its progress and cancellation passed through, and
    /// questions asked during the call (none, in 2026-07-28) relayed.
    pub(in crate::gateway) fn options(&self, ctx: &Ctx) -> CallOptions {
        let progress_ctx = ctx.clone();
        CallOptions {
            progress: Some(Box::new(move |p: CallProgress| {
                progress_ctx.progress(p.progress, p.total, p.message.as_deref().unwrap_or(""));
            })),
            cancel: Some(ctx.cancellation().clone()),
            handler: Some(std::sync::Arc::new(CallRelay {
                ctx: ctx.clone(),
                label: self.label().to_owned(),
            })),
            meta: None,
        }
    }
}
