//! The guide and the README stay whole as the code grows: every environment variable the
//! runtime reads has its row in the guide's table of them, every chapter file is a module of
//! `mcp_tool::guide` and is linked from the README's table (docs.rs and the file itself), and
//! the README stays short enough to read.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `MCP_TOOL_*` names written as string literals in `code`, before its unit tests.
fn variables_in(code: &str) -> BTreeSet<String> {
    let code = code.split("#[cfg(test)]").next().unwrap_or("");
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices("\"MCP_TOOL_") {
        let name: String = code[at + 1..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        names.insert(name);
    }
    names
}

/// The guide's chapters: each `.md` file beside `mcp-tool/src/guide/mod.rs`, by name.
fn chapters() -> Vec<String> {
    let dir = root().join("mcp-tool/src/guide");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_variable_the_runtime_reads_has_its_row_in_the_guide() {
    let mut files = Vec::new();
    rust_files(&root().join("mcp-tool-runtime/src"), &mut files);
    let read_by_runtime: BTreeSet<String> =
        files.iter().flat_map(|f| variables_in(&read(f))).collect();
    assert!(
        read_by_runtime.len() >= 20,
        "the scan found too few variables, {read_by_runtime:?}: did the runtime move?"
    );
    let table = read(&root().join("mcp-tool/src/guide/cli.md"));
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("| `MCP_TOOL_"))
        .collect();
    let missing: Vec<&String> = read_by_runtime
        .iter()
        .filter(|name| {
            let first_cell = |row: &&str| row.split(" | ").next().unwrap_or("").to_owned();
            !rows
                .iter()
                .any(|row| first_cell(row).contains(&format!("`{name}`")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "read by the runtime, without a row in the table of mcp-tool/src/guide/cli.md \
         (\"The environment\"): {missing:?}"
    );
}

#[test]
fn every_chapter_is_a_module_and_linked_from_the_readme() {
    let modules = read(&root().join("mcp-tool/src/guide/mod.rs"));
    let readme = read(&root().join("README.md"));
    let chapters = chapters();
    assert!(chapters.len() >= 10, "chapters found: {chapters:?}");
    for chapter in &chapters {
        assert!(
            modules.contains(&format!("chapter!({chapter}, \"{chapter}.md\");")),
            "mcp-tool/src/guide/{chapter}.md is no module of mcp-tool/src/guide/mod.rs"
        );
        let docs_rs =
            format!("https://docs.rs/mcp-tool/latest/mcp_tool/guide/{chapter}/index.html");
        let source = format!("(mcp-tool/src/guide/{chapter}.md)");
        assert!(
            readme.contains(&docs_rs) && readme.contains(&source),
            "README.md's table does not link the chapter `{chapter}` (docs.rs and source)"
        );
    }
}

#[test]
fn the_readme_fits() {
    let lines = read(&root().join("README.md")).lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: what is not needed on a first read goes to a chapter of \
         the guide (mcp-tool/src/guide/)"
    );
}

#[test]
fn the_variable_scan_finds_names_and_skips_unit_tests() {
    let code = "const A: &str = \"MCP_TOOL_ONE\";\nfn f() { g(\"MCP_TOOL_TWO_2\") }\n\
                #[cfg(test)]\nmod tests { const B: &str = \"MCP_TOOL_THREE\"; }";
    let found: Vec<String> = variables_in(code).into_iter().collect();
    assert_eq!(found, ["MCP_TOOL_ONE", "MCP_TOOL_TWO_2"]);
}
