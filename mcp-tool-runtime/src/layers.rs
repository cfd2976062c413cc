//! The layers import one way: `sync` ← `store` ← `protocol` ← `tool` ← `client` ← `server` ←
//! `transport` ← the command line and the test client. This test reads every source file and
//! fails on an import that points up (a `crate::` path naming a higher layer, or `super::super`,
//! which could leave a layer unseen), and on a file longer than 700 lines whose `//!` does not
//! say why it is long.

use std::path::{Path, PathBuf};

/// The layers, bottom first; a module may import its own layer and those before it.
const LAYERS: [&str; 8] = [
    "sync",
    "store",
    "protocol",
    "tool",
    "client",
    "server",
    "transport",
    "top",
];

/// The layer of a top-level module of the crate.
fn layer_of_module(module: &str) -> usize {
    match module {
        "sync" => 0,
        "store" => 1,
        "protocol" => 2,
        "tool" => 3,
        "client" => 4,
        "server" => 5,
        "transport" => 6,
        // `cli`, `testing`, `__private` (generated code's door, which may reach anything),
        // `layers` and the crate root.
        _ => 7,
    }
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the source folder is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules a file's code names through `crate::`.
fn crate_imports(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        // `$crate::` in a macro, or a longer identifier ending in `crate`.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::c}`: the first segment of each item at the group's top level.
            let mut depth = 0usize;
            let mut items = vec![String::new()];
            for c in group.chars() {
                match c {
                    '}' if depth == 0 => break,
                    ',' if depth == 0 => items.push(String::new()),
                    _ => {
                        depth = match c {
                            '{' => depth + 1,
                            '}' => depth - 1,
                            _ => depth,
                        };
                        if let Some(item) = items.last_mut() {
                            item.push(c);
                        }
                    }
                }
            }
            for item in items {
                let name: String = item
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push(name);
        }
    }
    found
}

/// The code of a file without its comments (doc links may name any layer).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn layers_import_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut problems = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&root).expect("under src");
        let module = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|m| m.trim_end_matches(".rs"))
            .unwrap_or_default();
        if module == "layers" {
            continue; // this file's own strings name every layer
        }
        let layer = layer_of_module(module);
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let code = code_of(&text);
        for import in crate_imports(&code) {
            let target = layer_of_module(&import);
            if target > layer {
                problems.push(format!(
                    "{} (layer `{}`) imports `crate::{import}` (layer `{}`)",
                    relative.display(),
                    LAYERS[layer],
                    LAYERS[target]
                ));
            }
        }
        if code.contains("super::super") {
            problems.push(format!(
                "{}: `super::super` may leave the layer unseen; name the path from `crate::`",
                relative.display()
            ));
        }
        let lines = text.lines().count();
        let says_why = text
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .any(|l| l.contains("long because"));
        if lines > 700 && !says_why {
            problems.push(format!(
                "{} has {lines} lines: split it, or say in its `//!` why it is long (\"long because …\")",
                relative.display()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_sees_every_form_of_import() {
    let code = "use crate::server::X;\nuse crate::{protocol, transport::http::{A, B}};\nlet x = $crate::tool::Y; fn f() -> mycrate::server::Z {}";
    assert_eq!(
        crate_imports(code),
        ["server", "protocol", "transport"],
        "a macro's `$crate` and other crates' paths are not imports of this crate"
    );
}
