//! Tool parameters are extractors, as axum's handler parameters are: each parameter's type
//! decides, through [`FromToolCall`], whether it is a named argument (any `Deserialize +
//! JsonSchema` type), the whole arguments ([`Args<T>`]) or a value injected from the call's
//! context (any [`FromContext`] type, such as [`Ctx`]). The macros never look at type names.
//!
//! Values given to the server with `Server::state` are handed to the call by the server, as
//! axum hands `state` to its extractors: [`State<T>`] reads them from the call, not from the
//! connection.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserializer;
use serde::de::{self, DeserializeOwned, Visitor};
use serde_json::{Map, Value};

use crate::tool::arguments::Arguments;
use crate::tool::context::{
    CancellationToken, ClientInfo, Ctx, Identity, Logger, Progress, ToolManager,
};
use crate::tool::definition::builder::{DefBuilder, ParamSpec};
use crate::tool::result::{IntoToolResult, ToolError, ToolResult};

/// Values of any type, by type: the service instances and the states given to a server.
pub(crate) type TypeMap = HashMap<TypeId, Arc<dyn Any + Send + Sync>>;

/// One tool call as generated code sees it: the validated arguments, the service instance, the
/// server's states and the call's context.
pub struct ToolCall {
    pub(crate) arguments: Arguments,
    pub(crate) service: Option<Arc<dyn Any + Send + Sync>>,
    pub(crate) states: Arc<TypeMap>,
    pub(crate) ctx: Ctx,
}

impl ToolCall {
    /// The service instance of type `T`, for a tool defined on `T`'s impl block.
    pub fn service<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.service.clone()?.downcast::<T>().ok()
    }

    /// The call's context.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// The arguments not yet taken by a parameter.
    pub fn arguments(&self) -> &Map<String, Value> {
        self.arguments.map()
    }

    /// The value of type `T` given to the server with `Server::state`.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.states
            .get(&TypeId::of::<T>())?
            .clone()
            .downcast::<T>()
            .ok()
    }
}

/// Why a parameter could not be extracted: the call's result (boxed, as it is the cold path).
pub type Rejection = Box<ToolResult>;

mod sealed {
    pub trait Sealed<M> {}
}

/// A type that can be a tool parameter: an argument (`Deserialize + JsonSchema`), all the
/// arguments ([`Args<T>`]) or a context value ([`FromContext`]).
///
/// This trait is sealed: implement [`FromContext`] for values injected from the call's
/// context, or derive `Deserialize` and `JsonSchema` for arguments.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of a tool",
    label = "not an argument or a context value",
    note = "an argument's type implements `serde::Deserialize` and `schemars::JsonSchema`",
    note = "`Args<T>` takes all arguments as one struct; context values implement `FromContext`"
)]
pub trait FromToolCall<M>: Sized + sealed::Sealed<M> {
    /// Adds what this parameter contributes to the tool's definition (its schema).
    #[doc(hidden)]
    fn describe(def: &mut DefBuilder, spec: &ParamSpec);

    /// Takes the parameter's value from the call; an `Err` is the call's result.
    #[doc(hidden)]
    fn from_tool_call(call: &mut ToolCall, spec: &ParamSpec) -> Result<Self, Rejection>;
}

/// What a context value needs from the server, checked when the server starts (see
/// [`FromContext::requires`]).
pub struct Requirements<'a> {
    def: &'a mut DefBuilder,
}

impl std::fmt::Debug for Requirements<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Requirements").finish_non_exhaustive()
    }
}

impl Requirements<'_> {
    /// The value needs a `T` given to the server with `Server::state`: the server refuses to
    /// start without one.
    pub fn state<T: Send + Sync + 'static>(&mut self) -> &mut Self {
        self.def
            .require_state(TypeId::of::<T>(), std::any::type_name::<T>());
        self
    }
}

/// A value injected into a tool from the call's context, chosen by the parameter's type.
///
/// ```
/// use mcp_tool::ToolError;
/// use mcp_tool::extract::{FromContext, ToolCall};
///
/// /// The caller's tenant, read from the request's `_meta`.
/// struct Tenant(String);
///
/// impl FromContext for Tenant {
///     fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
///         let meta = call.ctx().meta();
///         match meta.and_then(|m| m.get("tenant")).and_then(|t| t.as_str()) {
///             Some(t) => Ok(Tenant(t.to_owned())),
///             None => Err(ToolError::msg("this tool needs `_meta.tenant`")),
///         }
///     }
/// }
/// ```
pub trait FromContext: Sized {
    /// Builds the value from the call.
    fn from_context(call: &ToolCall) -> Result<Self, ToolError>;

    /// Records what the value needs from the server (checked when the server starts).
    fn requires(requirements: &mut Requirements<'_>) {
        let _ = requirements;
    }
}

#[doc(hidden)]
#[derive(Debug)]
pub struct ViaArgument;
#[doc(hidden)]
#[derive(Debug)]
pub struct ViaArgs;
#[doc(hidden)]
#[derive(Debug)]
pub struct ViaContext;

impl<T: DeserializeOwned + JsonSchema> sealed::Sealed<ViaArgument> for T {}

impl<T: DeserializeOwned + JsonSchema> FromToolCall<ViaArgument> for T {
    fn describe(def: &mut DefBuilder, spec: &ParamSpec) {
        let schema = def.generator().subschema_for::<T>();
        def.property(spec, schema, !accepts_missing::<T>());
    }

