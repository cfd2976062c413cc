//! Checks of whole expansions that need no compiler: which names generated code uses, and
//! what the fallback keeps. What the expansion *does* is tested by the UI pass cases in
//! `tests/tests/ui/pass`, which compile and run it.

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

use crate::attr::offering::Kind;
use crate::{offering_attr, tool_attr, tools_attr};

/// Every token of `tokens`, groups flattened, as text.
fn flatten(tokens: TokenStream, out: &mut Vec<String>) {
    for tt in tokens {
        match tt {
            TokenTree::Group(g) => flatten(g.stream(), out),
            other => out.push(other.to_string()),
        }
    }
}

fn words(tokens: TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    flatten(tokens, &mut out);
    out
}

/// Names a user's crate may shadow: generated code must reach them through `__private`.
const RUNTIME_NAMES: &[&str] = &[
    "Box",
    "Some",
    "None",
    "Ok",
    "Err",
    "Arc",
    "Option",
    "Result",
    "vec",
    "inventory",
    "file",
    "line",
    "type_name",
    "ToolRecord",
    "ToolSet",
    "ToolCall",
    "BoxFuture",
    "DefBuilder",
    "ParamSpec",
    "Annotations",
    "ServiceType",
    "param",
    "param_default",
    "service",
    "output",
    "into_result",
    "missing_service",
    "run_sync",
    "SyncPolicy",
    "summarized",
    "templated",
    "check_summary",
    "OfferingRecord",
    "OfferingSet",
    "Offering",
    "Build",
    "ArgSpec",
    "HandlerFuture",
    "PromptRequest",
    "ResourceRequest",
    "PromptResult",
    "ResourceContents",
    "prompt_param",
    "prompt_get",
    "prompt_output",
    "prompt_result",
    "prompt_complete",
    "template_complete",
    "template_var",
    "template_read",
    "resource_read",
    "resource_context",
    "resource_output",
    "resource_contents",
    "offering_service",
];

fn assert_only_private_paths(tokens: TokenStream) {
    let words = words(tokens);
    for (i, word) in words.iter().enumerate() {
        // The user's own `self: std::sync::Arc<Self>`.
        let users_arc = word == "Arc" && i >= 3 && words[i - 3..i] == ["sync", ":", ":"];
        // A field in a struct expression: `ToolRecord { name: …, file: …, line: … }`.
        let field = words.get(i + 1).is_some_and(|w| w == ":")
            && words[i - 1] == ","
            && words.get(i + 2).is_some_and(|w| w == ":");
        if RUNTIME_NAMES.contains(&word.as_str()) && !users_arc && !field {
            assert!(
                i >= 3 && words[i - 3..i] == ["__private", ":", ":"],
                "`{word}` not reached through `__private` at token {i}: {:?}",
                &words[i.saturating_sub(8)..(i + 3).min(words.len())]
            );
        }
    }
}

