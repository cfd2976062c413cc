//! What the server sends the client: answers matched to their requests, notifications
//! (progress, list changes, logs), and the server's own questions, answered by the handler of
//! the request they are about — whose time limit waits while they are answered.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::protocol::walk::JsonText;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::protocol::jsonrpc::{self, Message};
use crate::protocol::{RpcError, code};

use super::Core;
use crate::client::CallProgress;
use crate::client::message::{Inbound, Outbound};
use crate::sync::lock;

/// The most requests of the server the client answers at once (a user may take minutes over
/// a form); beyond them a request is refused at once, not queued without a bound.
pub(super) const MAX_QUESTIONS: usize = 256;

impl Core {
    /// Handles one message of the server.
    pub(super) fn receive(self: &Arc<Self>, inbound: Inbound) {
        let message = match jsonrpc::parse(inbound.text.as_bytes()) {
            Ok(m) => m,
            Err(_) => {
                tracing::debug!(text = %inbound.text, "the server sent something that is not JSON-RPC");
                return;
            }
        };
        match message {
            Message::Response { id, outcome } => {
                let Ok(id) = id.get().parse::<u64>() else {
                    return;
                };
                let Some(waiter) = lock(&self.pending).remove(&id) else {
                    return;
                };
                let answer = match outcome {
                    Ok(result) => Ok(serde_json::from_str(result.get()).unwrap_or(Value::Null)),
                    Err(error) => Err(RpcError::from_json(
                        &serde_json::from_str::<Value>(error.get()).unwrap_or(Value::Null),
                    )),
                };
                let _ = waiter.send(answer);
            }
            Message::Request { id, method, params } => {
                self.answer_request(id, &method, params, inbound.via);
            }
            Message::Notification { method, params } => {
                self.heard(&method, params);
            }
        }
    }

    fn heard(&self, method: &str, params: Option<JsonText<'_>>) {
        let params: Value = params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        match method {
            "notifications/progress" => {
                let key = params["progressToken"].to_string();
                let on = lock(&self.progress).get(&key).cloned();
                if let (Some(on), Some(progress)) = (on, params["progress"].as_f64()) {
                    on(CallProgress {
                        progress,
                        total: params["total"].as_f64(),
                        message: params["message"].as_str().map(String::from),
                    });
                }
            }
            "notifications/tools/list_changed" => {
                self.changed.send_modify(|n| *n += 1);
            }
            "notifications/message" => {
                tracing::debug!(level = %params["level"], data = %params["data"], "server log");
            }
            _ => {}
        }
    }

    /// Answers a request of the server with the handler of the call it belongs to (the
    /// request whose stream carried it, or the only call running), else the client's.
    fn answer_request(
        self: &Arc<Self>,
        id: JsonText<'_>,
        method: &str,
        params: Option<JsonText<'_>>,
        via: Option<u64>,
    ) {
        let id_text = id.get().to_owned();
        let method = method.to_owned();
        let params: Value = params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        let (handler, asking) = {
            let active = lock(&self.active);
            // Over HTTP the request's stream says which request a question is about. Over
            // stdio nothing does: the request running alone, else the one with a handler of
            // its own.
            let call = match via {
                Some(call) => active.get(&call),
                None if active.len() == 1 => active.values().next(),
                None => {
                    let mut with = active.values().filter(|a| a.handler.is_some());
                    match (with.next(), with.next()) {
                        (Some(only), None) => Some(only),
                        _ => None,
                    }
                }
            };
            (
                call.and_then(|a| a.handler.clone())
                    .unwrap_or_else(|| self.handler.clone()),
                call.map(|a| Asking::new(a.asking.clone())),
            )
        };
        let Ok(slot) = self.questions.clone().try_acquire_owned() else {
            tracing::warn!(%method, "the server asked more than {MAX_QUESTIONS} questions at once");
            let refusal = RpcError::new(
                code::INTERNAL_ERROR,
                format!("the client is already answering {MAX_QUESTIONS} requests of the server"),
            );
            let text = jsonrpc::error_response(&id_text, &refusal);
            let core = self.clone();
            tokio::spawn(async move { core.reply(text).await });
            return;
        };
        let core = self.clone();
        tokio::spawn(async move {
            let answer = if method == "ping" {
                Ok(json!({}))
            } else {
                handler.request(&method, params).await
            };
            drop(asking);
            core.reply(jsonrpc::response(&id_text, answer)).await;
            drop(slot);
        });
    }

    async fn reply(&self, text: String) {
        let _ = self
            .wire
            .send(Outbound {
                text,
                id: None,
                method: "",
                name: None,
                params: Vec::new(),
            })
            .await;
    }
}

/// Waits for a request's answer within the client's time limit. The limit is the server's:
/// while the client is answering one of the server's questions about the request (a user
/// filling in a form), it does not run, and once the answer is sent the server has the whole
/// limit again. `None` when the limit passed.
pub(super) async fn within<T>(
    limit: Duration,
    questions: &Questions,
    mut answer: oneshot::Receiver<T>,
) -> Option<Result<T, oneshot::error::RecvError>> {
    let mut deadline = Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, &mut answer).await {
            Ok(answer) => return Some(answer),
            Err(_) => {
                let now = Instant::now();
                deadline = if questions.open.load(Ordering::SeqCst) > 0 {
                    now + limit
                } else {
                    match *lock(&questions.answered) {
                        Some(at) if at + limit > now => at + limit,
                        _ => return None,
                    }
                };
            }
        }
    }
}

/// The server's questions about one request: how many the client is answering now, and when
/// it last sent an answer.
#[derive(Default)]
pub(super) struct Questions {
    open: AtomicUsize,
    answered: Mutex<Option<Instant>>,
}

/// One of the server's questions about a request, counted while the client answers it.
struct Asking(Arc<Questions>);

impl Asking {
    fn new(questions: Arc<Questions>) -> Self {
        questions.open.fetch_add(1, Ordering::SeqCst);
        Asking(questions)
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        *lock(&self.0.answered) = Some(Instant::now());
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}
