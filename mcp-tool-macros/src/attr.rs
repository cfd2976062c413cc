//! Parsing of the macros' own attributes: `#[tool(...)]`, `#[tools(...)]` and `#[arg(...)]`.
//!
//! Nothing here returns a `Result`. Every problem (an unknown key, a key given twice, a value
//! of the wrong kind) is pushed into the [`Ctxt`] on the narrowest token, and parsing goes on
//! with the next key, so one build reports every bad key of an attribute. What parsed is kept
//! with its key's tokens, so later checks can put their errors on them too.
//!
//! Each attribute's keys are a table of [`KeyDef`]s: adding a key is one field in the
//! attribute's struct and one line in its table. The tables also drive "did you mean".
//! The forms a value takes, and their checks, are in `value`.

pub(crate) mod offering;
mod template;
mod value;

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Attribute, LitStr, Meta, Path};

use self::value::{Key, Value};
use crate::ctxt::Ctxt;

/// A value given to a key, with the key's tokens (for errors about the key) and the key's
/// position among the attribute's keys (to tell which of two conflicting keys came second).
pub(crate) struct Setting<T> {
    pub(crate) key: Path,
    pub(crate) order: usize,
    pub(crate) value: T,
}

/// `#[tool(...)]`.
#[derive(Default)]
pub(crate) struct Tool {
    pub(crate) name: Option<Setting<LitStr>>,
    pub(crate) title: Option<Setting<LitStr>>,
    pub(crate) description: Option<Setting<LitStr>>,
    pub(crate) read_only: Option<Setting<bool>>,
    pub(crate) destructive: Option<Setting<bool>>,
    pub(crate) idempotent: Option<Setting<bool>>,
    pub(crate) open_world: Option<Setting<bool>>,
    pub(crate) hidden: Option<Setting<bool>>,
    pub(crate) default_visible: Option<Setting<bool>>,
    pub(crate) always_visible: Option<Setting<bool>>,
    /// Left out of `tools/list` until the built-in tool search finds it.
    pub(crate) defer_loading: Option<Setting<bool>>,
    /// The time limit in milliseconds.
    pub(crate) timeout: Option<Setting<u64>>,
    /// A synchronous tool that always runs on the blocking pool (it may block).
    pub(crate) blocking: Option<Setting<bool>>,
    /// Whether the tool runs as a task: `forbidden`, `optional` or `required`.
    pub(crate) task: Option<Setting<&'static str>>,
    /// A hand-written input schema (JSON text, checked), used verbatim.
    pub(crate) input_schema: Option<Setting<LitStr>>,
    /// A hand-written output schema (JSON text, checked), replacing the derived one.
    pub(crate) output_schema: Option<Setting<LitStr>>,
    /// Status text while the tool runs (at most 64 characters).
    pub(crate) invoking: Option<Setting<LitStr>>,
    /// Status text once the tool ran (at most 64 characters).
    pub(crate) invoked: Option<Setting<LitStr>>,
    /// An example request and response (JSON texts, checked).
    pub(crate) examples: Option<Setting<Examples>>,
    /// Icons (a JSON array of `{src, mimeType?, sizes?, theme?}`, checked).
    pub(crate) icons: Option<Setting<LitStr>>,
    /// Entries merged into the tool's `_meta` (a JSON object, checked).
    pub(crate) meta: Option<Setting<LitStr>>,
    /// The MCP Apps view: the name of an HTML file in the crate's `ui/` folder.
    pub(crate) ui: Option<Setting<LitStr>>,
    /// Who may call the tool: `["model", "app"]`, `["model"]` or `["app"]`.
    pub(crate) visibility: Option<Setting<Vec<LitStr>>>,
    /// The OAuth scopes a caller needs to see and call the tool: `["users:write"]`.
    pub(crate) scopes: Option<Setting<Vec<LitStr>>>,
    /// Whether arguments sent as the wrong JSON type are converted (`coerce = false`: never,
    /// whatever the server's switch).
    pub(crate) coerce: Option<Setting<bool>>,
    /// Whether the tool is served over REST beside MCP (`rest = false`: MCP only).
    pub(crate) rest: Option<Setting<bool>>,
    /// The text for the model in place of the JSON copy of the result.
    pub(crate) summary: Option<Setting<Summary>>,
    pub(crate) krate: Option<Setting<Path>>,
    /// Known keys that an unknown key was taken for ("did you mean"), so that checks do not
    /// also report the key as missing.
    pub(crate) misspelled: Vec<&'static str>,
}

