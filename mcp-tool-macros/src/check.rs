//! The rules a tool must follow that relate several parts of the model: the tool's name, its
//! description, its annotations, its signature and receiver, and the tools of one impl block.
//!
//! Checks only report, into the `Ctxt`; they never stop at the first problem. Rules about a
//! parameter's *type* (is it an extractor? is the return value convertible?) are the
//! compiler's, through traits, and are not checked here: the macros never look at type names.

use quote::ToTokens;
use syn::Type;

use crate::ast::{self, Description, ReceiverKind, ToolFn, ToolImpl};
use crate::ctxt::Ctxt;

mod offering;

pub(crate) use offering::free_offering;

/// The longest tool name MCP clients accept.
const MAX_NAME_LEN: usize = 128;

/// A free function under `#[tool]`.
pub(crate) fn free_tool(cx: &Ctxt, tool: &ToolFn<'_>) {
    if let Some(receiver) = &tool.receiver {
        cx.error_spanned_by(
            receiver.original.self_token,
            "`#[tool]` on a method needs `#[tools]` on the enclosing impl block",
        );
    }
    tool_fn(cx, tool);
}

/// An impl block under `#[tools]`, and each of its tools.
pub(crate) fn tool_impl(cx: &Ctxt, imp: &ToolImpl<'_>) {
    let item = imp.original;
    if let Some((path, _)) = &item.trait_ {
        cx.error_spanned_by(
            path,
            "`#[tools]` goes on an inherent impl block (`impl Type { … }`), not on a trait impl",
        );
    }
    if !imp.attrs.is_manual() {
        generic_impl(cx, imp);
    }
    if imp.tools.is_empty() && imp.offerings.is_empty() {
        cx.error_spanned_by(
            &item.self_ty,
            "this `#[tools]` impl block has no `#[tool]` methods: mark each tool method with \
             `#[tool]` (or `#[prompt]`, `#[resource]`, `#[resource_template]`)",
        );
    }
    offering::impl_offerings(cx, &imp.offerings);
    let mut names: Vec<&str> = Vec::new();
    for tool in &imp.tools {
        if names.contains(&tool.name.value.as_str()) {
            cx.error_spanned_by(
                tool.name_tokens(),
                format!(
                    "duplicate tool name `{}`: another tool of this impl block has it",
                    tool.name.value
                ),
            );
        } else {
            names.push(&tool.name.value);
        }
        if let Some(krate) = &tool.attrs.krate {
            cx.error_spanned_by(
                &krate.key,
                "`crate` goes on the impl block's `#[tools(...)]`, not on a method's `#[tool]`",
            );
        }
        if let Some(receiver) = &tool.receiver
            && receiver.kind == ReceiverKind::Unsupported
        {
            cx.error_spanned_by(
                receiver.original,
                "tools share their service and run concurrently: take `&self` (keep mutable \
                 state behind a `Mutex`)",
            );
        }
        tool_fn(cx, tool);
    }
}

/// Registering from a generic impl would need one registration per instantiation, which a
/// macro cannot know.
fn generic_impl(cx: &Ctxt, imp: &ToolImpl<'_>) {
    const MSG: &str = "`#[tools]` cannot register the tools of a generic impl automatically: \
                       write `#[tools(manual)]` and register each instantiation with \
                       `Server::tools(Type::<…>::mcp_tools())`";
    let generics = &imp.original.generics;
    if !generics.params.is_empty() {
        cx.error_spanned_by(generics, MSG);
    } else if let Some(where_clause) = &generics.where_clause {
        cx.error_spanned_by(where_clause, MSG);
    } else if let Some(lifetime) = elided_lifetime(imp.original.self_ty.to_token_stream()) {
        // `impl Foo<'_>` is generic over the elided lifetime.
        cx.error_spanned_by(lifetime, MSG);
    }
}

/// The first `'_` in a type's tokens.
fn elided_lifetime(tokens: proc_macro2::TokenStream) -> Option<proc_macro2::TokenStream> {
    use proc_macro2::TokenTree;
    let mut iter = tokens.into_iter().peekable();
    while let Some(tt) = iter.next() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == '\'' => {
                if let Some(TokenTree::Ident(i)) = iter.peek()
                    && i == "_"
                {
                    return Some(quote::quote!(#p #i));
                }
            }
            TokenTree::Group(g) => {
                if let Some(found) = elided_lifetime(g.stream()) {
                    return Some(found);
                }
            }
            _ => {}
        }
    }
    None
}

