//! What the code generated for `#[prompt]`, `#[resource]` and `#[resource_template]` calls:
//! which parameter is a prompt argument, a template variable or a context value, what a
//! return value becomes, completion functions, and the handlers these make, on the builders'
//! types. Reached only through `__private`.
//!
//! As for tools, a parameter's type decides through a trait what it is, never its name: a
//! prompt's parameter is an argument when its type parses from text (`FromStr`, or an
//! `Option` of such a type for an optional argument) and a context value when it implements
//! `FromContext`. A resource's parameters are told apart by name instead (the template's
//! variables are known at compile time), and their types are checked to fit.
//!
//! Bad input is refused before the function runs, with -32602 naming what is wrong: an
//! argument the prompt does not declare, one that is not a string or does not parse, a
//! template variable that does not parse.

use crate::tool::definition::validate::{short, short_text};
use std::fmt::Display;
use std::str::FromStr;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::protocol::wire::{Icon, PromptArgument};
use crate::protocol::{ResourceContents, RpcError, code};
use crate::tool::arguments::Arguments;
use crate::tool::extract::{ToolCall, TypeMap, ViaContext};
use crate::tool::{Ctx, FromContext, ToolError};

use crate::server::offerings::prompt::{IntoPromptResult, Prompt, PromptRequest, PromptResult};
use crate::server::offerings::record::{Build, Offering};
use crate::server::offerings::resource::{
    HandlerFuture, IntoResourceContents, Resource, ResourceRequest, ResourceTemplate,
};

/// What the macros say about one argument of a prompt.
#[derive(Debug, Clone, Copy)]
pub struct ArgSpec {
    /// The argument's name (the parameter's, or its `rename`).
    pub name: &'static str,
    /// Its description (`#[arg(description = "…")]`).
    pub description: Option<&'static str>,
}

/// A required prompt argument: a type that parses from text.
#[derive(Debug)]
pub struct ViaRequired;

/// An optional prompt argument: an `Option` of a type that parses from text.
#[derive(Debug)]
pub struct ViaOptional;

fn invalid(message: String) -> RpcError {
    RpcError::new(code::INVALID_PARAMS, message)
}

/// A parameter of a `#[prompt]` function: an argument, or a context value.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a prompt",
    label = "not a prompt argument or a context value",
    note = "a prompt argument is a `String` (required) or an `Option<String>` (optional), or \
            another type that implements `FromStr` (or an `Option` of one)",
    note = "context values, such as `Ctx`, implement `FromContext`"
)]
pub trait PromptParam<M>: Sized {
    /// Declares the parameter: an argument of the prompt, or what a context value needs.
    fn describe(prompt: &mut Prompt, build: &mut Build, spec: &ArgSpec);

    /// Takes the parameter's value from the request.
    fn extract(request: &PromptRequest, spec: &ArgSpec) -> Result<Self, RpcError>;
}

fn declare(prompt: &mut Prompt, build: &mut Build, spec: &ArgSpec, required: bool) {
    if spec.name.is_empty() {
        // A destructuring pattern (`Name(n): Name`) names no argument.
        build.problems.push(
            "an argument's parameter is a pattern, which names no argument: give it \
             `#[arg(rename = \"…\")]`"
                .to_owned(),
        );
    }
    prompt.arguments.push(PromptArgument {
        name: spec.name.to_owned(),
        description: spec.description.map(str::to_owned),
        required,
    });
}

/// An argument's text, `None` when it is absent (or null).
fn text<'r>(request: &'r PromptRequest, spec: &ArgSpec) -> Result<Option<&'r str>, RpcError> {
    match request.arguments.get(spec.name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(invalid(format!(
            "prompt argument `{}` must be a string, not `{}`",
            spec.name,
            short(other)
        ))),
    }
}

fn parse<T>(spec: &ArgSpec, text: &str) -> Result<T, RpcError>
where
    T: FromStr,
    T::Err: Display,
{
    text.parse()
        .map_err(|e| invalid(format!("prompt argument `{}`: {e}", spec.name)))
}

impl<T> PromptParam<ViaRequired> for T
where
    T: FromStr,
    T::Err: Display,
{
    fn describe(prompt: &mut Prompt, build: &mut Build, spec: &ArgSpec) {
        declare(prompt, build, spec, true);
    }

    fn extract(request: &PromptRequest, spec: &ArgSpec) -> Result<Self, RpcError> {
        match text(request, spec)? {
            Some(text) => parse(spec, text),
            None => Err(invalid(format!(
                "prompt argument `{}` is required",
                spec.name
            ))),
        }
    }
}

