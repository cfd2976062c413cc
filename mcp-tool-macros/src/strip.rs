//! Removal of the attributes the macros consume (`#[tool]`, `#[prompt]`, `#[resource]` and
//! `#[resource_template]` on methods, `#[arg]` on parameters), which the compiler would
//! otherwise reject as unknown. Used both for the
//! expansion and for the fallback output, so the user's item compiles either way.

use syn::{FnArg, ImplItem, ItemFn, ItemImpl, Path, Signature};

use crate::attr;

/// A tool (or prompt, or resource) function without its parameters' `#[arg]` attributes.
pub(crate) fn tool_fn(item: &ItemFn) -> ItemFn {
    let mut item = item.clone();
    arg_attrs(&mut item.sig);
    item
}

/// An impl block without its `#[tool]` (`#[prompt]`, …) attributes, and without `#[arg]` on
/// the parameters of the methods that had one.
pub(crate) fn tool_impl(item: &ItemImpl, krate: Option<&Path>) -> ItemImpl {
    let mut item = item.clone();
    for impl_item in &mut item.items {
        let attrs = match impl_item {
            ImplItem::Fn(f) => {
                if f.attrs.iter().any(|a| attr::marker(a, krate).is_some()) {
                    arg_attrs(&mut f.sig);
                }
                &mut f.attrs
            }
            ImplItem::Const(c) => &mut c.attrs,
            ImplItem::Type(t) => &mut t.attrs,
            ImplItem::Macro(m) => &mut m.attrs,
            _ => continue,
        };
        attrs.retain(|a| attr::marker(a, krate).is_none());
    }
    item
}

fn arg_attrs(sig: &mut Signature) {
    for input in &mut sig.inputs {
        if let FnArg::Typed(param) = input {
            param.attrs.retain(|a| !attr::is_arg_attr(a));
        }
    }
}
