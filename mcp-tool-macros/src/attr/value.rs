//! The values a key of the macros' attributes takes: a string, a flag, a task support, a
//! duration, JSON (schemas, status texts, icons, `_meta`), a UI name, a visibility list,
//! `examples(…)`, a summary (a template or a function) and a path. Each is read from what follows its key and checked; a bad one is
//! reported on its narrowest token and gives no setting.

use proc_macro2::{Group, TokenStream, TokenTree};
use syn::parse::{ParseStream, Parser};
use syn::{LitBool, LitStr, Path, Token};

use super::{Examples, Setting, Summary};
use crate::ctxt::Ctxt;

/// The key being parsed: its tokens, its canonical name and its position.
pub(super) struct Key<'a> {
    pub(super) path: &'a Path,
    pub(super) name: &'static str,
    pub(super) order: usize,
}

/// What follows a key.
pub(super) enum Value {
    /// Nothing: `read_only`.
    Absent,
    /// `= tokens`: the tokens up to the next top-level comma.
    Assigned(Token![=], TokenStream),
    /// A delimited group: `read_only(...)`.
    Group(Group),
}

impl Value {
    pub(super) fn take(input: ParseStream<'_>) -> syn::Result<Value> {
        if input.peek(Token![=]) {
            let eq = input.parse()?;
            let mut tokens = TokenStream::new();
            while !input.is_empty() && !input.peek(Token![,]) {
                tokens.extend([input.parse::<TokenTree>()?]);
            }
            Ok(Value::Assigned(eq, tokens))
        } else if input.peek(syn::token::Paren)
            || input.peek(syn::token::Bracket)
            || input.peek(syn::token::Brace)
        {
            Ok(Value::Group(input.parse()?))
        } else {
            Ok(Value::Absent)
        }
    }
}

