//! The `files` example over real stdio: tools confined to one folder, a login that enables
//! hidden tools, elicitation, sampling, progress, cancellation and logging; bad input
//! included. Each test works in a temporary folder of its own.

mod common;

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{Proc, QUIET, VERSION, error_text, is_error, names_field, run, text};
use serde_json::{Value, json};

/// The `files` example server.
const FILES: &str = env!("CARGO_BIN_EXE_files");

/// The password every test server is started with.
const PASSWORD: &str = "open-sesame";

/// The text of the file outside the root; no answer may ever contain it.
const SECRET: &str = "TOP SECRET: outside the root";

const A_TXT: &str = "alpha\n";
const B_MD: &str = "# Bravo\n\nThe second file, in Markdown.\n";
const C_TXT: &str = "charlie lives in sub\n";

/// The tools every session has.
const VISIBLE: [&str; 5] = [
    "list_dir",
    "login",
    "read_file",
    "reindex",
    "summarize_file",
];

/// The tools `login` enables.
const HIDDEN: [&str; 2] = ["delete_file", "write_file"];

/// A temporary folder, removed when dropped:
///
/// ```text
/// <base>/outside/secret.txt         SECRET
/// <base>/root/a.txt                 A_TXT
/// <base>/root/b.md                  B_MD
/// <base>/root/sub/c.txt             C_TXT
/// <base>/root/sub/empty/
/// <base>/root/link_in       -> sub                    (unix)
/// <base>/root/link_out      -> <base>/outside         (unix)
/// <base>/root/link_out_file -> <base>/outside/secret.txt (unix)
/// ```
struct Fixture {
    base: PathBuf,
    root: PathBuf,
    outside: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let base = std::env::temp_dir().join(format!(
            "mcp-files-test-{name}-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let root = base.join("root");
        let outside = base.join("outside");
        fs::create_dir_all(root.join("sub").join("empty")).expect("create the root");
        fs::create_dir_all(&outside).expect("create the outside folder");
        fs::write(outside.join("secret.txt"), SECRET).unwrap();
        fs::write(root.join("a.txt"), A_TXT).unwrap();
        fs::write(root.join("b.md"), B_MD).unwrap();
        fs::write(root.join("sub").join("c.txt"), C_TXT).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink("sub", root.join("link_in")).unwrap();
            symlink(&outside, root.join("link_out")).unwrap();
            symlink(outside.join("secret.txt"), root.join("link_out_file")).unwrap();
        }
        Fixture {
            base,
            root,
            outside,
        }
    }

    fn root_arg(&self) -> &str {
        self.root.to_str().expect("a UTF-8 temporary folder")
    }

    /// The server on this root, initialized without client capabilities.
    fn server(&self) -> Proc {
        self.server_with(json!({}))
    }

    /// The server on this root, initialized with these client capabilities.
    fn server_with(&self, capabilities: Value) -> Proc {
        Proc::initialized_with(
            FILES,
            &["--root", self.root_arg(), "--password", PASSWORD],
            capabilities,
        )
    }

    /// The server on this root, logged in (the `list_changed` consumed).
    fn logged_in(&self, capabilities: Value) -> Proc {
        let mut p = self.server_with(capabilities);
        let (before, response) = call_collect(&mut p, "login", json!({ "password": PASSWORD }));
        assert!(!is_error(&response["result"]), "{response}");
        let mut changes = count_method(&before, "notifications/tools/list_changed");
        if changes == 0 {
            changes += count_method(&p.drain_for(QUIET), "notifications/tools/list_changed");
        }
        assert_eq!(changes, 1, "one list_changed after login: {before:?}");
        p
    }

    /// The number of entries directly in the root.
    fn root_entries(&self) -> usize {
        fs::read_dir(&self.root).unwrap().count()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

fn names(tools: &[Value]) -> Vec<String> {
    let mut n: Vec<String> = tools
        .iter()
        .map(|t| t["name"].as_str().expect("a tool has a name").to_owned())
        .collect();
    n.sort();
    n
}

fn count_method(messages: &[Value], method: &str) -> usize {
    messages.iter().filter(|m| m["method"] == method).count()
}

fn with_method<'a>(messages: &'a [Value], method: &str) -> Vec<&'a Value> {
    messages.iter().filter(|m| m["method"] == method).collect()
}

/// Calls a tool with an id of the test's and returns the messages before the response, and
/// the response.
fn call_collect(p: &mut Proc, tool: &str, arguments: Value) -> (Vec<Value>, Value) {
    let id = Value::from(p.next_id());
    p.send_request(
        &id,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    );
    p.until_response(&id)
}

/// Asserts that a tool result refuses a path: `isError`, `PATH_REFUSED`, no leak.
fn assert_refused(result: &Value, what: &str) {
    let t = error_text(result);
    assert!(t.contains("PATH_REFUSED"), "{what}: {t}");
    assert!(!t.contains(SECRET), "{what}: leaked the outside file: {t}");
    assert!(
        result.get("structuredContent").is_none(),
        "{what}: {result}"
    );
}

/// The successful text result of a call.
fn ok_text(p: &mut Proc, tool: &str, arguments: Value) -> String {
    let result = p.call(tool, arguments.clone());
    assert!(!is_error(&result), "{tool} {arguments}: {result}");
    text(&result)
}

// ---------------------------------------------------------------------------------------------
// initialize and tools/list

fn assert_initialize_result(result: &Value) {
    assert_eq!(result["protocolVersion"], "2025-11-25", "{result}");
    assert_eq!(result["serverInfo"]["name"], "files", "{result}");
    assert_eq!(result["serverInfo"]["version"], VERSION, "{result}");
    assert_eq!(
        result["capabilities"]["tools"]["listChanged"], true,
        "{result}"
    );
    assert!(result["capabilities"]["logging"].is_object(), "{result}");
}

#[test]
fn initialize_without_client_capabilities() {
    let fx = Fixture::new("init-plain");
    let mut p = Proc::spawn_args(FILES, &["--root", fx.root_arg(), "--password", PASSWORD]);
    let result = p.result(
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "integration-tests", "version": "0.0.0" }
        }),
    );
    assert_initialize_result(&result);
    p.notify("notifications/initialized", Value::Null);
    p.expect_silence();
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