/// The rules every tool follows, free function or method.
fn tool_fn(cx: &Ctxt, tool: &ToolFn<'_>) {
    name(cx, tool);
    match &tool.description {
        Description::Text(_) => {}
        // A misspelled `description` was reported already.
        Description::Missing if tool.attrs.misspelled.contains(&"description") => {}
        Description::Missing => cx.error_spanned_by(
            tool.name.ident,
            format!(
                "tool `{}` has no description: add a doc comment (`/// …`) or \
                 `#[tool(description = \"…\")]`",
                tool.name.value
            ),
        ),
        Description::FromMacro(expr) => cx.error_spanned_by(
            expr,
            "`#[tool]` cannot read a doc comment that a macro expands to: give the tool's \
             description with `#[tool(description = \"…\")]`",
        ),
    }
    annotations(cx, tool);
    signature(cx, tool);
    params(cx, tool);
    if let Some(blocking) = &tool.attrs.blocking
        && blocking.value
        && tool.sig.asyncness.is_some()
    {
        cx.error_spanned_by(
            &blocking.key,
            "`blocking` is for synchronous tools: an `async fn` runs on the async runtime; \
             move its blocking part into `tokio::task::spawn_blocking`, or make it a plain `fn`",
        );
    }
    if let Some(summary) = &tool.attrs.summary
        && tool.output().is_none()
    {
        cx.error_spanned_by(
            &summary.key,
            "`summary` replaces the JSON copy of a structured result, and this tool returns \
             nothing: return `Json<T>`",
        );
    }
}

fn name(cx: &Ctxt, tool: &ToolFn<'_>) {
    let Some(problem) = name_problem(&tool.name.value) else {
        return;
    };
    match &tool.attrs.name {
        Some(lit) => cx.error_spanned_by(&lit.value, problem),
        None => cx.error_spanned_by(
            tool.name.ident,
            format!(
                "{problem}; the name comes from the function, set another one with \
                 `#[tool(name = \"…\")]`"
            ),
        ),
    }
}

/// What is wrong with a tool name, if anything: MCP names are 1 to 128 characters among
/// `A-Z a-z 0-9 _ - .`.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("tool name cannot be empty".into());
    }
    let len = name.chars().count();
    if len > MAX_NAME_LEN {
        return Some(format!(
            "tool name is {len} characters long, the limit is {MAX_NAME_LEN}"
        ));
    }
    let bad = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))?;
    Some(format!(
        "tool name `{name}` contains {bad:?}: tool names use only `A-Z`, `a-z`, `0-9`, `_`, `-` \
         and `.`"
    ))
}

fn annotations(cx: &Ctxt, tool: &ToolFn<'_>) {
    let a = &tool.attrs;
    if let (Some(hidden), Some(default_visible)) = (&a.hidden, &a.default_visible) {
        let second = if hidden.order > default_visible.order {
            &hidden.key
        } else {
            &default_visible.key
        };
        cx.error_spanned_by(
            second,
            "`hidden` and `default_visible` say the same thing: use one of them",
        );
    }
    let hidden = a
        .hidden
        .as_ref()
        .filter(|h| h.value)
        .map(|h| (&h.key, h.order))
        .or_else(|| {
            a.default_visible
                .as_ref()
                .filter(|v| !v.value)
                .map(|v| (&v.key, v.order))
        });
    if let (Some((hidden_key, hidden_order)), Some(always)) = (hidden, &a.always_visible)
        && always.value
    {
        let second = if hidden_order > always.order {
            hidden_key
        } else {
            &always.key
        };
        cx.error_spanned_by(second, "a tool cannot be both hidden and `always_visible`");
    }
    if let Some(defer) = a.defer_loading.as_ref().filter(|d| d.value) {
        // On the `defer_loading` key: the other setting says what the tool is; deferring is
        // the choice that cannot go with it.
        if a.always_visible.as_ref().is_some_and(|v| v.value) {
            cx.error_spanned_by(
                &defer.key,
                "an `always_visible` tool is never collapsed behind tool search: drop `defer_loading` or `always_visible`",
            );
        } else if hidden.is_some() {
            cx.error_spanned_by(
                &defer.key,
                "a hidden tool is revealed by a tool manager, never by tool search: use `hidden` or `defer_loading`, not both",
            );
        } else if a
            .visibility
            .as_ref()
            .is_some_and(|v| !v.value.iter().any(|s| s.value() == "model"))
        {
            cx.error_spanned_by(
                &defer.key,
                "an app-only tool (`visibility = [\"app\"]`) is never found by tool search, which finds tools for the model: drop `defer_loading`",
            );
        }
    }
    if let (Some(read_only), Some(destructive)) = (&a.read_only, &a.destructive)
        && read_only.value
        && destructive.value
    {
        // On whichever of the two came second.
        let second = if read_only.order > destructive.order {
            &read_only.key
        } else {
            &destructive.key
        };
        cx.error_spanned_by(
            second,
            "a tool cannot be both `read_only` and `destructive`",
        );
    }
}

fn signature(cx: &Ctxt, tool: &ToolFn<'_>) {
    fn_signature(
        cx,
        tool.sig,
        "tool",
        "its input schema needs the parameters' concrete types",
    );
}

