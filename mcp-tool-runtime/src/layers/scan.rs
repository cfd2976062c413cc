//! Reading the paths a crate's code names, and the import graph of each of its folders.
//!
//! The code is cut into tokens with its comments and literals left out (a doc link or a
//! message may name anything). A path that starts with `crate::`, `super::` or `self::` —
//! alone, or the root of a grouped `use` — is resolved from the crate root, so that
//! `super::run::tag` in `server/tasks/methods.rs` reads as `server::tasks::run::tag`; inline
//! modules (`mod tests { use super::*; }`) move `super` and `self` one level down.

use std::collections::{BTreeMap, BTreeSet};

/// A source file of a crate: its path under `src` (with `/`) and its text.
pub(super) struct Source {
    pub(super) path: String,
    pub(super) text: String,
}

/// A path the code names, as written and as resolved from the crate root.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Named {
    pub(super) line: usize,
    pub(super) written: String,
    pub(super) resolved: Vec<String>,
}

/// The module a file defines: `server/tasks/run.rs` is `server::tasks::run`,
/// `server/tasks/mod.rs` is `server::tasks`, `lib.rs` the crate root.
pub(super) fn module_of(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = path
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") || parts == ["lib"] || parts == ["main"] {
        parts.pop();
    }
    parts
}

struct Token<'a> {
    text: &'a str,
    line: usize,
}

/// The tokens of Rust code that matter to paths (names, `::` and single punctuation), with
/// comments, strings and character literals left out.
fn tokens(text: &str) -> Vec<Token<'_>> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    // Skips to the end of a string whose opening `"` is at `i`, ended by `"` and `hashes` `#`s.
    let skip_string = |mut i: usize, hashes: usize, raw: bool, line: &mut usize| {
        i += 1;
        while i < b.len() {
            match b[i] {
                b'\\' if !raw => {
                    i += 1;
                    *line += usize::from(b.get(i) == Some(&b'\n'));
                }
                b'"' if b[i + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&c| c == b'#')
                    .count()
                    == hashes =>
                {
                    return i + 1 + hashes;
                }
                b'\n' => *line += 1,
                _ => {}
            }
            i += 1;
        }
        i
    };
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(b[i] == b'\n');
                    i += 1;
                }
            }
        } else if c == b'"' {
            i = skip_string(i, 0, false, &mut line);
        } else if c == b'\'' {
            // A character literal (`'x'`, `'\n'`, `'é'`), else a lifetime or label.
            let width = match b.get(i + 1) {
                Some(&c) if c >= 0xF0 => 4,
                Some(&c) if c >= 0xE0 => 3,
                Some(&c) if c >= 0xC0 => 2,
                _ => 1,
            };
            if b.get(i + 1) == Some(&b'\\') {
                i += 3;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else if b.get(i + 1 + width) == Some(&b'\'') {
                i += 2 + width;
            } else {
                i += 1;
            }
        } else if ident(c) {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            let word = &text[start..i];
            let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
            let quote = b.get(i + hashes) == Some(&b'"');
            match word {
                // Raw and byte strings: `r#"…"#`, `br"…"`, `b"…"`, `c"…"`.
                "r" | "br" | "cr" if quote => i = skip_string(i + hashes, hashes, true, &mut line),
                "b" | "c" if quote && hashes == 0 => i = skip_string(i, 0, false, &mut line),
                // A raw identifier: `r#type`.
                "r" if hashes == 1 && b.get(i + 1).is_some_and(|&c| ident(c)) => {
                    let start = i + 1;
                    i = start;
                    while i < b.len() && ident(b[i]) {
                        i += 1;
                    }
                    out.push(Token {
                        text: &text[start..i],
                        line,
                    });
                }
                _ => out.push(Token { text: word, line }),
            }
        } else if b[i..].starts_with(b"::") {
            out.push(Token { text: "::", line });
            i += 2;
        } else {
            let width = text[i..].chars().next().map_or(1, char::len_utf8);
            out.push(Token {
                text: &text[i..i + width],
                line,
            });
            i += width;
        }
    }
    out
}

fn is_name(token: &str) -> bool {
    token
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || c >= 0x80)
}

/// Reads a path or use tree at `toks[*at]`: names joined by `::`, ending in a name, `*` (the
/// module itself is named) or a `{…}` group of trees; pushes each full path it names.
fn use_tree(toks: &[Token<'_>], at: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        match toks.get(*at).map(|t| t.text) {
            Some("*") => {
                *at += 1;
                out.push(path);
                return;
            }
            Some("{") => {
                *at += 1;
                loop {
                    match toks.get(*at).map(|t| t.text) {
                        None => return,
                        Some("}") => {
                            *at += 1;
                            return;
                        }
                        Some(",") => *at += 1,
                        Some(t) if is_name(t) || t == "{" || t == "*" => {
                            use_tree(toks, at, path.clone(), out);
                            // `x as y`: what follows the tree up to the next item.
                            while toks
                                .get(*at)
                                .is_some_and(|t| t.text != "," && t.text != "}")
                            {
                                *at += 1;
                            }
                        }
                        Some(_) => *at += 1,
                    }
                }
            }
            Some(t) if is_name(t) => {
                path.push(t.to_string());
                *at += 1;
                if toks.get(*at).is_some_and(|t| t.text == "::") {
                    *at += 1;
                } else {
                    out.push(path);
                    return;
                }
            }
            // `crate::Json::<T>`, or a path cut short: it names what it has so far.
            _ => {
                out.push(path);
                return;
            }
        }
    }
}

