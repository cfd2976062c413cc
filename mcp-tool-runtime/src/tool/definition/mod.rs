//! A tool's definition: the builder that generated code and dynamic tools fill in
//! (`builder`), the finished [`ToolDef`](def::ToolDef) (`def`), its input schema as every
//! client accepts it (`inline`, the integer ranges of `integers`, the header mirrors of
//! `headers`), and the arguments checked against it: converted where a model got them wrong
//! (`coerce`), validated (`validate`, with the validator's own rules in `quick`).
//!
//! It imports nothing else of `tool`: the call, its context and its result build on it.

pub(crate) mod builder;
pub(crate) mod coerce;
pub(crate) mod def;
pub(crate) mod headers;
pub(crate) mod inline;
pub(crate) mod integers;
pub(crate) mod quick;
pub(crate) mod validate;
