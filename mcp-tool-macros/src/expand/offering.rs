//! Code generation for `#[prompt]`, `#[resource]` and `#[resource_template]`: a `build`
//! function making the offering with the runtime's builders, and its `OfferingRecord`.
//!
//! As for tools, every runtime item is named through `#krate::__private`, and spans put the
//! compiler's errors on the user's tokens: a prompt parameter that is no argument or context
//! value on its type; a resource parameter that is neither a variable of the template nor a
//! context value on the whole parameter; a variable that does not parse on its type; a return
//! value that does not convert on the return type; a completion function on its path; a
//! future that is not `Send`, and the registration's `line!()`, on the function's name.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, ItemFn};

use super::{RecordSite, allow, krate, optional, private_at, respan, unique_record_idents};
use crate::ast::{Description, OfferingFn, OfferingParam, ReceiverKind, ToolImpl};
use crate::attr::offering::Kind;
use crate::strip;

/// A free function under one of the attribute macros: the function, then its registration in
/// a `const _`.
pub(crate) fn free_offering(offering: &OfferingFn<'_>, item: &ItemFn) -> TokenStream {
    let krate = krate(offering.attrs.krate.as_ref().map(|k| &k.value));
    let item = strip::tool_fn(item);
    let allow = allow();
    let ident = &offering.sig.ident;
    let build = build_fn(
        offering,
        &krate,
        &format_ident!("__mcp_offering_build"),
        &quote!(#ident),
        false,
    );
    let record = record(offering, &krate, &quote!(__mcp_offering_build));
    quote! {
        #item

        #[doc(hidden)]
        #allow
        const _: () = {
            #build
            #krate::__private::inventory::submit! { #record }
        };
    }
}

/// The items a `#[tools]` impl block gets for its offerings (a `build` function and a record
/// constant for each), and the constants' names.
pub(crate) fn impl_items(imp: &ToolImpl<'_>, krate: &TokenStream) -> (TokenStream, Vec<Ident>) {
    let allow = allow();
    let consts = record_idents(&imp.offerings);
    let mut items = TokenStream::new();
    for (offering, record_ident) in imp.offerings.iter().zip(&consts) {
        let ident = &offering.sig.ident;
        let build_ident = format_ident!("__mcp_offering_build_{}", ident.unraw());
        let build = build_fn(offering, krate, &build_ident, &quote!(Self::#ident), true);
        let record = record(offering, krate, &quote!(Self::#build_ident));
        items.extend(quote! {
            #[doc(hidden)]
            #allow
            #build

            #[doc(hidden)]
            #allow
            const #record_ident: #krate::__private::OfferingRecord = #record;
        });
    }
    (items, consts)
}

/// `mcp_offerings()`, listing the given record constants.
pub(crate) fn mcp_offerings_fn(krate: &TokenStream, consts: &[Ident]) -> TokenStream {
    quote! {
        /// The MCP prompts, resources and resource templates of this impl block, for giving
        /// them to a server explicitly with `Server::offerings`.
        #[must_use]
        #[allow(unreachable_pub, dead_code, clippy::all, clippy::pedantic)]
        pub fn mcp_offerings() -> #krate::__private::OfferingSet {
            #krate::__private::OfferingSet::new(#krate::__private::vec![#(Self::#consts),*])
        }
    }
}

/// `__MCP_OFFERING_<NAME>` for each, made unique if two methods differ only in case.
fn record_idents(offerings: &[OfferingFn<'_>]) -> Vec<Ident> {
    unique_record_idents("__MCP_OFFERING", offerings.iter().map(|o| o.sig))
}

/// The `OfferingRecord` of one offering.
fn record(offering: &OfferingFn<'_>, krate: &TokenStream, build: &TokenStream) -> TokenStream {
    let p = quote!(#krate::__private);
    let kind = match offering.kind {
        Kind::Prompt => quote!(Prompt),
        Kind::Resource => quote!(Resource),
        Kind::Template => quote!(ResourceTemplate),
    };
    let key = offering.key().0;
    let RecordSite {
        file,
        line,
        service,
    } = RecordSite::of(krate, offering.sig, offering.receiver.as_ref());
    quote! {
        #p::OfferingRecord {
            kind: #p::OfferingKind::#kind,
            key: #key,
            file: #file,
            line: #line,
            service: #service,
            build: #build,
        }
    }
}

/// `fn #ident(__build: &mut Build) -> Result<Offering, String>`: the service instance of a
/// method, the offering made with the runtime's builder and its keys, its parameters declared,
/// its completions, and its handler. `in_impl`: the function is in a `#[tools]` impl block.
fn build_fn(
    offering: &OfferingFn<'_>,
    krate: &TokenStream,
    ident: &Ident,
    path: &TokenStream,
    in_impl: bool,
) -> TokenStream {
    let p = quote!(#krate::__private);
    let a = &offering.attrs;
    let v = quote!(__offering);
    let service = offering.receiver.as_ref().map(|receiver| {
        let span = receiver.original.self_token.span;
        let at = private_at(krate, span);
        quote_spanned!(span=> let __service: #at::Arc<Self> = #at::offering_service::<Self>(__build)?;)
    });
    let title = a.title.as_ref().map(|t| {
        let lit = &t.value;
        quote!(#v = #v.title(#lit);)
    });
    let description = match &offering.description {
        Description::Text(lit) => Some(quote!(#v = #v.description(#lit);)),
        Description::Missing | Description::FromMacro(_) => None,
    };
    let icons = a.icons.as_ref().map(|i| {
        let lit = &i.value;
        quote!(for __icon in #p::icons(#lit)? { #v = #v.icon(__icon); })
    });
    let meta = a.meta.as_ref().map(|m| {
        let lit = &m.value;
        quote!(#v = #v.meta(#p::meta(#lit)?);)
    });
    let scopes = a.scopes.as_ref().map(|s| {
        let items = &s.value;
        quote!(#v = #v.scopes([#(#items),*]);)
    });
    let name = &offering.name.value;
    let handler = handler(offering, krate, path);
    let body = match offering.kind {
        Kind::Prompt => {
            let params = offering.params.iter().map(|param| {
                let spec = arg_spec(param, krate);
                let fns = prompt_param_fns(param, krate);
                quote!((#fns.describe)(&mut #v, __build, &#spec);)
            });
            let completions = completions(offering, krate, &quote!(prompt_complete), in_impl);
            quote! {
                let mut #v = #p::Prompt::new(#name);
                #title
                #description
                #icons
                #scopes
                #(#params)*
                #completions
                #p::Ok(#p::prompt_get(#v, #handler))
            }
        }
        Kind::Resource | Kind::Template => {
            let target = a
                .target
                .as_ref()
                .map(syn::LitStr::value)
                .unwrap_or_default();
            let requires = offering
                .params
                .iter()
                .filter(|param| !offering.is_variable(param))
                .map(|param| {
                    let fns = context_fns(param, krate);
                    quote!((#fns.require)(__build);)
                });
            let mime_type = match (&a.mime_type, offering.nameable_output()) {
                (Some(m), _) => {
                    let lit = &m.value;
                    Some(quote!(#v = #v.mime_type(#lit);))
                }
                (None, Some(ty)) => {
                    let fns = resource_output_fns(ty, krate);
                    Some(quote! {
                        if let #p::Some(__mime_type) = #fns.mime_type {
                            #v = #v.mime_type(__mime_type);
                        }
                    })
                }
                (None, None) => None,
            };
            let (make, wrap) = if offering.kind == Kind::Template {
                (quote!(template_read), quote!(ResourceTemplate))
            } else {
                (quote!(resource_read), quote!(Resource))
            };
            let completions = completions(offering, krate, &quote!(template_complete), in_impl);
            quote! {
                #(#requires)*
                let mut #v = #p::#make(#target, #name, #handler);
                #title
                #description
                #mime_type
                #icons
                #meta
                #scopes
                #completions
                #p::Ok(#p::Offering::#wrap(#v))
            }
        }
    };
    // The builder is mutable whether or not a key or a parameter changes it.
    quote! {
        #[allow(unused_mut)]
        fn #ident(__build: &mut #p::Build) -> #p::Result<#p::Offering, #p::String> {
            #service
            #body
        }
    }
}

/// `P::prompt_complete(&mut __offering, "name", path, service);` (or `template_complete`)
/// for each parameter with `#[arg(complete = path)]`, at the path.
fn completions(
    offering: &OfferingFn<'_>,
    krate: &TokenStream,
    add: &TokenStream,
    in_impl: bool,
) -> TokenStream {
    let p = quote!(#krate::__private);
    let (service_ty, service) = match (&offering.receiver, in_impl) {
        (Some(_), _) => (quote!(Self), quote!(#p::Some(#p::Arc::clone(&__service)))),
        // An associated function of a `#[tools]` impl block has no instance.
        (None, true) => (quote!(Self), quote!(#p::None)),
        (None, false) => (quote!(()), quote!(#p::None)),
    };
    offering
        .params
        .iter()
        .filter_map(|param| {
            let complete = &param.attrs.complete.as_ref()?.value;
            let name = &param.name;
            let span = complete.span();
            let at = private_at(krate, span);
            Some(quote_spanned! {span=>
                #at::#add::<#service_ty, _, _>(&mut __offering, #name, #complete, #service);
            })
        })
        .collect()
}

/// The closure that takes a request: each parameter from it (a refusal is the request's
/// JSON-RPC error), then the future running the function and converting its result.
fn handler(offering: &OfferingFn<'_>, krate: &TokenStream, path: &TokenStream) -> TokenStream {
    let p = quote!(#krate::__private);
    let fn_span = offering.sig.ident.span();
    let locals: Vec<Ident> = (0..offering.params.len())
        .map(|i| format_ident!("__arg{}", i))
        .collect();
    let extracts = offering.params.iter().zip(&locals).map(|(param, local)| {
        let extract = match offering.kind {
            Kind::Prompt => {
                let spec = arg_spec(param, krate);
                let fns = prompt_param_fns(param, krate);
                quote!((#fns.extract)(&__request, &#spec))
            }
            Kind::Template if offering.is_variable(param) => {
                let ty = param.ty;
                let at = private_at(krate, ty.span());
                let name = &param.name;
                let parse = quote_spanned!(ty.span()=> #at::template_var::<#ty>());
                quote!((#parse)(&__request, #name))
            }
            Kind::Resource | Kind::Template => {
                let fns = context_fns(param, krate);
                quote!((#fns.extract)(&__request))
            }
        };
        quote!(let #local = #extract?;)
    });
    let service = offering
        .receiver
        .as_ref()
        .map(|_| quote!(let __service = #p::Arc::clone(&__service);));
    let receiver_arg = offering.receiver.as_ref().map(|r| match r.kind {
        ReceiverKind::Arc => quote!(__service,),
        ReceiverKind::Ref | ReceiverKind::Unsupported => quote!(&__service,),
    });
    let mut invoke = quote!(#path(#receiver_arg #(#locals),*));
    if offering.sig.asyncness.is_some() {
        invoke = quote!(#invoke.await);
    }
    // The call itself at the function's name: a call that does not resolve (a method marked
    // outside `#[tools]`) is reported there.
    let invoke = respan(invoke, fn_span);
    let output_span = offering.output().map_or(fn_span, Spanned::span);
    let (converted, output) = match offering.kind {
        Kind::Prompt => {
            let converted = match offering.nameable_output() {
                Some(ty) => {
                    let at = private_at(krate, ty.span());
                    let fns = quote_spanned!(ty.span()=> #at::prompt_output::<#ty>());
                    quote!((#fns.convert)(#invoke))
                }
                None => {
                    let at = private_at(krate, output_span);
                    quote_spanned!(output_span=> #at::prompt_result(#invoke))
                }
            };
            (converted, quote!(#p::PromptResult))
        }
        Kind::Resource | Kind::Template => {
            let mime_type = optional(&p, offering.attrs.mime_type.as_ref().map(|m| &m.value));
            let converted = match offering.nameable_output() {
                Some(ty) => {
                    let fns = resource_output_fns(ty, krate);
                    quote!((#fns.convert)(#invoke, __request.uri(), #mime_type))
                }
                None => {
                    let at = private_at(krate, output_span);
                    quote_spanned! {output_span=>
                        #at::resource_contents(#invoke, __request.uri(), #mime_type)
                    }
                }
            };
            (converted, quote!(#p::vec::Vec<#p::ResourceContents>))
        }
    };
    let request_ty = match offering.kind {
        Kind::Prompt => quote!(#p::PromptRequest),
        Kind::Resource | Kind::Template => quote!(#p::ResourceRequest),
    };
    // The coercion to `HandlerFuture` is where a future that is not `Send` fails: put that
    // error on the function's name.
    let at = private_at(krate, fn_span);
    let future = quote_spanned! {fn_span=>
        let __future: #at::HandlerFuture<#output> = #at::Box::pin(async move { #converted });
    };
    // The closure holds a service instance of its own: the builder keeps one for completions.
    quote! {{
        #service
        move |__request: #request_ty| {
            #(#extracts)*
            #service
            #future
            #p::Ok(__future)
        }
    }}
}

/// `ArgSpec { name, description }` for one prompt parameter.
fn arg_spec(param: &OfferingParam<'_>, krate: &TokenStream) -> TokenStream {
    let p = quote!(#krate::__private);
    let name = &param.name;
    let description = optional(&p, param.attrs.description.as_ref().map(|d| &d.value));
    quote!(#p::ArgSpec { name: #name, description: #description })
}

/// `prompt_param::<T, _>()` at the parameter's type: the one place it is checked (the
/// declaration and the extraction use it, written identically, so one error).
fn prompt_param_fns(param: &OfferingParam<'_>, krate: &TokenStream) -> TokenStream {
    let ty = param.ty;
    let at = private_at(krate, ty.span());
    quote_spanned!(ty.span()=> #at::prompt_param::<#ty, _>())
}

/// `resource_context::<T>()` at the parameter's name: a parameter that is neither a variable
/// of the template nor a context value is reported there (the type alone would not say which
/// parameter of the template it was meant to be).
fn context_fns(param: &OfferingParam<'_>, krate: &TokenStream) -> TokenStream {
    let ty = param.ty;
    let span = param.original.pat.span();
    respan(quote!(#krate::__private::resource_context::<#ty>()), span)
}

/// `resource_output::<R>()` at the return type.
fn resource_output_fns(ty: &syn::Type, krate: &TokenStream) -> TokenStream {
    let at = private_at(krate, ty.span());
    quote_spanned!(ty.span()=> #at::resource_output::<#ty>())
}
