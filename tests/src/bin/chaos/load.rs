//! The clients: each class drives one feature through nginx with answers it can check (every
//! call carries a token of its own, which the answer must carry back), and records each
//! operation's outcome.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::http::{
    Endpoint, body_2026, gist, messages, outcome, request_2025, request_2026, session_2025, text,
    tool_error,
};
use crate::record::{Outcome, Record};

pub(crate) const ECHO_2026: &str = "echo 2026";
pub(crate) const ECHO_2025: &str = "echo 2025";
pub(crate) const TASK_2026: &str = "task 2026";
pub(crate) const TASK_2025: &str = "task 2025";
pub(crate) const KEPT: &str = "kept result";
pub(crate) const RATE: &str = "rate limit";
pub(crate) const GATEWAY: &str = "gateway round";
pub(crate) const LISTEN: &str = "listen";
pub(crate) const TOUCH: &str = "touch";

/// Every class, in the report's order.
pub(crate) const CLASSES: [&str; 9] = [
    ECHO_2026, ECHO_2025, TASK_2026, TASK_2025, KEPT, RATE, GATEWAY, LISTEN, TOUCH,
];

/// How many `subscriptions/listen` streams are kept open.
pub(crate) const LISTEN_STREAMS: usize = 2;

/// What the clients share.
pub(crate) struct Load {
    pub(crate) endpoint: Endpoint,
    pub(crate) record: Arc<Record>,
    pub(crate) running: AtomicBool,
    /// The pause between one client's operations.
    pub(crate) pace: Duration,
    /// The rate limit of `limited`, calls a second (the client calls twice as often).
    pub(crate) rate_limit: u32,
    /// How long a task may take to finish before it counts as lost.
    pub(crate) task_deadline: Duration,
    /// The next JSON-RPC id of a 2025-11-25 request: unique in its session, also while an
    /// earlier request the client gave up on still runs.
    pub(crate) next_id: std::sync::atomic::AtomicU64,
}

impl Load {
    fn running(&self) -> bool {
        self.running.load(Ordering::Relaxed)
    }

    fn id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn op(&self, class: &'static str, at: f64, outcome: Outcome) {
        self.record.op(class, at, outcome);
    }
}

/// Starts every client.
pub(crate) fn start(load: &Arc<Load>, set: &mut JoinSet<()>) {
    for w in 0..2 {
        set.spawn(echo_2026(load.clone(), w));
    }
    for w in 0..LISTEN_STREAMS {
        set.spawn(listen(load.clone(), w));
    }
    set.spawn(echo_2025(load.clone()));
    set.spawn(tasks_2026(load.clone()));
    set.spawn(tasks_2025(load.clone()));
    set.spawn(kept(load.clone()));
    set.spawn(rate(load.clone()));
    set.spawn(gateway(load.clone()));
    set.spawn(touch(load.clone()));
}

/// The outcome of a call whose answer must be `token`.
fn echoed(reply: Result<crate::http::Reply, String>, id: u64, token: &str) -> Outcome {
    let reply = match reply {
        Ok(reply) => reply,
        Err(kind) => return Outcome::Error(kind),
    };
    if let Some(response) = reply.response()
        && response["id"] != json!(id)
    {
        return Outcome::Doubled("an answer with another request's id".into());
    }
    match outcome(&reply) {
        Ok(result) if text(result) == token => Outcome::Ok,
        Ok(_) => Outcome::Doubled("another call's answer".into()),
        Err(kind) => Outcome::Error(kind),
    }
}