#[test]
fn initialize_with_sampling_and_elicitation() {
    let fx = Fixture::new("init-caps");
    let mut p = Proc::spawn_args(FILES, &["--root", fx.root_arg(), "--password", PASSWORD]);
    let result = p.result(
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": { "sampling": {}, "elicitation": {} },
            "clientInfo": { "name": "integration-tests", "version": "0.0.0" }
        }),
    );
    assert_initialize_result(&result);
    p.notify("notifications/initialized", Value::Null);
    p.expect_silence();
    assert_eq!(names(&p.tools()), VISIBLE);
}

#[test]
fn tools_list_hides_write_and_delete_until_login() {
    let fx = Fixture::new("list-hidden");
    let mut p = fx.server();
    let tools = p.tools();
    assert_eq!(names(&tools), VISIBLE, "{tools:?}");
    for tool in &tools {
        assert!(tool["inputSchema"]["type"] == "object", "{tool}");
        assert!(tool["description"].is_string(), "{tool}");
    }
    for hidden in HIDDEN {
        let e = p.rpc_error(
            "tools/call",
            json!({ "name": hidden, "arguments": { "path": "x.txt", "content": "x" } }),
        );
        assert_eq!(e["code"], -32602, "{hidden}: {e}");
        assert!(
            e["message"].as_str().unwrap().contains(hidden),
            "{hidden}: {e}"
        );
    }
    assert!(!fx.root.join("x.txt").exists());
    p.expect_silence();
}

// ---------------------------------------------------------------------------------------------
// read_file and list_dir

#[test]
fn read_file_returns_the_text() {
    let fx = Fixture::new("read");
    let mut p = fx.server();
    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "a.txt" })),
        A_TXT
    );
    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "b.md" })),
        B_MD
    );
    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "./a.txt" })),
        A_TXT
    );
    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "sub/c.txt" })),
        C_TXT
    );
    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "sub/./c.txt" })),
        C_TXT
    );
}

#[test]
fn read_file_bad_arguments_are_tool_errors() {
    let fx = Fixture::new("read-args");
    let mut p = fx.server();
    let t = error_text(&p.call("read_file", json!({})));
    assert!(names_field(&t, "path"), "{t}");
    let t = error_text(&p.call("read_file", json!({ "path": 5 })));
    assert!(names_field(&t, "path"), "{t}");
    let t = error_text(&p.call("read_file", json!({ "path": null })));
    assert!(names_field(&t, "path"), "{t}");
    let t = error_text(&p.call("read_file", json!({ "path": "a.txt", "extra": 1 })));
    assert!(names_field(&t, "extra"), "{t}");
    let e = p.rpc_error(
        "tools/call",
        json!({ "name": "read_file", "arguments": "a.txt" }),
    );
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

/// The entries of a `list_dir` result, checked for shape and order.
fn entries(result: &Value) -> Vec<Value> {
    assert!(!is_error(result), "{result}");
    let listing = &result["structuredContent"];
    let entries = listing["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("`entries` is an array: {result}"))
        .clone();
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["name"].as_str().expect("an entry has a name"))
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "entries are sorted by name: {result}");
    // The text copy is the same listing.
    let from_text: Value = serde_json::from_str(&text(result)).expect("the text is JSON");
    assert_eq!(&from_text, listing, "{result}");
    entries
}

fn entry<'a>(entries: &'a [Value], name: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no entry {name}: {entries:?}"))
}

#[test]
fn list_dir_lists_sorted_entries_with_kinds_and_sizes() {
    let fx = Fixture::new("list");
    let mut p = fx.server();

    let root = p.call("list_dir", json!({}));
    let listed = entries(&root);
    let mut expected: Vec<String> = fs::read_dir(&fx.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    expected.sort();
    let got: Vec<&str> = listed.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(got, expected, "{root}");
    assert_eq!(
        entry(&listed, "a.txt"),
        &json!({ "name": "a.txt", "kind": "file", "size": A_TXT.len() })
    );
    assert_eq!(
        entry(&listed, "b.md"),
        &json!({ "name": "b.md", "kind": "file", "size": B_MD.len() })
    );
    assert_eq!(
        entry(&listed, "sub"),
        &json!({ "name": "sub", "kind": "dir", "size": null })
    );

    // No path is the root, as is `.`.
    let dot = p.call("list_dir", json!({ "path": "." }));
    assert_eq!(entries(&dot), listed);
    assert_eq!(dot["structuredContent"]["path"], ".");
    let null = p.call("list_dir", json!({ "path": null }));
    assert_eq!(entries(&null), listed);

    // A subfolder.
    let sub = p.call("list_dir", json!({ "path": "sub" }));
    assert_eq!(sub["structuredContent"]["path"], "sub", "{sub}");
    assert_eq!(
        entries(&sub),
        vec![
            json!({ "name": "c.txt", "kind": "file", "size": C_TXT.len() }),
            json!({ "name": "empty", "kind": "dir", "size": null }),
        ]
    );
    let empty = p.call("list_dir", json!({ "path": "sub/empty" }));
    assert!(entries(&empty).is_empty(), "{empty}");

    // The tool declares the listing's schema.
    let tools = p.tools();
    let list_dir = tools.iter().find(|t| t["name"] == "list_dir").unwrap();
    assert!(list_dir["outputSchema"].is_object(), "{list_dir}");
}

/// A symbolic link that leads to a folder inside the root is listed as what it leads to.
#[cfg(unix)]
#[test]
fn list_dir_describes_an_inside_symlink_by_its_target() {
    let fx = Fixture::new("list-links");
    std::os::unix::fs::symlink("a.txt", fx.root.join("link_a")).unwrap();
    let mut p = fx.server();
    let listed = entries(&p.call("list_dir", json!({})));
    assert_eq!(
        entry(&listed, "link_in"),
        &json!({ "name": "link_in", "kind": "dir", "size": null }),
        "`link_in` leads to the folder `sub`"
    );
    assert_eq!(
        entry(&listed, "link_a"),
        &json!({ "name": "link_a", "kind": "file", "size": A_TXT.len() }),
        "`link_a` leads to the file `a.txt`"
    );
}

// ---------------------------------------------------------------------------------------------
// Paths that lead out of the root

#[test]
fn paths_that_leave_the_root_are_refused() {
    let fx = Fixture::new("escape");
    fs::write(fx.base.join("x"), "beside the root").unwrap();
    let mut p = fx.server();
    let outside = fx.outside.join("secret.txt");
    let mut bad = vec![
        "/etc/passwd".to_owned(),
        outside.to_str().unwrap().to_owned(),
        fx.root.join("a.txt").to_str().unwrap().to_owned(),
        "../x".to_owned(),
        "..".to_owned(),
        "sub/../../x".to_owned(),
        "sub/../a.txt".to_owned(),
        "./../x".to_owned(),
        "../outside/secret.txt".to_owned(),
        "../root/a.txt".to_owned(),
    ];
    if cfg!(unix) {
        bad.extend(
            [
                "link_out/secret.txt",
                "link_out_file",
                "link_out",
                "link_out/.",
            ]
            .map(String::from),
        );
    }
    for path in &bad {
        let r = p.call("read_file", json!({ "path": path }));
        assert_refused(&r, &format!("read_file {path}"));
        let r = p.call("list_dir", json!({ "path": path }));
        assert_refused(&r, &format!("list_dir {path}"));
        let r = p.call("summarize_file", json!({ "path": path }));
        assert_refused(&r, &format!("summarize_file {path}"));
    }
    // The refusals were answers: the server still serves.
    p.expect_silence();
    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "a.txt" })),
        A_TXT
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_that_stays_inside_works() {
    let fx = Fixture::new("link-in");
    let mut p = fx.server();
    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "link_in/c.txt" })),
        C_TXT
    );
    let listed = entries(&p.call("list_dir", json!({ "path": "link_in" })));
    let names: Vec<&str> = listed.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["c.txt", "empty"]);
}

