//! Pagination through the in-process client (the stdio transport's code path), with pages
//! smaller than the lists: `tools/list` of a session (2025-11-25) or principal (2026-07-28)
//! whose tool manager enabled, disabled, allowed or blocked tools — each page walk must give
//! exactly the active tools, in order, once each — and `resources/list`,
//! `resources/templates/list` and `prompts/list`, in both protocol versions.

use std::collections::BTreeSet;

use mcp_tool::extract::{Batch, ToolManager};
use mcp_tool::prelude::*;
use mcp_tool::prompt::{Prompt, PromptMessage};
use mcp_tool::resource::{Resource, ResourceTemplate};
use mcp_tool::testing::Client;
use serde_json::{Value, json};

/// First.
#[tool]
fn alpha() -> &'static str {
    "a"
}

/// Second.
#[tool]
fn bravo() -> &'static str {
    "b"
}

/// Third.
#[tool]
fn charlie() -> &'static str {
    "c"
}

/// Fourth.
#[tool]
fn delta() -> &'static str {
    "d"
}

/// Fifth.
#[tool]
fn echo() -> &'static str {
    "e"
}

/// Sixth.
#[tool]
fn foxtrot() -> &'static str {
    "f"
}

/// Hidden until enabled.
#[tool(hidden)]
fn golf() -> &'static str {
    "g"
}

/// Always listed.
#[tool(always_visible)]
fn hotel() -> &'static str {
    "h"
}

/// Changes the caller's tool selection; returns the active tools.
#[tool(always_visible)]
fn manage(
    tools: ToolManager,
    enable: Option<Vec<String>>,
    disable: Option<Vec<String>>,
    allow: Option<Vec<String>>,
    block: Option<Vec<String>>,
) -> Result<String, ToolError> {
    let active = tools.batch(Batch {
        enable: enable.unwrap_or_default(),
        disable: disable.unwrap_or_default(),
        allow,
        block,
    })?;
    Ok(active.join(","))
}

const TOOLS: [&str; 9] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "manage",
];

/// The tools listed before any change: all but the hidden `golf`, sorted by name.
const LISTED: [&str; 8] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "hotel", "manage",
];

/// Page sizes around the list's lengths (8 listed; 4 to 7 after the changes below).
const PAGE_SIZES: [usize; 7] = [1, 2, 3, 4, 7, 8, 9];

fn tools_server(page_size: usize) -> Server {
    Server::new("pages", "0").only(TOOLS).page_size(page_size)
}

