//! The rules of `#[prompt]`, `#[resource]` and `#[resource_template]` functions that relate
//! several parts of the model: the signature and receiver, the parameters' names (each
//! variable of a template has its parameter, a parameter given `#[arg]` keys of a variable is
//! one), and the offerings of one impl block.
//!
//! Whether a parameter is an argument or a context value, and whether a return type converts,
//! is the compiler's to say, through the runtime's traits.

use super::{fn_signature, owned_param};
use crate::ast::{Description, OfferingFn, ReceiverKind};
use crate::attr::offering::Kind;
use crate::ctxt::Ctxt;

/// A free function under one of the attribute macros.
pub(crate) fn free_offering(cx: &Ctxt, offering: &OfferingFn<'_>) {
    if let Some(receiver) = &offering.receiver {
        cx.error_spanned_by(
            receiver.original.self_token,
            format!(
                "`#[{}]` on a method needs `#[tools]` on the enclosing impl block",
                offering.kind.attr()
            ),
        );
    }
    offering_fn(cx, offering);
}

/// The offerings of one `#[tools]` impl block: each one's rules, and no two of a kind with
/// one name (a prompt's), URI or template.
pub(crate) fn impl_offerings(cx: &Ctxt, offerings: &[OfferingFn<'_>]) {
    let mut keys: Vec<(Kind, String)> = Vec::new();
    for offering in offerings {
        let (key, tokens) = offering.key();
        let what = match offering.kind {
            Kind::Prompt => "prompt name",
            Kind::Resource => "resource URI",
            Kind::Template => "resource template",
        };
        if keys.contains(&(offering.kind, key.clone())) {
            cx.error_spanned_by(
                tokens,
                format!("duplicate {what} `{key}`: another method of this impl block has it"),
            );
        } else {
            keys.push((offering.kind, key));
        }
        if let Some(krate) = &offering.attrs.krate {
            cx.error_spanned_by(
                &krate.key,
                format!(
                    "`crate` goes on the impl block's `#[tools(...)]`, not on a method's `#[{}]`",
                    offering.kind.attr()
                ),
            );
        }
        if let Some(receiver) = &offering.receiver
            && receiver.kind == ReceiverKind::Unsupported
        {
            cx.error_spanned_by(
                receiver.original,
                format!(
                    "a {} shares its service with every request and runs concurrently: take \
                     `&self` (keep mutable state behind a `Mutex`)",
                    offering.kind.noun()
                ),
            );
        }
        offering_fn(cx, offering);
    }
}

/// The rules every prompt, resource and template follows, free function or method.
fn offering_fn(cx: &Ctxt, offering: &OfferingFn<'_>) {
    let noun = offering.kind.noun();
    if let Description::FromMacro(expr) = &offering.description {
        cx.error_spanned_by(
            expr,
            format!(
                "`#[{}]` cannot read a doc comment that a macro expands to: give the {noun}'s \
                 description with `description = \"…\"`",
                offering.kind.attr()
            ),
        );
    }
    fn_signature(
        cx,
        offering.sig,
        noun,
        "it is registered once, with concrete types",
    );
    if offering.output().is_none() {
        let returns = match offering.kind {
            Kind::Prompt => "its messages (`String`, `PromptMessage`, `Vec<PromptMessage>`, …)",
            Kind::Resource | Kind::Template => "its contents (`String`, `Vec<u8>`, `Json<T>`, …)",
        };
        cx.error_spanned_by(
            &offering.sig.ident,
            format!("a {noun} returns {returns}: this function returns nothing"),
        );
    }
    params(cx, offering);
}

fn params(cx: &Ctxt, offering: &OfferingFn<'_>) {
    let mut names: Vec<&str> = Vec::new();
    for param in &offering.params {
        owned_param(cx, param.ty, offering.kind.noun());
        if !param.name.is_empty() {
            if names.contains(&param.name.as_str()) {
                cx.error_spanned_by(
                    param.name_tokens(),
                    format!("duplicate parameter name `{}`", param.name),
                );
            } else {
                names.push(&param.name);
            }
        }
        // Keys only a variable takes, on a parameter that is none: it was meant to be one.
        if offering.kind == Kind::Template
            && !offering.is_variable(param)
            && offering.attrs.target.is_some()
            && let Some(first) = &param.attrs.first
        {
            let tokens = match &param.attrs.rename {
                Some(rename) => quote::ToTokens::to_token_stream(&rename.value),
                None => quote::ToTokens::to_token_stream(first),
            };
            cx.error_spanned_by(
                tokens,
                format!(
                    "`{}` is not a variable of the template: its variables are {}",
                    param.name,
                    list(&offering.attrs.variables)
                ),
            );
        }
    }
    if let (Kind::Template, Some(template)) = (offering.kind, &offering.attrs.target) {
        for variable in &offering.attrs.variables {
            if !offering.params.iter().any(|p| &p.name == variable) {
                cx.error_spanned_by(
                    template,
                    format!(
                        "the template's variable `{variable}` has no parameter: add a parameter \
                         `{variable}`, or give one `#[arg(rename = \"{variable}\")]`"
                    ),
                );
            }
        }
    }
}

/// `` `a`, `b` `` for messages.
fn list(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(", ")
}
