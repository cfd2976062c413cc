//! The model of a function or method marked `#[prompt]`, `#[resource]` or
//! `#[resource_template]`: its attribute's keys, its name, description and receiver, and its
//! parameters with their `#[arg]`s.

use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{Attribute, FnArg, ImplItemFn, ItemFn, Pat, PatType, ReturnType, Signature, Type};

use super::{Description, Name, Receiver, find_types};
use crate::attr::offering::{Kind, Offering, OfferingArg};
use crate::ctxt::Ctxt;

/// A function or method marked `#[prompt]`, `#[resource]` or `#[resource_template]`.
pub(crate) struct OfferingFn<'a> {
    pub(crate) kind: Kind,
    /// The keys of its attribute.
    pub(crate) attrs: Offering,
    pub(crate) sig: &'a Signature,
    /// `name = "…"`, or else the function's identifier without `r#`.
    pub(crate) name: Name<'a>,
    /// `description = "…"`, or else the doc comment (optional).
    pub(crate) description: Description<'a>,
    pub(crate) receiver: Option<Receiver<'a>>,
    pub(crate) params: Vec<OfferingParam<'a>>,
}

/// A typed parameter `pat: Ty` of a prompt or a resource.
pub(crate) struct OfferingParam<'a> {
    pub(crate) original: &'a PatType,
    pub(crate) ty: &'a Type,
    /// Its name: `rename`, else the identifier without `r#`, else (a destructuring pattern)
    /// empty.
    pub(crate) name: String,
    /// The keys of its `#[arg(...)]` attributes.
    pub(crate) attrs: OfferingArg,
}

impl<'a> OfferingFn<'a> {
    /// A free function under one of the attribute macros.
    pub(crate) fn from_item_fn(cx: &Ctxt, kind: Kind, item: &'a ItemFn, attrs: Offering) -> Self {
        OfferingFn::from_parts(cx, kind, attrs, &item.attrs, &item.sig)
    }

    /// A method of a `#[tools]` impl block.
    pub(crate) fn from_impl_fn(
        cx: &Ctxt,
        kind: Kind,
        item: &'a ImplItemFn,
        attrs: Offering,
    ) -> Self {
        OfferingFn::from_parts(cx, kind, attrs, &item.attrs, &item.sig)
    }

    fn from_parts(
        cx: &Ctxt,
        kind: Kind,
        attrs: Offering,
        item_attrs: &'a [Attribute],
        sig: &'a Signature,
    ) -> Self {
        let params = sig
            .inputs
            .iter()
            .filter_map(|input| match input {
                FnArg::Typed(p) => Some(OfferingParam::from_syn(cx, kind, p)),
                FnArg::Receiver(_) => None,
            })
            .collect();
        OfferingFn {
            kind,
            name: Name::of(sig, attrs.name.as_ref()),
            description: Description::of(attrs.description.as_ref(), item_attrs),
            receiver: Receiver::of(sig),
            attrs,
            sig,
            params,
        }
    }

    /// What names it among its kind: a prompt's name, a resource's URI, a template; with the
    /// tokens an error about two of them goes on.
    pub(crate) fn key(&self) -> (String, proc_macro2::TokenStream) {
        match (&self.attrs.target, self.kind) {
            (Some(target), Kind::Resource | Kind::Template) => {
                (target.value(), target.to_token_stream())
            }
            _ => {
                let tokens = match &self.attrs.name {
                    Some(name) => name.value.to_token_stream(),
                    None => self.name.ident.to_token_stream(),
                };
                (self.name.value.clone(), tokens)
            }
        }
    }

    /// The return type, `None` for `()` written as nothing.
    pub(crate) fn output(&self) -> Option<&'a Type> {
        match &self.sig.output {
            ReturnType::Default => None,
            ReturnType::Type(_, ty) => Some(ty),
        }
    }

    /// The return type if it can be named: not when it is (or contains) `impl Trait`.
    pub(crate) fn nameable_output(&self) -> Option<&'a Type> {
        self.output().filter(|ty| {
            let mut opaque = Vec::new();
            find_types(ty, &mut opaque, &|t| matches!(t, Type::ImplTrait(_)));
            opaque.is_empty()
        })
    }

    /// Whether `param` is one of the template's variables (never, but for a template).
    pub(crate) fn is_variable(&self, param: &OfferingParam<'_>) -> bool {
        self.kind == Kind::Template && self.attrs.variables.contains(&param.name)
    }
}

impl<'a> OfferingParam<'a> {
    fn from_syn(cx: &Ctxt, kind: Kind, original: &'a PatType) -> Self {
        let attrs = OfferingArg::from_attrs(cx, kind, &original.attrs);
        let name = match (&attrs.rename, &*original.pat) {
            (Some(rename), _) => rename.value.value(),
            (None, Pat::Ident(p)) => p.ident.unraw().to_string(),
            (None, _) => String::new(),
        };
        OfferingParam {
            original,
            ty: &original.ty,
            name,
            attrs,
        }
    }

    /// The tokens an error about the parameter's name goes on: its `rename`, else its pattern.
    pub(crate) fn name_tokens(&self) -> proc_macro2::TokenStream {
        match &self.attrs.rename {
            Some(rename) => rename.value.to_token_stream(),
            None => self.original.pat.to_token_stream(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_named_and_told_apart() {
        let cx = Ctxt::new();
        let f: ItemFn = syn::parse_quote! {
            fn profile(#[arg(rename = "id")] user: u64, r#type: String, ctx: Ctx) -> String {}
        };
        let attrs = Offering::from_args(&cx, Kind::Template, quote::quote!("users://{id}/{type}"));
        let model = OfferingFn::from_item_fn(&cx, Kind::Template, &f, attrs);
        cx.check().unwrap();
        let names: Vec<&str> = model.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["id", "type", "ctx"]);
        let variables: Vec<bool> = model.params.iter().map(|p| model.is_variable(p)).collect();
        assert_eq!(variables, [true, true, false]);
        assert_eq!(model.key().0, "users://{id}/{type}");
        assert_eq!(model.name.value, "profile");
    }
}