/// Stateless calls of `echo`; one in 20 with an argument of the wrong type (refused, naming
/// it), one in 20 of a tool that does not exist (refused).
async fn echo_2026(load: Arc<Load>, w: usize) {
    let mut seq = 0u64;
    while load.running() {
        seq += 1;
        let at = load.record.now();
        let token = format!("echo26-{w}-{seq}");
        let outcome = match seq % 20 {
            7 => {
                let params = json!({ "name": "echo", "arguments": { "token": seq } });
                refused(
                    request_2026(&load.endpoint, seq, "tools/call", params).await,
                    "token",
                )
            }
            13 => {
                let params = json!({ "name": "no_such_tool", "arguments": {} });
                refused(
                    request_2026(&load.endpoint, seq, "tools/call", params).await,
                    "no_such_tool",
                )
            }
            _ => {
                let params = json!({ "name": "echo", "arguments": { "token": token } });
                let reply = request_2026(&load.endpoint, seq, "tools/call", params).await;
                echoed(reply, seq, &token)
            }
        };
        load.op(ECHO_2026, at, outcome);
        tokio::time::sleep(load.pace).await;
    }
}

/// The outcome of a request that must be refused with an error naming `what`.
fn refused(reply: Result<crate::http::Reply, String>, what: &str) -> Outcome {
    let reply = match reply {
        Ok(reply) => reply,
        Err(kind) => return Outcome::Error(kind),
    };
    // A refusal may come as a 4xx with its JSON-RPC error.
    let Some(response) = reply.response() else {
        return Outcome::Error(format!("HTTP {}", reply.status));
    };
    if reply.status != 200 && !(400..500).contains(&reply.status) {
        return Outcome::Error(format!("HTTP {}", reply.status));
    }
    let said = if let Some(error) = response.get("error") {
        error.to_string()
    } else if response["result"]["isError"] == true {
        text(&response["result"])
    } else {
        return Outcome::Error("bad input not refused".into());
    };
    if said.contains(what) {
        Outcome::Ok
    } else {
        Outcome::Error("a refusal that does not name the field".into())
    }
}

/// Calls of `echo` in a 2025-11-25 session, which is ended and opened again every 100 calls.
async fn echo_2025(load: Arc<Load>) {
    let mut session: Option<String> = None;
    let mut seq = 0u64;
    while load.running() {
        let at = load.record.now();
        let Some(id) = session.clone() else {
            match session_2025(&load.endpoint).await {
                Ok(s) => {
                    session = Some(s);
                    load.op(ECHO_2025, at, Outcome::Ok);
                }
                Err(kind) => load.op(ECHO_2025, at, Outcome::Error(format!("initialize: {kind}"))),
            }
            tokio::time::sleep(load.pace).await;
            continue;
        };
        seq += 1;
        if seq.is_multiple_of(100) {
            let headers = [
                ("Mcp-Session-Id", id.as_str()),
                ("MCP-Protocol-Version", crate::http::V2025_11_25),
            ];
            let outcome = match load.endpoint.request("DELETE", &headers, "").await {
                Ok(r) if r.status == 200 => Outcome::Ok,
                Ok(r) => Outcome::Error(format!("DELETE: HTTP {}", r.status)),
                Err(kind) => Outcome::Error(format!("DELETE: {kind}")),
            };
            load.op(ECHO_2025, at, outcome);
            session = None;
            continue;
        }
        let token = format!("echo25-{seq}");
        let params = json!({ "name": "echo", "arguments": { "token": token } });
        let rpc_id = load.id();
        let reply = request_2025(
            &load.endpoint,
            Some(&id),
            Some(rpc_id),
            "tools/call",
            params,
        )
        .await;
        if let Ok(r) = &reply
            && r.status == 404
        {
            load.op(ECHO_2025, at, Outcome::Error("session gone (404)".into()));
            session = None;
            continue;
        }
        load.op(ECHO_2025, at, echoed(reply, rpc_id, &token));
        tokio::time::sleep(load.pace).await;
    }
}

/// How many tasks of one version may be in flight.
const TASKS_IN_FLIGHT: usize = 16;

/// How often each version starts a task. Every task of the run is one client's (nginx's
/// address), which may hold 1000 at once (the default): 2026-07-28 tasks live for the
/// server's default hour, so a full run stays under that at 4 a second.
const TASK_EVERY: Duration = Duration::from_millis(250);

