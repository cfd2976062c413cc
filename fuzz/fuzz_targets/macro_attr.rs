//! The macros' attribute parser and pipeline: arbitrary token streams as the arguments of
//! `#[tool(...)]`, `#[arg(...)]` and `#[tools(...)]`, and as a whole item, run through the
//! same parse–model–check–expand pipeline as the proc macros. A proc-macro crate exports
//! nothing but its macros, so its modules are included here by path (its `entry` module holds
//! the pipeline, apart from the `proc_macro` entry points); `proc_macro2` runs outside a
//! compiler with its own lexer.
//!
//! The oracle: no panic, and the output always parses as Rust items (either the expansion or
//! the item again with `compile_error!`s).
#![no_main]
#![allow(dead_code, unreachable_pub)]

/// The macros crate's modules, found where that crate finds them (so `attr`'s own
/// `attr/value.rs` is too).
#[path = "../../mcp-tool-macros/src"]
mod macros {
    pub(crate) mod ast;
    pub(crate) mod attr;
    pub(crate) mod check;
    pub(crate) mod ctxt;
    pub(crate) mod doc;
    pub(crate) mod entry;
    pub(crate) mod expand;
    pub(crate) mod fallback;
    pub(crate) mod strip;
}

use macros::{ast, attr, check, ctxt, doc, entry, expand, fallback, strip};

use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use proc_macro2::TokenStream;

/// Parses `text` as tokens, `None` if it does not lex.
fn tokens(text: &str) -> Option<TokenStream> {
    TokenStream::from_str(text).ok()
}

/// The output of a macro on an item must be Rust items. (On tokens that are no item, the
/// fallback gives them back as they were, with the error: no items either.)
fn check(output: TokenStream, what: &str, input: &str, item: &TokenStream) {
    if syn::parse2::<syn::Item>(item.clone()).is_err() {
        return;
    }
    if let Err(e) = syn::parse2::<syn::File>(output.clone()) {
        panic!("{what} on {input:?} gave output that is no items ({e}): {output}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    // The text goes where the mode says: a parenthesised argument list must stay one.
    let wrapped = |s: String| tokens(&s);
    match mode % 5 {
        0 => {
            let Some(args) = tokens(text) else { return };
            let item = quote::quote! {
                /// Add.
                fn add(a: i64, #[arg(description = "b")] b: Option<u8>) -> i64 { a }
            };
            check(
                entry::tool_attr(args, item.clone()),
                "#[tool(…)]",
                text,
                &item,
            );
        }
        1 => {
            let Some(item) = wrapped(format!(
                "/// Add.\nasync fn add(#[arg({text})] a: i64, ctx: Ctx) -> String {{ String::new() }}"
            )) else {
                return;
            };
            check(
                entry::tool_attr(TokenStream::new(), item.clone()),
                "#[arg(…)]",
                text,
                &item,
            );
        }
        2 => {
            let Some(args) = tokens(text) else { return };
            let item = quote::quote! {
                impl Counter {
                    /// Get.
                    #[tool(read_only)]
                    fn get(&self) -> u64 { 0 }
                }
            };
            check(
                entry::tools_attr(args, item.clone()),
                "#[tools(…)]",
                text,
                &item,
            );
        }
        3 => {
            let Some(item) = wrapped(format!(
                "impl Counter {{\n/// Add.\n#[tool({text})]\nasync fn add(&self, n: u64) -> u64 {{ n }}\n}}"
            )) else {
                return;
            };
            check(
                entry::tools_attr(TokenStream::new(), item.clone()),
                "a method's #[tool(…)]",
                text,
                &item,
            );
        }
        _ => {
            let Some(item) = tokens(text) else { return };
            check(
                entry::tool_attr(TokenStream::new(), item.clone()),
                "#[tool] on an item",
                text,
                &item,
            );
            check(
                entry::tools_attr(TokenStream::new(), item.clone()),
                "#[tools] on an item",
                text,
                &item,
            );
        }
    }
});
