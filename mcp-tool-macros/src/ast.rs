//! The model of what the macros were given: tool functions, their parameters and receivers,
//! and `#[tools]` impl blocks (prompts and resources are modelled in `offering`).
//!
//! Every node borrows the `syn` tree it came from, so checks can put their errors on the
//! user's own tokens. Building the model reports only what parsing the macros' attributes
//! finds; the rules that relate several parts live in `check`.

use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{
    Attribute, FnArg, GenericArgument, Ident, ImplItem, ImplItemFn, ItemFn, ItemImpl, LitStr, Pat,
    PatType, PathArguments, ReturnType, Signature, Type,
};

use crate::attr::{self, Marker};
use crate::ctxt::Ctxt;
use crate::doc;

pub(crate) mod offering;

pub(crate) use offering::{OfferingFn, OfferingParam};

/// A function or method marked `#[tool]`.
pub(crate) struct ToolFn<'a> {
    /// The keys of its `#[tool(...)]`.
    pub(crate) attrs: attr::Tool,
    pub(crate) sig: &'a Signature,
    pub(crate) name: Name<'a>,
    /// `description = "…"`, or else the doc comment.
    pub(crate) description: Description<'a>,
    pub(crate) receiver: Option<Receiver<'a>>,
    pub(crate) params: Vec<Param<'a>>,
}

/// A tool's description.
pub(crate) enum Description<'a> {
    /// `description = "…"`, or the doc comment's text.
    Text(LitStr),
    /// Neither.
    Missing,
    /// No `description`, and a doc comment given by a macro (`#[doc = include_str!(…)]`),
    /// whose text a macro cannot see.
    FromMacro(&'a syn::Expr),
}

/// A tool's name: `name = "…"`, or else the function's identifier without `r#`.
pub(crate) struct Name<'a> {
    pub(crate) value: String,
    pub(crate) ident: &'a Ident,
}

/// A method's `self` parameter.
pub(crate) struct Receiver<'a> {
    pub(crate) original: &'a syn::Receiver,
    pub(crate) kind: ReceiverKind,
}

impl<'a> Description<'a> {
    /// `description = "…"` if given, else the doc comment among `item_attrs`.
    fn of(key: Option<&attr::Setting<LitStr>>, item_attrs: &'a [Attribute]) -> Self {
        match key {
            Some(d) => Description::Text(d.value.clone()),
            None => match doc::description(item_attrs) {
                doc::Doc::Text(text, span) => Description::Text(LitStr::new(&text, span)),
                doc::Doc::None => Description::Missing,
                doc::Doc::Unreadable(expr) => Description::FromMacro(expr),
            },
        }
    }
}

impl<'a> Name<'a> {
    /// `name = "…"` if given, else the function's identifier without `r#`.
    fn of(sig: &'a Signature, key: Option<&attr::Setting<LitStr>>) -> Self {
        Name {
            value: key.map_or_else(|| sig.ident.unraw().to_string(), |n| n.value.value()),
            ident: &sig.ident,
        }
    }
}

