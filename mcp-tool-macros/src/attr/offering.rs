//! `#[prompt(...)]`, `#[resource("uri", ...)]`, `#[resource_template("template", ...)]`, and
//! the `#[arg(...)]` of their parameters.
//!
//! A resource's URI, or a template, comes first, as a string literal; it is checked here (a
//! scheme; a template's variables, see `template`). The keys mirror what the runtime's
//! builders offer (`Prompt`, `Resource`, `ResourceTemplate`): a name, a title, a description,
//! icons and OAuth scopes, and for resources a MIME type and `_meta`.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::{Attribute, LitStr, Meta, Path};

use super::template;
use super::value::{Key, Value};
use super::{KeyDef, Keys, Setting, is_arg_attr, parse_args, parse_key};
use crate::ctxt::Ctxt;

/// Which of the three macros.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Prompt,
    Resource,
    Template,
}

impl Kind {
    /// The attribute's name.
    pub(crate) fn attr(self) -> &'static str {
        match self {
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
            Kind::Template => "resource_template",
        }
    }

    /// What it defines, for messages.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
            Kind::Template => "resource template",
        }
    }
}

/// The keys of `#[prompt]`, `#[resource]` and `#[resource_template]` (each takes those its
/// table lists).
#[derive(Default)]
pub(crate) struct Offering {
    /// A resource's URI, or a template (the first, unnamed argument), if given and well
    /// formed.
    pub(crate) target: Option<LitStr>,
    /// A template's variables, in order, if it is well formed.
    pub(crate) variables: Vec<String>,
    pub(crate) name: Option<Setting<LitStr>>,
    pub(crate) title: Option<Setting<LitStr>>,
    pub(crate) description: Option<Setting<LitStr>>,
    pub(crate) mime_type: Option<Setting<LitStr>>,
    pub(crate) icons: Option<Setting<LitStr>>,
    pub(crate) meta: Option<Setting<LitStr>>,
    pub(crate) scopes: Option<Setting<Vec<LitStr>>>,
    pub(crate) krate: Option<Setting<Path>>,
}

/// `#[prompt(...)]`'s keys.
#[derive(Default)]
struct PromptKeys(Offering);

/// `#[resource(...)]`'s and `#[resource_template(...)]`'s keys.
#[derive(Default)]
struct ResourceKeys<const TEMPLATE: bool>(Offering);

/// The keys `#[prompt]`, `#[resource]` and `#[resource_template]` parse alike, into the
/// `Offering` their keys type wraps.
trait OfferingKeys: Sized + 'static {
    fn offering(&mut self) -> &mut Offering;

    const NAME_KEY: KeyDef<Self> = KeyDef {
        name: "name",
        parse: |o, cx, k, v| o.offering().name = k.non_empty_string(cx, v),
    };
    const TITLE_KEY: KeyDef<Self> = KeyDef {
        name: "title",
        parse: |o, cx, k, v| o.offering().title = k.non_empty_string(cx, v),
    };
    const DESCRIPTION_KEY: KeyDef<Self> = KeyDef {
        name: "description",
        parse: |o, cx, k, v| o.offering().description = k.non_empty_string(cx, v),
    };
    const ICONS_KEY: KeyDef<Self> = KeyDef {
        name: "icons",
        parse: |o, cx, k, v| o.offering().icons = k.icons(cx, v),
    };
    const SCOPES_KEY: KeyDef<Self> = KeyDef {
        name: "scopes",
        parse: |o, cx, k, v| o.offering().scopes = k.scopes(cx, v),
    };
    const CRATE_KEY: KeyDef<Self> = KeyDef {
        name: "crate",
        parse: |o, cx, k, v| o.offering().krate = k.path(cx, v),
    };
}

impl OfferingKeys for PromptKeys {
    fn offering(&mut self) -> &mut Offering {
        &mut self.0
    }
}

impl<const TEMPLATE: bool> OfferingKeys for ResourceKeys<TEMPLATE> {
    fn offering(&mut self) -> &mut Offering {
        &mut self.0
    }
}