impl Key<'_> {
    pub(super) fn setting<T>(&self, value: T) -> Setting<T> {
        Setting {
            key: self.path.clone(),
            order: self.order,
            value,
        }
    }

    /// The tokens of `key = tokens`; where there are none (a bare key, a group, nothing after
    /// the `=`), reports `expected()` there and returns `None`.
    pub(super) fn assigned(
        &self,
        cx: &Ctxt,
        value: Value,
        expected: impl Fn() -> String,
    ) -> Option<TokenStream> {
        match value {
            Value::Absent => {
                cx.error_spanned_by(self.path, expected());
                None
            }
            Value::Group(group) => {
                cx.error_spanned_by(group, expected());
                None
            }
            Value::Assigned(eq, tokens) if tokens.is_empty() => {
                cx.error_spanned_by(eq, expected());
                None
            }
            Value::Assigned(_, tokens) => Some(tokens),
        }
    }

    /// `key = "…"`.
    pub(super) fn string(&self, cx: &Ctxt, value: Value) -> Option<Setting<LitStr>> {
        let expected = || format!("expected a string: `{} = \"…\"`", self.name);
        let tokens = self.assigned(cx, value, expected)?;
        match syn::parse2::<LitStr>(tokens.clone()) {
            Ok(lit) => Some(self.setting(lit)),
            Err(_) => {
                cx.error_spanned_by(tokens, expected());
                None
            }
        }
    }

    /// `key = "…"`, where `""` is an error.
    pub(super) fn non_empty_string(&self, cx: &Ctxt, value: Value) -> Option<Setting<LitStr>> {
        let setting = self.string(cx, value)?;
        if setting.value.value().trim().is_empty() {
            cx.error_spanned_by(&setting.value, format!("`{}` cannot be empty", self.name));
            return None;
        }
        Some(setting)
    }

    /// `key` (true), `key = true` or `key = false`.
    pub(super) fn flag(&self, cx: &Ctxt, value: Value) -> Option<Setting<bool>> {
        let expected = || format!("expected `{0}`, `{0} = true` or `{0} = false`", self.name);
        match value {
            Value::Absent => Some(self.setting(true)),
            Value::Group(group) => {
                cx.error_spanned_by(group, expected());
                None
            }
            Value::Assigned(eq, tokens) if tokens.is_empty() => {
                cx.error_spanned_by(eq, expected());
                None
            }
            Value::Assigned(_, tokens) => match syn::parse2::<LitBool>(tokens.clone()) {
                Ok(lit) => Some(self.setting(lit.value)),
                Err(_) => {
                    cx.error_spanned_by(tokens, expected());
                    None
                }
            },
        }
    }

    /// `task` (optional), `task = "forbidden" | "optional" | "required"`, or `task = true`
    /// (optional) / `task = false` (forbidden).
    pub(super) fn task(&self, cx: &Ctxt, value: Value) -> Option<Setting<&'static str>> {
        let expected = || {
            format!(
                "expected `{0}`, `{0} = \"optional\"`, `{0} = \"required\"` or \
                 `{0} = \"forbidden\"`",
                self.name
            )
        };
        let tokens = match value {
            Value::Absent => return Some(self.setting("optional")),
            Value::Group(group) => {
                cx.error_spanned_by(group, expected());
                return None;
            }
            Value::Assigned(eq, tokens) if tokens.is_empty() => {
                cx.error_spanned_by(eq, expected());
                return None;
            }
            Value::Assigned(_, tokens) => tokens,
        };
        if let Ok(b) = syn::parse2::<LitBool>(tokens.clone()) {
            return Some(self.setting(if b.value { "optional" } else { "forbidden" }));
        }
        let Ok(lit) = syn::parse2::<LitStr>(tokens.clone()) else {
            cx.error_spanned_by(tokens, expected());
            return None;
        };
        match lit.value().as_str() {
            "forbidden" => Some(self.setting("forbidden")),
            "optional" => Some(self.setting("optional")),
            "required" => Some(self.setting("required")),
            other => {
                cx.error_spanned_by(
                    &lit,
                    format!(
                        "unknown task support `{other}`: expected `\"optional\"`, \
                         `\"required\"` or `\"forbidden\"`"
                    ),
                );
                None
            }
        }
    }

    /// `key = "30s"`: a positive duration in `ms`, `s`, `m` or `h`, as milliseconds.
    pub(super) fn duration(&self, cx: &Ctxt, value: Value) -> Option<Setting<u64>> {
        let setting = self.string(cx, value)?;
        if let Some(ms) = parse_duration(&setting.value.value()) {
            Some(self.setting(ms))
        } else {
            cx.error_spanned_by(
                &setting.value,
                format!(
                    "expected a positive duration such as `{} = \"30s\"` (units: `ms`, `s`, `m`, `h`)",
                    self.name
                ),
            );
            None
        }
    }

    /// `key = r#"{ … }"#`: a JSON Schema object, checked here. An input schema's root must
    /// have `"type": "object"`, as MCP requires.
    pub(super) fn schema(&self, cx: &Ctxt, value: Value, input: bool) -> Option<Setting<LitStr>> {
        let setting = self.string(cx, value)?;
        let text = setting.value.value();
        let problem = match serde_json::from_str::<serde_json::Value>(&text) {
            Err(e) => Some(format!("`{}` is not valid JSON: {e}", self.name)),
            Ok(v) if !v.is_object() => Some(format!("`{}` must be a JSON object", self.name)),
            Ok(v) if input && v.get("type").and_then(|t| t.as_str()) != Some("object") => Some(
                "`input_schema` must have `\"type\": \"object\"` at its root, as MCP requires"
                    .to_owned(),
            ),
            Ok(_) => None,
        };
        match problem {
            Some(p) => {
                cx.error_spanned_by(&setting.value, p);
                None
            }
            None => Some(setting),
        }
    }

    /// `key = "…"`: a non-empty status text of at most 64 characters (OpenAI's limit).
    pub(super) fn status_text(&self, cx: &Ctxt, value: Value) -> Option<Setting<LitStr>> {
        let setting = self.non_empty_string(cx, value)?;
        let len = setting.value.value().chars().count();
        if len > 64 {
            cx.error_spanned_by(
                &setting.value,
                format!(
                    "`{}` is {len} characters long; status texts are at most 64",
                    self.name
                ),
            );
            return None;
        }
        Some(setting)
    }

    /// `key = "…"` holding JSON, parsed and checked by `check`.
    pub(super) fn json(
        &self,
        cx: &Ctxt,
        value: Value,
        check: impl FnOnce(&serde_json::Value) -> Option<String>,
    ) -> Option<Setting<LitStr>> {
        let setting = self.string(cx, value)?;
        let problem = match serde_json::from_str::<serde_json::Value>(&setting.value.value()) {
            Err(e) => Some(format!("`{}` is not valid JSON: {e}", self.name)),
            Ok(v) => check(&v),
        };
        if let Some(p) = problem {
            cx.error_spanned_by(&setting.value, p);
            return None;
        }
        Some(setting)
    }

    /// `icons = r#"[{"src": "…"}]"#`.
    pub(super) fn icons(&self, cx: &Ctxt, value: Value) -> Option<Setting<LitStr>> {
        self.json(cx, value, |v| match v.as_array() {
            None => Some("`icons` must be a JSON array of `{\"src\": …}` objects".into()),
            Some(icons) => icons
                .iter()
                .position(|i| i.get("src").and_then(serde_json::Value::as_str).is_none())
                .map(|i| format!("icon {i} needs a string `src`")),
        })
    }

    /// `meta = r#"{…}"#`: an object whose keys avoid the prefixes MCP reserves.
    pub(super) fn meta(&self, cx: &Ctxt, value: Value) -> Option<Setting<LitStr>> {
        self.json(cx, value, |v| {
            let Some(object) = v.as_object() else {
                return Some("`meta` must be a JSON object".into());
            };
            object.keys().find_map(|k| {
                reserved_meta_key(k).then(|| {
                    format!(
                        "`_meta` key `{k}` uses a prefix MCP reserves (a label `modelcontextprotocol` or `mcp`): choose another prefix"
                    )
                })
            })
        })
    }

    /// `ui = "moon"`: the file `ui/moon.html` of the crate must exist.
    pub(super) fn ui(&self, cx: &Ctxt, value: Value) -> Option<Setting<LitStr>> {
        let setting = self.non_empty_string(cx, value)?;
        let name = setting.value.value();
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            cx.error_spanned_by(
                &setting.value,
                "a UI name uses only `A-Z`, `a-z`, `0-9`, `_`, `-` and `.`",
            );
            return None;
        }
        if let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") {
            let file = std::path::Path::new(&dir)
                .join("ui")
                .join(format!("{name}.html"));
            if !file.is_file() {
                cx.error_spanned_by(
                    &setting.value,
                    format!("no UI named `{name}`: this crate has no file `ui/{name}.html`"),
                );
                return None;
            }
        }
        Some(setting)
    }

    /// A list of string literals, `key = ["…", …]`, at least one (`expected` otherwise).
    fn strings(&self, cx: &Ctxt, value: Value, expected: &str) -> Option<Vec<LitStr>> {
        let tokens = match value {
            Value::Assigned(_, tokens) => tokens,
            Value::Absent => {
                cx.error_spanned_by(self.path, expected);
                return None;
            }
            Value::Group(g) => {
                cx.error_spanned_by(g, expected);
                return None;
            }
        };
        let parsed = syn::parse2::<syn::ExprArray>(tokens.clone())
            .ok()
            .and_then(|array| {
                array
                    .elems
                    .iter()
                    .map(|e| match e {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(s),
                            ..
                        }) => Some(s.clone()),
                        _ => None,
                    })
                    .collect::<Option<Vec<LitStr>>>()
            });
        let items = parsed.filter(|items| !items.is_empty());
        if items.is_none() {
            cx.error_spanned_by(tokens, expected);
        }
        items
    }

    /// `scopes = ["users:read", …]`: OAuth scope tokens (RFC 6749 §3.3: visible ASCII but `"`
    /// and `\`, no spaces), each once.
    pub(super) fn scopes(&self, cx: &Ctxt, value: Value) -> Option<Setting<Vec<LitStr>>> {
        let items = self.strings(cx, value, "expected `scopes = [\"users:read\", …]`")?;
        let mut seen = Vec::new();
        for item in &items {
            let v = item.value();
            let fits = |b: u8| b.is_ascii_graphic() && b != b'"' && b != b'\\';
            if v.is_empty() {
                cx.error_spanned_by(item, "a scope cannot be empty");
                return None;
            }
            if !v.bytes().all(fits) {
                cx.error_spanned_by(
                    item,
                    format!(
                        "`{v}` is not an OAuth scope: a scope is visible ASCII without spaces, `\"` or `\\` (RFC 6749 §3.3)"
                    ),
                );
                return None;
            }
            if seen.contains(&v) {
                cx.error_spanned_by(item, format!("`{v}` is listed twice"));
                return None;
            }
            seen.push(v);
        }
        Some(self.setting(items))
    }

    /// `visibility = ["model", "app"]`.
    pub(super) fn visibility(&self, cx: &Ctxt, value: Value) -> Option<Setting<Vec<LitStr>>> {
        let expected = "expected `visibility = [\"model\", \"app\"]`, `[\"model\"]` or `[\"app\"]`";
        let items = self.strings(cx, value, expected)?;
        let mut seen = Vec::new();
        for item in &items {
            let v = item.value();
            if v != "model" && v != "app" {
                cx.error_spanned_by(
                    item,
                    format!("unknown visibility `{v}`: use `model` and/or `app`"),
                );
                return None;
            }
            if seen.contains(&v) {
                cx.error_spanned_by(item, format!("`{v}` is listed twice"));
                return None;
            }
            seen.push(v);
        }
        Some(self.setting(items))
    }

    /// `examples(request = r#"{…}"#, response = r#"{…}"#)`.
    pub(super) fn examples(&self, cx: &Ctxt, value: Value) -> Option<Setting<Examples>> {
        let expected = "expected `examples(request = r#\"{…}\"#, response = r#\"{…}\"#)`";
        let Value::Group(group) = value else {
            cx.error_spanned_by(self.path, expected);
            return None;
        };
        let mut examples = Examples::default();
        let mut ok = true;
        let parser = syn::meta::parser(|meta| {
            let which = if meta.path.is_ident("request") {
                &mut examples.request
            } else if meta.path.is_ident("response") {
                &mut examples.response
            } else {
                ok = false;
                cx.error_spanned_by(&meta.path, "`examples` takes `request` and `response`");
                // Skip its value, so the next part still parses.
                let _: syn::Expr = meta.value()?.parse()?;
                return Ok(());
            };
            if which.is_some() {
                ok = false;
                let part = if meta.path.is_ident("request") {
                    "request"
                } else {
                    "response"
                };
                cx.error_spanned_by(&meta.path, format!("`{part}` specified more than once"));
                let _: syn::Expr = meta.value()?.parse()?;
                return Ok(());
            }
            let lit: LitStr = meta.value()?.parse()?;
            match serde_json::from_str::<serde_json::Value>(&lit.value()) {
                Ok(v) if v.is_object() => *which = Some(lit),
                Ok(_) => {
                    ok = false;
                    cx.error_spanned_by(&lit, "an example must be a JSON object");
                }
                Err(e) => {
                    ok = false;
                    cx.error_spanned_by(&lit, format!("the example is not valid JSON: {e}"));
                }
            }
            Ok(())
        });
        if let Err(e) = parser.parse2(group.stream()) {
            cx.syn_error(e);
            return None;
        }
        if examples.request.is_none() && examples.response.is_none() {
            if ok {
                cx.error_spanned_by(group, expected);
            }
            return None;
        }
        ok.then(|| self.setting(examples))
    }

    /// `summary = "{count} found"`, a template (its braces checked: `{field}`, `{field.sub}`,
    /// `{{` and `}}`), or `summary = path::to::fn` / `summary = |value| …`.
    pub(super) fn summary(&self, cx: &Ctxt, value: Value) -> Option<Setting<Summary>> {
        let expected = || {
            format!(
                "expected a template or a function: `{0} = \"{{field}} …\"`, \
                 `{0} = path::to::fn` or `{0} = |value| …`",
                self.name
            )
        };
        let tokens = self.assigned(cx, value, expected)?;
        match syn::parse2::<syn::Expr>(tokens.clone()) {
            Ok(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(lit),
                ..
            })) => match template_problem(&lit.value()) {
                Some(problem) => {
                    cx.error_spanned_by(&lit, problem);
                    None
                }
                None => Some(self.setting(Summary::Template(lit))),
            },
            Ok(expr @ (syn::Expr::Path(_) | syn::Expr::Closure(_))) => {
                Some(self.setting(Summary::Function(expr)))
            }
            _ => {
                cx.error_spanned_by(tokens, expected());
                None
            }
        }
    }

    /// `key = path` or `key = "path"`.
    pub(super) fn path(&self, cx: &Ctxt, value: Value) -> Option<Setting<Path>> {
        let expected = || format!("expected a path: `{} = ::mcp_tool`", self.name);
        let tokens = self.assigned(cx, value, expected)?;
        let parsed = match syn::parse2::<LitStr>(tokens.clone()) {
            Ok(lit) => lit.parse_with(Path::parse_mod_style),
            Err(_) => Path::parse_mod_style.parse2(tokens.clone()),
        };
        match parsed {
            Ok(path) => Some(self.setting(path)),
            Err(_) => {
                cx.error_spanned_by(tokens, expected());
                None
            }
        }
    }
}