impl<'a> Receiver<'a> {
    /// The `self` parameter of `sig`, if it has one.
    fn of(sig: &'a Signature) -> Option<Self> {
        sig.receiver().map(|r| Receiver {
            original: r,
            kind: receiver_kind(r),
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReceiverKind {
    /// `&self` or `self: &Self`.
    Ref,
    /// `self: Arc<Self>` (any path ending in `Arc<Self>`).
    Arc,
    /// Anything a shared service cannot give: `&mut self`, `self`, `self: Box<Self>`, ….
    Unsupported,
}

/// A typed parameter `pat: Ty`.
pub(crate) struct Param<'a> {
    pub(crate) original: &'a PatType,
    pub(crate) ty: &'a Type,
    /// The argument's name in the input schema: `rename`, else the identifier without `r#`,
    /// else (a destructuring pattern such as `Args(x)`) empty.
    pub(crate) name: String,
    /// The keys of its `#[arg(...)]` attributes.
    pub(crate) attrs: attr::Arg,
}

/// An impl block marked `#[tools]`.
pub(crate) struct ToolImpl<'a> {
    pub(crate) original: &'a ItemImpl,
    pub(crate) attrs: attr::Tools,
    /// The methods marked `#[tool]`, in order.
    pub(crate) tools: Vec<ToolFn<'a>>,
    /// The methods marked `#[prompt]`, `#[resource]` or `#[resource_template]`, in order.
    pub(crate) offerings: Vec<OfferingFn<'a>>,
}

impl<'a> ToolFn<'a> {
    /// A free function under the `#[tool]` attribute macro.
    pub(crate) fn from_item_fn(cx: &Ctxt, item: &'a ItemFn, attrs: attr::Tool) -> Self {
        ToolFn::from_parts(cx, attrs, &item.attrs, &item.sig)
    }

    /// A method of a `#[tools]` impl block.
    pub(crate) fn from_impl_fn(cx: &Ctxt, item: &'a ImplItemFn, attrs: attr::Tool) -> Self {
        ToolFn::from_parts(cx, attrs, &item.attrs, &item.sig)
    }

    fn from_parts(
        cx: &Ctxt,
        attrs: attr::Tool,
        item_attrs: &'a [Attribute],
        sig: &'a Signature,
    ) -> Self {
        let params = sig
            .inputs
            .iter()
            .filter_map(|input| match input {
                FnArg::Typed(p) => Some(Param::from_syn(cx, p)),
                FnArg::Receiver(_) => None,
            })
            .collect();
        ToolFn {
            name: Name::of(sig, attrs.name.as_ref()),
            description: Description::of(attrs.description.as_ref(), item_attrs),
            receiver: Receiver::of(sig),
            attrs,
            sig,
            params,
        }
    }

    /// The tokens an error about the name goes on: the `name = "…"` literal, else the
    /// function's identifier.
    pub(crate) fn name_tokens(&self) -> proc_macro2::TokenStream {
        match &self.attrs.name {
            Some(name) => name.value.to_token_stream(),
            None => self.name.ident.to_token_stream(),
        }
    }

    /// The return type, `None` for `()` written as nothing.
    pub(crate) fn output(&self) -> Option<&'a Type> {
        match &self.sig.output {
            ReturnType::Default => None,
            ReturnType::Type(_, ty) => Some(ty),
        }
    }

    /// Whether the return type can name its output schema: not when it is (or contains)
    /// `impl Trait`, which cannot be written as a type argument.
    pub(crate) fn has_output_schema(&self) -> bool {
        self.output().is_some_and(|ty| {
            let mut opaque = Vec::new();
            find_types(ty, &mut opaque, &|t| matches!(t, Type::ImplTrait(_)));
            opaque.is_empty()
        })
    }
}

impl<'a> Param<'a> {
    fn from_syn(cx: &Ctxt, original: &'a PatType) -> Self {
        let attrs = attr::Arg::from_attrs(cx, &original.attrs);
        let name = match (&attrs.rename, &*original.pat) {
            (Some(rename), _) => rename.value.value(),
            (None, Pat::Ident(p)) => p.ident.unraw().to_string(),
            (None, _) => String::new(),
        };
        Param {
            original,
            ty: &original.ty,
            name,
            attrs,
        }
    }
}

impl<'a> ToolImpl<'a> {
    pub(crate) fn from_syn(cx: &Ctxt, original: &'a ItemImpl, attrs: attr::Tools) -> Self {
        let krate = attrs.krate.as_ref().map(|k| &k.value);
        let mut tools = Vec::new();
        let mut offerings = Vec::new();
        for item in &original.items {
            let item_attrs: &[Attribute] = match item {
                ImplItem::Fn(f) => &f.attrs,
                ImplItem::Const(c) => &c.attrs,
                ImplItem::Type(t) => &t.attrs,
                ImplItem::Macro(m) => &m.attrs,
                _ => &[],
            };
            let mut marks = item_attrs
                .iter()
                .filter_map(|a| attr::marker(a, krate).map(|m| (m, a)));
            let Some((marker, first)) = marks.next() else {
                continue;
            };
            for (other, extra) in marks {
                if other == marker {
                    cx.error_spanned_by(
                        extra,
                        format!("`#[{}]` specified more than once", marker.attr()),
                    );
                } else {
                    cx.error_spanned_by(
                        extra,
                        format!(
                            "a method is one tool, prompt, resource or resource template: \
                             `#[{}]` cannot go with `#[{}]`",
                            other.attr(),
                            marker.attr()
                        ),
                    );
                }
            }
            match (item, marker) {
                (ImplItem::Fn(f), Marker::Tool) => {
                    let tool_attrs = attr::Tool::from_attr(cx, first);
                    tools.push(ToolFn::from_impl_fn(cx, f, tool_attrs));
                }
                (ImplItem::Fn(f), Marker::Offering(kind)) => {
                    let offering_attrs = attr::offering::Offering::from_attr(cx, kind, first);
                    offerings.push(OfferingFn::from_impl_fn(cx, kind, f, offering_attrs));
                }
                (_, Marker::Tool) => cx.error_spanned_by(first, NOT_A_FUNCTION),
                (_, Marker::Offering(kind)) => cx.error_spanned_by(first, not_a_function(kind)),
            }
        }
        ToolImpl {
            original,
            attrs,
            tools,
            offerings,
        }
    }
}

/// The message for `#[tool]` on something that is not a function.
pub(crate) const NOT_A_FUNCTION: &str =
    "`#[tool]` goes on a function, or on a method inside a `#[tools]` impl block";

/// The message for `#[prompt]`, `#[resource]` or `#[resource_template]` on something that is
/// not a function.
pub(crate) fn not_a_function(kind: attr::offering::Kind) -> String {
    format!(
        "`#[{}]` goes on a function, or on a method inside a `#[tools]` impl block",
        kind.attr()
    )
}

fn receiver_kind(r: &syn::Receiver) -> ReceiverKind {
    let ty = match &r.kind {
        // `&self` / `&mut self`
        syn::ReceiverKind::Reference(_, _, mutability) => {
            return if mutability.is_none() {
                ReceiverKind::Ref
            } else {
                ReceiverKind::Unsupported
            };
        }
        // `self: Type`
        syn::ReceiverKind::Typed(_, ty) => ty,
        // `self` / `mut self`, and any other form
        _ => return ReceiverKind::Unsupported,
    };
    match &**ty {
        Type::Reference(rf) if rf.mutability.is_none() && is_self(&rf.elem) => ReceiverKind::Ref,
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last();
            let arc_of_self = last.is_some_and(|seg| {
                seg.ident == "Arc"
                    && match &seg.arguments {
                        PathArguments::AngleBracketed(args) => {
                            args.args.len() == 1
                                && matches!(&args.args[0], GenericArgument::Type(t) if is_self(t))
                        }
                        _ => false,
                    }
            });
            if arc_of_self {
                ReceiverKind::Arc
            } else {
                ReceiverKind::Unsupported
            }
        }
        _ => ReceiverKind::Unsupported,
    }
}