impl Keys for Tool {
    const NAME: &'static str = "tool";
    const KEYS: &'static [KeyDef<Self>] = &[
        KeyDef {
            name: "name",
            parse: |t, cx, k, v| t.name = k.string(cx, v),
        },
        KeyDef {
            name: "title",
            parse: |t, cx, k, v| t.title = k.non_empty_string(cx, v),
        },
        KeyDef {
            name: "description",
            parse: |t, cx, k, v| t.description = k.non_empty_string(cx, v),
        },
        KeyDef {
            name: "read_only",
            parse: |t, cx, k, v| t.read_only = k.flag(cx, v),
        },
        KeyDef {
            name: "destructive",
            parse: |t, cx, k, v| t.destructive = k.flag(cx, v),
        },
        KeyDef {
            name: "idempotent",
            parse: |t, cx, k, v| t.idempotent = k.flag(cx, v),
        },
        KeyDef {
            name: "open_world",
            parse: |t, cx, k, v| t.open_world = k.flag(cx, v),
        },
        KeyDef {
            name: "hidden",
            parse: |t, cx, k, v| t.hidden = k.flag(cx, v),
        },
        KeyDef {
            name: "default_visible",
            parse: |t, cx, k, v| t.default_visible = k.flag(cx, v),
        },
        KeyDef {
            name: "always_visible",
            parse: |t, cx, k, v| t.always_visible = k.flag(cx, v),
        },
        KeyDef {
            name: "defer_loading",
            parse: |t, cx, k, v| t.defer_loading = k.flag(cx, v),
        },
        KeyDef {
            name: "timeout",
            parse: |t, cx, k, v| t.timeout = k.duration(cx, v),
        },
        KeyDef {
            name: "blocking",
            parse: |t, cx, k, v| t.blocking = k.flag(cx, v),
        },
        KeyDef {
            name: "task",
            parse: |t, cx, k, v| t.task = k.task(cx, v),
        },
        KeyDef {
            name: "input_schema",
            parse: |t, cx, k, v| t.input_schema = k.schema(cx, v, true),
        },
        KeyDef {
            name: "output_schema",
            parse: |t, cx, k, v| t.output_schema = k.schema(cx, v, false),
        },
        KeyDef {
            name: "invoking",
            parse: |t, cx, k, v| t.invoking = k.status_text(cx, v),
        },
        KeyDef {
            name: "invoked",
            parse: |t, cx, k, v| t.invoked = k.status_text(cx, v),
        },
        KeyDef {
            name: "examples",
            parse: |t, cx, k, v| t.examples = k.examples(cx, v),
        },
        KeyDef {
            name: "icons",
            parse: |t, cx, k, v| t.icons = k.icons(cx, v),
        },
        KeyDef {
            name: "meta",
            parse: |t, cx, k, v| t.meta = k.meta(cx, v),
        },
        KeyDef {
            name: "ui",
            parse: |t, cx, k, v| t.ui = k.ui(cx, v),
        },
        KeyDef {
            name: "visibility",
            parse: |t, cx, k, v| t.visibility = k.visibility(cx, v),
        },
        KeyDef {
            name: "scopes",
            parse: |t, cx, k, v| t.scopes = k.scopes(cx, v),
        },
        KeyDef {
            name: "coerce",
            parse: |t, cx, k, v| t.coerce = k.flag(cx, v),
        },
        KeyDef {
            name: "rest",
            parse: |t, cx, k, v| t.rest = k.flag(cx, v),
        },
        KeyDef {
            name: "summary",
            parse: |t, cx, k, v| t.summary = k.summary(cx, v),
        },
        KeyDef {
            name: "crate",
            parse: |t, cx, k, v| t.krate = k.path(cx, v),
        },
    ];

    fn misspelled(&mut self, key: &'static str) {
        self.misspelled.push(key);
    }
}