#[test]
fn missing_files_are_tool_errors() {
    let fx = Fixture::new("missing");
    let mut p = fx.server();
    for (tool, path) in [
        ("read_file", "nope.txt"),
        ("read_file", "nodir/x.txt"),
        ("read_file", "sub/nope/deeper/x.txt"),
        ("read_file", "sub"),
        ("read_file", "."),
        ("list_dir", "nope"),
        ("list_dir", "a.txt"),
        ("list_dir", "nodir/deeper"),
        ("summarize_file", "nope.txt"),
    ] {
        let r = p.call(tool, json!({ "path": path }));
        let t = error_text(&r);
        assert!(!t.contains("PATH_REFUSED"), "{tool} {path}: {t}");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("gone.txt", fx.root.join("dangling_in")).unwrap();
        let t = error_text(&p.call("read_file", json!({ "path": "dangling_in" })));
        assert!(!t.contains("PATH_REFUSED"), "{t}");
    }
    assert_eq!(p.result("ping", Value::Null), json!({}));
    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "a.txt" })),
        A_TXT
    );
}

// ---------------------------------------------------------------------------------------------
// login, write_file, delete_file

#[test]
fn login_with_a_wrong_password_changes_nothing() {
    let fx = Fixture::new("login-bad");
    let mut p = fx.server();
    for password in ["wrong", "", "open-sesame ", "OPEN-SESAME"] {
        let (before, response) = call_collect(&mut p, "login", json!({ "password": password }));
        let t = error_text(&response["result"]);
        assert!(t.contains("BAD_PASSWORD"), "{password:?}: {t}");
        assert!(!t.contains(PASSWORD), "the password is not revealed: {t}");
        assert!(before.is_empty(), "{password:?}: {before:?}");
    }
    let t = error_text(&p.call("login", json!({})));
    assert!(names_field(&t, "password"), "{t}");
    let t = error_text(&p.call("login", json!({ "password": 5 })));
    assert!(names_field(&t, "password"), "{t}");
    p.expect_silence();
    assert_eq!(names(&p.tools()), VISIBLE);
    let e = p.rpc_error(
        "tools/call",
        json!({ "name": "write_file", "arguments": { "path": "w.txt", "content": "x" } }),
    );
    assert_eq!(e["code"], -32602, "{e}");
    assert!(!fx.root.join("w.txt").exists());
}

#[test]
fn login_enables_write_and_delete() {
    let fx = Fixture::new("login");
    let mut p = fx.server();
    let (before, response) = call_collect(&mut p, "login", json!({ "password": PASSWORD }));
    let result = &response["result"];
    assert!(!is_error(result), "{response}");
    assert!(text(result).contains("Authenticated"), "{result}");
    let mut all = before;
    all.extend(p.drain_for(QUIET));
    assert_eq!(
        count_method(&all, "notifications/tools/list_changed"),
        1,
        "{all:?}"
    );
    assert_eq!(all.len(), 1, "only list_changed: {all:?}");

    let mut expected: Vec<&str> = VISIBLE.iter().chain(HIDDEN.iter()).copied().collect();
    expected.sort_unstable();
    assert_eq!(names(&p.tools()), expected);

    // Logging in again changes nothing, so nothing is announced.
    let (before, response) = call_collect(&mut p, "login", json!({ "password": PASSWORD }));
    assert!(!is_error(&response["result"]), "{response}");
    assert!(before.is_empty(), "{before:?}");
    p.expect_silence();
    // A wrong password later does not log out.
    let t = error_text(&p.call("login", json!({ "password": "wrong" })));
    assert!(t.contains("BAD_PASSWORD"), "{t}");
    p.expect_silence();
    assert_eq!(names(&p.tools()), expected);

    // write_file creates a file on disk, and overwrites it.
    let t = ok_text(
        &mut p,
        "write_file",
        json!({ "path": "new.txt", "content": "fresh content" }),
    );
    assert!(t.contains("new.txt"), "{t}");
    assert_eq!(
        fs::read_to_string(fx.root.join("new.txt")).unwrap(),
        "fresh content"
    );
    ok_text(
        &mut p,
        "write_file",
        json!({ "path": "sub/new.txt", "content": "in sub" }),
    );
    assert_eq!(
        fs::read_to_string(fx.root.join("sub/new.txt")).unwrap(),
        "in sub"
    );
    ok_text(
        &mut p,
        "write_file",
        json!({ "path": "new.txt", "content": "" }),
    );
    assert_eq!(fs::read_to_string(fx.root.join("new.txt")).unwrap(), "");
    ok_text(
        &mut p,
        "write_file",
        json!({ "path": "new.txt", "content": "ünïcødé ✓\n" }),
    );
    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "new.txt" })),
        "ünïcødé ✓\n"
    );

    // delete_file without the elicitation capability deletes at once.
    let (before, response) = call_collect(&mut p, "delete_file", json!({ "path": "new.txt" }));
    assert!(
        before.iter().all(|m| m["method"] != "elicitation/create"),
        "{before:?}"
    );
    let t = text(&response["result"]);
    assert!(!is_error(&response["result"]), "{response}");
    assert!(t.contains("deleted new.txt"), "{t}");
    assert!(!fx.root.join("new.txt").exists());
    // Deleting it again is a tool error, not a crash.
    let r = p.call("delete_file", json!({ "path": "new.txt" }));
    assert!(is_error(&r), "{r}");
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

