//! Items used by code that `mcp-tool-macros` generates. Not public API: reached only through
//! `::mcp_tool::__private`, and may change in any release.
//!
//! Each parameter and the return type reach the runtime through one function each
//! ([`param`], [`output`]), called with the same type at the same place in the definition
//! and the call: a type that is no extractor (or no result) is one error, reported once.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

pub use crate::protocol::{ResourceContents, RpcError};
pub use crate::server::offerings::macro_support::{
    ArgSpec, Complete, CompleteFn, Contents, ContextFns, PromptOutput, PromptParam, PromptParamFns,
    ResourceContext, ResourceOutput, TemplateVar, ViaOptional, ViaRequired, ViaServiceTyped,
    ViaServiceTypedAndKnown, ViaTyped, ViaTypedAndKnown, icons, meta, offering_service,
    prompt_complete, prompt_get, prompt_output, prompt_param, prompt_result, resource_contents,
    resource_context, resource_output, resource_read, template_complete, template_read,
    template_var,
};
pub use crate::server::offerings::prompt::{Prompt, PromptRequest, PromptResult};
pub use crate::server::offerings::record::{
    Build, Offering, OfferingKind, OfferingRecord, OfferingSet,
};
pub use crate::server::offerings::resource::{
    HandlerFuture, Resource, ResourceRequest, ResourceTemplate,
};
pub use crate::tool::blocking::{SyncPolicy, run_sync};
pub use crate::tool::extract::{ViaArgs, ViaArgument, ViaContext};
pub use crate::tool::result::summary::Summarize;
pub use crate::tool::{
    Annotations, BoxFuture, DefBuilder, FromToolCall, IntoToolResult, ParamSpec, Rejection,
    ServiceType, TaskSupport, ToolCall, ToolRecord, ToolResult, ToolSet,
};
pub use inventory;
pub use std::any::type_name;
pub use std::boxed::Box;
pub use std::option::Option::{self, None, Some};
pub use std::result::Result::{self, Err, Ok};
pub use std::string::String;
pub use std::sync::Arc;
pub use std::time::Duration;
pub use std::vec;
pub use std::{concat, env, include_str};
pub use std::{file, line};

use crate::tool::extract::argument_or_default;
use crate::tool::result::summary::check_template;

/// What generated code does with one parameter: describe it, and take it from a call.
pub struct Param<T> {
    /// Adds the parameter's part of the tool's definition.
    pub describe: fn(&mut DefBuilder, &ParamSpec),
    /// Takes the parameter's value from the call.
    pub extract: fn(&mut ToolCall, &ParamSpec) -> Result<T, Rejection>,
}

/// The parameter functions of a parameter of type `T`.
pub const fn param<T: FromToolCall<M>, M>() -> Param<T> {
    Param {
        describe: T::describe,
        extract: T::from_tool_call,
    }
}

/// The parameter functions of an argument that falls back to its `Default`
/// (`#[arg(default)]`).
pub const fn param_default<T: DeserializeOwned + JsonSchema + Default>() -> Param<T> {
    Param {
        describe: <T as FromToolCall<ViaArgument>>::describe,
        extract: argument_or_default::<T>,
    }
}

/// What generated code does with a tool's return type: its output schema, and the conversion
/// of a returned value.
pub struct Output<R> {
    /// Adds the output schema the type gives the tool.
    pub describe: fn(&mut DefBuilder),
    /// Converts a returned value.
    pub convert: fn(R) -> ToolResult,
}

/// The output functions of a return type `R`.
pub const fn output<R: IntoToolResult>() -> Output<R> {
    Output {
        describe: describe_output::<R>,
        convert: R::into_tool_result,
    }
}

fn describe_output<R: IntoToolResult>(def: &mut DefBuilder) {
    def.output_from(R::output_schema);
}

/// Converts a returned value with the text `summary` gives it (`summary = path` or a closure
/// that captures nothing). A function pointer, not a generic `FnOnce`: a function of the
/// wrong type is one mismatch, on the user's tokens.
pub fn summarized<R: Summarize>(r: R, summary: fn(&R::Value) -> String) -> ToolResult {
    r.summarize_with(summary).into_tool_result()
}

/// Converts a returned value with a template's text (`summary = "…"`), as [`summarized`].
pub fn templated<R: Summarize>(r: R, template: &'static str) -> ToolResult {
    r.summarize_template(template).into_tool_result()
}

/// Checks a `summary` template's fields against the result's (`R`'s) schema: a field it does
/// not have stops the server's start.
pub fn check_summary<R: IntoToolResult>(def: &mut DefBuilder, template: &'static str) {
    if let Err(problem) = check_template::<R>(template) {
        def.problem(problem);
    }
}

/// What generated code does with a tool method's service type: name it in the record, and
/// take the instance from a call. Checked (`Send + Sync`) in this one place.
pub struct Service<T> {
    /// The type, for the record.
    pub ty: ServiceType,
    /// Takes the instance from a call.
    pub take: fn(&ToolCall) -> Option<Arc<T>>,
}

/// The service functions of a service type `T`.
pub const fn service<T: Send + Sync + 'static>() -> Service<T> {
    Service {
        ty: ServiceType::of::<T>(),
        take: ToolCall::service::<T>,
    }
}

/// The result of a call whose service instance is missing (the server checks at start, so
/// this is only reached by a hand-built `ToolCall`).
pub fn missing_service(ty: &'static str) -> ToolResult {
    ToolResult::error(format!(
        "internal error: no `{ty}` instance was given to the server"
    ))
}

/// Converts a tool's return value whose type cannot be named (`impl Trait`, or none).
pub fn into_result<R: IntoToolResult>(r: R) -> ToolResult {
    r.into_tool_result()
}