/// Whether a `_meta` key uses a prefix MCP reserves: a prefix (before `/`) one of whose
/// dot-separated labels is `modelcontextprotocol` or `mcp`.
fn reserved_meta_key(key: &str) -> bool {
    let Some((prefix, _)) = key.split_once('/') else {
        return false;
    };
    prefix
        .split('.')
        .any(|label| label == "modelcontextprotocol" || label == "mcp")
}

/// What is wrong with a summary template, if anything: a brace that opens no `{field}` or
/// closes none (`{{` and `}}` are braces), or a field that is empty or has spaces.
fn template_problem(template: &str) -> Option<String> {
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        let brace = &rest[i..=i];
        rest = &rest[i + 1..];
        if rest.starts_with(brace) {
            rest = &rest[1..];
            continue;
        }
        if brace == "}" {
            return Some(
                "unmatched `}` in the summary template: write `}}` for a brace".to_owned(),
            );
        }
        let Some(end) = rest.find(['{', '}']).filter(|&e| &rest[e..=e] == "}") else {
            return Some(
                "unclosed `{` in the summary template: write `{field}`, or `{{` for a brace"
                    .to_owned(),
            );
        };
        let field = &rest[..end];
        if field
            .split('.')
            .any(|s| s.is_empty() || s.contains(char::is_whitespace))
        {
            return Some(format!(
                "`{{{field}}}` is no field: a placeholder names a field of the result, \
                 such as `{{count}}` or `{{user.name}}`"
            ));
        }
        rest = &rest[end + 1..];
    }
    None
}

