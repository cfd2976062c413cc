//! The handlers of the methods: plain functions grouped by family, each taking the request as
//! its handler sees it ([`Cx`](crate::server::core::request::Cx)) and its typed params. The dispatch
//! table (`crate::server::core::dispatch`) routes each request to one of them; the state they work on sits
//! below them (the session, the shared server, the catalog, the task store).
//!
//! - `lifecycle`: `initialize`, `ping`, `logging/setLevel`, `server/discover`;
//! - `tools`: `tools/list`, `tools/call`, with `task_run` (a call that runs as a task) and `run`
//!   (one call run: middleware, argument conversion, validation, the tool, its result);
//! - `resources`, `prompts` (sharing `common`: a page of a list, scope checks, the run of a handler), `completion`;
//! - `tasks`: the tasks methods and a task's wire shapes;
//! - `skills`: the skills extension's methods;
//! - `subscriptions`: `subscriptions/listen`.

mod common;
pub(crate) mod completion;
pub(crate) mod lifecycle;
pub(crate) mod prompts;
pub(crate) mod resources;
mod run;
pub(crate) mod skills;
pub(crate) mod subscriptions;
pub(crate) mod task_run;
pub(crate) mod tasks;
pub(crate) mod tools;