/// A task every 250 ms (`job` of 100–400 ms, the tasks extension declared), each polled with
/// `tasks/get` until it ends, then fetched once more: both answers must be the same.
async fn tasks_2026(load: Arc<Load>) {
    let slots = Arc::new(Semaphore::new(TASKS_IN_FLIGHT));
    let mut set = JoinSet::new();
    let mut seq = 0u64;
    while load.running() {
        seq += 1;
        let Ok(slot) = slots.clone().acquire_owned().await else {
            break;
        };
        let load2 = load.clone();
        set.spawn(async move {
            let at = load2.record.now();
            let outcome = task_2026(&load2, seq).await;
            load2.op(TASK_2026, at, outcome);
            drop(slot);
        });
        tokio::time::sleep(TASK_EVERY).await;
        while set.try_join_next().is_some() {}
    }
    while set.join_next().await.is_some() {}
}

async fn task_2026(load: &Load, seq: u64) -> Outcome {
    let token = format!("task26-{seq}");
    let ms = 100 + (seq * 37) % 300;
    let params = json!({ "name": "job", "arguments": { "token": token, "ms": ms } });
    let reply = match request_2026(&load.endpoint, seq, "tools/call", params).await {
        Ok(reply) => reply,
        Err(kind) => return Outcome::Error(kind),
    };
    let result = match outcome(&reply) {
        Ok(result) => result.clone(),
        Err(kind) => return Outcome::Error(kind),
    };
    match result["resultType"].as_str() {
        Some("task") => {}
        Some("complete") if text(&result) == token => return Outcome::Ok,
        Some("complete") => return Outcome::Doubled("another call's answer".into()),
        other => return Outcome::Error(format!("resultType {other:?}")),
    }
    let Some(task_id) = result["taskId"].as_str().map(str::to_owned) else {
        return Outcome::Error("a task without an id".into());
    };
    if !load.record.new_task(&task_id) {
        return Outcome::Doubled("one task id for two calls".into());
    }
    let get = || async {
        let params = json!({ "taskId": task_id });
        let reply = request_2026(&load.endpoint, seq, "tasks/get", params).await?;
        outcome(&reply).cloned()
    };
    let deadline = tokio::time::Instant::now() + load.task_deadline;
    let mut last_error = String::from("never answered");
    loop {
        if tokio::time::Instant::now() > deadline {
            return Outcome::Lost(format!("never finished ({last_error})"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let got = match get().await {
            Ok(got) => got,
            Err(kind) => {
                load.op(
                    TASK_2026,
                    load.record.now(),
                    Outcome::Error(format!("tasks/get: {kind}")),
                );
                last_error = kind;
                continue;
            }
        };
        match got["status"].as_str() {
            Some("working" | "input_required") => {
                last_error = "still working".into();
                continue;
            }
            Some("completed") => {
                if text(&got["result"]) != token {
                    return Outcome::Doubled("another call's result".into());
                }
                return again_2026(load, &got, get).await;
            }
            Some("failed") => {
                return Outcome::Error(format!(
                    "task failed: {}",
                    gist(got["statusMessage"].as_str().unwrap_or(""))
                ));
            }
            Some("cancelled") => return Outcome::Error("task cancelled".into()),
            other => return Outcome::Error(format!("task status {other:?}")),
        }
    }
}

/// Fetches a finished task once more (through nginx: likely another replica): the same status
/// and result, else it answered two ways.
async fn again_2026<F, Fut>(load: &Load, first: &Value, get: F) -> Outcome
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<Value, String>>,
{
    for _ in 0..20 {
        match get().await {
            Ok(again)
                if again["status"] == first["status"] && again["result"] == first["result"] =>
            {
                return Outcome::Ok;
            }
            Ok(_) => return Outcome::Doubled("a task that answered two ways".into()),
            Err(kind) => {
                load.op(
                    TASK_2026,
                    load.record.now(),
                    Outcome::Error(format!("tasks/get: {kind}")),
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    Outcome::Lost("finished, then unreadable".into())
}

/// 2025-11-25 tasks in one session (opened again when it is gone): `tools/call` with `task`,
/// `tasks/get` until it ends, then `tasks/result` twice (the same answer both times).
async fn tasks_2025(load: Arc<Load>) {
    let session: Arc<tokio::sync::Mutex<Option<String>>> = Arc::default();
    let slots = Arc::new(Semaphore::new(TASKS_IN_FLIGHT));
    let mut set = JoinSet::new();
    let mut seq = 0u64;
    while load.running() {
        let at = load.record.now();
        let id = {
            let mut held = session.lock().await;
            if held.is_none() {
                match session_2025(&load.endpoint).await {
                    Ok(s) => *held = Some(s),
                    Err(kind) => {
                        load.op(TASK_2025, at, Outcome::Error(format!("initialize: {kind}")));
                    }
                }
            }
            held.clone()
        };
        let Some(id) = id else {
            tokio::time::sleep(load.pace).await;
            continue;
        };
        seq += 1;
        let Ok(slot) = slots.clone().acquire_owned().await else {
            break;
        };
        let (load2, session2) = (load.clone(), session.clone());
        set.spawn(async move {
            let at = load2.record.now();
            let outcome = task_2025(&load2, &id, seq).await;
            if outcome == Outcome::Error("session gone (404)".into()) {
                let mut held = session2.lock().await;
                if held.as_deref() == Some(id.as_str()) {
                    *held = None;
                }
            }
            load2.op(TASK_2025, at, outcome);
            drop(slot);
        });
        tokio::time::sleep(TASK_EVERY).await;
        while set.try_join_next().is_some() {}
    }
    while set.join_next().await.is_some() {}
}

async fn task_2025(load: &Load, session: &str, seq: u64) -> Outcome {
    let token = format!("task25-{seq}");
    let ms = 100 + (seq * 37) % 300;
    let params = json!({
        "name": "job", "arguments": { "token": token, "ms": ms }, "task": { "ttl": 60_000 }
    });
    let send = |method: &'static str, params: Value| async move {
        let reply = request_2025(
            &load.endpoint,
            Some(session),
            Some(load.id()),
            method,
            params,
        )
        .await?;
        if reply.status == 404 {
            return Err("session gone (404)".to_owned());
        }
        outcome(&reply).cloned()
    };
    let created = match send("tools/call", params).await {
        Ok(created) => created,
        Err(kind) => return Outcome::Error(kind),
    };
    let Some(task_id) = created["task"]["taskId"].as_str().map(str::to_owned) else {
        return Outcome::Error("no task in the answer".into());
    };
    if !load.record.new_task(&task_id) {
        return Outcome::Doubled("one task id for two calls".into());
    }
    let deadline = tokio::time::Instant::now() + load.task_deadline;
    let mut last_error = String::from("never answered");
    loop {
        if tokio::time::Instant::now() > deadline {
            return Outcome::Lost(format!("never finished ({last_error})"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let got = match send("tasks/get", json!({ "taskId": task_id })).await {
            Ok(got) => got,
            Err(kind) => {
                load.op(
                    TASK_2025,
                    load.record.now(),
                    Outcome::Error(format!("tasks/get: {kind}")),
                );
                last_error = kind;
                continue;
            }
        };
        match got["status"].as_str() {
            Some("working" | "input_required") => {
                last_error = "still working".into();
            }
            Some("completed") => break,
            Some("failed") => {
                return Outcome::Error(format!(
                    "task failed: {}",
                    gist(got["statusMessage"].as_str().unwrap_or(""))
                ));
            }
            Some("cancelled") => return Outcome::Error("task cancelled".into()),
            other => return Outcome::Error(format!("task status {other:?}")),
        }
    }
    let mut first: Option<Value> = None;
    let mut tries = 0;
    while tries < 20 {
        tries += 1;
        match send("tasks/result", json!({ "taskId": task_id })).await {
            Ok(result) => {
                if text(&result) != token {
                    return Outcome::Doubled("another call's result".into());
                }
                let content = result["content"].clone();
                match &first {
                    None => first = Some(content),
                    Some(before) if *before == content => return Outcome::Ok,
                    Some(_) => return Outcome::Doubled("a task that answered two ways".into()),
                }
            }
            Err(kind) => {
                load.op(
                    TASK_2025,
                    load.record.now(),
                    Outcome::Error(format!("tasks/result: {kind}")),
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    Outcome::Lost("finished, then unreadable".into())
}

/// `blob` of 4 KiB (over the 1 KiB budget: cut, the whole kept), then its link read until it
/// answers (at most 40 reads, 100 ms apart): the whole must end with the call's token.
async fn kept(load: Arc<Load>) {
    let mut seq = 0u64;
    while load.running() {
        seq += 1;
        let at = load.record.now();
        let outcome = kept_one(&load, seq).await;
        load.op(KEPT, at, outcome);
        tokio::time::sleep(load.pace * 5).await;
    }
}

async fn kept_one(load: &Load, seq: u64) -> Outcome {
    let token = format!("kept-{seq}");
    let params = json!({ "name": "blob", "arguments": { "token": token, "kib": 4 } });
    let reply = match request_2026(&load.endpoint, seq, "tools/call", params).await {
        Ok(reply) => reply,
        Err(kind) => return Outcome::Error(kind),
    };
    let result = match outcome(&reply) {
        Ok(result) => result.clone(),
        Err(kind) => return Outcome::Error(kind),
    };
    let link = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "resource_link")
        .and_then(|c| c["uri"].as_str())
        .map(str::to_owned);
    let Some(uri) = link else {
        return Outcome::Error("a result not cut (is the budget on?)".into());
    };
    for _ in 0..40 {
        let params = json!({ "uri": uri });
        let reply = request_2026(&load.endpoint, seq, "resources/read", params).await;
        match reply
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|r| outcome(r).cloned())
        {
            Ok(read) => {
                let whole = read["contents"][0]["text"].as_str().unwrap_or_default();
                let whole: Value = serde_json::from_str(whole).unwrap_or_default();
                return if text(&whole).ends_with(&token) {
                    Outcome::Ok
                } else {
                    Outcome::Doubled("another call's kept result".into())
                };
            }
            Err(kind) => {
                load.op(
                    KEPT,
                    load.record.now(),
                    Outcome::Error(format!("read: {kind}")),
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    Outcome::Lost("kept, then never read".into())
}

/// Calls of the rate-limited tool at twice its limit: an admitted call must echo its token, a
/// refused one is `RATE_LIMITED`.
async fn rate(load: Arc<Load>) {
    let period = Duration::from_secs(1) / (2 * load.rate_limit.max(1));
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut seq = 0u64;
    while load.running() {
        tick.tick().await;
        seq += 1;
        let at = load.record.now();
        let token = format!("rate-{seq}");
        let params = json!({ "name": "limited", "arguments": { "token": token } });
        let reply = request_2026(&load.endpoint, seq, "tools/call", params).await;
        let outcome = match &reply {
            Ok(r) => match r.response().map(|m| &m["result"]) {
                Some(result)
                    if result["isError"] == true && tool_error(result) == "RATE_LIMITED" =>
                {
                    Outcome::Refused
                }
                _ => echoed(reply, seq, &token),
            },
            Err(_) => echoed(reply, seq, &token),
        };
        if outcome == Outcome::Ok {
            load.record.admitted(at);
        }
        load.op(RATE, at, outcome);
    }
}

/// `remote__confirm` through the gateway: its input round (the remote's question), answered,
/// must give back the token. A retry that fails is a new call from the start.
async fn gateway(load: Arc<Load>) {
    let mut seq = 0u64;
    while load.running() {
        seq += 1;
        let at = load.record.now();
        let outcome = round(&load, seq).await;
        load.op(GATEWAY, at, outcome);
        tokio::time::sleep(load.pace * 2).await;
    }
}

async fn round(load: &Load, seq: u64) -> Outcome {
    let token = format!("round-{seq}");
    let call = json!({ "name": "remote__confirm", "arguments": { "token": token } });
    let reply = match request_2026(&load.endpoint, seq, "tools/call", call.clone()).await {
        Ok(reply) => reply,
        Err(kind) => return Outcome::Error(kind),
    };
    let first = match outcome(&reply) {
        Ok(result) => result.clone(),
        Err(kind) => return Outcome::Error(kind),
    };
    if first["resultType"] != "input_required" {
        return Outcome::Error(format!("no input round: {}", first["resultType"]));
    }
    let Some(key) = first["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
    else {
        return Outcome::Error("an input round without a request".into());
    };
    let mut retry = call;
    retry["inputResponses"] =
        json!({ key: { "action": "accept", "content": { "confirm": true } } });
    retry["requestState"] = first["requestState"].clone();
    let reply = request_2026(&load.endpoint, seq, "tools/call", retry).await;
    echoed(reply, seq, &token)
}

/// A `subscriptions/listen` stream on `chaos://touched`, listened to again whenever it ends:
/// the acknowledgement is an operation, every change heard is counted.
async fn listen(load: Arc<Load>, w: usize) {
    let mut seq = 0u64;
    while load.running() {
        seq += 1;
        let at = load.record.now();
        let params = json!({ "notifications": { "resourceSubscriptions": ["chaos://touched"] } });
        let (body, headers) = body_2026(seq * 10 + w as u64, "subscriptions/listen", params);
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut open = match load.endpoint.open("POST", &headers, &body).await {
            Ok(open) if open.status == 200 => open,
            Ok(open) => {
                load.op(LISTEN, at, Outcome::Error(format!("HTTP {}", open.status)));
                tokio::time::sleep(load.pace).await;
                continue;
            }
            Err(kind) => {
                load.op(LISTEN, at, Outcome::Error(kind));
                tokio::time::sleep(load.pace).await;
                continue;
            }
        };
        let mut buffer = String::from_utf8_lossy(&open.rest).into_owned();
        let mut acknowledged = false;
        let mut chunk = [0u8; 8192];
        let ended = loop {
            while let Some(end) = buffer.find("\n\n") {
                let event: String = buffer.drain(..end + 2).collect();
                for message in messages(&event) {
                    match message["method"].as_str() {
                        Some("notifications/subscriptions/acknowledged") if !acknowledged => {
                            acknowledged = true;
                            load.op(LISTEN, at, Outcome::Ok);
                        }
                        Some("notifications/resources/updated") => {
                            load.record.heard(load.record.now());
                        }
                        _ => {}
                    }
                }
            }
            if !load.running() {
                break None;
            }
            let wait = if acknowledged {
                Duration::from_millis(500)
            } else {
                load.endpoint.timeout
            };
            match tokio::time::timeout(wait, open.stream.read(&mut chunk)).await {
                Err(_) if acknowledged => continue,
                Err(_) => break Some("no acknowledgement".to_owned()),
                Ok(Ok(0)) => break Some("stream ended".to_owned()),
                Ok(Ok(n)) => buffer.push_str(&String::from_utf8_lossy(&chunk[..n])),
                Ok(Err(e)) => break Some(format!("read: {:?}", e.kind())),
            }
        };
        if let Some(why) = ended {
            let when = if acknowledged { load.record.now() } else { at };
            load.op(LISTEN, when, Outcome::Error(format!("listen: {why}")));
        }
    }
}

/// `touch` every 100 ms: each raises a change every listen stream should hear.
async fn touch(load: Arc<Load>) {
    let mut seq = 0u64;
    while load.running() {
        seq += 1;
        let at = load.record.now();
        let token = format!("touch-{seq}");
        let params = json!({ "name": "touch", "arguments": { "token": token } });
        let outcome = echoed(
            request_2026(&load.endpoint, seq, "tools/call", params).await,
            seq,
            &token,
        );
        if outcome == Outcome::Ok {
            load.record.touched(at);
        }
        load.op(TOUCH, at, outcome);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