impl Tool {
    /// Parses the arguments of a free function's `#[tool(...)]` (the attribute macro's input).
    pub(crate) fn from_args(cx: &Ctxt, args: TokenStream) -> Tool {
        let mut tool = Tool::default();
        parse_args(cx, &mut tool, args);
        tool
    }

    /// Parses a method's `#[tool]` or `#[tool(...)]` inside a `#[tools]` impl block.
    pub(crate) fn from_attr(cx: &Ctxt, attr: &Attribute) -> Tool {
        let mut tool = Tool::default();
        parse_attr(cx, &mut tool, attr);
        tool
    }
}

/// `summary = "…"`, a template whose `{field}`s are the result's (checked here), or
/// `summary = path` / `summary = |value| …`, a function of `&T`.
pub(crate) enum Summary {
    Template(LitStr),
    Function(syn::Expr),
}

/// `examples(request = "…", response = "…")`: JSON texts, each checked to be an object.
#[derive(Default)]
pub(crate) struct Examples {
    pub(crate) request: Option<LitStr>,
    pub(crate) response: Option<LitStr>,
}

/// `#[tools(...)]`.
#[derive(Default)]
pub(crate) struct Tools {
    pub(crate) manual: Option<Setting<bool>>,
    pub(crate) krate: Option<Setting<Path>>,
}

impl Keys for Tools {
    const NAME: &'static str = "tools";
    const KEYS: &'static [KeyDef<Self>] = &[
        KeyDef {
            name: "manual",
            parse: |t, cx, k, v| t.manual = k.flag(cx, v),
        },
        KeyDef {
            name: "crate",
            parse: |t, cx, k, v| t.krate = k.path(cx, v),
        },
    ];
}

impl Tools {
    /// Parses the arguments of `#[tools(...)]`.
    pub(crate) fn from_args(cx: &Ctxt, args: TokenStream) -> Tools {
        let mut tools = Tools::default();
        parse_args(cx, &mut tools, args);
        tools
    }

    /// Whether registration is left to the user (`manual`, or `manual = true`).
    pub(crate) fn is_manual(&self) -> bool {
        self.manual.as_ref().is_some_and(|m| m.value)
    }
}

/// `#[arg(...)]` on a tool's parameter; several `#[arg]` attributes on one parameter add up.
#[derive(Default)]
pub(crate) struct Arg {
    pub(crate) description: Option<Setting<LitStr>>,
    pub(crate) rename: Option<Setting<LitStr>>,
    pub(crate) default: Option<Setting<bool>>,
    pub(crate) header: Option<Setting<LitStr>>,
    pub(crate) coerce: Option<Setting<bool>>,
}

impl Keys for Arg {
    const NAME: &'static str = "arg";
    const KEYS: &'static [KeyDef<Self>] = &[
        KeyDef {
            name: "description",
            parse: |a, cx, k, v| a.description = k.non_empty_string(cx, v),
        },
        KeyDef {
            name: "rename",
            parse: |a, cx, k, v| a.rename = k.non_empty_string(cx, v),
        },
        KeyDef {
            name: "default",
            parse: |a, cx, k, v| a.default = k.flag(cx, v),
        },
        KeyDef {
            name: "header",
            parse: |a, cx, k, v| a.header = k.non_empty_string(cx, v),
        },
        KeyDef {
            name: "coerce",
            parse: |a, cx, k, v| a.coerce = k.flag(cx, v),
        },
    ];
}

impl Arg {
    /// Parses every `#[arg(...)]` among a parameter's attributes.
    pub(crate) fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Arg {
        let mut arg = Arg::default();
        let mut seen = Vec::new();
        let mut order = 0;
        for attr in attrs.iter().filter(|a| is_arg_attr(a)) {
            let result = attr
                .parse_nested_meta(|meta| parse_key(cx, &mut arg, &mut seen, &mut order, &meta));
            if let Err(e) = result {
                cx.syn_error(e);
            }
        }
        arg
    }