/// `"500ms"`, `"30s"`, `"2m"`, `"1h"` as milliseconds; `None` when malformed or zero.
fn parse_duration(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let factor = match unit.trim() {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    number.checked_mul(factor).filter(|&ms| ms > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_templates() {
        for good in [
            "{count} found",
            "{user.name}",
            "{{literal}}",
            "plain",
            "{a}{b}",
            "",
        ] {
            assert_eq!(template_problem(good), None, "{good}");
        }
        for (bad, problem) in [
            ("{count", "unclosed `{`"),
            ("count}", "unmatched `}`"),
            ("{a{b}}", "unclosed `{`"),
            ("{}", "`{}` is no field"),
            ("{a..b}", "`{a..b}` is no field"),
            ("{ a }", "`{ a }` is no field"),
        ] {
            let found = template_problem(bad).unwrap_or_default();
            assert!(found.starts_with(problem), "{bad}: {found}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Some(500));
        assert_eq!(parse_duration("30s"), Some(30_000));
        assert_eq!(parse_duration("2m"), Some(120_000));
        assert_eq!(parse_duration("1h"), Some(3_600_000));
        for bad in [
            "",
            "30",
            "0s",
            "s",
            "1.5s",
            "-1s",
            "3 days",
            "99999999999999999999h",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
