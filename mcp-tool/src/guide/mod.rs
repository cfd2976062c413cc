//! The guide: one chapter for each part of the framework, each example compiled and run as a
//! doc test. The chapters are Markdown files beside this module (`mcp-tool/src/guide/*.md`),
//! so they read the same on GitHub; the repository's README links each one.
//!
//! | chapter | what |
//! |---|---|
//! | [`tools`] | a first server, tools on a service, parameters, results and errors, the call's context, which tools a session sees, describing a tool, tools defined at run time, summaries for the model |
//! | [`validation`] | validation against the advertised JSON Schema, arguments models get wrong, output validation, schemas every client accepts |
//! | [`prompts_resources`] | `#[prompt]`, `#[resource]`, `#[resource_template]`, completion, the builders, Agent Skills |
//! | [`versions`] | MCP 2026-07-28 and 2025-11-25 from the same definitions, asking the user or the model, what a session held |
//! | [`serving`] | stdio, Streamable HTTP, your own axum app, Unix sockets, CORS, resumable streams |
//! | [`middleware`] | around every request and every call; rate limits, masked errors, result budgets, audit |
//! | [`oauth`] | a server on the internet: OAuth 2.1 access tokens, DPoP, scopes on tools |
//! | [`tasks`] | long jobs as tasks, and their store |
//! | [`gateway`] | mounting other MCP servers, the connection store, each user signing in |
//! | [`openapi`] | tools as a REST API with an OpenAPI document, and HTTP services mounted by theirs |
//! | [`client`] | the MCP client, and how it reaches servers behind OAuth |
//! | [`replicas`] | several replicas behind a load balancer, sharing Redis; `deploy/` and its chaos run |
//! | [`observability`] | logs to the client, `tracing`, OpenTelemetry |
//! | [`testing`] | the in-process client, example checks, property tests |
//! | [`cli`] | every server binary's command line, its environment, installing into a host, the MCP Inspector |
//! | [`limits`] | every bound, its default, its setting, and what happens beyond it |

// Each chapter sees the crate root's names, so that its links read as they would there.
macro_rules! chapter {
    ($name:ident, $file:literal) => {
        pub mod $name {
            #![doc = include_str!($file)]
            #[allow(unused_imports)]
            use crate::*;
        }
    };
}

chapter!(tools, "tools.md");
chapter!(validation, "validation.md");
chapter!(prompts_resources, "prompts_resources.md");
chapter!(versions, "versions.md");
chapter!(serving, "serving.md");
chapter!(middleware, "middleware.md");
chapter!(oauth, "oauth.md");
chapter!(tasks, "tasks.md");
chapter!(gateway, "gateway.md");
chapter!(openapi, "openapi.md");
chapter!(client, "client.md");
chapter!(replicas, "replicas.md");
chapter!(observability, "observability.md");
chapter!(testing, "testing.md");
chapter!(cli, "cli.md");
chapter!(limits, "limits.md");
