//! What the macros emit when they report errors: the user's item as it was (minus the
//! attributes only the macros understand), followed by the `compile_error!`s.
//!
//! Keeping the item means its callers and the rest of the crate still compile, so the user
//! sees our errors and not a cascade of "cannot find function" ones; and IDEs keep working.
//! Nothing is registered.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{ItemFn, ItemImpl, Path};

use crate::strip;

/// An item the macro could not work with at all (not a function, not an impl block).
pub(crate) fn item(item: TokenStream, error: &syn::Error) -> TokenStream {
    let error = error.to_compile_error();
    quote!(#item #error)
}

/// A `#[tool]` (or `#[prompt]`, `#[resource]`, `#[resource_template]`) function.
pub(crate) fn tool_fn(item: &ItemFn, error: &syn::Error) -> TokenStream {
    let item = strip::tool_fn(item);
    let error = error.to_compile_error();
    quote!(#item #error)
}

/// A `#[tools]` impl block. An inherent impl keeps an (empty) `mcp_tools()`, and an empty
/// `mcp_offerings()` if it has prompts or resources, so code that registers it does not add
/// errors of its own.
pub(crate) fn tool_impl(item: &ItemImpl, krate: Option<&Path>, error: &syn::Error) -> TokenStream {
    let has_offerings = item.items.iter().any(|i| match i {
        syn::ImplItem::Fn(f) => f.attrs.iter().any(|a| {
            matches!(
                crate::attr::marker(a, krate),
                Some(crate::attr::Marker::Offering(_))
            )
        }),
        _ => false,
    });
    let mut item = strip::tool_impl(item, krate);
    if item.trait_.is_none() {
        let krate = crate::expand::krate(krate);
        item.items
            .push(syn::ImplItem::Verbatim(crate::expand::mcp_tools_fn(
                &krate,
                &[],
            )));
        if has_offerings {
            item.items
                .push(syn::ImplItem::Verbatim(crate::expand::mcp_offerings_fn(
                    &krate,
                    &[],
                )));
        }
    }
    let error = error.to_compile_error();
    quote!(#item #error)
}
