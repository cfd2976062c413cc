//! Regression tests from the fuzz targets in `fuzz/`: each input that made a target fail,
//! reduced, and kept as a seed (`fuzz/seeds/<target>/regress-<hash>`).

use std::time::Duration;

use mcp_tool::prelude::*;
use mcp_tool::testing::Client;
use serde_json::{Value, json};

/// Echo a text.
#[tool]
async fn fz_echo(text: String) -> String {
    text
}

/// Add two integers.
#[tool]
async fn fz_add(a: i64, b: i64) -> Result<i64, ToolError> {
    a.checked_add(b).ok_or_else(|| ToolError::msg("overflow"))
}

/// Integers of 64 and 128 bits.
#[tool]
async fn fz_wide(d: Option<i64>, h: Option<u64>, z: Option<u128>) -> String {
    format!("{d:?} {h:?} {z:?}")
}

/// Integers of 32 bits.
#[tool]
async fn fz_narrow(c: Option<i32>, g: Option<u32>) -> String {
    format!("{c:?} {g:?}")
}

async fn client() -> Client {
    Client::start(Server::new("fz", "0").only(["fz_echo", "fz_add", "fz_wide", "fz_narrow"]))
        .await
        .expect("starts")
}

/// The messages that answer nothing of the client's, until none comes for 300 ms.
async fn drain(client: &Client) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(m) = client.next_message(Duration::from_millis(300)).await {
        out.push(m);
    }
    out
}

/// jsonrpc, crash-029922a9 (the oracle's, not the server's): a number too large for a float in
/// a request's params (`1e400…`) does not stop the server reading its id: it is answered once,
/// with that id, as invalid params.
#[tokio::test]
async fn a_number_out_of_float_range_in_params_is_answered_once_with_the_id() {
    let client = client().await;
    client
        .send_raw(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fz_add","arguments":{"a":1e400,"b":1}}}"#,
        )
        .await;
    let answers = drain(&client).await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], json!(3));
    assert_eq!(answers[0]["error"]["code"], json!(-32602), "{answers:?}");
}

/// jsonrpc, crash-6556b65d (the oracle's, not the server's): an id that is a number too large
/// for a float (valid JSON; `serde_json::Value` cannot hold it) is echoed exactly as sent, in
/// one answer.
#[tokio::test]
async fn an_id_beyond_float_range_is_echoed_exactly_once() {
    use tokio::io::AsyncReadExt;
    let id = format!("2{}", "6".repeat(340));
    let input = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n");
    let server = Server::new("fz", "0")
        .only(["fz_echo"])
        .build()
        .expect("builds");
    let (mut client, server_end) = tokio::io::duplex(1 << 16);
    let serve = mcp_tool::testing::serve_io(server, input.as_bytes(), server_end);
    let read = async move {
        let mut out = String::new();
        client.read_to_string(&mut out).await.expect("UTF-8");
        out
    };
    let (served, out) = tokio::join!(serve, read);
    served.expect("served");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert!(
        lines[0].starts_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":")),
        "{out}"
    );
}

/// jsonrpc, crash-f24f4d1e (the oracle's, not the server's): a member given twice (`id`) is
/// refused as an invalid request and answered once, with the id given last.
#[tokio::test]
async fn a_message_with_two_ids_is_answered_once_with_the_last() {
    let client = client().await;
    client
        .send_raw(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","id":77777777777777}"#)
        .await;
    let answers = drain(&client).await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], json!(77_777_777_777_777_u64));
    assert_eq!(answers[0]["error"]["code"], json!(-32600), "{answers:?}");
}

/// jsonrpc, crash-d04b8dab: the server trims ASCII whitespace, form feed included, around a
/// line (a form feed is no JSON whitespace, but the line is taken as the request before it),
/// and answers it exactly once.
#[tokio::test]
async fn a_line_ending_in_form_feeds_is_answered_once() {
    let client = client().await;
    client
        .send_raw("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\u{c}\u{c}")
        .await;
    let answers = drain(&client).await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], json!(7));
    assert_eq!(answers[0]["result"], json!({}));
}