#[test]
fn write_and_delete_bad_input() {
    let fx = Fixture::new("write-bad");
    let mut p = fx.logged_in(json!({}));

    // Escapes.
    let mut bad = vec!["../evil.txt", "sub/../../evil.txt", "/tmp/evil.txt", ".."];
    if cfg!(unix) {
        bad.extend(["link_out/evil.txt", "link_out_file"]);
    }
    for path in &bad {
        let r = p.call("write_file", json!({ "path": path, "content": "evil" }));
        assert_refused(&r, &format!("write_file {path}"));
        let r = p.call("delete_file", json!({ "path": path }));
        assert_refused(&r, &format!("delete_file {path}"));
    }
    assert!(!fx.base.join("evil.txt").exists());
    assert!(!fx.outside.join("evil.txt").exists());
    assert_eq!(
        fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        SECRET
    );

    // The root itself cannot be deleted.
    for path in [".", "", "./"] {
        let r = p.call("delete_file", json!({ "path": path }));
        assert_refused(&r, &format!("delete_file {path:?}"));
    }
    assert!(fx.root.is_dir());
    // A folder is not a file.
    let r = p.call("delete_file", json!({ "path": "sub/empty" }));
    assert!(is_error(&r), "{r}");
    assert!(fx.root.join("sub/empty").is_dir());
    // Writing into a missing folder, or onto a folder, fails cleanly.
    let r = p.call(
        "write_file",
        json!({ "path": "nodir/x.txt", "content": "x" }),
    );
    assert!(is_error(&r), "{r}");
    assert!(!fx.root.join("nodir").exists());
    let r = p.call("write_file", json!({ "path": "sub", "content": "x" }));
    assert!(is_error(&r), "{r}");
    assert!(fx.root.join("sub").is_dir());
    // Missing arguments name the field.
    let t = error_text(&p.call("write_file", json!({ "path": "y.txt" })));
    assert!(names_field(&t, "content"), "{t}");
    let t = error_text(&p.call("write_file", json!({ "content": "y" })));
    assert!(names_field(&t, "path"), "{t}");
    let t = error_text(&p.call("delete_file", json!({})));
    assert!(names_field(&t, "path"), "{t}");
    assert!(!fx.root.join("y.txt").exists());

    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "a.txt" })),
        A_TXT
    );
}

/// A symbolic link inside the root whose target (outside) does not exist yet must not let
/// `write_file` create a file outside the root.
#[cfg(unix)]
#[test]
fn write_file_through_a_dangling_symlink_out_is_refused() {
    let fx = Fixture::new("dangling-out");
    let planted = fx.outside.join("planted.txt");
    std::os::unix::fs::symlink(&planted, fx.root.join("dangling_out")).unwrap();
    let mut p = fx.logged_in(json!({}));
    let r = p.call(
        "write_file",
        json!({ "path": "dangling_out", "content": "escaped" }),
    );
    let landed = planted.exists();
    assert!(
        !landed,
        "write_file wrote outside the root through `dangling_out` -> {}: {r}",
        planted.display()
    );
    assert_refused(&r, "write_file dangling_out");
}

/// Two links chained, the last dangling outside (`d1 -> d2 -> <outside>/new.txt`): the
/// kernel resolves every hop beneath the root, so nothing is created outside.
#[cfg(unix)]
#[test]
fn write_file_through_a_chain_of_dangling_links_out_is_refused() {
    let fx = Fixture::new("chain-out");
    let planted = fx.outside.join("new.txt");
    std::os::unix::fs::symlink(&planted, fx.root.join("d2")).unwrap();
    std::os::unix::fs::symlink("d2", fx.root.join("d1")).unwrap();
    let mut p = fx.logged_in(json!({}));
    for path in ["d1", "d2", "sub/../d1"] {
        let r = p.call("write_file", json!({ "path": path, "content": "escaped" }));
        assert_refused(&r, &format!("write_file {path}"));
        let r = p.call("read_file", json!({ "path": path }));
        assert!(is_error(&r), "read_file {path}: {r}");
    }
    assert!(!planted.exists(), "a file was created outside the root");
}

