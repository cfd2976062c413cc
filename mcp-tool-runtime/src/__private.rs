//! Items used by code that `mcp-tool-macros` generates. Not public API: reached only through
//! `::mcp_tool::__private`, and may change in any release.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

pub use crate::extract::{FromToolCall, Rejection, ToolCall, ViaArgs, ViaArgument, ViaContext};
pub use crate::registry::{BoxFuture, ServiceType, ToolRecord, ToolSet};
pub use crate::result::{IntoToolResult, ToolResult};
pub use crate::schema::{Annotations, DefBuilder, ParamSpec};
pub use crate::sync_tools::{SyncPolicy, run_sync};
pub use inventory;
pub use std::any::type_name;
pub use std::boxed::Box;
pub use std::option::Option::{self, None, Some};
pub use std::result::Result::{self, Err, Ok};
pub use std::sync::Arc;
pub use std::vec;

/// Adds a parameter's contribution to a tool's definition.
pub fn describe<T: FromToolCall<M>, M>(def: &mut DefBuilder, spec: &ParamSpec) {
    T::describe(def, spec);
}

/// Adds an argument that falls back to its `Default` (`#[arg(default)]`).
pub fn describe_default<T: DeserializeOwned + JsonSchema + Default>(
    def: &mut DefBuilder,
    spec: &ParamSpec,
) {
    <T as FromToolCall<ViaArgument>>::describe(def, spec);
}

/// Takes a parameter's value from the call.
pub fn extract<T: FromToolCall<M>, M>(
    call: &mut ToolCall,
    spec: &ParamSpec,
) -> Result<T, Rejection> {
    T::from_tool_call(call, spec)
}

pub use crate::extract::argument_or_default as extract_default;

/// Adds the output schema a return type gives the tool.
pub fn output<R: IntoToolResult>(def: &mut DefBuilder) {
    def.output_from(R::output_schema);
}

/// Converts a tool's return value.
pub fn into_result<R: IntoToolResult>(r: R) -> ToolResult {
    r.into_tool_result()
}

/// The result of a call whose service instance is missing (the server checks at start, so
/// this is only reached by a hand-built `ToolCall`).
pub fn missing_service(ty: &'static str) -> ToolResult {
    ToolResult::error(format!(
        "internal error: no `{ty}` instance was given to the server"
    ))
}

pub use std::time::Duration;
pub use std::{concat, env, include_str};
pub use std::{file, line};
