//! The pipelines of the macros on `proc_macro2` tokens: parse, model, check, then expand or
//! fall back. Kept apart from the `proc_macro` entry points in `lib.rs` so that code outside a
//! proc-macro crate can run them too: the fuzz target `fuzz/fuzz_targets/macro_attr.rs`
//! includes this crate's modules by path, since a proc-macro crate exports nothing else.

use crate::attr::offering::Kind;
use crate::ctxt::Ctxt;
use crate::{ast, attr, check, expand, fallback};

/// `item` as a free function; else what the macro expands to instead: `item` with the error
/// (`not_a_function` if it is another item).
fn free_fn(
    item: proc_macro2::TokenStream,
    not_a_function: impl std::fmt::Display,
) -> Result<syn::ItemFn, proc_macro2::TokenStream> {
    match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Fn(func)) => Ok(func),
        Ok(_) => {
            let error = syn::Error::new(proc_macro2::Span::call_site(), not_a_function);
            Err(fallback::item(item, &error))
        }
        Err(error) => Err(fallback::item(item, &error)),
    }
}

/// `#[tool(args)]` on `item`, a free function.
pub(crate) fn tool_attr(
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let func = match free_fn(item, ast::NOT_A_FUNCTION) {
        Ok(func) => func,
        Err(fallback) => return fallback,
    };
    let cx = Ctxt::new();
    let attrs = attr::Tool::from_args(&cx, args);
    let model = ast::ToolFn::from_item_fn(&cx, &func, attrs);
    check::free_tool(&cx, &model);
    match cx.check() {
        Ok(()) => expand::free_tool(&model, &func),
        Err(error) => fallback::tool_fn(&func, &error),
    }
}

/// `#[prompt(args)]`, `#[resource(args)]` or `#[resource_template(args)]` (`kind`) on
/// `item`, a free function.
pub(crate) fn offering_attr(
    kind: Kind,
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let func = match free_fn(item, ast::not_a_function(kind)) {
        Ok(func) => func,
        Err(fallback) => return fallback,
    };
    let cx = Ctxt::new();
    let attrs = attr::offering::Offering::from_args(&cx, kind, args);
    let model = ast::OfferingFn::from_item_fn(&cx, kind, &func, attrs);
    check::free_offering(&cx, &model);
    match cx.check() {
        Ok(()) => expand::free_offering(&model, &func),
        Err(error) => fallback::tool_fn(&func, &error),
    }
}

/// `#[tools(args)]` on `item`, an inherent impl block.
pub(crate) fn tools_attr(
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let imp = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Impl(imp)) => imp,
        Ok(_) => {
            let error = syn::Error::new(
                proc_macro2::Span::call_site(),
                "`#[tools]` goes on an inherent impl block (`impl Type { … }`)",
            );
            return fallback::item(item, &error);
        }
        Err(error) => return fallback::item(item, &error),
    };
    let cx = Ctxt::new();
    let attrs = attr::Tools::from_args(&cx, args);
    let model = ast::ToolImpl::from_syn(&cx, &imp, attrs);
    check::tool_impl(&cx, &model);
    match cx.check() {
        Ok(()) => expand::tool_impl(&model),
        Err(error) => {
            let krate = model.attrs.krate.as_ref().map(|k| &k.value);
            fallback::tool_impl(&imp, krate, &error)
        }
    }
}