/// A file swapped for a link to the outside while calls run: no read ever returns the
/// outside file (there is no check-then-open window to win).
#[cfg(unix)]
#[test]
fn swapping_a_file_for_an_outside_link_during_reads_never_leaks() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let fx = Fixture::new("swap-race");
    let swap = fx.root.join("swap.txt");
    let secret = fx.outside.join("secret.txt");
    fs::write(&swap, "harmless\n").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, swap, secret) = (stop.clone(), swap.clone(), secret.clone());
        let staged = swap.with_extension("tmp");
        std::thread::spawn(move || {
            let mut flips = 0_u64;
            while !stop.load(Ordering::Relaxed) {
                // Atomic swaps (rename over), so the name always exists.
                let _ = fs::remove_file(&staged);
                if flips.is_multiple_of(2) {
                    let _ = std::os::unix::fs::symlink(&secret, &staged);
                } else {
                    let _ = fs::write(&staged, "harmless\n");
                }
                let _ = fs::rename(&staged, &swap);
                flips += 1;
            }
            flips
        })
    };
    let mut p = fx.server();
    let (mut harmless, mut refused) = (0, 0);
    for _ in 0..1500 {
        let r = p.call("read_file", json!({ "path": "swap.txt" }));
        let t = text(&r);
        assert!(!t.contains(SECRET), "the outside file leaked: {r}");
        if is_error(&r) {
            refused += 1;
        } else {
            harmless += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = swapper.join().unwrap();
    assert!(flips > 100, "the swapper barely ran ({flips} swaps)");
    assert!(harmless + refused == 1500, "every call answered");
}

/// A FIFO is not a file: reading it is refused at once instead of waiting for a writer for
/// ever (which held a blocking thread per call).
#[cfg(unix)]
#[test]
fn read_file_of_a_fifo_is_refused_at_once() {
    let fx = Fixture::new("fifo");
    let fifo = fx.root.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(
        made.is_ok_and(|s| s.success()),
        "mkfifo is needed for this test"
    );
    let mut p = fx.server();
    for _ in 0..3 {
        let r = p.call("read_file", json!({ "path": "pipe" }));
        assert!(is_error(&r), "{r}");
        assert!(text(&r).contains("not a regular file"), "{r}");
    }
    // The server still serves.
    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "a.txt" })),
        A_TXT
    );
}

/// Deleting a symbolic link removes the link, not the file it leads to.
#[cfg(unix)]
#[test]
fn delete_file_of_an_inside_symlink_removes_the_link_not_its_target() {
    let fx = Fixture::new("delete-link");
    std::os::unix::fs::symlink("a.txt", fx.root.join("link_a")).unwrap();
    let mut p = fx.logged_in(json!({}));
    let r = p.call("delete_file", json!({ "path": "link_a" }));
    assert!(!is_error(&r), "{r}");
    assert_eq!(
        fs::read_to_string(fx.root.join("a.txt")).ok().as_deref(),
        Some(A_TXT),
        "the link's target `a.txt` must survive: {r}"
    );
    assert!(
        fs::symlink_metadata(fx.root.join("link_a")).is_err(),
        "the link itself is gone: {r}"
    );
}

#[test]
fn a_second_process_without_login_cannot_write() {
    let fx = Fixture::new("two-procs");
    let mut first = fx.logged_in(json!({}));
    ok_text(
        &mut first,
        "write_file",
        json!({ "path": "one.txt", "content": "1" }),
    );
    let mut second = fx.server();
    assert_eq!(names(&second.tools()), VISIBLE);
    for hidden in HIDDEN {
        let e = second.rpc_error(
            "tools/call",
            json!({ "name": hidden, "arguments": { "path": "one.txt", "content": "2" } }),
        );
        assert_eq!(e["code"], -32602, "{hidden}: {e}");
    }
    assert_eq!(fs::read_to_string(fx.root.join("one.txt")).unwrap(), "1");
    // The first one is still logged in.
    ok_text(
        &mut first,
        "write_file",
        json!({ "path": "one.txt", "content": "3" }),
    );
    assert_eq!(fs::read_to_string(fx.root.join("one.txt")).unwrap(), "3");
    second.expect_silence();
}

// ---------------------------------------------------------------------------------------------
// delete_file with elicitation

/// Starts `delete_file {path}` and returns its id and the server's `elicitation/create`
/// request.
fn start_delete(p: &mut Proc, path: &str) -> (Value, Value) {
    let id = json!(format!("del-{}", p.next_id()));
    p.send_request(
        &id,
        "tools/call",
        json!({ "name": "delete_file", "arguments": { "path": path } }),
    );
    let (notes, request) = p.next_non_notification();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(request["method"], "elicitation/create", "{request}");
    assert!(
        request["id"].is_string() || request["id"].is_number(),
        "{request}"
    );
    let params = &request["params"];
    assert!(
        params["message"].as_str().unwrap_or("").contains(path),
        "the message names the file: {request}"
    );
    let schema = &params["requestedSchema"];
    assert_eq!(schema["type"], "object", "{request}");
    assert_eq!(
        schema["properties"]["confirm"]["type"], "boolean",
        "{request}"
    );
    assert!(
        schema["required"]
            .as_array()
            .is_some_and(|r| r.contains(&json!("confirm"))),
        "{request}"
    );
    (id, request)
}

#[test]
fn delete_file_asks_first_and_accept_deletes() {
    let fx = Fixture::new("elicit-accept");
    fs::write(fx.root.join("doomed.txt"), "bye").unwrap();
    let mut p = fx.logged_in(json!({ "elicitation": {} }));
    let (id, request) = start_delete(&mut p, "doomed.txt");
    // The file is still there while the user decides.
    assert!(fx.root.join("doomed.txt").exists());
    p.respond(
        &request["id"],
        json!({ "action": "accept", "content": { "confirm": true } }),
    );
    let (before, response) = p.until_response(&id);
    assert!(before.is_empty(), "{before:?}");
    let result = &response["result"];
    assert!(!is_error(result), "{response}");
    assert!(text(result).contains("deleted doomed.txt"), "{result}");
    assert!(!fx.root.join("doomed.txt").exists());
    p.expect_silence();
}

