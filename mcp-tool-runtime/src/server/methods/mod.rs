//! The handlers of the methods, grouped by family: `tools` (`tools/list`, `tools/call`),
//! `offerings` (resources, prompts, completion),
//! `tasks` (the tasks methods and a task's wire shapes) with `task_run` (a call that runs as a
//! task). The dispatch table (`super::dispatch`) routes each request here; the state they
//! work on sits below them (the session, the shared server, the catalog, the task store).

pub(crate) mod offerings;
pub(crate) mod skills;
pub(crate) mod task_run;
pub(crate) mod tasks;
pub(crate) mod tools;
