//! How the code of the runtime and of the macros may import itself. This test reads every
//! source file of both crates and fails on:
//!
//! - **an import that points up a layer.** The runtime's top-level modules import one way:
//!   `sync` ← `store` ← `protocol` ← `tool` ← `client` ← `server` ← `gateway` ← `transport` ← the
//!   top (the command line, `testing`, the generated code's `__private` door, the crate root).
//!   The gateway builds on the server (it mounts remote servers into a running one): the
//!   server holds the gateway's mounts only through its own traits (`Mounting`, `StartsWith`). The macros' follow
//!   their pipeline: `ctxt`, `doc` (the error collector, doc comments) ← `attr` (attribute
//!   parsing) ← `ast` (the model) ← `check` (the rules across its parts) ← `strip`, `expand`,
//!   `fallback` (the output) ← the top (`entry`, the crate root, its tests). A module may
//!   import its own layer and those before it.
//! - **an import loop inside a folder.** The direct children of each folder (`x.rs` or `x/`,
//!   one child `x`) import each other one way too: a loop of three or more is refused, with
//!   the imports that make it; a loop of two is allowed only in [`ALLOWED_PAIRS`], which says
//!   why the two are one unit. Items of the folder's own file (`mod.rs`, or `x.rs` beside
//!   `x/`) are the folder, not a child: naming them makes no edge. [`KNOWN_LOOPS`] would hold a
//!   loop being broken up, at its present size; it is empty, and the macros have none.
//! - **a file longer than 700 lines** whose `//!` does not say why it is long.
//!
//! An import is any path through `crate::`, `super::` or `self::`, grouped or not, in code
//! (comments and literals are left out), resolved from the crate root; `scan` reads them.
//!
//! The runtime's test checks both crates: it finds the macros' sources beside its own, from
//! `CARGO_MANIFEST_DIR`. The other way, this file included in the macros crate through
//! `#[path]`, would give the macros crate a source file in a sibling crate, which its packaged
//! copy could not build, and two copies of the check to run. A packaged runtime has no
//! sibling either: it skips the macros with a message, and fails instead if the workspace
//! beside it lists the macros crate but its sources are missing.

mod scan;

use std::collections::BTreeSet;
use std::path::Path;

use self::scan::{Folder, Source, folders, loops, module_of, named_paths};

/// The runtime's folders whose loop of more than two children is being broken up, with the
/// size of their largest loop. The table may only shrink, and is to be emptied: the test
/// fails when a loop grows past its number, and when a number is larger than needed (lower
/// it as the loop shrinks; remove the line when no loop of more than two is left).
const KNOWN_LOOPS: &[(&str, usize)] = &[];

/// Two children of a folder that import each other, and why they are one unit.
struct Pair {
    folder: &'static str,
    children: [&'static str; 2],
    why: &'static str,
}

/// The runtime's loops of two children, each a unit split in two files: `folder` and its two
/// children, and a line saying why they are one unit rather than two modules or three.
const ALLOWED_PAIRS: &[Pair] = &[Pair {
    folder: "server/core",
    children: ["handle", "session"],
    why: "the running server and its connections: a session holds the server it serves, and the server lists its sessions to tell them of changes",
}];

/// The rules of one crate.
struct Rules {
    /// The crate's name, which is its folder in the workspace.
    name: &'static str,
    /// The layers, bottom first, each with its top-level modules; any other module, and the
    /// crate root, is the top.
    layers: &'static [(&'static str, &'static [&'static str])],
    known_loops: &'static [(&'static str, usize)],
    allowed_pairs: &'static [Pair],
}

const RUNTIME: Rules = Rules {
    name: "mcp-tool-runtime",
    layers: &[
        ("sync", &["sync"]),
        ("store", &["store"]),
        ("protocol", &["protocol"]),
        ("tool", &["tool"]),
        ("client", &["client"]),
        ("server", &["server"]),
        ("gateway", &["gateway"]),
        ("transport", &["transport"]),
    ],
    known_loops: KNOWN_LOOPS,
    allowed_pairs: ALLOWED_PAIRS,
};

const MACROS: Rules = Rules {
    name: "mcp-tool-macros",
    layers: &[
        ("support", &["ctxt", "doc"]),
        ("attributes", &["attr"]),
        ("model", &["ast"]),
        ("checks", &["check"]),
        ("output", &["strip", "expand", "fallback"]),
    ],
    known_loops: &[],
    allowed_pairs: &[],
};

impl Rules {
    /// The layer of a top-level module (by its position, the top last), and its name.
    fn layer(&self, module: Option<&String>) -> (usize, &'static str) {
        module
            .and_then(|m| {
                self.layers
                    .iter()
                    .position(|(_, modules)| modules.contains(&m.as_str()))
            })
            .map_or((self.layers.len(), "top"), |i| (i, self.layers[i].0))
    }
}