/// The rules of a `noun`'s (a tool's, a prompt's…) signature: not `unsafe`, `extern`,
/// variadic or generic (`generic` says why).
fn fn_signature(cx: &Ctxt, sig: &syn::Signature, noun: &str, generic: &str) {
    if let syn::Safety::Unsafe(unsafety) = &sig.safety {
        cx.error_spanned_by(
            unsafety,
            format!(
                "a {noun} cannot be an `unsafe fn`: nothing upholds its safety contract when a \
                 client calls it"
            ),
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, format!("a {noun} cannot have an `extern` ABI"));
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, format!("a {noun} cannot be variadic"));
    }
    let message = format!("a {noun} cannot be generic: {generic}");
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(&sig.generics, message);
    } else if let Some(where_clause) = &sig.generics.where_clause {
        cx.error_spanned_by(where_clause, message);
    }
}

fn params(cx: &Ctxt, tool: &ToolFn<'_>) {
    let mut names: Vec<&str> = Vec::new();
    let mut headers: Vec<String> = Vec::new();
    for param in &tool.params {
        if let Some(header) = &param.attrs.header {
            let value = header.value.value();
            if let Some(problem) = header_problem(&value) {
                cx.error_spanned_by(&header.value, problem);
            } else if headers.iter().any(|h| h.eq_ignore_ascii_case(&value)) {
                cx.error_spanned_by(
                    &header.value,
                    format!(
                        "header `Mcp-Param-{value}` is already used by another argument of this \
                         tool (header names ignore case)"
                    ),
                );
            } else {
                headers.push(value);
            }
        }
        owned_param(cx, param.ty, "tool");
        if !param.name.is_empty() {
            if names.contains(&param.name.as_str()) {
                let tokens = match &param.attrs.rename {
                    Some(rename) => rename.value.to_token_stream(),
                    None => param.original.pat.to_token_stream(),
                };
                cx.error_spanned_by(tokens, format!("duplicate argument name `{}`", param.name));
            } else {
                names.push(&param.name);
            }
        }
    }
}

/// A `noun`'s parameter type is an owned, concrete type: no reference, no `impl Trait`.
fn owned_param(cx: &Ctxt, ty: &Type, noun: &str) {
    let mut found = Vec::new();
    ast::find_types(ty, &mut found, &|t| {
        matches!(t, Type::Reference(_) | Type::ImplTrait(_))
    });
    for ty in found {
        match ty {
            Type::Reference(r) => cx.error_spanned_by(
                ty,
                format!(
                    "{noun} parameters are owned values: take `{}` instead of `{}`",
                    owned(&r.elem),
                    crate::attr::tokens_to_code(ty.to_token_stream()),
                ),
            ),
            _ => cx.error_spanned_by(
                ty,
                format!("a {noun} parameter cannot be `impl Trait`: name a concrete type"),
            ),
        }
    }
}

/// Why `name` cannot follow `Mcp-Param-` (an HTTP token: RFC 9110 `tchar`s), if it cannot.
pub(crate) fn header_problem(name: &str) -> Option<String> {
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let bad = name.chars().find(|&c| !tchar(c))?;
    let bad = match bad {
        ' ' => "a space".to_owned(),
        c => format!("`{}`", c.escape_default()),
    };
    Some(format!(
        "header name `{name}` has {bad}, which an HTTP header name cannot: use letters, digits \
         and !#$%&'*+-.^_`|~"
    ))
}

/// The owned counterpart of a borrowed type, for messages: `String` for `str`, `Vec<T>` for
/// `[T]`, else the type itself.
fn owned(referent: &Type) -> String {
    match referent {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => "String".into(),
        Type::Slice(s) => format!(
            "Vec<{}>",
            crate::attr::tokens_to_code(s.elem.to_token_stream())
        ),
        _ => crate::attr::tokens_to_code(referent.to_token_stream()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names() {
        for name in ["a", "get_weather", "fs.read-file", "Z9", &"x".repeat(128)] {
            assert_eq!(name_problem(name), None, "{name}");
        }
    }

    #[test]
    fn empty_name() {
        assert_eq!(name_problem("").unwrap(), "tool name cannot be empty");
    }

    #[test]
    fn long_name() {
        assert_eq!(
            name_problem(&"x".repeat(129)).unwrap(),
            "tool name is 129 characters long, the limit is 128"
        );
        // Characters, not bytes.
        assert!(name_problem(&"é".repeat(100)).unwrap().contains("'é'"));
    }

    #[test]
    fn bad_characters() {
        assert_eq!(
            name_problem("get weather").unwrap(),
            "tool name `get weather` contains ' ': tool names use only `A-Z`, `a-z`, `0-9`, `_`, \
             `-` and `.`"
        );
        for name in ["a/b", "a:b", "名前", "a\nb", "tool!"] {
            assert!(name_problem(name).is_some(), "{name}");
        }
    }

    #[test]
    fn owned_suggestions() {
        let ty = |t: proc_macro2::TokenStream| syn::parse2::<Type>(t).unwrap();
        assert_eq!(owned(&ty(quote::quote!(str))), "String");
        assert_eq!(owned(&ty(quote::quote!([u8]))), "Vec<u8>");
        assert_eq!(owned(&ty(quote::quote!(Config))), "Config");
    }
}