#[test]
fn delete_file_declined_or_cancelled_keeps_the_file() {
    let fx = Fixture::new("elicit-decline");
    fs::write(fx.root.join("kept.txt"), "stay").unwrap();
    let mut p = fx.logged_in(json!({ "elicitation": {} }));
    for answer in [
        json!({ "action": "decline" }),
        json!({ "action": "cancel" }),
        json!({ "action": "accept", "content": { "confirm": false } }),
    ] {
        let (id, request) = start_delete(&mut p, "kept.txt");
        p.respond(&request["id"], answer.clone());
        let (before, response) = p.until_response(&id);
        assert!(before.is_empty(), "{before:?}");
        let result = &response["result"];
        assert!(!is_error(result), "{answer}: {response}");
        assert!(
            text(result).contains("kept.txt was not deleted"),
            "{answer}: {result}"
        );
        assert_eq!(
            fs::read_to_string(fx.root.join("kept.txt")).unwrap(),
            "stay",
            "{answer}"
        );
    }
    p.expect_silence();
}

#[test]
fn delete_file_with_a_bad_elicitation_answer_keeps_the_file() {
    let fx = Fixture::new("elicit-bad");
    fs::write(fx.root.join("kept.txt"), "stay").unwrap();
    let mut p = fx.logged_in(json!({ "elicitation": {} }));
    for answer in [
        json!({ "action": "accept" }),
        json!({ "action": "accept", "content": {} }),
        json!({ "action": "accept", "content": { "confirm": "yes" } }),
        json!({ "action": "maybe" }),
        json!({}),
    ] {
        let (id, request) = start_delete(&mut p, "kept.txt");
        p.respond(&request["id"], answer.clone());
        let (_, response) = p.until_response(&id);
        let result = &response["result"];
        assert!(is_error(result), "{answer}: {response}");
        assert!(fx.root.join("kept.txt").exists(), "{answer}");
    }
    // The client answers with an error.
    let (id, request) = start_delete(&mut p, "kept.txt");
    p.respond_error(&request["id"], -32603, "the user's screen is off");
    let (_, response) = p.until_response(&id);
    let t = error_text(&response["result"]);
    assert!(t.contains("the user's screen is off"), "{t}");
    assert!(fx.root.join("kept.txt").exists());
    // A response to no request of the server's is ignored.
    p.respond(&json!(987_654), json!({ "action": "accept" }));
    p.respond(&json!("nobody"), json!({}));
    p.expect_silence();
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

#[test]
fn delete_file_cancelled_while_asking_keeps_the_file() {
    let fx = Fixture::new("elicit-cancel");
    fs::write(fx.root.join("kept.txt"), "stay").unwrap();
    let mut p = fx.logged_in(json!({ "elicitation": {} }));
    let (id, request) = start_delete(&mut p, "kept.txt");
    p.notify("notifications/cancelled", json!({ "requestId": id }));
    // Answering after the cancellation (which the server has read once it answers a ping sent
    // after it) is too late and changes nothing.
    let ping = json!("after-the-cancellation");
    p.send_request(&ping, "ping", Value::Null);
    let (early, _) = p.until_response(&ping);
    assert!(
        early.iter().all(|m| m["id"] != id),
        "a cancelled call is not answered: {early:?}"
    );
    p.respond(
        &request["id"],
        json!({ "action": "accept", "content": { "confirm": true } }),
    );
    let late = p.drain_for(Duration::from_millis(800));
    assert!(
        late.iter().all(|m| m["id"] != id),
        "a cancelled call is not answered: {late:?}"
    );
    assert!(fx.root.join("kept.txt").exists());
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

// ---------------------------------------------------------------------------------------------
// summarize_file with sampling

#[test]
fn summarize_file_asks_the_clients_model() {
    let fx = Fixture::new("sampling");
    let mut p = fx.server_with(json!({ "sampling": {}, "elicitation": {} }));
    let id = json!(p.next_id());
    p.send_request(
        &id,
        "tools/call",
        json!({ "name": "summarize_file", "arguments": { "path": "b.md" } }),
    );
    let (notes, request) = p.next_non_notification();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    let params = &request["params"];
    let messages = params["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1, "{request}");
    assert_eq!(messages[0]["role"], "user", "{request}");
    assert_eq!(messages[0]["content"]["type"], "text", "{request}");
    let prompt = messages[0]["content"]["text"].as_str().unwrap();
    assert!(
        prompt.contains(B_MD),
        "the prompt holds the file: {prompt:?}"
    );
    assert!(
        params["maxTokens"].as_u64().is_some_and(|n| n > 0),
        "{request}"
    );
    p.respond(
        &request["id"],
        json!({
            "role": "assistant",
            "content": { "type": "text", "text": "A summary." },
            "model": "test"
        }),
    );
    let (before, response) = p.until_response(&id);
    assert!(before.is_empty(), "{before:?}");
    let result = &response["result"];
    assert!(!is_error(result), "{response}");
    assert_eq!(text(result), "A summary.");
    p.expect_silence();
}

#[test]
fn summarize_file_without_sampling_is_a_tool_error() {
    let fx = Fixture::new("no-sampling");
    for caps in [
        json!({}),
        json!({ "elicitation": {} }),
        json!({ "sampling": null }),
    ] {
        let mut p = fx.server_with(caps.clone());
        let (before, response) = call_collect(&mut p, "summarize_file", json!({ "path": "a.txt" }));
        assert!(
            before.is_empty(),
            "{caps}: no request of the client: {before:?}"
        );
        let t = error_text(&response["result"]);
        assert!(t.contains("`sampling`"), "{caps}: {t}");
        assert!(t.contains("capability"), "{caps}: {t}");
        p.expect_silence();
    }
}

#[test]
fn summarize_file_when_sampling_fails_is_a_tool_error() {
    let fx = Fixture::new("sampling-fails");
    let mut p = fx.server_with(json!({ "sampling": {} }));
    let id = json!("sum-1");
    p.send_request(
        &id,
        "tools/call",
        json!({ "name": "summarize_file", "arguments": { "path": "a.txt" } }),
    );
    let (_, request) = p.next_non_notification();
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    p.respond_error(&request["id"], -1, "the user rejected the sampling request");
    let (_, response) = p.until_response(&id);
    let t = error_text(&response["result"]);
    assert!(t.contains("the user rejected the sampling request"), "{t}");
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

// ---------------------------------------------------------------------------------------------
// reindex: progress, cancellation, logging

/// Runs `reindex` with `token` and checks the progress notifications.
fn reindex_reports_progress(token: &Value) {
    let fx = Fixture::new("progress");
    let mut p = fx.server();
    let id = json!(p.next_id());
    let started = Instant::now();
    p.send_request(
        &id,
        "tools/call",
        json!({ "name": "reindex", "arguments": {}, "_meta": { "progressToken": token } }),
    );
    let (before, response) = p.until_response(&id);
    let took = started.elapsed();
    let progress = with_method(&before, "notifications/progress");
    assert_eq!(progress.len(), 10, "{before:?}");
    for (i, n) in progress.iter().enumerate() {
        let step = i + 1;
        let params = &n["params"];
        assert!(n.get("id").is_none(), "a notification has no id: {n}");
        assert_eq!(&params["progressToken"], token, "{n}");
        assert_eq!(
            params["progressToken"].is_string(),
            token.is_string(),
            "the token keeps its JSON type: {n}"
        );
        assert_eq!(params["progress"].as_f64(), Some(step as f64), "{n}");
        assert_eq!(params["total"].as_f64(), Some(10.0), "{n}");
    }
    // Ten steps of 100 ms each: at least a second, whatever the machine. (At most
    // `until_response`'s 10 s: ten times the nominal second.)
    assert!(
        took >= Duration::from_secs(1),
        "10 steps 100 ms apart took only {took:?}"
    );
    let result = &response["result"];
    assert!(!is_error(result), "{response}");
    assert_eq!(
        text(result),
        format!("indexed {} entries", fx.root_entries())
    );
    // Nothing after the response.
    let after = p.drain_for(QUIET);
    assert!(after.is_empty(), "{after:?}");
}

#[test]
fn reindex_reports_progress_with_a_string_token() {
    reindex_reports_progress(&json!("reindex-token-1"));
}

#[test]
fn reindex_reports_progress_with_a_number_token() {
    reindex_reports_progress(&json!(42));
}

#[test]
fn reindex_progress_arrives_about_100_ms_apart() {
    let fx = Fixture::new("progress-gaps");
    let mut p = fx.server();
    let id = json!(p.next_id());
    p.send_request(
        &id,
        "tools/call",
        json!({ "name": "reindex", "arguments": {}, "_meta": { "progressToken": 0 } }),
    );
    let started = Instant::now();
    let mut at = Vec::new();
    let deadline = started + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let m = p
            .recv_timeout(left)
            .unwrap_or_else(|| panic!("reindex did not finish; got {} progress", at.len()));
        if m["method"] == "notifications/progress" {
            at.push(started.elapsed());
        } else if m["id"] == id {
            break;
        }
    }
    assert_eq!(at.len(), 10, "{at:?}");
    // Spread over the run, not sent in one burst: the server sends the first and the last
    // nine 100 ms steps apart. A burst arrives within a few milliseconds; a tenth of the
    // 900 ms leaves a busy machine 800 ms to deliver the first one late.
    let spread = at[9] - at[0];
    assert!(spread >= Duration::from_millis(90), "{at:?}");
}

#[test]
fn reindex_without_a_token_sends_no_progress() {
    let fx = Fixture::new("no-token");
    let mut p = fx.server();
    for meta in [None, Some(json!({})), Some(json!({ "other": 1 }))] {
        let id = json!(p.next_id());
        let mut params = json!({ "name": "reindex", "arguments": {} });
        if let Some(meta) = &meta {
            params["_meta"] = meta.clone();
        }
        p.send_request(&id, "tools/call", params);
        let (before, response) = p.until_response(&id);
        assert_eq!(
            count_method(&before, "notifications/progress"),
            0,
            "{meta:?}: {before:?}"
        );
        assert!(!is_error(&response["result"]), "{response}");
        let after = p.drain_for(QUIET);
        assert_eq!(
            count_method(&after, "notifications/progress"),
            0,
            "{after:?}"
        );
    }
}

fn reindex_cancelled(id: &Value) {
    let fx = Fixture::new("cancel");
    let mut p = fx.server();
    p.send_request(
        id,
        "tools/call",
        json!({ "name": "reindex", "arguments": {}, "_meta": { "progressToken": "c" } }),
    );
    // Cancelled once it runs: at its first progress, with nine 100 ms steps still to go.
    let mut before = Vec::new();
    while count_method(&before, "notifications/progress") == 0 {
        before.push(p.recv());
    }
    let progress_before = count_method(&before, "notifications/progress");
    p.notify(
        "notifications/cancelled",
        json!({ "requestId": id, "reason": "test" }),
    );
    let cancelled_at = Instant::now();
    let after = p.drain_for(Duration::from_millis(1500));
    assert!(cancelled_at.elapsed() >= Duration::from_millis(1400));
    for m in before.iter().chain(&after) {
        assert!(
            m.get("method").is_some() || m["id"] != *id,
            "a cancelled request is not answered: {m}"
        );
    }
    let progress_after = count_method(&after, "notifications/progress");
    assert!(
        progress_after <= 1,
        "progress stops when cancelled: {progress_before} before, {progress_after} after: {after:?}"
    );
    assert_eq!(p.result("ping", Value::Null), json!({}));
    // The server still runs tools, reindex included.
    assert_eq!(
        ok_text(&mut p, "read_file", json!({ "path": "a.txt" })),
        A_TXT
    );
    let (_, response) = call_collect(&mut p, "reindex", json!({}));
    assert!(!is_error(&response["result"]), "{response}");
}

#[test]
fn reindex_cancelled_with_a_number_id_is_not_answered() {
    reindex_cancelled(&json!(4242));
}

#[test]
fn reindex_cancelled_with_a_string_id_is_not_answered() {
    reindex_cancelled(&json!("reindex-to-cancel"));
}

#[test]
fn cancelling_an_unknown_or_finished_request_is_ignored() {
    let fx = Fixture::new("cancel-unknown");
    let mut p = fx.server();
    p.notify("notifications/cancelled", json!({ "requestId": 999 }));
    p.notify("notifications/cancelled", json!({ "requestId": "nope" }));
    p.notify("notifications/cancelled", json!({}));
    p.notify("notifications/cancelled", Value::Null);
    p.notify("notifications/cancelled", json!({ "requestId": [1] }));
    p.expect_silence();
    let r = p.call("read_file", json!({ "path": "a.txt" }));
    assert!(!is_error(&r), "{r}");
    // The id of the finished call.
    p.notify("notifications/cancelled", json!({ "requestId": 1 }));
    p.expect_silence();
    assert_eq!(p.result("ping", Value::Null), json!({}));
}

/// The `notifications/message` log messages among `messages`: `(level, data)`.
fn logs(messages: &[Value]) -> Vec<(String, Value)> {
    with_method(messages, "notifications/message")
        .into_iter()
        .map(|m| {
            (
                m["params"]["level"].as_str().expect("a level").to_owned(),
                m["params"]["data"].clone(),
            )
        })
        .collect()
}

#[test]
fn logging_follows_the_level_the_client_sets() {
    let fx = Fixture::new("logging");
    let mut p = fx.server();

    assert_eq!(
        p.result("logging/setLevel", json!({ "level": "info" })),
        json!({})
    );
    let (before, response) = call_collect(&mut p, "reindex", json!({}));
    assert!(!is_error(&response["result"]), "{response}");
    assert_eq!(
        logs(&before),
        vec![
            ("info".to_owned(), json!("reindex started")),
            ("info".to_owned(), json!("reindex finished")),
        ],
        "{before:?}"
    );

    assert_eq!(
        p.result("logging/setLevel", json!({ "level": "error" })),
        json!({})
    );
    let (before, response) = call_collect(&mut p, "reindex", json!({}));
    assert!(!is_error(&response["result"]), "{response}");
    assert!(logs(&before).is_empty(), "{before:?}");
    assert!(logs(&p.drain_for(QUIET)).is_empty());

    // `debug` lets info through again.
    assert_eq!(
        p.result("logging/setLevel", json!({ "level": "debug" })),
        json!({})
    );
    let (before, _) = call_collect(&mut p, "reindex", json!({}));
    assert_eq!(logs(&before).len(), 2, "{before:?}");

    // Bad levels are invalid params, and leave the level as it was.
    for params in [
        json!({ "level": "bogus" }),
        json!({ "level": "INFO" }),
        json!({ "level": "" }),
        json!({ "level": 3 }),
        json!({ "level": null }),
        json!({}),
        Value::Null,
    ] {
        let e = p.rpc_error("logging/setLevel", params.clone());
        assert_eq!(e["code"], -32602, "{params}: {e}");
    }
    let (before, _) = call_collect(&mut p, "reindex", json!({}));
    assert_eq!(logs(&before).len(), 2, "{before:?}");
    // And bad levels after `error` do not reset it either.
    p.result("logging/setLevel", json!({ "level": "error" }));
    let e = p.rpc_error("logging/setLevel", json!({ "level": "verbose" }));
    assert_eq!(e["code"], -32602, "{e}");
    let (before, _) = call_collect(&mut p, "reindex", json!({}));
    assert!(logs(&before).is_empty(), "{before:?}");
}

// ---------------------------------------------------------------------------------------------
// The command line

fn assert_exit_2(args: &[&str]) -> String {
    let out = run(FILES, args);
    assert_eq!(out.code(), 2, "{args:?}: {out:?}");
    assert!(out.stdout.is_empty(), "{args:?}: {out:?}");
    assert!(!out.stderr.is_empty(), "{args:?}: {out:?}");
    out.stderr
}

#[test]
fn cli_without_root_or_password_prints_the_usage() {
    let fx = Fixture::new("cli-usage");
    for args in [
        &[][..],
        &["list"][..],
        &["--password", "p"][..],
        &["--root", fx.root_arg()][..],
        &["--root"][..],
        &["--root", fx.root_arg(), "--password"][..],
    ] {
        let stderr = assert_exit_2(args);
        assert!(stderr.contains("usage:"), "{args:?}: {stderr}");
        assert!(stderr.contains("--root"), "{args:?}: {stderr}");
    }
}

#[test]
fn cli_root_must_be_a_folder() {
    let fx = Fixture::new("cli-root");
    let file = fx.root.join("a.txt");
    let missing = fx.base.join("missing");
    for root in [file.to_str().unwrap(), missing.to_str().unwrap()] {
        let stderr = assert_exit_2(&["--root", root, "--password", "p"]);
        assert!(stderr.contains(root), "{root}: {stderr}");
        assert!(stderr.contains("not a folder"), "{root}: {stderr}");
    }
}

#[test]
fn cli_list_shows_the_tools_a_session_starts_with() {
    let fx = Fixture::new("cli-list");
    let out = run(FILES, &["--root", fx.root_arg(), "--password", "p", "list"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let rows: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for name in VISIBLE {
        assert!(rows.contains(&name), "{name} missing: {}", out.stdout);
    }
    for name in HIDDEN {
        assert!(
            !rows.contains(&name),
            "{name} is hidden until login, yet listed:\n{}",
            out.stdout
        );
    }
}

#[test]
fn cli_call_read_file_and_a_hidden_tool() {
    let fx = Fixture::new("cli-call");
    let out = run(
        FILES,
        &[
            "--root",
            fx.root_arg(),
            "--password",
            "p",
            "call",
            "read_file",
            r#"{"path":"a.txt"}"#,
        ],
    );
    assert_eq!(out.code(), 0, "{out:?}");
    assert_eq!(text(&out.json()), A_TXT);
    let out = run(
        FILES,
        &[
            "--root",
            fx.root_arg(),
            "--password",
            "p",
            "call",
            "read_file",
            r#"{"path":"../x"}"#,
        ],
    );
    assert_eq!(out.code(), 1, "{out:?}");
    assert_refused(&out.json(), "cli read_file ../x");
    let out = run(
        FILES,
        &[
            "--root",
            fx.root_arg(),
            "--password",
            "p",
            "call",
            "write_file",
            r#"{"path":"w.txt","content":"x"}"#,
        ],
    );
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(!fx.root.join("w.txt").exists());
}