/// Walks every page of `method` from the first, following `nextCursor`: every page but the
/// last is full, the last is not empty (unless the list is), and no item comes twice. Returns
/// the `field` of each item (`key` holds the page's items) and the cursors followed.
async fn walk(
    c: &Client,
    method: &str,
    key: &str,
    field: &str,
    page_size: usize,
) -> (Vec<String>, Vec<String>) {
    let mut items = Vec::new();
    let mut cursors = Vec::new();
    loop {
        let params = match cursors.last() {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let page = c
            .request(method, params)
            .await
            .unwrap_or_else(|e| panic!("{method} after {cursors:?}: {e:?}"));
        let chunk = page[key]
            .as_array()
            .unwrap_or_else(|| panic!("{method}: no `{key}`: {page}"));
        let next = page.get("nextCursor").and_then(Value::as_str);
        match next {
            Some(_) => assert_eq!(
                chunk.len(),
                page_size,
                "{method}: a page before the last is not full: {page}"
            ),
            None => assert!(
                chunk.len() <= page_size && (!chunk.is_empty() || cursors.is_empty()),
                "{method}: the last page holds {} of at most {page_size}, and only an empty list has an empty page: {page}",
                chunk.len()
            ),
        }
        items.extend(chunk.iter().map(|item| {
            item[field]
                .as_str()
                .unwrap_or_else(|| panic!("{method}: an item without `{field}`: {item}"))
                .to_owned()
        }));
        match next {
            Some(cursor) => {
                assert!(
                    cursors.len() < 100,
                    "{method}: more than 100 pages: {items:?}"
                );
                cursors.push(cursor.to_owned());
            }
            None => break,
        }
    }
    let unique: BTreeSet<&String> = items.iter().collect();
    assert_eq!(unique.len(), items.len(), "{method}: duplicates: {items:?}");
    (items, cursors)
}

async fn tool_pages(c: &Client, page_size: usize) -> Vec<String> {
    walk(c, "tools/list", "tools", "name", page_size).await.0
}

/// Calls `manage` with `change`; returns the active tools it reports.
async fn manage_tools(c: &Client, change: Value) -> Vec<String> {
    let r = c.call("manage", change.clone()).await.unwrap();
    assert!(!r.is_error(), "{change}: {}", r.text());
    r.text().split(',').map(str::to_owned).collect()
}

/// Enables, disables, allows and blocks tools through `manage`, and checks after each change
/// that paging through `tools/list` gives exactly the active tools, in order.
async fn pages_follow_the_selection(c: &Client, page_size: usize) {
    let (all, cursors) = walk(c, "tools/list", "tools", "name", page_size).await;
    assert_eq!(all, LISTED, "page size {page_size}");

    let active = manage_tools(
        c,
        json!({ "enable": ["golf"], "disable": ["bravo", "echo"] }),
    )
    .await;
    assert_eq!(
        active,
        [
            "alpha", "charlie", "delta", "foxtrot", "golf", "hotel", "manage"
        ]
    );
    assert_eq!(
        tool_pages(c, page_size).await,
        active,
        "page size {page_size}"
    );

    let active = manage_tools(c, json!({ "allow": ["delta", "alpha"] })).await;
    assert_eq!(active, ["alpha", "delta", "hotel", "manage"]);
    assert_eq!(
        tool_pages(c, page_size).await,
        active,
        "page size {page_size}"
    );
    // A cursor of the longer list that names no page of this one is refused, not answered
    // with an empty page.
    if let Some(stale) = cursors.last().filter(|_| page_size < active.len()) {
        let e = c
            .request("tools/list", json!({ "cursor": stale }))
            .await
            .expect_err("a cursor past the list's end");
        assert_eq!(e.code, -32602, "page size {page_size}: {e:?}");
    }

    let active = manage_tools(c, json!({ "block": ["charlie"], "enable": ["golf"] })).await;
    assert_eq!(
        active,
        [
            "alpha", "bravo", "delta", "echo", "foxtrot", "golf", "hotel", "manage"
        ]
    );
    assert_eq!(
        tool_pages(c, page_size).await,
        active,
        "page size {page_size}"
    );

    let active = manage_tools(c, json!({ "disable": ["alpha", "hotel", "golf"] })).await;
    assert_eq!(active, ["bravo", "delta", "echo", "foxtrot", "manage"]);
    assert_eq!(
        tool_pages(c, page_size).await,
        active,
        "page size {page_size}"
    );
}

#[tokio::test]
async fn a_session_pages_through_exactly_its_active_tools() {
    for page_size in PAGE_SIZES {
        let c = Client::start(tools_server(page_size)).await.unwrap();
        pages_follow_the_selection(&c, page_size).await;
    }
}

#[tokio::test]
async fn a_principal_pages_through_exactly_its_active_tools_in_2026() {
    for page_size in PAGE_SIZES {
        let c = Client::stateless(tools_server(page_size), json!({})).unwrap();
        pages_follow_the_selection(&c, page_size).await;
    }
}

#[tokio::test]
async fn every_page_of_a_changed_2026_list_says_it_is_private() {
    let c = Client::stateless(tools_server(2), json!({})).unwrap();
    manage_tools(&c, json!({ "disable": ["bravo"] })).await;
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor
            .as_ref()
            .map_or(json!({}), |c| json!({ "cursor": c }));
        let page = c.request("tools/list", params).await.unwrap();
        assert_eq!(page["resultType"], "complete", "{page}");
        assert_eq!(page["cacheScope"], "private", "{page}");
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Resources, templates and prompts
// ---------------------------------------------------------------------------------------------

const RESOURCES: usize = 7;
const TEMPLATES: usize = 5;
const PROMPTS: usize = 7;

fn offerings_server(page_size: usize) -> Server {
    let mut server = Server::new("offerings", "0")
        .without_registry()
        .page_size(page_size);
    // Named out of alphabetical order: the lists keep the order they were declared in.
    for i in (0..RESOURCES).rev() {
        server = server.resource(Resource::text(
            format!("test://r/{i}"),
            format!("r{i}"),
            "text/plain",
            format!("resource {i}"),
        ));
    }
    for i in (0..TEMPLATES).rev() {
        server = server.resource_template(
            ResourceTemplate::new(format!("test://t{i}/{{id}}"), format!("t{i}")).read(
                |request| async move {
                    Ok(vec![mcp_tool::content::ResourceContents::text(
                        request.uri(),
                        "text/plain",
                        "templated",
                    )])
                },
            ),
        );
    }
    for i in (0..PROMPTS).rev() {
        server = server.prompt(
            Prompt::new(format!("p{i}"))
                .description("A prompt")
                .get(|_| async { Ok(vec![PromptMessage::user("hi")].into()) }),
        );
    }
    server
}

fn declared(prefix: &str, n: usize) -> Vec<String> {
    (0..n).rev().map(|i| format!("{prefix}{i}")).collect()
}

async fn offerings_page_through(c: &Client, page_size: usize) {
    let (resources, _) = walk(c, "resources/list", "resources", "name", page_size).await;
    assert_eq!(resources, declared("r", RESOURCES), "page size {page_size}");
    let (templates, _) = walk(
        c,
        "resources/templates/list",
        "resourceTemplates",
        "name",
        page_size,
    )
    .await;
    assert_eq!(templates, declared("t", TEMPLATES), "page size {page_size}");
    let (prompts, _) = walk(c, "prompts/list", "prompts", "name", page_size).await;
    assert_eq!(prompts, declared("p", PROMPTS), "page size {page_size}");
    for method in ["resources/list", "resources/templates/list", "prompts/list"] {
        let e = c
            .request(method, json!({ "cursor": "bogus" }))
            .await
            .expect_err("a bogus cursor");
        assert_eq!(e.code, -32602, "{method}: {e:?}");
    }
}

#[tokio::test]
async fn resources_templates_and_prompts_are_paged_like_tools() {
    for page_size in [1, 2, 3, 5, 7, 8] {
        let c = Client::start(offerings_server(page_size)).await.unwrap();
        offerings_page_through(&c, page_size).await;
    }
}

#[tokio::test]
async fn resources_templates_and_prompts_are_paged_in_2026() {
    for page_size in [1, 3, 5, 8] {
        let c = Client::stateless(offerings_server(page_size), json!({})).unwrap();
        offerings_page_through(&c, page_size).await;
    }
}