    fn from_tool_call(call: &mut ToolCall, spec: &ParamSpec) -> Result<Self, Rejection> {
        argument(&mut call.arguments, spec.name)
    }
}

/// Takes argument `name` as a `T`: read from its text where the arguments are kept so,
/// else from the map.
pub(crate) fn argument<T: DeserializeOwned>(
    arguments: &mut Arguments,
    name: &str,
) -> Result<T, Rejection> {
    let value = match arguments.take(name) {
        Some(Some(value)) => return Ok(value),
        Some(None) => None,
        None => arguments.map_mut().remove(name),
    };
    let result = match value {
        Some(v) => T::deserialize(v).map_err(|e| e.to_string()),
        None => T::deserialize(Missing).map_err(|_| "required argument is missing".into()),
    };
    result.map_err(|e| Box::new(ToolResult::error(format!("{name}: {e}"))))
}

/// Takes an argument that falls back to `T::default()` when missing (`#[arg(default)]`).
pub(crate) fn argument_or_default<T: DeserializeOwned + JsonSchema + Default>(
    call: &mut ToolCall,
    spec: &ParamSpec,
) -> Result<T, Rejection> {
    match call.arguments.is_absent(spec.name) {
        true => Ok(T::default()),
        false => argument(&mut call.arguments, spec.name),
    }
}

/// Whether a missing argument is acceptable for `T` (it is for `Option<T>`), decided the way
/// serde decides it for a missing struct field.
fn accepts_missing<T: DeserializeOwned>() -> bool {
    T::deserialize(Missing).is_ok()
}

/// A deserializer standing for an absent value: only `Option`-like types accept it.
struct Missing;

impl<'de> Deserializer<'de> for Missing {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("missing"))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// All of a tool's arguments as one struct: `T`'s fields are the tool's arguments.
///
/// ```
/// use mcp_tool::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Search {
///     /// What to look for
///     query: String,
///     /// How many results to return
///     limit: Option<u32>,
/// }
///
/// /// Search the catalogue.
/// #[tool(read_only)]
/// fn search(Args(s): Args<Search>) -> String {
///     format!("{} (limit {})", s.query, s.limit.unwrap_or(10))
/// }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args<T>(pub T);

impl<T: DeserializeOwned + JsonSchema> sealed::Sealed<ViaArgs> for Args<T> {}

impl<T: DeserializeOwned + JsonSchema> FromToolCall<ViaArgs> for Args<T> {
    fn describe(def: &mut DefBuilder, _spec: &ParamSpec) {
        let schema = def.generator().subschema_for::<T>();
        def.whole(schema);
    }

    fn from_tool_call(call: &mut ToolCall, _spec: &ParamSpec) -> Result<Self, Rejection> {
        all_arguments(&mut call.arguments).map(Args)
    }
}

/// Takes all the arguments as one `T`.
pub(crate) fn all_arguments<T: DeserializeOwned>(
    arguments: &mut Arguments,
) -> Result<T, Rejection> {
    if let Some(all) = arguments.take_all() {
        return Ok(all);
    }
    let all = Value::Object(std::mem::take(arguments.map_mut()));
    T::deserialize(all).map_err(|e| Box::new(ToolResult::error(format!("arguments: {e}"))))
}

impl<T: FromContext> sealed::Sealed<ViaContext> for T {}

impl<T: FromContext> FromToolCall<ViaContext> for T {
    fn describe(def: &mut DefBuilder, _spec: &ParamSpec) {
        T::requires(&mut Requirements { def });
    }

    fn from_tool_call(call: &mut ToolCall, _spec: &ParamSpec) -> Result<Self, Rejection> {
        T::from_context(call).map_err(|e| Box::new(e.into_tool_result()))
    }
}

impl FromContext for Ctx {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.ctx.clone())
    }
}

impl FromContext for ClientInfo {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok((*call.ctx.state.client).clone())
    }
}

impl FromContext for Identity {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        call.ctx
            .identity()
            .cloned()
            .ok_or_else(|| ToolError::new("UNAUTHENTICATED", "this request carries no identity"))
    }
}

impl FromContext for Progress {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(Progress {
            ctx: call.ctx.clone(),
        })
    }
}

impl FromContext for CancellationToken {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.ctx.state.cancel().clone())
    }
}

impl FromContext for Logger {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.ctx.logger())
    }
}

impl FromContext for ToolManager {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.ctx.tools())
    }
}

/// A value given to the server with `Server::state`, shared by every call. A tool that takes
/// `State<T>` fails the server's start when no `T` was given.
pub struct State<T>(pub Arc<T>);

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T> std::ops::Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        call.state::<T>().map(State).ok_or_else(|| {
            ToolError::msg(format!(
                "internal error: no `{}` state was given to the server",
                std::any::type_name::<T>()
            ))
        })
    }

    fn requires(requirements: &mut Requirements<'_>) {
        requirements.state::<T>();
    }
}

/// The request's `_meta` (empty when it had none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta(pub Map<String, Value>);

impl FromContext for Meta {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(Meta(call.ctx.meta().cloned().unwrap_or_default()))
    }
}

/// The request's JSON-RPC id, as the client sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestId(pub Value);

impl FromContext for RequestId {
    fn from_context(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(RequestId(call.ctx.id().clone()))
    }
}

#[cfg(test)]
#[path = "extract_tests.rs"]
mod tests;
