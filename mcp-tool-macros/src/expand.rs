//! Code generation from a checked model. Nothing here parses or reports errors.
//!
//! Generated code names runtime items only as `#krate::__private::…` (`::mcp_tool` unless the
//! user gave `crate = …`), never bare `Box`, `Some`, `Ok` or `Arc`, so it works whatever the
//! user's crate has in scope. Spans are chosen so the compiler's own errors land on the user's
//! tokens: trait errors about a parameter on its type, about the result on the return type, a
//! future that is not `Send` and the registration's `line!()` on the function's name, and a
//! service that is not `Send + Sync` on the receiver.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, ImplItem, Path};

use crate::ast::{Description, Param, ReceiverKind, ToolFn, ToolImpl};
use crate::attr::Summary;
use crate::strip;

mod offering;

pub(crate) use offering::{free_offering, mcp_offerings_fn};

/// The path generated code reaches the runtime through.
pub(crate) fn krate(path: Option<&Path>) -> TokenStream {
    match path {
        Some(path) => path.to_token_stream(),
        None => quote!(::mcp_tool),
    }
}

/// `tokens` with every token, nested ones included, at `span`.
///
/// `quote_spanned!` spans only the tokens it writes itself, not interpolated ones such as the
/// runtime's path; and rustc places some errors (and `line!()`) at the span of a whole
/// expression, from its first token to its last. So a path like `::mcp_tool::__private::…`
/// that starts an expression meant to be at the user's token must be there too.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut group = Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// `#krate::__private` at `span`.
fn private_at(krate: &TokenStream, span: Span) -> TokenStream {
    respan(quote!(#krate::__private), span)
}

/// Lints generated items must not trip in the user's crate.
fn allow() -> TokenStream {
    quote! {
        #[allow(
            non_upper_case_globals,
            non_snake_case,
            unused_qualifications,
            clippy::all,
            clippy::pedantic
        )]
    }
}