/// Every problem in a crate's sources.
fn problems(rules: &Rules, files: &[Source]) -> Vec<String> {
    let mut problems = Vec::new();
    for file in files {
        let module = module_of(&file.path);
        let (layer, layer_name) = rules.layer(module.first());
        for named in named_paths(&file.text, &module) {
            let (target, target_name) = rules.layer(named.resolved.first());
            if target > layer {
                problems.push(format!(
                    "{}/src/{}:{} (layer `{layer_name}`) imports `{}` (layer `{target_name}`)",
                    rules.name, file.path, named.line, named.written
                ));
            }
        }
        let lines = file.text.lines().count();
        let says_why = file
            .text
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .any(|l| l.contains("long because"));
        if lines > 700 && !says_why {
            problems.push(format!(
                "{}/src/{} has {lines} lines: split it, or say in its `//!` why it is long (\"long because …\")",
                rules.name, file.path
            ));
        }
    }
    problems.extend(loop_problems(rules, files));
    problems
}

/// The loops of each folder that its rules do not allow, and the rules' lines that are
/// larger than needed.
fn loop_problems(rules: &Rules, files: &[Source]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut pairs_found = BTreeSet::new();
    let folders = folders(files);
    for (path, folder) in &folders {
        let name = path.join("/");
        let known = rules
            .known_loops
            .iter()
            .find(|(f, _)| *f == name)
            .map(|&(_, n)| n);
        let found = loops(folder);
        for members in &found {
            let pair = rules.allowed_pairs.iter().position(|p| {
                p.folder == name
                    && members.len() == 2
                    && p.children.iter().all(|c| members.contains(&c.to_string()))
            });
            let why = match (pair, known) {
                (Some(pair), _) => {
                    pairs_found.insert(pair);
                    continue;
                }
                _ if members.len() == 2 => "a loop of 2 children not in ALLOWED_PAIRS (merge \
                                            them, or move what both need to a third child)"
                    .to_owned(),
                (None, Some(max)) if members.len() <= max => continue,
                (None, Some(max)) => format!("its loop grew past {max} (KNOWN_LOOPS)"),
                (None, None) => "a loop of more than 2 children".to_owned(),
            };
            problems.push(describe(rules, &name, folder, members, &why));
        }
        let largest = found.iter().map(Vec::len).filter(|&n| n > 2).max();
        match (known, largest) {
            (Some(_), None) => problems.push(format!(
                "{}/src/{name}: no loop of more than 2 children is left: remove it from KNOWN_LOOPS",
                rules.name
            )),
            (Some(max), Some(largest)) if largest < max => problems.push(format!(
                "{}/src/{name}: its largest loop has {largest} children: lower its KNOWN_LOOPS number from {max} to {largest}",
                rules.name
            )),
            _ => {}
        }
    }
    for (folder, _) in rules.known_loops {
        let path: Vec<String> = folder.split('/').map(String::from).collect();
        if !folders.contains_key(&path) {
            problems.push(format!(
                "{}/src/{folder} in KNOWN_LOOPS is not a folder of the crate",
                rules.name
            ));
        }
    }
    for (i, pair) in rules.allowed_pairs.iter().enumerate() {
        if pair.why.trim().is_empty() || pair.why.contains('\n') {
            problems.push(format!(
                "{}/src/{}: ALLOWED_PAIRS needs one line saying why {} and {} are one unit",
                rules.name, pair.folder, pair.children[0], pair.children[1]
            ));
        }
        if !pairs_found.contains(&i) {
            problems.push(format!(
                "{}/src/{}: {} and {} no longer import each other: remove them from ALLOWED_PAIRS",
                rules.name, pair.folder, pair.children[0], pair.children[1]
            ));
        }
    }
    problems
}

/// A loop, with one import for each of its edges (one of which is to be cut).
fn describe(rules: &Rules, name: &str, folder: &Folder, members: &[String], why: &str) -> String {
    let mut text = format!(
        "{}/src/{name}: {why}: {}; the imports that make it:",
        rules.name,
        members.join(", ")
    );
    for ((a, b), witness) in &folder.edges {
        if members.contains(a) && members.contains(b) {
            text.push_str(&format!(
                "\n    {a} → {b}: {}/src/{}:{} `{}`",
                rules.name, witness.file, witness.line, witness.written
            ));
        }
    }
    text
}

/// The `.rs` files under `src`, by their path under it.
fn read_sources(src: &Path) -> Vec<Source> {
    fn walk(src: &Path, dir: &Path, out: &mut Vec<Source>) {
        let entries = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("the folder {} is unreadable: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(src, &path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(src).expect("under src");
                out.push(Source {
                    path: relative
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy())
                        .collect::<Vec<_>>()
                        .join("/"),
                    text: std::fs::read_to_string(&path).unwrap_or_else(|e| {
                        panic!("the source {} is unreadable: {e}", path.display())
                    }),
                });
            }
        }
    }
    let mut files = Vec::new();
    walk(src, src, &mut files);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

