//! A stdio MCP server of 2025-11-25 only (it refuses `server/discover`), written by hand for
//! the gateway tests: its one tool, `ask`, asks its client two questions in the middle of the
//! call, one after the other — a name, then a colour — and answers "NAME likes COLOUR". A
//! gateway must hold such a call between the rounds of a 2026-07-28 client. With a file as its
//! argument, it appends a line there for each call it receives (the tests count them).

use std::collections::HashMap;
use std::io::{BufRead, Write};

use serde_json::{Value, json};

fn main() {
    let log = std::env::args().nth(1);
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    // The question asked (its id) → the call it belongs to, and the name once answered.
    let mut waiting: HashMap<String, (Value, Option<String>)> = HashMap::new();
    let mut n = 0u64;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = message["id"].clone();
        let reply = match message["method"].as_str() {
            None => {
                // An answer to one of our questions.
                let Some((call, name)) = waiting.remove(&id.to_string()) else {
                    continue;
                };
                let answer = &message["result"]["content"];
                match name {
                    None => {
                        n += 1;
                        let name = answer["name"].as_str().unwrap_or("?").to_owned();
                        let asked = question(n, "What is your favourite colour?", "color");
                        waiting.insert(asked["id"].to_string(), (call, Some(name)));
                        asked
                    }
                    Some(name) => {
                        let color = answer["color"].as_str().unwrap_or("?");
                        let text = format!("{name} likes {color}");
                        json!({"jsonrpc": "2.0", "id": call,
                               "result": {"content": [{"type": "text", "text": text}]}})
                    }
                }
            }
            Some(_) if id.is_null() => continue,
            Some("initialize") => result(
                &id,
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "asking", "version": "1.0.0"}
                }),
            ),
            Some("tools/list") => result(
                &id,
                json!({"tools": [{
                    "name": "ask",
                    "description": "Asks a name, then a colour",
                    "inputSchema": {"type": "object"}
                }]}),
            ),
            Some("tools/call") => {
                if let Some(log) = &log
                    && let Ok(mut file) = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(log)
                {
                    let _ = writeln!(file, "{id}");
                }
                n += 1;
                let asked = question(n, "What is your name?", "name");
                waiting.insert(asked["id"].to_string(), (id, None));
                asked
            }
            Some("ping") => result(&id, json!({})),
            Some(other) => json!({"jsonrpc": "2.0", "id": id,
                                  "error": {"code": -32601, "message": format!("no {other} here")}}),
        };
        if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
            break;
        }
    }
}

fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An `elicitation/create` request for one string field.
fn question(n: u64, message: &str, field: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": format!("q{n}"), "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": {
            "type": "object",
            "properties": {field: {"type": "string"}},
            "required": [field]
        }}
    })
}