impl<T> PromptParam<ViaOptional> for Option<T>
where
    T: FromStr,
    T::Err: Display,
{
    fn describe(prompt: &mut Prompt, build: &mut Build, spec: &ArgSpec) {
        declare(prompt, build, spec, false);
    }

    fn extract(request: &PromptRequest, spec: &ArgSpec) -> Result<Self, RpcError> {
        text(request, spec)?.map(|t| parse(spec, t)).transpose()
    }
}

impl<T: FromContext> PromptParam<ViaContext> for T {
    fn describe(_: &mut Prompt, build: &mut Build, _: &ArgSpec) {
        build.require::<T, ViaContext>();
    }

    fn extract(request: &PromptRequest, _: &ArgSpec) -> Result<Self, RpcError> {
        context(&request.ctx, &request.states)
    }
}

/// A context value from a request's context, as a tool's call gives it. A context value that
/// fails fails the request as a failing handler does.
fn context<T: FromContext>(ctx: &Ctx, states: &Arc<TypeMap>) -> Result<T, RpcError> {
    let call = ToolCall {
        arguments: Arguments::default(),
        service: None,
        states: states.clone(),
        ctx: ctx.clone(),
    };
    T::from_context(&call).map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.render()))
}

/// What generated code does with one parameter of a prompt.
pub struct PromptParamFns<T> {
    /// Declares it.
    pub describe: fn(&mut Prompt, &mut Build, &ArgSpec),
    /// Takes its value from a request.
    pub extract: fn(&PromptRequest, &ArgSpec) -> Result<T, RpcError>,
}

/// The functions of a prompt parameter of type `T`.
pub const fn prompt_param<T: PromptParam<M>, M>() -> PromptParamFns<T> {
    PromptParamFns {
        describe: T::describe,
        extract: T::extract,
    }
}

/// What generated code does with a prompt's return type.
pub struct PromptOutput<R> {
    /// Converts a returned value.
    pub convert: fn(R) -> Result<PromptResult, ToolError>,
}

/// The output functions of a prompt's return type `R`.
pub const fn prompt_output<R: IntoPromptResult>() -> PromptOutput<R> {
    PromptOutput {
        convert: R::into_prompt_result,
    }
}

/// Converts a prompt's return value whose type cannot be named (`impl Trait`).
pub fn prompt_result<R: IntoPromptResult>(r: R) -> Result<PromptResult, ToolError> {
    r.into_prompt_result()
}

/// The prompt rendered by `get`, which refuses arguments the prompt does not declare before
/// `get` sees them.
pub fn prompt_get<F>(mut prompt: Prompt, get: F) -> Offering
where
    F: Fn(PromptRequest) -> Result<HandlerFuture<PromptResult>, RpcError> + Send + Sync + 'static,
{
    let name = prompt.name.clone();
    let declared: Vec<String> = prompt.arguments.iter().map(|a| a.name.clone()).collect();
    prompt.get = Some(Arc::new(move |request| {
        if let Some(unknown) = request.arguments.keys().find(|k| !declared.contains(k)) {
            let known = if declared.is_empty() {
                "it takes none".to_owned()
            } else {
                let names: Vec<String> = declared.iter().map(|n| format!("`{n}`")).collect();
                format!("its arguments are {}", names.join(", "))
            };
            return Err(invalid(format!(
                "prompt `{name}` has no argument `{}`: {known}",
                short_text(unknown)
            )));
        }
        get(request)
    }));
    Offering::Prompt(prompt)
}

/// A variable of a resource template: a type that parses from text.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a variable of a resource template",
    label = "not parsed from text",
    note = "a template variable's type implements `FromStr` (`String`, numbers, …) with an \
            error that implements `Display`"
)]
pub trait TemplateVar: Sized {
    /// Parses the variable `name` of the URI read.
    fn parse_var(request: &ResourceRequest, name: &str) -> Result<Self, RpcError>;
}

#[diagnostic::do_not_recommend]
impl<T> TemplateVar for T
where
    T: FromStr,
    T::Err: Display,
{
    fn parse_var(request: &ResourceRequest, name: &str) -> Result<Self, RpcError> {
        let refuse = |why: &dyn Display| {
            invalid(format!(
                "`{name}` in `{}` is not valid: {why}",
                short_text(request.uri())
            ))
            .with_data(serde_json::json!({ "uri": request.uri() }))
        };
        let text = percent_decoded(request.var(name).unwrap_or_default())
            .ok_or_else(|| refuse(&"a `%` is not followed by two hex digits of UTF-8 text"))?;
        // A variable matches within one segment (never across `/`); an escaped `/` does not
        // make it cross one after decoding (`..%2F..` is no way up the tree).
        if text.contains('/') {
            return Err(refuse(&format!(
                "`%2F` decodes to `/`, which `{{{name}}}` never holds (it stands for one segment)"
            )));
        }
        text.parse().map_err(|e| refuse(&e))
    }
}