impl Keys for PromptKeys {
    const NAME: &'static str = "prompt";
    const KEYS: &'static [KeyDef<Self>] = &[
        Self::NAME_KEY,
        Self::TITLE_KEY,
        Self::DESCRIPTION_KEY,
        Self::ICONS_KEY,
        Self::SCOPES_KEY,
        Self::CRATE_KEY,
    ];
}

impl<const TEMPLATE: bool> Keys for ResourceKeys<TEMPLATE> {
    const NAME: &'static str = if TEMPLATE {
        "resource_template"
    } else {
        "resource"
    };
    const KEYS: &'static [KeyDef<Self>] = &[
        Self::NAME_KEY,
        Self::TITLE_KEY,
        Self::DESCRIPTION_KEY,
        KeyDef {
            name: "mime_type",
            parse: |o, cx, k, v| o.0.mime_type = mime_type(cx, k, v),
        },
        Self::ICONS_KEY,
        KeyDef {
            name: "meta",
            parse: |o, cx, k, v| o.0.meta = k.meta(cx, v),
        },
        Self::SCOPES_KEY,
        Self::CRATE_KEY,
    ];
}

/// `mime_type = "type/subtype"`.
fn mime_type(cx: &Ctxt, key: &Key<'_>, value: Value) -> Option<Setting<LitStr>> {
    let setting = key.non_empty_string(cx, value)?;
    let text = setting.value.value();
    let (kind, sub) = text.split_once('/').unwrap_or_default();
    if kind.is_empty() || sub.is_empty() || text.chars().any(char::is_whitespace) {
        cx.error_spanned_by(
            &setting.value,
            format!("`{text}` is no MIME type: write `type/subtype`, such as `\"text/markdown\"`"),
        );
        return None;
    }
    Some(setting)
}

impl Offering {
    /// Parses the arguments of `#[prompt(...)]`, `#[resource(...)]` or
    /// `#[resource_template(...)]` on a free function (the attribute macro's input).
    pub(crate) fn from_args(cx: &Ctxt, kind: Kind, args: TokenStream) -> Offering {
        parse(cx, kind, args, Span::call_site())
    }

    /// Parses one of these attributes on a method inside a `#[tools]` impl block.
    pub(crate) fn from_attr(cx: &Ctxt, kind: Kind, attr: &Attribute) -> Offering {
        let span = attr
            .path()
            .segments
            .last()
            .map_or_else(Span::call_site, |s| s.ident.span());
        match &attr.meta {
            Meta::Path(_) => parse(cx, kind, TokenStream::new(), span),
            Meta::List(list) => parse(cx, kind, list.tokens.clone(), span),
            Meta::NameValue(nv) => {
                cx.error_spanned_by(nv.eq_token, format!("expected `#[{}(...)]`", kind.attr()));
                Offering::default()
            }
        }
    }
}

/// Parses an attribute's arguments: the URI or template first (a resource's), then the keys.
/// `span` is where an error about a missing URI goes.
fn parse(cx: &Ctxt, kind: Kind, args: TokenStream, span: Span) -> Offering {
    let (first, rest) = split_first(args);
    let mut offering = match kind {
        Kind::Prompt => {
            if let Some(lit) = &first {
                cx.error_spanned_by(
                    lit,
                    "`#[prompt]` takes no URI: its name is the function's, or `name = \"…\"`",
                );
            }
            let mut keys = PromptKeys::default();
            parse_args(cx, &mut keys, rest);
            return keys.0;
        }
        Kind::Resource => {
            let mut keys = ResourceKeys::<false>::default();
            parse_args(cx, &mut keys, rest);
            keys.0
        }
        Kind::Template => {
            let mut keys = ResourceKeys::<true>::default();
            parse_args(cx, &mut keys, rest);
            keys.0
        }
    };
    let Some(lit) = first else {
        let (what, example) = match kind {
            Kind::Template => ("URI template", "users://{id}/profile"),
            _ => ("URI", "docs://readme"),
        };
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "`#[{}]` needs the {what} first: `#[{}(\"{example}\")]`",
                kind.attr(),
                kind.attr()
            ),
        ));
        return offering;
    };
    let text = lit.value();
    let problem = match kind {
        Kind::Template => template::scheme_problem(&text)
            .map(Err)
            .unwrap_or_else(|| template::variables(&text)),
        _ => template::uri_problem(&text).map_or(Ok(Vec::new()), Err),
    };
    match problem {
        Ok(variables) => {
            offering.variables = variables;
            offering.target = Some(lit);
        }
        Err(problem) => cx.error_spanned_by(&lit, problem),
    }
    offering
}

