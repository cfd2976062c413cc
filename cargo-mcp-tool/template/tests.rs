//! The server tested as a client sees it: real JSON-RPC to the server in-process.

use mcp_tool::testing::Client;
use serde_json::json;

#[tokio::test]
async fn greet_is_listed_and_answers() {
    let client = Client::start(super::server()).await.unwrap();
    let names: Vec<_> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t["name"].clone())
        .collect();
    assert!(names.contains(&json!("greet")), "{names:?}");

    let result = client
        .call("greet", json!({ "name": "Ada" }))
        .await
        .unwrap();
    assert!(!result.is_error());
    assert_eq!(result.text(), "Hello, Ada!");
}

#[tokio::test]
async fn a_bad_call_is_an_error_the_model_can_act_on() {
    let client = Client::start(super::server()).await.unwrap();
    let missing = client.call("greet", json!({})).await.unwrap();
    assert!(missing.is_error());
    assert!(missing.text().contains("name"), "{}", missing.text());

    let empty = client.call("greet", json!({ "name": " " })).await.unwrap();
    assert!(empty.is_error());
    assert!(empty.text().contains("EMPTY_NAME"), "{}", empty.text());
}