/// A variable's text with its `%XX` escapes decoded (a client expanding the template escapes
/// what is not allowed in a URI, RFC 6570 §3.2.2); `None` when an escape is malformed or the
/// bytes are not UTF-8.
fn percent_decoded(text: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !text.contains('%') {
        return Some(text.into());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(Into::into)
}

/// The parsing function of a template variable of type `T`.
pub const fn template_var<T: TemplateVar>() -> fn(&ResourceRequest, &str) -> Result<T, RpcError> {
    T::parse_var
}

/// A parameter of a resource that is not one of its template's variables: a context value.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is neither a variable of the resource's URI template nor a context value",
    label = "not a template variable, not a context value",
    note = "a parameter named after a variable of the template (or renamed to one with \
            `#[arg(rename = \"…\")]`) takes its value; a fixed resource (`#[resource]`) has \
            no variables",
    note = "other parameters are context values, such as `Ctx`, which implement `FromContext`"
)]
pub trait ResourceContext: Sized {
    /// Records what the value needs from the server.
    fn require(build: &mut Build);

    /// Takes the value from the request.
    fn from_request(request: &ResourceRequest) -> Result<Self, RpcError>;
}

#[diagnostic::do_not_recommend]
impl<T: FromContext> ResourceContext for T {
    fn require(build: &mut Build) {
        build.require::<T, ViaContext>();
    }

    fn from_request(request: &ResourceRequest) -> Result<Self, RpcError> {
        context(&request.ctx, &request.states)
    }
}

/// What generated code does with a context value of a resource.
pub struct ContextFns<T> {
    /// Records what it needs.
    pub require: fn(&mut Build),
    /// Takes it from a request.
    pub extract: fn(&ResourceRequest) -> Result<T, RpcError>,
}

/// The functions of a resource's context value of type `T`.
pub const fn resource_context<T: ResourceContext>() -> ContextFns<T> {
    ContextFns {
        require: T::require,
        extract: T::from_request,
    }
}

/// The contents of a resource read, or the error that fails the read.
pub type Contents = Result<Vec<ResourceContents>, ToolError>;

/// What generated code does with a resource's return type.
pub struct ResourceOutput<R> {
    /// The MIME type the type gives when the attribute gives none.
    pub mime_type: Option<&'static str>,
    /// Converts a returned value (of the URI read, with the attribute's MIME type).
    pub convert: fn(R, &str, Option<&str>) -> Contents,
}

/// The output functions of a resource's return type `R`.
pub const fn resource_output<R: IntoResourceContents>() -> ResourceOutput<R> {
    ResourceOutput {
        mime_type: R::MIME_TYPE,
        convert: R::into_contents,
    }
}

/// Converts a resource's return value whose type cannot be named (`impl Trait`).
pub fn resource_contents<R: IntoResourceContents>(
    r: R,
    uri: &str,
    mime_type: Option<&str>,
) -> Result<Vec<ResourceContents>, ToolError> {
    r.into_contents(uri, mime_type)
}

/// The resource `uri`, named `name`, read by `read`: it refuses a request it cannot take, or
/// gives the future of the contents.
pub fn resource_read<F>(uri: &'static str, name: &'static str, read: F) -> Resource
where
    F: Fn(ResourceRequest) -> Result<HandlerFuture<Vec<ResourceContents>>, RpcError>
        + Send
        + Sync
        + 'static,
{
    Resource::with_reader(uri.to_owned(), name.to_owned(), Arc::new(read))
}

/// The template `template`, named `name`, whose URIs `read` reads.
pub fn template_read<F>(template: &'static str, name: &'static str, read: F) -> ResourceTemplate
where
    F: Fn(ResourceRequest) -> Result<HandlerFuture<Vec<ResourceContents>>, RpcError>
        + Send
        + Sync
        + 'static,
{
    let mut t = ResourceTemplate::new(template, name);
    t.read = Some(Arc::new(read));
    t
}