/// A free function under `#[tool]`: the function, then its registration in a `const _`.
pub(crate) fn free_tool(tool: &ToolFn<'_>, item: &syn::ItemFn) -> TokenStream {
    let krate = krate(tool.attrs.krate.as_ref().map(|k| &k.value));
    let item = strip::tool_fn(item);
    let allow = allow();
    let define = define_fn(tool, &krate, &format_ident!("__mcp_tool_define"));
    let ident = &tool.sig.ident;
    let call = call_fn(
        tool,
        &krate,
        &format_ident!("__mcp_tool_call"),
        &quote!(#ident),
    );
    let record = record(
        tool,
        &krate,
        &quote!(__mcp_tool_define),
        &quote!(__mcp_tool_call),
    );
    quote! {
        #item

        #[doc(hidden)]
        #allow
        const _: () = {
            #define
            #call
            #krate::__private::inventory::submit! { #record }
        };
    }
}

/// An impl block under `#[tools]`: the impl with hidden items added for each tool and
/// `mcp_tools()`, then (unless `manual`) the registration of every tool.
pub(crate) fn tool_impl(imp: &ToolImpl<'_>) -> TokenStream {
    let krate_path = imp.attrs.krate.as_ref().map(|k| &k.value);
    let krate = krate(krate_path);
    let allow = allow();
    let mut item = strip::tool_impl(imp.original, krate_path);
    let consts = record_idents(imp);
    for (tool, record_ident) in imp.tools.iter().zip(&consts) {
        let unraw = tool.sig.ident.unraw();
        let define_ident = format_ident!("__mcp_tool_define_{}", unraw);
        let call_ident = format_ident!("__mcp_tool_call_{}", unraw);
        let ident = &tool.sig.ident;
        let define = define_fn(tool, &krate, &define_ident);
        let call = call_fn(tool, &krate, &call_ident, &quote!(Self::#ident));
        let record = record(
            tool,
            &krate,
            &quote!(Self::#define_ident),
            &quote!(Self::#call_ident),
        );
        item.items.push(ImplItem::Verbatim(quote! {
            #[doc(hidden)]
            #allow
            #define

            #[doc(hidden)]
            #allow
            #call

            #[doc(hidden)]
            #allow
            const #record_ident: #krate::__private::ToolRecord = #record;
        }));
    }
    item.items
        .push(ImplItem::Verbatim(mcp_tools_fn(&krate, &consts)));
    let (offering_items, offering_consts) = offering::impl_items(imp, &krate);
    if !offering_consts.is_empty() {
        item.items.push(ImplItem::Verbatim(offering_items));
        item.items.push(ImplItem::Verbatim(mcp_offerings_fn(
            &krate,
            &offering_consts,
        )));
    }
    let registration = if imp.attrs.is_manual() {
        TokenStream::new()
    } else {
        let self_ty = &imp.original.self_ty;
        quote! {
            #[doc(hidden)]
            #allow
            const _: () = {
                #(#krate::__private::inventory::submit! { <#self_ty>::#consts })*
                #(#krate::__private::inventory::submit! { <#self_ty>::#offering_consts })*
            };
        }
    };
    quote! {
        #item
        #registration
    }
}

/// `mcp_tools()`, listing the given record constants.
pub(crate) fn mcp_tools_fn(krate: &TokenStream, consts: &[Ident]) -> TokenStream {
    quote! {
        /// The MCP tools of this impl block, for registering them explicitly with
        /// `Server::tools`.
        #[must_use]
        #[allow(unreachable_pub, dead_code, clippy::all, clippy::pedantic)]
        pub fn mcp_tools() -> #krate::__private::ToolSet {
            #krate::__private::ToolSet::new(#krate::__private::vec![#(Self::#consts),*])
        }
    }
}

/// `__MCP_TOOL_<NAME>` for each tool, made unique if two methods differ only in case.
fn record_idents(imp: &ToolImpl<'_>) -> Vec<Ident> {
    unique_record_idents("__MCP_TOOL", imp.tools.iter().map(|tool| tool.sig))
}

/// `<prefix>_<NAME>` for each function, made unique if two differ only in case.
fn unique_record_idents<'a>(
    prefix: &str,
    sigs: impl Iterator<Item = &'a syn::Signature>,
) -> Vec<Ident> {
    let mut idents: Vec<Ident> = Vec::new();
    for (i, sig) in sigs.enumerate() {
        let upper = sig.ident.unraw().to_string().to_ascii_uppercase();
        let mut ident = format_ident!("{}_{}", prefix, upper);
        if idents.contains(&ident) {
            ident = format_ident!("{}_{}_{}", prefix, upper, i);
        }
        idents.push(ident);
    }
    idents
}

/// `fn #ident(__def: &mut DefBuilder)`: title, description, annotations, each parameter's
/// part of the input schema, and the output schema.
fn define_fn(tool: &ToolFn<'_>, krate: &TokenStream, ident: &Ident) -> TokenStream {
    let p = quote!(#krate::__private);
    let title = tool.attrs.title.as_ref().map(|t| {
        let lit = &t.value;
        quote!(__def.title(#lit);)
    });
    let description = match &tool.description {
        Description::Text(lit) => Some(quote!(__def.description(#lit);)),
        Description::Missing | Description::FromMacro(_) => None,
    };
    let a = &tool.attrs;
    let hints = [&a.read_only, &a.destructive, &a.idempotent, &a.open_world];
    let annotations = hints.iter().any(|h| h.is_some()).then(|| {
        let [read_only, destructive, idempotent, open_world] = hints.map(|hint| match hint {
            Some(setting) => {
                let value = setting.value;
                quote!(#p::Some(#value))
            }
            None => quote!(#p::None),
        });
        quote! {
            __def.annotations(#p::Annotations {
                read_only: #read_only,
                destructive: #destructive,
                idempotent: #idempotent,
                open_world: #open_world,
            });
        }
    });
    let hidden = (a.hidden.as_ref().is_some_and(|h| h.value)
        || a.default_visible.as_ref().is_some_and(|v| !v.value))
    .then(|| quote!(__def.hidden(true);));
    let always_visible = a
        .always_visible
        .as_ref()
        .filter(|v| v.value)
        .map(|_| quote!(__def.always_visible(true);));
    let defer_loading = a
        .defer_loading
        .as_ref()
        .filter(|v| v.value)
        .map(|_| quote!(__def.defer_loading(true);));
    let timeout = a.timeout.as_ref().map(|t| {
        let ms = t.value;
        quote!(__def.timeout(#p::Duration::from_millis(#ms));)
    });
    let task = a.task.as_ref().map(|t| {
        let variant = match t.value {
            "required" => quote!(Required),
            "optional" => quote!(Optional),
            _ => quote!(Forbidden),
        };
        quote!(__def.task_support(#p::TaskSupport::#variant);)
    });
    let input_schema = a.input_schema.as_ref().map(|s| {
        let lit = &s.value;
        quote!(__def.input_schema_json(#lit);)
    });
    let output_schema = a.output_schema.as_ref().map(|s| {
        let lit = &s.value;
        quote!(__def.output_schema_json(#lit);)
    });
    let invoking = a.invoking.as_ref().map(|s| {
        let lit = &s.value;
        quote!(__def.invoking(#lit);)
    });
    let invoked = a.invoked.as_ref().map(|s| {
        let lit = &s.value;
        quote!(__def.invoked(#lit);)
    });
    let examples = a.examples.as_ref().map(|s| {
        let opt = |lit: &Option<syn::LitStr>| match lit {
            Some(l) => quote!(#p::Some(#l)),
            None => quote!(#p::None),
        };
        let (request, response) = (opt(&s.value.request), opt(&s.value.response));
        quote!(__def.examples_json(#request, #response);)
    });
    let icons = a.icons.as_ref().map(|s| {
        let lit = &s.value;
        quote!(__def.icons_json(#lit);)
    });
    let meta = a.meta.as_ref().map(|s| {
        let lit = &s.value;
        quote!(__def.meta_json(#lit);)
    });
    let ui = a.ui.as_ref().map(|s| {
        let lit = &s.value;
        // Embedded at compile time; `include_str!` also makes cargo rebuild when it changes.
        quote_spanned!(lit.span()=> __def.ui(#lit, #p::include_str!(#p::concat!(
            #p::env!("CARGO_MANIFEST_DIR"), "/ui/", #lit, ".html"
        )));)
    });
    let visibility = a.visibility.as_ref().map(|s| {
        let items = &s.value;
        quote!(__def.visibility(&[#(#items),*]);)
    });
    let scopes = a.scopes.as_ref().map(|s| {
        let items = &s.value;
        quote!(__def.scopes(&[#(#items),*]);)
    });
    let coerce = a.coerce.as_ref().map(|c| {
        let on = c.value;
        quote!(__def.coercion().arguments(#on);)
    });
    let rest = a
        .rest
        .as_ref()
        .filter(|r| !r.value)
        .map(|_| quote!(__def.rest(false);));
    let params = tool.params.iter().map(|param| {
        let spec = param_spec(param, krate);
        let fns = param_fns(param, krate);
        let coerce = param.attrs.coerce.as_ref().map(|c| {
            let (name, on) = (&param.name, c.value);
            quote!(__def.coercion().argument(#name, #on);)
        });
        quote!((#fns.describe)(__def, &#spec); #coerce)
    });
    let output = output_fns(tool, krate).map(|fns| quote!((#fns.describe)(__def);));
    // A template's fields are checked against the result's schema when the server starts.
    let summary = match (&a.summary, nameable_output(tool)) {
        (Some(s), Some(ty)) => match &s.value {
            Summary::Template(lit) => {
                let at = private_at(krate, ty.span());
                Some(quote_spanned!(ty.span()=> #at::check_summary::<#ty>(__def, #lit);))
            }
            Summary::Function(_) => None,
        },
        _ => None,
    };
    quote! {
        fn #ident(__def: &mut #p::DefBuilder) {
            #title
            #description
            #annotations
            #hidden
            #always_visible
            #defer_loading
            #timeout
            #task
            #invoking
            #invoked
            #examples
            #icons
            #meta
            #ui
            #visibility
            #scopes
            #coerce
            #rest
            #input_schema
            #(#params)*
            #output
            #output_schema
            #summary
        }
    }
}

/// `fn #ident(__call: ToolCall) -> BoxFuture`: takes the service and each parameter from the
/// call, then runs the tool (a sync one as its `SyncPolicy` says) and converts its result.
fn call_fn(
    tool: &ToolFn<'_>,
    krate: &TokenStream,
    ident: &Ident,
    path: &TokenStream,
) -> TokenStream {
    let p = quote!(#krate::__private);
    let fn_span = tool.sig.ident.span();
    let call_param = match (&tool.receiver, tool.params.is_empty()) {
        (_, false) => quote!(mut __call),
        (Some(_), true) => quote!(__call),
        (None, true) => quote!(_),
    };
    let service = tool.receiver.as_ref().map(|receiver| {
        let span = receiver.original.self_token.span;
        let at = private_at(krate, span);
        let take = quote_spanned!(span=> (#at::service::<Self>().take)(&__call));
        let missing = quote_spanned!(span=> #at::missing_service(#at::type_name::<Self>()));
        quote! {
            let __service: #p::Arc<Self> = match #take {
                #p::Some(__service) => __service,
                #p::None => return #missing,
            };
        }
    });
    let locals: Vec<Ident> = (0..tool.params.len())
        .map(|i| format_ident!("__arg{}", i))
        .collect();
    let extracts = tool.params.iter().zip(&locals).map(|(param, local)| {
        let spec = param_spec(param, krate);
        let fns = param_fns(param, krate);
        let extract = quote!((#fns.extract)(&mut __call, &#spec));
        quote! {
            let #local = match #extract {
                #p::Ok(__value) => __value,
                #p::Err(__rejection) => return *__rejection,
            };
        }
    });
    let receiver_arg = tool.receiver.as_ref().map(|r| match r.kind {
        ReceiverKind::Arc => quote!(__service,),
        ReceiverKind::Ref | ReceiverKind::Unsupported => quote!(&__service,),
    });
    let mut invoke = quote!(#path(#receiver_arg #(#locals),*));
    let is_async = tool.sig.asyncness.is_some();
    if is_async {
        invoke = quote!(#invoke.await);
    }
    // The call itself at the function's name: a call that does not resolve (a `#[tool]`
    // associated fn outside `#[tools]`) is reported there.
    let invoke = respan(invoke, fn_span);
    let converted = match (&tool.attrs.summary, output_fns(tool, krate)) {
        (Some(summary), _) => summarized(tool, krate, &summary.value, invoke),
        (None, Some(fns)) => quote!((#fns.convert)(#invoke)),
        (None, None) => {
            // No nameable return type (none, or `impl Trait`): the conversion is inferred.
            let output_span = tool.output().map_or(fn_span, Spanned::span);
            let at = private_at(krate, output_span);
            quote_spanned!(output_span=> #at::into_result(#invoke))
        }
    };
    let run = if is_async {
        converted
    } else {
        // One policy per tool: on the blocking pool until the tool has shown it is quick
        // (or always, with `blocking`).
        let policy = if tool.attrs.blocking.as_ref().is_some_and(|b| b.value) {
            quote!(#p::SyncPolicy::blocking())
        } else {
            quote!(#p::SyncPolicy::adaptive())
        };
        quote!({
            static __POLICY: #p::SyncPolicy = #policy;
            #p::run_sync(&__POLICY, move || #converted).await
        })
    };
    // The coercion to `BoxFuture` is where a future that is not `Send` fails: put that error
    // on the tool's name.
    let at = private_at(krate, fn_span);
    let boxed = quote_spanned! {fn_span=>
        #at::Box::pin(async move {
            #service
            #(#extracts)*
            #run
        })
    };
    quote! {
        fn #ident(#call_param: #p::ToolCall) -> #p::BoxFuture {
            #boxed
        }
    }
}

/// `param::<T, _>()` (or `param_default::<T>()`) at the parameter's type: the one place a
/// parameter's type is checked. The definition and the call both use it, written identically,
/// so a type that is no extractor gives one error, not one per use.
fn param_fns(param: &Param<'_>, krate: &TokenStream) -> TokenStream {
    let ty = param.ty;
    let at = private_at(krate, ty.span());
    if param.attrs.is_default() {
        quote_spanned!(ty.span()=> #at::param_default::<#ty>())
    } else {
        quote_spanned!(ty.span()=> #at::param::<#ty, _>())
    }
}

/// `output::<R>()` at the return type, for a return type that can be named: the one place it
/// is checked (see [`param_fns`]).
fn output_fns(tool: &ToolFn<'_>, krate: &TokenStream) -> Option<TokenStream> {
    let ty = nameable_output(tool)?;
    let at = private_at(krate, ty.span());
    Some(quote_spanned!(ty.span()=> #at::output::<#ty>()))
}

/// The return type, when it can be named (see [`ToolFn::has_output_schema`]).
fn nameable_output<'a>(tool: &ToolFn<'a>) -> Option<&'a syn::Type> {
    tool.output().filter(|_| tool.has_output_schema())
}

/// The conversion of a returned value with `summary`: `templated::<R>` (a template) at the
/// return type, where "not `Json<T>`" is reported; `summarized::<R>` (a function) at the
/// function, where a function of the wrong type (or a result that is not `Json<T>`) is.
fn summarized(
    tool: &ToolFn<'_>,
    krate: &TokenStream,
    summary: &Summary,
    invoke: TokenStream,
) -> TokenStream {
    let (function, argument, span) = match summary {
        Summary::Template(lit) => (
            quote!(templated),
            lit.to_token_stream(),
            tool.output().map_or(tool.sig.ident.span(), Spanned::span),
        ),
        // The whole call at the function: a function of the wrong type is one error, there.
        Summary::Function(expr) => (quote!(summarized), expr.to_token_stream(), expr.span()),
    };
    let at = private_at(krate, span);
    match nameable_output(tool) {
        Some(ty) => quote_spanned!(span=> #at::#function::<#ty>(#invoke, #argument)),
        None => quote_spanned!(span=> #at::#function(#invoke, #argument)),
    }
}

/// `ParamSpec { name, description, default, header }` for one parameter.
fn param_spec(param: &Param<'_>, krate: &TokenStream) -> TokenStream {
    let p = quote!(#krate::__private);
    let name = &param.name;
    let description = optional(&p, param.attrs.description.as_ref().map(|d| &d.value));
    let header = optional(&p, param.attrs.header.as_ref().map(|h| &h.value));
    let default = param.attrs.is_default();
    quote!(#p::ParamSpec {
        name: #name,
        description: #description,
        default: #default,
        header: #header,
    })
}

/// An optional string literal as `Some("…")` or `None`.
fn optional(p: &TokenStream, lit: Option<&syn::LitStr>) -> TokenStream {
    match lit {
        Some(lit) => quote!(#p::Some(#lit)),
        None => quote!(#p::None),
    }
}

/// The `ToolRecord` of one tool.
fn record(
    tool: &ToolFn<'_>,
    krate: &TokenStream,
    define: &TokenStream,
    call: &TokenStream,
) -> TokenStream {
    let p = quote!(#krate::__private);
    let name = &tool.name.value;
    let RecordSite {
        file,
        line,
        service,
    } = RecordSite::of(krate, tool.sig, tool.receiver.as_ref());
    quote! {
        #p::ToolRecord {
            name: #name,
            file: #file,
            line: #line,
            service: #service,
            define: #define,
            call: #call,
        }
    }
}

/// What a tool's or an offering's record says of where it comes from.
struct RecordSite {
    /// `file!()` and `line!()`, spanned at the function's name: `line!()` reports the line its
    /// invocation starts on.
    file: TokenStream,
    line: TokenStream,
    /// A method's `Some(service::<Self>().ty)`, else `None`.
    service: TokenStream,
}

impl RecordSite {
    fn of(
        krate: &TokenStream,
        sig: &syn::Signature,
        receiver: Option<&crate::ast::Receiver<'_>>,
    ) -> RecordSite {
        let fn_span = sig.ident.span();
        let at = private_at(krate, fn_span);
        let service = match receiver {
            Some(receiver) => {
                let span = receiver.original.self_token.span;
                let at = private_at(krate, span);
                quote_spanned!(span=> #at::Some(#at::service::<Self>().ty))
            }
            None => quote!(#krate::__private::None),
        };
        RecordSite {
            file: quote_spanned!(fn_span=> #at::file!()),
            line: quote_spanned!(fn_span=> #at::line!()),
            service,
        }
    }
}