#[test]
fn the_runtime_imports_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = problems(&RUNTIME, &read_sources(&src));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_macros_import_one_way() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = manifest.join("..").join(MACROS.name).join("src");
    if !src.is_dir() {
        let workspace = std::fs::read_to_string(manifest.join("../Cargo.toml")).unwrap_or_default();
        assert!(
            !workspace.contains(&format!("\"{}\"", MACROS.name)),
            "the workspace lists {} but {} is missing",
            MACROS.name,
            src.display()
        );
        eprintln!(
            "skipped: {} is not beside this crate (a packaged copy); its imports are checked in the workspace",
            MACROS.name
        );
        return;
    }
    let problems = problems(&MACROS, &read_sources(&src));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::scan::files;

    /// A crate of two layers with a loop of three in `a/` and a pair in `b/`.
    fn small_crate() -> Vec<Source> {
        files(&[
            ("lib.rs", "mod a; mod b;"),
            ("a/mod.rs", "pub struct InA;"),
            ("a/x.rs", "use super::{y, InA};"),
            ("a/y.rs", "use crate::a::z::Z;"),
            ("a/z.rs", "// use crate::b::p;\nuse self::super::x;"),
            ("b/mod.rs", "pub struct InB;"),
            ("b/p.rs", "use super::q;"),
            ("b/q.rs", "use super::{p, InB};"),
        ])
    }

    const fn rules(
        known_loops: &'static [(&'static str, usize)],
        allowed_pairs: &'static [Pair],
    ) -> Rules {
        Rules {
            name: "small",
            layers: &[("a", &["a"]), ("b", &["b"])],
            known_loops,
            allowed_pairs,
        }
    }

    const PQ: &[Pair] = &[Pair {
        folder: "b",
        children: ["q", "p"],
        why: "one unit",
    }];

    #[test]
    fn a_loop_is_refused_with_the_imports_that_make_it() {
        let problems = problems(&rules(&[], &[]), &small_crate());
        assert_eq!(
            problems,
            [
                "small/src/a: a loop of more than 2 children: x, y, z; the imports that make it:\n    \
                 x → y: small/src/a/x.rs:1 `super::y`\n    \
                 y → z: small/src/a/y.rs:1 `crate::a::z::Z`\n    \
                 z → x: small/src/a/z.rs:2 `self::super::x`",
                "small/src/b: a loop of 2 children not in ALLOWED_PAIRS (merge them, or move what \
                 both need to a third child): p, q; the imports that make it:\n    \
                 p → q: small/src/b/p.rs:1 `super::q`\n    \
                 q → p: small/src/b/q.rs:1 `super::p`",
            ]
        );
    }

    #[test]
    fn known_loops_only_shrink_and_stay_tight() {
        const EXACT: &[(&str, usize)] = &[("a", 3)];
        assert!(problems(&rules(EXACT, PQ), &small_crate()).is_empty());

        const GROWN: &[(&str, usize)] = &[("a", 2)];
        let problems_grown = problems(&rules(GROWN, PQ), &small_crate());
        assert_eq!(problems_grown.len(), 1, "{problems_grown:#?}");
        assert!(
            problems_grown[0]
                .starts_with("small/src/a: its loop grew past 2 (KNOWN_LOOPS): x, y, z;")
        );

        const LOOSE: &[(&str, usize)] = &[("a", 4), ("b/c", 3)];
        assert_eq!(
            problems(&rules(LOOSE, PQ), &small_crate()),
            [
                "small/src/a: its largest loop has 3 children: lower its KNOWN_LOOPS number from 4 to 3",
                "small/src/b/c in KNOWN_LOOPS is not a folder of the crate",
            ]
        );

        // Once `z` stops importing `x`, neither the loop nor its line is needed.
        let mut fixed = small_crate();
        fixed[4].text = "pub struct Z;".into();
        assert_eq!(
            problems(&rules(EXACT, PQ), &fixed),
            ["small/src/a: no loop of more than 2 children is left: remove it from KNOWN_LOOPS"]
        );
        fixed[7].text = "use super::InB;".into();
        assert_eq!(
            problems(&rules(&[], PQ), &fixed),
            ["small/src/b: q and p no longer import each other: remove them from ALLOWED_PAIRS"]
        );
    }

    #[test]
    fn an_import_up_a_layer_is_refused() {
        let crate_ = files(&[
            ("lib.rs", "mod a; mod b; pub struct Root;"),
            (
                "a/mod.rs",
                "use crate::b::Up; // crate::b::InAComment\nuse super::Root;",
            ),
            ("b/mod.rs", "pub struct Up;"),
        ]);
        assert_eq!(
            problems(&rules(&[], &[]), &crate_),
            [
                "small/src/a/mod.rs:1 (layer `a`) imports `crate::b::Up` (layer `b`)",
                "small/src/a/mod.rs:2 (layer `a`) imports `super::Root` (layer `top`)",
            ]
        );
    }

    #[test]
    fn a_long_file_says_why() {
        let long = "fn f() {}\n".repeat(701);
        let explained = format!("//! This file is long because it is one table.\n{long}");
        let crate_ = files(&[("a.rs", &long), ("b.rs", &explained)]);
        assert_eq!(
            problems(&rules(&[], &[]), &crate_),
            [
                "small/src/a.rs has 701 lines: split it, or say in its `//!` why it is long (\"long because …\")"
            ]
        );
    }
}