/// Splits a leading string literal (and the comma after it) from the rest of the arguments.
fn split_first(args: TokenStream) -> (Option<LitStr>, TokenStream) {
    let mut tokens = args.clone().into_iter();
    let Some(TokenTree::Literal(first)) = tokens.next() else {
        return (None, args);
    };
    let Ok(lit) = syn::parse2::<LitStr>(first.into_token_stream()) else {
        return (None, args);
    };
    let mut rest: Vec<TokenTree> = tokens.collect();
    match rest.first() {
        Some(TokenTree::Punct(p)) if p.as_char() == ',' => {
            rest.remove(0);
        }
        None => {}
        // Something else follows the literal: leave it all to the key parser, which reports it.
        Some(_) => return (None, args),
    }
    (Some(lit), rest.into_iter().collect())
}

/// `#[arg(...)]` on a parameter of a prompt or a resource template; several add up.
#[derive(Default)]
pub(crate) struct OfferingArg {
    pub(crate) description: Option<Setting<LitStr>>,
    pub(crate) rename: Option<Setting<LitStr>>,
    /// The function completing the argument or variable (`completion/complete`).
    pub(crate) complete: Option<Setting<Path>>,
    /// The first `#[arg]`, for errors about the attribute as a whole.
    pub(crate) first: Option<Attribute>,
}

/// A prompt argument's `#[arg]` keys.
#[derive(Default)]
struct PromptArgKeys(OfferingArg);

/// A template variable's `#[arg]` keys.
#[derive(Default)]
struct VariableArgKeys(OfferingArg);

impl Keys for PromptArgKeys {
    const NAME: &'static str = "arg";
    const KEYS: &'static [KeyDef<Self>] = &[
        KeyDef {
            name: "description",
            parse: |a, cx, k, v| a.0.description = k.non_empty_string(cx, v),
        },
        KeyDef {
            name: "rename",
            parse: |a, cx, k, v| a.0.rename = k.non_empty_string(cx, v),
        },
        KeyDef {
            name: "complete",
            parse: |a, cx, k, v| a.0.complete = function(cx, k, v),
        },
    ];
}

impl Keys for VariableArgKeys {
    const NAME: &'static str = "arg";
    const KEYS: &'static [KeyDef<Self>] = &[
        KeyDef {
            name: "rename",
            parse: |a, cx, k, v| a.0.rename = k.non_empty_string(cx, v),
        },
        KeyDef {
            name: "complete",
            parse: |a, cx, k, v| a.0.complete = function(cx, k, v),
        },
    ];
}

impl OfferingArg {
    /// Parses every `#[arg(...)]` among the attributes of a parameter of a `kind` function.
    /// A fixed resource's parameters are context values, which take none.
    pub(crate) fn from_attrs(cx: &Ctxt, kind: Kind, attrs: &[Attribute]) -> OfferingArg {
        let first = attrs.iter().find(|a| is_arg_attr(a)).cloned();
        let mut arg = match kind {
            Kind::Prompt => parse_arg_attrs::<PromptArgKeys>(cx, attrs).0,
            Kind::Template => parse_arg_attrs::<VariableArgKeys>(cx, attrs).0,
            Kind::Resource => {
                if let Some(attr) = &first {
                    cx.error_spanned_by(
                        attr,
                        "the parameters of a resource with a fixed URI are context values: \
                         `#[arg]` has nothing to set on them",
                    );
                }
                OfferingArg::default()
            }
        };
        arg.first = first;
        arg
    }
}