/// A completion function taking the value typed so far.
#[derive(Debug)]
pub struct ViaTyped;
/// A completion function taking the value typed so far and the arguments already given.
#[derive(Debug)]
pub struct ViaTypedAndKnown;
/// A method completing with its service, from the value typed so far.
#[derive(Debug)]
pub struct ViaServiceTyped;
/// A method completing with its service, from the value typed so far and the arguments
/// already given.
#[derive(Debug)]
pub struct ViaServiceTypedAndKnown;

/// The completions of one argument or template variable (`completion/complete`).
pub type CompleteFn = Arc<dyn Fn(&str, &Map<String, Value>) -> Vec<String> + Send + Sync>;

/// A function that completes a prompt argument or a template variable
/// (`#[arg(complete = path)]`), given as a path.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot complete a value",
    label = "not a completion function",
    note = "a completion function takes the value typed so far (`&str`), and optionally the \
            other arguments already known (`&serde_json::Map<String, Value>`), and returns \
            `Vec<String>`; a method of a `#[tools]` impl block may take `&self` first"
)]
pub trait Complete<S, M> {
    /// The completer, with the service instance of a method's type.
    fn completer(self, service: Option<Arc<S>>) -> CompleteFn;
}

impl<S, F> Complete<S, ViaTyped> for F
where
    F: Fn(&str) -> Vec<String> + Send + Sync + 'static,
{
    fn completer(self, _: Option<Arc<S>>) -> CompleteFn {
        Arc::new(move |typed, _| self(typed))
    }
}

impl<S, F> Complete<S, ViaTypedAndKnown> for F
where
    F: Fn(&str, &Map<String, Value>) -> Vec<String> + Send + Sync + 'static,
{
    fn completer(self, _: Option<Arc<S>>) -> CompleteFn {
        Arc::new(self)
    }
}

impl<S, F> Complete<S, ViaServiceTyped> for F
where
    S: Send + Sync + 'static,
    F: Fn(&S, &str) -> Vec<String> + Send + Sync + 'static,
{
    fn completer(self, service: Option<Arc<S>>) -> CompleteFn {
        match service {
            Some(service) => Arc::new(move |typed, _| self(&service, typed)),
            None => Arc::new(|_, _| Vec::new()),
        }
    }
}

impl<S, F> Complete<S, ViaServiceTypedAndKnown> for F
where
    S: Send + Sync + 'static,
    F: Fn(&S, &str, &Map<String, Value>) -> Vec<String> + Send + Sync + 'static,
{
    fn completer(self, service: Option<Arc<S>>) -> CompleteFn {
        match service {
            Some(service) => Arc::new(move |typed, known| self(&service, typed, known)),
            None => Arc::new(|_, _| Vec::new()),
        }
    }
}

/// Completes the argument `name` of `prompt` with `complete`.
pub fn prompt_complete<S, M, F: Complete<S, M>>(
    prompt: &mut Prompt,
    name: &'static str,
    complete: F,
    service: Option<Arc<S>>,
) {
    prompt
        .completers
        .insert(name.to_owned(), complete.completer(service));
}

/// Completes the variable `name` of `template` with `complete`.
pub fn template_complete<S, M, F: Complete<S, M>>(
    template: &mut ResourceTemplate,
    name: &'static str,
    complete: F,
    service: Option<Arc<S>>,
) {
    template
        .completers
        .insert(name.to_owned(), complete.completer(service));
}

/// The icons of `icons = "[…]"` (JSON checked at compile time, its fields here).
pub fn icons(json: &str) -> Result<Vec<Icon>, String> {
    serde_json::from_str(json).map_err(|e| format!("`icons`: {e}"))
}

/// The entries of `meta = "{…}"` (a JSON object, checked at compile time).
pub fn meta(json: &str) -> Result<Map<String, Value>, String> {
    serde_json::from_str(json).map_err(|e| format!("`meta`: {e}"))
}

/// The service instance a method runs on.
pub fn offering_service<T: Send + Sync + 'static>(build: &Build) -> Result<Arc<T>, String> {
    build.service()
}

#[cfg(test)]
mod tests {
    use super::percent_decoded;

    #[test]
    fn variables_are_percent_decoded() {
        assert_eq!(percent_decoded("plain").unwrap(), "plain");
        assert_eq!(percent_decoded("a%20b%2Fc").unwrap(), "a b/c");
        assert_eq!(percent_decoded("caf%C3%A9").unwrap(), "café");
        for bad in ["100%", "%2", "%zz", "%C3", "%+1"] {
            assert!(percent_decoded(bad).is_none(), "{bad}");
        }
    }
}