/// A path written from `module`, resolved from the crate root; `None` when it climbs out of
/// the crate (more `super`s than modules).
fn resolve(written: &[String], module: &[String]) -> Option<Vec<String>> {
    let mut resolved = if written.first().is_some_and(|s| s == "crate") {
        Vec::new()
    } else {
        module.to_vec()
    };
    for (i, segment) in written.iter().enumerate() {
        match segment.as_str() {
            "crate" if i == 0 => {}
            "self" => {}
            "super" => {
                resolved.pop()?;
            }
            name => resolved.push(name.to_owned()),
        }
    }
    Some(resolved)
}

/// Every path the code of a file of `module` names through `crate::`, `super::` or `self::`.
pub(super) fn named_paths(text: &str, module: &[String]) -> Vec<Named> {
    let toks = tokens(text);
    let mut found = Vec::new();
    // The inline modules around the current token, with the brace depth each opened at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut at = 0;
    while at < toks.len() {
        let text = toks[at].text;
        let before = |n: usize| at.checked_sub(n).map(|i| toks[i].text);
        match text {
            "{" => {
                if before(2) == Some("mod") && before(1).is_some_and(is_name) {
                    inline.push((before(1).unwrap_or_default().to_owned(), depth));
                }
                depth += 1;
            }
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            "crate" | "super" | "self"
                if toks.get(at + 1).is_some_and(|t| t.text == "::")
                    && !matches!(before(1), Some("$" | "::")) =>
            {
                let line = toks[at].line;
                let mut paths = Vec::new();
                use_tree(&toks, &mut at, Vec::new(), &mut paths);
                let here: Vec<String> = module
                    .iter()
                    .cloned()
                    .chain(inline.iter().map(|(name, _)| name.clone()))
                    .collect();
                for mut written in paths {
                    if let Some(resolved) = resolve(&written, &here) {
                        // `use super::x::{self, …}` names `super::x`.
                        if written.len() > 1 && written.last().is_some_and(|s| s == "self") {
                            written.pop();
                        }
                        found.push(Named {
                            line,
                            written: written.join("::"),
                            resolved,
                        });
                    }
                }
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    found
}

/// Where an edge of a folder's graph comes from: one file and the path it writes.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Witness {
    pub(super) file: String,
    pub(super) line: usize,
    pub(super) written: String,
}

/// The import graph of one folder: its children (`x.rs` or `x/`), and for each edge
/// `(a, b)` — code under child `a` names child `b` — the first place that makes it.
#[derive(Debug, Default)]
pub(super) struct Folder {
    pub(super) children: BTreeSet<String>,
    pub(super) edges: BTreeMap<(String, String), Witness>,
}

/// The graph of every folder of a crate, keyed by the folder's module path (`[]` for the
/// crate root). Items of a folder's own file (`mod.rs`, or `x.rs` beside `x/`) are the folder
/// itself, not one of its children: they make no edge.
pub(super) fn folders(files: &[Source]) -> BTreeMap<Vec<String>, Folder> {
    let mut folders: BTreeMap<Vec<String>, Folder> = BTreeMap::new();
    for file in files {
        let module = module_of(&file.path);
        for k in 0..module.len() {
            let folder = folders.entry(module[..k].to_vec()).or_default();
            folder.children.insert(module[k].clone());
        }
    }
    for file in files {
        let module = module_of(&file.path);
        for named in named_paths(&file.text, &module) {
            for k in 0..module.len() {
                let (prefix, own) = (&module[..k], &module[k]);
                let Some(target) = named.resolved.get(k) else {
                    continue;
                };
                if named.resolved[..k] != *prefix || target == own {
                    continue;
                }
                let Some(folder) = folders.get_mut(prefix) else {
                    continue;
                };
                if folder.children.contains(target) {
                    folder
                        .edges
                        .entry((own.clone(), target.clone()))
                        .or_insert_with(|| Witness {
                            file: file.path.clone(),
                            line: named.line,
                            written: named.written.clone(),
                        });
                }
            }
        }
    }
    folders
}

/// The loops of a folder's graph: its strongly connected components of more than one child
/// (Tarjan's algorithm), each sorted by name.
pub(super) fn loops(folder: &Folder) -> Vec<Vec<String>> {
    struct Walk<'a> {
        names: Vec<&'a String>,
        next: Vec<Vec<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        counter: usize,
        found: Vec<Vec<String>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.counter);
            self.low[v] = self.counter;
            self.counter += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for w in self.next[v].clone() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(index) if self.on_stack[w] => self.low[v] = self.low[v].min(index),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(self.names[w].clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let names: Vec<&String> = folder.children.iter().collect();
    let position = |name: &String| names.iter().position(|n| *n == name);
    let mut next = vec![Vec::new(); names.len()];
    for (a, b) in folder.edges.keys() {
        if let (Some(a), Some(b)) = (position(a), position(b)) {
            next[a].push(b);
        }
    }
    let n = names.len();
    let mut walk = Walk {
        names,
        next,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        counter: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if walk.index[v].is_none() {
            walk.visit(v);
        }
    }
    walk.found.sort();
    walk.found
}

/// Sources made of `(path, text)` pairs, for the tests of the check.
#[cfg(test)]
pub(super) fn files(files: &[(&str, &str)]) -> Vec<Source> {
    files
        .iter()
        .map(|(path, text)| Source {
            path: path.to_string(),
            text: text.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(code: &str, module: &[&str]) -> Vec<String> {
        let module: Vec<String> = module.iter().map(|m| m.to_string()).collect();
        named_paths(code, &module)
            .into_iter()
            .map(|n| format!("{} = {}", n.written, n.resolved.join("::")))
            .collect()
    }

    #[test]
    fn paths_are_resolved_from_the_crate_root() {
        assert_eq!(
            named(
                "use crate::server::{a, b::{c, d as e}, self};\nuse super::{x, y::*};\nlet v = self::z::W::<T>::new();",
                &["server", "tasks", "run"],
            ),
            [
                "crate::server::a = server::a",
                "crate::server::b::c = server::b::c",
                "crate::server::b::d = server::b::d",
                "crate::server = server",
                "super::x = server::tasks::x",
                "super::y = server::tasks::y",
                "self::z::W = server::tasks::run::z::W",
            ]
        );
    }

    #[test]
    fn comments_literals_and_other_crates_name_nothing() {
        let code = r##"
            // use crate::server::a;
            /* use crate::server::b; /* nested */ use crate::server::c; */
            /// [`crate::server::d`]
            let s = "crate::server::e"; let r = r#"super::f "quoted" "#; let b = b"self::g";
            let c = '"'; let l: &'static str = "x"; let q = '\''; m!($crate::server::h);
            fn f() -> mycrate::server::i {} pub(crate) fn g() {} x.self_::j;
            use crate::server::k;
        "##;
        assert_eq!(named(code, &[]), ["crate::server::k = server::k"]);
    }

    #[test]
    fn inline_modules_move_super_and_self() {
        let code = "mod tests { use super::*; use super::super::x; mod deeper { use self::y; } }\nuse super::z;";
        assert_eq!(
            named(code, &["tool", "input"]),
            [
                "super = tool::input",
                "super::super::x = tool::x",
                "self::y = tool::input::tests::deeper::y",
                "super::z = tool::z",
            ]
        );
        // A path that climbs out of the crate names nothing.
        assert!(named("use super::super::x;", &["tool"]).is_empty());
    }

    #[test]
    fn a_file_is_the_module_its_path_says() {
        assert!(module_of("lib.rs").is_empty());
        assert_eq!(module_of("server/mod.rs"), ["server"]);
        assert_eq!(module_of("client/core.rs"), ["client", "core"]);
        assert_eq!(
            module_of("client/core/inbound.rs"),
            ["client", "core", "inbound"]
        );
    }

    #[test]
    fn a_folders_loops_are_found_with_the_imports_that_make_them() {
        let crate_ = files(&[
            ("lib.rs", "mod a; mod b;"),
            // a → b → c → a, through a subfolder's own file, a nested file and a group.
            ("a/mod.rs", "pub struct InA; mod x; mod y;"),
            ("a/x.rs", "use crate::a::y::Y;\nuse crate::a::{InA, z};"),
            ("a/y.rs", "pub struct Y;\nuse super::z::deep::Z;"),
            ("a/z.rs", "mod deep;"),
            ("a/z/deep.rs", "pub struct Z;\n\nuse crate::a::x;"),
            // A pair, and a child naming the folder's own items (in `mod.rs`): no edge.
            ("b/mod.rs", "pub struct InB;"),
            ("b/p.rs", "use super::q::Q; use super::InB;"),
            ("b/q.rs", "use super::{p, InB};"),
            ("b/r.rs", "use super::InB; // super::p"),
        ]);
        let folders = folders(&crate_);
        let a = &folders[&vec!["a".to_string()]];
        assert_eq!(
            a.children.iter().collect::<Vec<_>>(),
            ["x", "y", "z"],
            "`mod.rs` is the folder, not a child"
        );
        assert_eq!(loops(a), [["x", "y", "z"]]);
        assert_eq!(
            a.edges[&("z".into(), "x".into())],
            Witness {
                file: "a/z/deep.rs".into(),
                line: 3,
                written: "crate::a::x".into(),
            }
        );
        assert_eq!(a.edges[&("x".into(), "z".into())].written, "crate::a::z");
        let b = &folders[&vec!["b".to_string()]];
        assert_eq!(loops(b), [["p", "q"]]);
        assert_eq!(b.edges.len(), 2, "{:?}", b.edges);
        let root = &folders[&Vec::new()];
        assert!(root.edges.is_empty() && loops(root).is_empty());
    }
}