/// arguments, crash-935a2be7: an `i64` argument beyond `i64::MAX` passed validation (the
/// schema of an `i64` had no bounds) and failed in deserialization, with serde's wording
/// instead of the validator's. 2^63 is also `i64::MAX` as a float, so `maximum` alone, which
/// validators compare as floats, would not refuse it: the format's range is asserted exactly.
#[tokio::test]
async fn an_i64_beyond_its_range_is_refused_by_validation() {
    let client = client().await;
    let result = client
        .call("fz_wide", json!({"d": 9_223_372_036_854_775_808_u64}))
        .await
        .expect("answered");
    assert!(result.is_error());
    assert_eq!(
        result.text(),
        "Invalid arguments for tool `fz_wide`:\nd: 9223372036854775808 is out of the range of \
         int64, from -9223372036854775808 to 9223372036854775807"
    );
    let result = client
        .call("fz_wide", json!({"d": i64::MAX, "h": u64::MAX}))
        .await
        .expect("answered");
    assert_eq!(
        result.text(),
        "Some(9223372036854775807) Some(18446744073709551615) None"
    );
}

/// The bounds are published: `tools/list` gives each integer parameter the `minimum` and
/// `maximum` of its type (for 128 bits, what a JSON number can bring: 64 bits).
#[tokio::test]
async fn tools_list_shows_the_range_of_each_integer_type() {
    let client = client().await;
    let tools = client.list_tools().await.expect("listed");
    let schema = |tool: &str, arg: &str| {
        let t = tools.iter().find(|t| t["name"] == tool).expect(tool);
        let s = &t["inputSchema"]["properties"][arg];
        (
            s["format"].clone(),
            s["minimum"].clone(),
            s["maximum"].clone(),
        )
    };
    assert_eq!(
        schema("fz_narrow", "c"),
        (json!("int32"), json!(i32::MIN), json!(i32::MAX))
    );
    assert_eq!(
        schema("fz_narrow", "g"),
        (json!("uint32"), json!(0), json!(u32::MAX))
    );
    assert_eq!(
        schema("fz_wide", "d"),
        (json!("int64"), json!(i64::MIN), json!(i64::MAX))
    );
    assert_eq!(
        schema("fz_wide", "z"),
        (json!("uint128"), json!(0), json!(u64::MAX))
    );
}

/// The schemas of `i32` and `u32` had no `maximum` (nor `i32` a `minimum`) either, so 2^32
/// passed validation for both and failed in deserialization.
#[tokio::test]
async fn a_32_bit_argument_beyond_its_range_is_refused_by_validation() {
    let client = client().await;
    for arguments in [
        json!({"c": 3_000_000_000_u64}),
        json!({"g": 4_294_967_296_u64}),
    ] {
        let result = client
            .call("fz_narrow", arguments.clone())
            .await
            .expect("answered");
        assert!(result.is_error(), "{arguments}");
        assert!(
            result.text().starts_with("Invalid arguments"),
            "{arguments}: {}",
            result.text()
        );
    }
    let result = client
        .call("fz_narrow", json!({"c": 3_000_000_000_u64}))
        .await
        .expect("answered");
    assert_eq!(
        result.text(),
        "Invalid arguments for tool `fz_narrow`:\nc: 3000000000 is greater than the maximum of \
         2147483647",
        "one line: the format's range repeats the bound"
    );
}

/// arguments, crash-05a769dc: a `u128` argument beyond `u64::MAX` passed validation and then
/// could not deserialize (serde_json holds it as a float): the schema now bounds `uint128` to
/// what a JSON number can bring, `u64`'s range.
#[tokio::test]
async fn a_u128_beyond_u64_is_refused_by_validation() {
    let client = client().await;
    let result = client
        .call(
            "fz_wide",
            serde_json::from_str::<Value>(r#"{"z": 340282366920938463463374607431768211455}"#)
                .expect("JSON"),
        )
        .await
        .expect("answered");
    assert_eq!(
        result.text(),
        "Invalid arguments for tool `fz_wide`:\nz: 3.402823669209385e+38 is greater than the \
         maximum of 18446744073709551615"
    );
}

/// An integer in `u64`'s range written with an exponent past 2^53 (`1e19`) is an integer to
/// JSON Schema; the runtime made only whole floats below 2^53 integers, so it failed to
/// deserialize.
#[tokio::test]
async fn a_whole_float_past_2_pow_53_in_range_deserializes_into_u64() {
    let client = client().await;
    let result = client
        .call(
            "fz_wide",
            serde_json::from_str::<Value>(r#"{"h": 1e19}"#).expect("JSON"),
        )
        .await
        .expect("answered");
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(result.text(), "None Some(10000000000000000000) None");
}