    /// Whether a missing argument takes `Default::default()`.
    pub(crate) fn is_default(&self) -> bool {
        self.default.as_ref().is_some_and(|d| d.value)
    }
}

/// Whether `attr` is `#[arg(...)]`, which `#[tool]` consumes from parameters.
pub(crate) fn is_arg_attr(attr: &Attribute) -> bool {
    attr.path().is_ident("arg")
}

/// What an attribute of a method inside a `#[tools]` impl block makes it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Tool,
    Offering(offering::Kind),
}

impl Marker {
    /// The attribute's name.
    pub(crate) fn attr(self) -> &'static str {
        match self {
            Marker::Tool => "tool",
            Marker::Offering(kind) => kind.attr(),
        }
    }
}

/// What `attr` makes a method of a `#[tools]` impl block, if anything: `#[tool]`,
/// `#[prompt]`, `#[resource]` or `#[resource_template]` (alone, under `mcp_tool::`, or under
/// the path given as `#[tools(crate = …)]`).
pub(crate) fn marker(attr: &Attribute, krate: Option<&Path>) -> Option<Marker> {
    use offering::Kind;
    [
        Marker::Tool,
        Marker::Offering(Kind::Prompt),
        Marker::Offering(Kind::Resource),
        Marker::Offering(Kind::Template),
    ]
    .into_iter()
    .find(|m| is_named(attr, m.attr(), krate))
}

/// Whether `attr` is `name`, `mcp_tool::name`, or `name` under `krate`.
fn is_named(attr: &Attribute, name: &str, krate: Option<&Path>) -> bool {
    let path = attr.path();
    if path.is_ident(name) {
        return true;
    }
    let segments: Vec<&syn::PathSegment> = path.segments.iter().collect();
    let Some((last, prefix)) = segments.split_last() else {
        return false;
    };
    if last.ident != name || !last.arguments.is_none() {
        return false;
    }
    let prefix: Vec<String> = prefix.iter().map(|s| s.ident.to_string()).collect();
    if prefix == ["mcp_tool"] {
        return true;
    }
    krate.is_some_and(|k| {
        let k: Vec<String> = k.segments.iter().map(|s| s.ident.to_string()).collect();
        k == prefix
    })
}

/// An attribute's keys.
trait Keys: Sized + 'static {
    /// The attribute's name, for messages.
    const NAME: &'static str;
    /// Every key the attribute accepts.
    const KEYS: &'static [KeyDef<Self>];

    /// Called with the known key an unknown one was taken for.
    fn misspelled(&mut self, key: &'static str) {
        let _ = key;
    }
}

/// One key an attribute accepts, and how its value is stored.
struct KeyDef<B: 'static> {
    name: &'static str,
    parse: fn(&mut B, &Ctxt, &Key<'_>, Value),
}

/// Parses `key, key = value, …` given as a macro's arguments.
fn parse_args<B: Keys>(cx: &Ctxt, builder: &mut B, args: TokenStream) {
    let mut seen = Vec::new();
    let mut order = 0;
    let parser = syn::meta::parser(|meta| parse_key(cx, builder, &mut seen, &mut order, &meta));
    if let Err(e) = parser.parse2(args) {
        cx.syn_error(e);
    }
}

/// Parses an attribute that may be bare (`#[tool]`) or have keys (`#[tool(...)]`).
fn parse_attr<B: Keys>(cx: &Ctxt, builder: &mut B, attr: &Attribute) {
    if let Meta::Path(_) = attr.meta {
        return;
    }
    let mut seen = Vec::new();
    let mut order = 0;
    let result =
        attr.parse_nested_meta(|meta| parse_key(cx, builder, &mut seen, &mut order, &meta));
    if let Err(e) = result {
        cx.syn_error(e);
    }
}