fn parse_arg_attrs<B: Keys + Default>(cx: &Ctxt, attrs: &[Attribute]) -> B {
    let mut keys = B::default();
    let mut seen = Vec::new();
    let mut order = 0;
    for attr in attrs.iter().filter(|a| is_arg_attr(a)) {
        let result =
            attr.parse_nested_meta(|meta| parse_key(cx, &mut keys, &mut seen, &mut order, &meta));
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    keys
}

/// `key = path::to::function`.
fn function(cx: &Ctxt, key: &Key<'_>, value: Value) -> Option<Setting<Path>> {
    let expected = || {
        format!(
            "expected a path to a function: `{} = path::to::fn`",
            key.name
        )
    };
    let tokens = key.assigned(cx, value, expected)?;
    match syn::parse2::<Path>(tokens.clone()) {
        Ok(path) => Some(key.setting(path)),
        Err(_) => {
            cx.error_spanned_by(tokens, expected());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(cx: Ctxt) -> Vec<String> {
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn a_resource_takes_its_uri_first() {
        let cx = Ctxt::new();
        let r = Offering::from_args(
            &cx,
            Kind::Resource,
            quote::quote!(
                "docs://readme",
                mime_type = "text/markdown",
                name = "readme"
            ),
        );
        assert!(errors(cx).is_empty());
        assert_eq!(r.target.unwrap().value(), "docs://readme");
        assert_eq!(r.mime_type.unwrap().value.value(), "text/markdown");
        assert_eq!(r.name.unwrap().value.value(), "readme");
    }

    #[test]
    fn a_template_gives_its_variables() {
        let cx = Ctxt::new();
        let t = Offering::from_args(&cx, Kind::Template, quote::quote!("users://{id}/{tab}"));
        assert!(errors(cx).is_empty());
        assert_eq!(t.variables, ["id", "tab"]);
    }

    #[test]
    fn bad_attributes_are_each_reported() {
        let cx = Ctxt::new();
        let _ = Offering::from_args(&cx, Kind::Resource, quote::quote!(mime_type = "text"));
        let _ = Offering::from_args(
            &cx,
            Kind::Template,
            quote::quote!("users://{id", nmae = "x"),
        );
        let _ = Offering::from_args(&cx, Kind::Prompt, quote::quote!("x://y", mime_type = "a/b"));
        assert_eq!(
            errors(cx),
            [
                "`text` is no MIME type: write `type/subtype`, such as `\"text/markdown\"`",
                "`#[resource]` needs the URI first: `#[resource(\"docs://readme\")]`",
                "unknown `resource_template` attribute `nmae`, did you mean `name`?",
                "a `{` is never closed",
                "`#[prompt]` takes no URI: its name is the function's, or `name = \"…\"`",
                "unknown `prompt` attribute `mime_type`, expected one of `name`, `title`, \
                 `description`, `icons`, `scopes`, `crate`",
            ]
        );
    }

    #[test]
    fn completion_functions_are_paths() {
        let cx = Ctxt::new();
        let f: syn::ItemFn = syn::parse_quote! {
            fn f(
                #[arg(complete = names::all, description = "x")] a: String,
                #[arg(complete = "names")] b: String,
            ) {}
        };
        let syn::FnArg::Typed(a) = &f.sig.inputs[0] else {
            unreachable!()
        };
        let syn::FnArg::Typed(b) = &f.sig.inputs[1] else {
            unreachable!()
        };
        let arg = OfferingArg::from_attrs(&cx, Kind::Prompt, &a.attrs);
        assert!(arg.complete.is_some() && arg.description.is_some());
        let _ = OfferingArg::from_attrs(&cx, Kind::Prompt, &b.attrs);
        let _ = OfferingArg::from_attrs(&cx, Kind::Template, &a.attrs);
        assert_eq!(
            errors(cx),
            [
                "expected a path to a function: `complete = path::to::fn`",
                "unknown `arg` attribute `description`, expected one of `rename`, `complete`",
            ]
        );
    }
}