#[test]
fn free_tools_reach_the_runtime_only_through_private() {
    for item in [
        quote! {
            /// Multiply.
            #[allow(unused)]
            fn multiply(#[arg(description = "a", default)] a: f64, b: Maybe<f64>) -> f64 { a }
        },
        quote! {
            /// Async.
            async fn ping() {}
        },
    ] {
        let out = tool_attr(quote!(read_only, title = "T"), item);
        assert!(!out.to_string().contains("compile_error"), "{out}");
        assert_only_private_paths(out);
    }
}

#[test]
fn summaries_and_coercion_reach_the_runtime_only_through_private() {
    for (args, item) in [
        (
            quote!(coerce, summary = "{count} found"),
            quote! {
                /// Templated.
                fn found(#[arg(coerce = false)] n: u32) -> Json<Found> { todo!() }
            },
        ),
        (
            quote!(summary = describe),
            quote! {
                /// By a function.
                async fn described(#[arg(coerce)] n: u32) -> Fallible<Json<Found>> { todo!() }
            },
        ),
        (
            quote!(summary = |f: &Found| f.to_string()),
            quote! {
                /// By a closure, of an opaque type.
                fn opaque() -> impl Summarizable { todo!() }
            },
        ),
    ] {
        let out = tool_attr(args, item);
        let text = out.to_string();
        assert!(!text.contains("compile_error"), "{text}");
        assert!(
            text.contains("summarized") || text.contains("templated"),
            "{text}"
        );
        assert_only_private_paths(out);
    }
}

#[test]
fn tool_impls_reach_the_runtime_only_through_private() {
    let out = tools_attr(
        TokenStream::new(),
        quote! {
            impl Calc {
                /// Ref.
                #[tool(read_only)]
                fn by_ref(&self, #[arg(rename = "x")] a: u8) -> u8 { a }
                /// Shared.
                #[mcp_tool::tool]
                async fn shared(self: std::sync::Arc<Self>) {}
                /// Static.
                #[tool(name = "static")]
                fn assoc(b: u8) -> u8 { b }
                fn not_a_tool(&self) {}
            }
        },
    );
    assert!(!out.to_string().contains("compile_error"), "{out}");
    let text = out.to_string();
    assert!(!text.contains("# [tool"), "{text}");
    assert!(!text.contains("# [mcp_tool :: tool"), "{text}");
    assert!(!text.contains("# [arg"), "{text}");
    assert!(text.contains("pub fn mcp_tools"), "{text}");
    assert_only_private_paths(out);
}

#[test]
fn manual_impls_are_not_registered() {
    let out = tools_attr(
        quote!(manual),
        quote! {
            impl<T: Send + Sync + 'static> Store<T> {
                /// Len.
                #[tool]
                fn len(&self) -> usize { 0 }
            }
        },
    );
    let text = out.to_string();
    assert!(!text.contains("compile_error"), "{text}");
    assert!(!text.contains("inventory"), "{text}");
    assert!(text.contains("pub fn mcp_tools"), "{text}");
}

#[test]
fn the_crate_path_replaces_mcp_tool() {
    let out = tool_attr(
        quote!(crate = ::fw),
        quote! {
            /// Multiply.
            fn multiply(a: f64) -> f64 { a }
        },
    );
    let text = out.to_string();
    assert!(!text.contains("mcp_tool ::"), "{text}");
    assert!(text.contains(":: fw :: __private"), "{text}");
}

#[test]
fn the_fallback_keeps_the_item_and_registers_nothing() {
    let out = tool_attr(
        quote!(nmae = "x"),
        quote! {
            /// Multiply.
            fn multiply(#[arg(description = "a")] a: f64) -> f64 { a }
        },
    );
    let text = out.to_string();
    assert!(text.contains("fn multiply (a : f64) -> f64"), "{text}");
    assert!(text.contains("compile_error"), "{text}");
    assert!(text.contains("did you mean `name`"), "{text}");
    assert!(!text.contains("inventory"), "{text}");
    assert!(!text.contains("# [arg"), "{text}");
}

#[test]
fn the_impl_fallback_strips_the_macros_attributes() {
    let out = tools_attr(
        quote!(),
        quote! {
            impl Calc {
                /// Mutates.
                #[tool]
                fn inc(&mut self, #[arg(default)] n: u8) {}
            }
        },
    );
    let text = out.to_string();
    assert!(text.contains("compile_error"), "{text}");
    assert!(!text.contains("inventory"), "{text}");
    assert!(!text.contains("# [tool"), "{text}");
    assert!(!text.contains("# [arg"), "{text}");
    // Code that registers the impl explicitly keeps compiling.
    assert!(text.contains("pub fn mcp_tools"), "{text}");
}

#[test]
fn all_errors_of_an_item_are_reported_together() {
    let out = tool_attr(
        quote!(name = "a b", read_only, destructive),
        quote! {
            unsafe fn f<T>(x: &str, #[arg(rename = 1)] y: impl Tr) {}
        },
    );
    let errors = out.to_string().matches("compile_error").count();
    // name, missing description, read_only + destructive, unsafe, generic, `&str`,
    // `rename = 1`, `impl Tr`
    assert_eq!(errors, 8, "{out}");
}

#[test]
fn non_functions_are_refused_and_kept() {
    let out = tool_attr(
        quote!(),
        quote!(
            struct S;
        ),
    );
    let text = out.to_string();
    assert!(text.starts_with("struct S ;"), "{text}");
    assert!(text.contains("goes on a function"), "{text}");

    let out = tools_attr(
        quote!(),
        quote!(
            struct S;
        ),
    );
    let text = out.to_string();
    assert!(text.starts_with("struct S ;"), "{text}");
    assert!(text.contains("goes on an inherent impl block"), "{text}");
}

#[test]
fn free_offerings_reach_the_runtime_only_through_private() {
    for (kind, args, item) in [
        (
            Kind::Prompt,
            quote!(title = "T", icons = r#"[{"src": "x"}]"#, scopes = ["a"]),
            quote! {
                /// Greet.
                fn greet(#[arg(description = "d", complete = names)] name: String, n: Maybe<u8>, ctx: Ctx) -> String { name }
            },
        ),
        (
            Kind::Prompt,
            quote!(),
            quote! {
                /// Opaque.
                async fn opaque() -> impl IntoPromptResult { "x" }
            },
        ),
        (
            Kind::Resource,
            quote!(
                "docs://readme",
                mime_type = "text/markdown",
                meta = r#"{"a/b": 1}"#
            ),
            quote! {
                /// Read me.
                async fn readme(ctx: Ctx) -> Fallible<String> { todo!() }
            },
        ),
        (
            Kind::Template,
            quote!("users://{id}/{tab}"),
            quote! {
                /// A tab.
                fn tab(#[arg(complete = ids)] id: u64, #[arg(rename = "tab")] t: String, s: State<X>) -> Json<u8> { todo!() }
            },
        ),
    ] {
        let out = offering_attr(kind, args, item);
        assert!(!out.to_string().contains("compile_error"), "{out}");
        assert_only_private_paths(out);
    }
}

#[test]
fn impl_offerings_are_registered_and_listed() {
    let out = tools_attr(
        TokenStream::new(),
        quote! {
            impl Docs {
                /// Page.
                #[resource_template("docs://{page}")]
                fn page(&self, #[arg(complete = Self::pages)] page: String) -> String { page }
                /// Shared.
                #[mcp_tool::prompt]
                async fn shared(self: std::sync::Arc<Self>) -> String { todo!() }
                /// Static.
                #[resource("docs://static")]
                fn fixed() -> Vec<u8> { todo!() }
                fn pages(&self, typed: &str) -> Vec<String> { todo!() }
            }
        },
    );
    let text = out.to_string();
    assert!(!text.contains("compile_error"), "{text}");
    for gone in [
        "# [resource",
        "# [prompt",
        "# [mcp_tool :: prompt",
        "# [arg",
    ] {
        assert!(!text.contains(gone), "{gone}: {text}");
    }
    assert!(text.contains("pub fn mcp_tools"), "{text}");
    assert!(text.contains("pub fn mcp_offerings"), "{text}");
    assert_eq!(text.matches("inventory :: submit !").count(), 3, "{text}");
    assert_only_private_paths(out);
}

#[test]
fn the_offering_fallback_keeps_the_item_and_registers_nothing() {
    let out = offering_attr(
        Kind::Template,
        quote!("users://{id}", nmae = "x"),
        quote! {
            /// A user.
            fn user(#[arg(complete = ids)] id: u64) -> String { id.to_string() }
        },
    );
    let text = out.to_string();
    assert!(text.contains("fn user (id : u64) -> String"), "{text}");
    assert!(text.contains("did you mean `name`"), "{text}");
    assert!(!text.contains("inventory"), "{text}");

    let out = tools_attr(
        quote!(),
        quote! {
            impl Docs {
                /// Mutates.
                #[prompt]
                fn summarize(&mut self, #[arg(rename = "p")] page: String) -> String { page }
            }
        },
    );
    let text = out.to_string();
    assert!(text.contains("compile_error"), "{text}");
    assert!(!text.contains("inventory"), "{text}");
    assert!(!text.contains("# [prompt"), "{text}");
    assert!(!text.contains("# [arg"), "{text}");
    // Code that gives the offerings explicitly keeps compiling.
    assert!(text.contains("pub fn mcp_offerings"), "{text}");
}