/// Parses one key and its value. Only a malformed attribute (not a bad key or value) returns
/// an error, which ends the parsing of this attribute.
fn parse_key<B: Keys>(
    cx: &Ctxt,
    builder: &mut B,
    seen: &mut Vec<&'static str>,
    order: &mut usize,
    meta: &ParseNestedMeta<'_>,
) -> syn::Result<()> {
    let value = Value::take(meta.input)?;
    *order += 1;
    let def = meta
        .path
        .get_ident()
        .and_then(|ident| B::KEYS.iter().find(|k| ident.unraw() == k.name));
    let Some(def) = def else {
        if let Some(known) = unknown_key::<B>(cx, &meta.path) {
            builder.misspelled(known);
        }
        return Ok(());
    };
    if seen.contains(&def.name) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{}` specified more than once", def.name),
        );
        return Ok(());
    }
    seen.push(def.name);
    let key = Key {
        path: &meta.path,
        name: def.name,
        order: *order,
    };
    (def.parse)(builder, cx, &key, value);
    Ok(())
}

/// Reports an unknown key; returns the known key it was probably meant to be.
fn unknown_key<B: Keys>(cx: &Ctxt, path: &Path) -> Option<&'static str> {
    let written = tokens_to_code(path.to_token_stream());
    let mut msg = format!("unknown `{}` attribute `{written}`", B::NAME);
    let suggestion = suggest(&written, B::KEYS.iter().map(|k| k.name));
    match suggestion {
        Some(known) => msg.push_str(&format!(", did you mean `{known}`?")),
        None => {
            let list: Vec<String> = B::KEYS.iter().map(|k| format!("`{}`", k.name)).collect();
            msg.push_str(&format!(", expected one of {}", list.join(", ")));
        }
    }
    cx.error_spanned_by(path, msg);
    suggestion
}

/// The known key closest to `written`, if it is at most two edits away.
pub(crate) fn suggest<'k>(written: &str, known: impl Iterator<Item = &'k str>) -> Option<&'k str> {
    known
        .map(|k| (edit_distance(written, k), k))
        .filter(|&(d, _)| d <= 2)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

/// Levenshtein distance over chars, ignoring ASCII case.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitution.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Source-like text of tokens, for messages: `Vec<u8>` rather than `Vec < u8 >`.
pub(crate) fn tokens_to_code(tokens: TokenStream) -> String {
    let mut text = tokens.to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" < ", "<"),
        ("< ", "<"),
        (" <", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
        ("' ", "'"),
        ("( ", "("),
        (" )", ")"),
        ("[ ", "["),
        (" ]", "]"),
        (" ;", ";"),
    ] {
        text = text.replace(from, to);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_char_edits() {
        assert_eq!(edit_distance("description", "description"), 0);
        assert_eq!(edit_distance("descripton", "description"), 1);
        assert_eq!(edit_distance("desciption", "description"), 1);
        assert_eq!(edit_distance("descirption", "description"), 2);
        assert_eq!(edit_distance("readonly", "read_only"), 1);
        assert_eq!(edit_distance("Name", "name"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("nom", "名前"), 3);
    }

    #[test]
    fn suggestions_are_at_most_two_edits_away() {
        let keys = ["name", "title", "description", "read_only", "destructive"];
        assert_eq!(suggest("descripton", keys.into_iter()), Some("description"));
        assert_eq!(suggest("nmae", keys.into_iter()), Some("name"));
        assert_eq!(suggest("titel", keys.into_iter()), Some("title"));
        assert_eq!(suggest("readonly", keys.into_iter()), Some("read_only"));
        assert_eq!(suggest("timeout", keys.into_iter()), None);
        assert_eq!(suggest("summary", keys.into_iter()), None);
    }

    #[test]
    fn code_text_drops_token_spacing() {
        let ty: syn::Type = syn::parse_quote!(&'a std::collections::HashMap<String, Vec<u8>>);
        assert_eq!(
            tokens_to_code(ty.to_token_stream()),
            "&'a std::collections::HashMap<String, Vec<u8>>"
        );
        let ty: syn::Type = syn::parse_quote!(&[(u8, u16)]);
        assert_eq!(tokens_to_code(ty.to_token_stream()), "&[(u8, u16)]");
    }

    fn errors(cx: Ctxt) -> Vec<String> {
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn tool_keys_parse() {
        let cx = Ctxt::new();
        let tool = Tool::from_args(
            &cx,
            quote::quote!(
                name = "x",
                title = "X",
                read_only,
                destructive = false,
                crate = "::a::b"
            ),
        );
        assert!(errors(cx).is_empty());
        assert_eq!(tool.name.unwrap().value.value(), "x");
        assert_eq!(tool.title.unwrap().value.value(), "X");
        assert!(tool.read_only.unwrap().value);
        assert!(!tool.destructive.unwrap().value);
        assert!(tool.idempotent.is_none());
        let krate = tool.krate.unwrap().value;
        assert_eq!(tokens_to_code(krate.to_token_stream()), "::a::b");
    }

    #[test]
    fn every_bad_key_is_reported() {
        let cx = Ctxt::new();
        let _ = Tool::from_args(
            &cx,
            quote::quote!(
                descripton = "x",
                name = 5,
                read_only = "yes",
                title = "",
                name = "b",
                retries = 3,
                timeout = "soon",
                crate = 1 + 2
            ),
        );
        assert_eq!(
            errors(cx),
            [
                "unknown `tool` attribute `descripton`, did you mean `description`?",
                "expected a string: `name = \"…\"`",
                "expected `read_only`, `read_only = true` or `read_only = false`",
                "`title` cannot be empty",
                "`name` specified more than once",
                "unknown `tool` attribute `retries`, expected one of `name`, `title`, \
                 `description`, `read_only`, `destructive`, `idempotent`, `open_world`, \
                 `hidden`, `default_visible`, `always_visible`, `defer_loading`, `timeout`, \
                 `blocking`, `task`, \
                 `input_schema`, `output_schema`, `invoking`, `invoked`, `examples`, `icons`, \
                 `meta`, `ui`, `visibility`, `scopes`, `coerce`, `rest`, `summary`, `crate`",
                "expected a positive duration such as `timeout = \"30s\"` (units: `ms`, `s`, \
                 `m`, `h`)",
                "expected a path: `crate = ::mcp_tool`",
            ]
        );
    }

    #[test]
    fn tool_attr_paths() {
        let krate: Path = syn::parse_quote!(my::fw);
        for (attr, expected) in [
            (quote::quote!(#[tool]), true),
            (quote::quote!(#[tool(name = "x")]), true),
            (quote::quote!(#[mcp_tool::tool]), true),
            (quote::quote!(#[::mcp_tool::tool]), true),
            (quote::quote!(#[my::fw::tool]), true),
            (quote::quote!(#[other::tool]), false),
            (quote::quote!(#[tools]), false),
            (quote::quote!(#[doc = "tool"]), false),
        ] {
            let attrs = Attribute::parse_outer.parse2(attr.clone()).unwrap();
            let is_tool = marker(&attrs[0], Some(&krate)) == Some(Marker::Tool);
            assert_eq!(is_tool, expected, "{attr}");
        }
    }

    #[test]
    fn offering_attr_paths() {
        use offering::Kind;
        let krate: Path = syn::parse_quote!(my::fw);
        for (attr, expected) in [
            (quote::quote!(#[prompt]), Some(Kind::Prompt)),
            (
                quote::quote!(#[mcp_tool::prompt(name = "x")]),
                Some(Kind::Prompt),
            ),
            (quote::quote!(#[resource("a://b")]), Some(Kind::Resource)),
            (
                quote::quote!(#[my::fw::resource_template("a://{b}")]),
                Some(Kind::Template),
            ),
            (quote::quote!(#[other::prompt]), None),
            (quote::quote!(#[resources]), None),
        ] {
            let attrs = Attribute::parse_outer.parse2(attr.clone()).unwrap();
            let found = marker(&attrs[0], Some(&krate));
            assert!(found == expected.map(Marker::Offering), "{attr}");
        }
    }
}
