//! The endpoint's routes: its path, whose POST, GET and DELETE go to their handlers, and the
//! RFC 9728 protected-resource metadata, when configured; all share the endpoint's state.

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;

use crate::protocol::jsonrpc;
use crate::server::ServerHandle;
use crate::server::core::handle::SignInPage;

use crate::transport::http::config::HttpConfig;
use crate::transport::http::delete::handle_delete;
use crate::transport::http::endpoint::{Endpoint, split_url};
use crate::transport::http::get::handle_get;
use crate::transport::http::post::handle_post;

/// The endpoint's router and its shared state.
pub(super) fn build(server: ServerHandle, mut config: HttpConfig) -> (Router, Arc<Endpoint>) {
    // `serve_http` refuses this configuration; a router given it answers no origin for `*`.
    if config.any_origin_unauthenticated() {
        tracing::error!(
            "{}: `*` is not honoured",
            crate::transport::http::config::ANY_ORIGIN_UNAUTHENTICATED
        );
        if let Some(origins) = &mut config.cors_origins {
            origins.retain(|o| o != "*");
        }
    }
    let endpoint = Endpoint::start(server, config.clone());
    let mut router = Router::new().route(
        &config.path,
        get(handle_get).post(handle_post).delete(handle_delete),
    );
    if let Some(meta) = &config.resource_metadata {
        // RFC 9728: the well-known segment goes between the host and the resource's path.
        let (_, path) = split_url(&meta.resource);
        router = router.route(
            "/.well-known/oauth-protected-resource",
            get(handle_metadata),
        );
        if !path.is_empty() && path != "/" {
            router = router.route(
                &format!("/.well-known/oauth-protected-resource{path}"),
                get(handle_metadata),
            );
        }
    }
    if config.openapi.is_some() {
        let base = crate::transport::http::rest::base_of(&config.path);
        router = router
            .route(
                &format!("{base}/tools/{{name}}"),
                post(crate::transport::http::rest::handle_call),
            )
            .route(
                &format!("{base}/openapi.json"),
                get(crate::transport::http::rest::handle_document),
            );
    }
    // Users back from signing in to a mounted server (a gateway's per-user mounts).
    for path in endpoint.server.redirect_paths() {
        if path != config.path {
            router = router.route(&path, get(handle_redirect));
            endpoint
                .server
                .shared
                .receives_redirects
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let mut router = router
        .layer(DefaultBodyLimit::max(config.body_limit))
        .with_state(endpoint.clone());
    if let Some(origins) = &config.cors_origins {
        let origins: crate::transport::http::access::cors::Origins = origins.clone().into();
        router = router.layer(axum::middleware::from_fn_with_state(
            origins,
            crate::transport::http::access::cors::cors,
        ));
    }
    (router, endpoint)
}

/// RFC 9728: the protected-resource metadata, when the endpoint was given some.
async fn handle_metadata(State(endpoint): State<Arc<Endpoint>>) -> Response {
    let Some(meta) = &endpoint.config.resource_metadata else {
        return StatusCode::NOT_FOUND.into_response();
    };
    // The scopes configured, and those the tools, resources and prompts declare (the catalog
    // may change).
    let mut scopes = meta.scopes_supported.clone();
    let mut declared = endpoint.server.catalog().scopes();
    declared.extend(endpoint.server.offerings().scopes().cloned());
    for scope in declared {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    let body = ProtectedResource {
        resource: &meta.resource,
        authorization_servers: &meta.authorization_servers,
        bearer_methods_supported: &["header"],
        scopes_supported: &scopes,
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        jsonrpc::json_string(&body),
    )
        .into_response()
}

/// A browser on a redirect path of a gateway's per-user mounts: a sign-in's start link, which
/// binds the browser to the sign-in (a cookie) and sends it on to the authorization server, or
/// a user back from it, whose redirect goes to the sign-in that waits for its `state` from the
/// browser bound to it only (the code in it is read by no one else, and logged nowhere). The
/// page says "signed in" once the code exchange succeeded.
async fn handle_redirect(
    State(endpoint): State<Arc<Endpoint>>,
    RawQuery(query): RawQuery,
    headers: axum::http::HeaderMap,
) -> Response {
    let cookies: Vec<&str> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let answer = endpoint
        .server
        .sign_in_page(query.as_deref().unwrap_or_default(), &cookies.join("; "))
        .await;
    let (status, text, cookie, location) = match answer {
        SignInPage::Redirect { location, cookie } => (
            StatusCode::SEE_OTHER,
            String::new(),
            Some(cookie),
            Some(location),
        ),
        SignInPage::Page { ok, text, cookie } => {
            let status = if ok {
                StatusCode::OK
            } else {
                StatusCode::BAD_REQUEST
            };
            (status, text, cookie, None)
        }
    };
    let mut response = (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        format!("<!doctype html><title>Sign-in</title><p>{text}</p>"),
    )
        .into_response();
    let set = |response: &mut Response, name, value: Option<String>| {
        if let Some(value) = value.and_then(|v| header::HeaderValue::try_from(v).ok()) {
            response.headers_mut().insert(name, value);
        }
    };
    set(&mut response, header::SET_COOKIE, cookie);
    set(&mut response, header::LOCATION, location);
    response
}

/// RFC 9728 protected-resource metadata.
#[derive(Serialize)]
struct ProtectedResource<'a> {
    resource: &'a str,
    authorization_servers: &'a [String],
    bearer_methods_supported: &'a [&'a str],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    scopes_supported: &'a [String],
}