fn is_self(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => p.qself.is_none() && p.path.is_ident("Self"),
        Type::Group(g) => is_self(&g.elem),
        Type::Paren(p) => is_self(&p.elem),
        _ => false,
    }
}

/// Collects the types within `ty` (itself included) for which `pred` holds, looking through
/// type arguments, tuples, arrays, slices and pointers, and not into what it collects.
pub(crate) fn find_types<'t>(
    ty: &'t Type,
    found: &mut Vec<&'t Type>,
    pred: &dyn Fn(&Type) -> bool,
) {
    if pred(ty) {
        found.push(ty);
        return;
    }
    match ty {
        Type::Path(p) => {
            if let Some(q) = &p.qself {
                find_types(&q.ty, found, pred);
            }
            for seg in &p.path.segments {
                if let PathArguments::AngleBracketed(args) = &seg.arguments {
                    for arg in &args.args {
                        match arg {
                            GenericArgument::Type(t) => find_types(t, found, pred),
                            GenericArgument::AssocType(a) => find_types(&a.ty, found, pred),
                            _ => {}
                        }
                    }
                }
            }
        }
        Type::Tuple(t) => {
            for elem in &t.elems {
                find_types(elem, found, pred);
            }
        }
        Type::Array(a) => find_types(&a.elem, found, pred),
        Type::Slice(s) => find_types(&s.elem, found, pred),
        Type::Paren(p) => find_types(&p.elem, found, pred),
        Type::Group(g) => find_types(&g.elem, found, pred),
        Type::Ptr(p) => find_types(&p.elem, found, pred),
        Type::Reference(r) => find_types(&r.elem, found, pred),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(sig: proc_macro2::TokenStream) -> ReceiverKind {
        let f: ImplItemFn = syn::parse2(quote::quote!(#sig {})).unwrap();
        receiver_kind(f.sig.receiver().unwrap())
    }

    #[test]
    fn receivers() {
        use ReceiverKind::{Arc, Ref, Unsupported};
        assert!(kind(quote::quote!(fn f(&self))) == Ref);
        assert!(kind(quote::quote!(fn f(self: &Self))) == Ref);
        assert!(kind(quote::quote!(fn f(self: Arc<Self>))) == Arc);
        assert!(kind(quote::quote!(fn f(self: std::sync::Arc<Self>))) == Arc);
        assert!(kind(quote::quote!(fn f(mut self: ::std::sync::Arc<Self>))) == Arc);
        assert!(kind(quote::quote!(fn f(&mut self))) == Unsupported);
        assert!(kind(quote::quote!(fn f(self))) == Unsupported);
        assert!(kind(quote::quote!(fn f(mut self))) == Unsupported);
        assert!(kind(quote::quote!(fn f(self: &mut Self))) == Unsupported);
        assert!(kind(quote::quote!(fn f(self: Box<Self>))) == Unsupported);
        assert!(kind(quote::quote!(fn f(self: Arc<Other>))) == Unsupported);
    }

    #[test]
    fn param_names() {
        let cx = Ctxt::new();
        let f: ItemFn = syn::parse_quote! {
            fn f(a: u8, r#type: u8, mut m: u8, #[arg(rename = "x")] b: u8, Args(s): Args<S>) {}
        };
        let tool = ToolFn::from_item_fn(&cx, &f, attr::Tool::default());
        cx.check().unwrap();
        let names: Vec<&str> = tool.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["a", "type", "m", "x", ""]);
        assert_eq!(tool.name.value, "f");
    }

    #[test]
    fn raw_fn_names_lose_their_prefix() {
        let cx = Ctxt::new();
        let f: ItemFn = syn::parse_quote!(
            fn r#match() {}
        );
        let tool = ToolFn::from_item_fn(&cx, &f, attr::Tool::default());
        cx.check().unwrap();
        assert_eq!(tool.name.value, "match");
    }

    #[test]
    fn output_schema_needs_a_nameable_type() {
        let cx = Ctxt::new();
        for (f, expected) in [
            (
                quote::quote!(
                    fn f() {}
                ),
                false,
            ),
            (
                quote::quote!(
                    fn f() -> u8 {
                        0
                    }
                ),
                true,
            ),
            (
                quote::quote!(
                    fn f() -> impl Tr {
                        0
                    }
                ),
                false,
            ),
            (
                quote::quote!(
                    fn f() -> Result<impl Tr, E> {
                        0
                    }
                ),
                false,
            ),
        ] {
            let item: ItemFn = syn::parse2(f.clone()).unwrap();
            let tool = ToolFn::from_item_fn(&cx, &item, attr::Tool::default());
            assert_eq!(tool.has_output_schema(), expected, "{f}");
        }
        cx.check().unwrap();
    }

    #[test]
    fn finds_nested_references() {
        let ty: Type = syn::parse_quote!(Option<(Vec<&str>, [&u8; 2], impl Tr)>);
        let mut found = Vec::new();
        find_types(&ty, &mut found, &|t| {
            matches!(t, Type::Reference(_) | Type::ImplTrait(_))
        });
        let found: Vec<String> = found
            .iter()
            .map(|t| attr::tokens_to_code(quote::quote!(#t)))
            .collect();
        assert_eq!(found, ["&str", "&u8", "impl Tr"]);
    }
}
