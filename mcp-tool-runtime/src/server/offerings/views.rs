//! MCP Apps views: the `ui://` resource of each view a tool links to (`#[tool(ui = "name")]`),
//! with the `_meta.ui` that tells hosts how to show it ([`UiResourceMeta`]: its CSP domains,
//! the browser permissions it asks for, a dedicated origin, a border), and whether a client
//! declared the extension.

use serde::Serialize;
use serde_json::Value;

use crate::protocol::wire::Empty;

use crate::server::Server;

/// The MCP Apps extension's identifier (`capabilities.extensions`).
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// Whether a client's capabilities declare the MCP Apps extension:
/// `capabilities.extensions["io.modelcontextprotocol/ui"]` is an object (in 2025-11-25 from
/// `initialize`, in 2026-07-28 from each request's `_meta` clientCapabilities).
pub(crate) fn declares_ui(capabilities: &Value) -> bool {
    capabilities
        .get("extensions")
        .and_then(|e| e.get(UI_EXTENSION))
        .is_some_and(Value::is_object)
}

/// The domains an MCP Apps view may reach (`_meta.ui.csp`): each list a host turns into CSP
/// directives. A list left out is the host's restrictive default (none); an empty list says
/// so explicitly.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UiCsp {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) connect_domains: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resource_domains: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) frame_domains: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) base_uri_domains: Option<Vec<String>>,
}

impl UiCsp {
    /// Every domain given, for checking.
    fn domains(&self) -> impl Iterator<Item = &String> {
        [
            &self.connect_domains,
            &self.resource_domains,
            &self.frame_domains,
            &self.base_uri_domains,
        ]
        .into_iter()
        .flatten()
        .flatten()
    }
}

/// The browser features a view asks for (`_meta.ui.permissions`); hosts may grant them
/// through the iframe's `allow` attribute.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct UiPermissions {
    #[serde(skip_serializing_if = "Option::is_none")]
    camera: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    microphone: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    geolocation: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clipboard_write: Option<Empty>,
}

/// How a host should show an MCP Apps view: the `_meta.ui` of its `ui://` resource, as the
/// extension defines it (`McpUiResourceMeta`), given to [`Server::ui_meta`] for the view of
/// `#[tool(ui = "name")]`. It is served both in `resources/list` (for hosts to review when
/// they connect) and on the contents of `resources/read`.
///
/// ```
/// use mcp_tool::Server;
/// use mcp_tool::resource::UiResourceMeta;
///
/// let server = Server::new("weather", "1.0.0").ui_meta(
///     "forecast",
///     UiResourceMeta::new()
///         .connect_domains(["https://api.example.com"])
///         .resource_domains(["https://cdn.example.com"])
///         .prefers_border(true),
/// );
/// # let _ = server;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceMeta {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) csp: Option<UiCsp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permissions: Option<UiPermissions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    domain: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prefers_border: Option<bool>,
}

fn strings<I: IntoIterator<Item = S>, S: Into<String>>(items: I) -> Option<Vec<String>> {
    Some(items.into_iter().map(Into::into).collect())
}

impl UiResourceMeta {
    /// Nothing said: the host's defaults (no external domain, its own origin and border).
    pub fn new() -> Self {
        UiResourceMeta::default()
    }

    fn csp_mut(&mut self) -> &mut UiCsp {
        self.csp.get_or_insert_with(UiCsp::default)
    }

    fn permissions_mut(&mut self) -> &mut UiPermissions {
        self.permissions.get_or_insert_with(UiPermissions::default)
    }

    /// Origins the view may reach with `fetch`, XHR and WebSocket (`csp.connectDomains`, CSP
    /// `connect-src`). An empty list says explicitly that it reaches none.
    #[must_use]
    pub fn connect_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, d: I) -> Self {
        self.csp_mut().connect_domains = strings(d);
        self
    }

    /// Origins the view may load scripts, styles, images, fonts and media from
    /// (`csp.resourceDomains`; `https://*.example.com` covers subdomains).
    #[must_use]
    pub fn resource_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, d: I) -> Self {
        self.csp_mut().resource_domains = strings(d);
        self
    }

    /// Origins the view may embed in iframes of its own (`csp.frameDomains`, CSP `frame-src`;
    /// none without it).
    #[must_use]
    pub fn frame_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, d: I) -> Self {
        self.csp_mut().frame_domains = strings(d);
        self
    }

    /// Base URIs the view's document may set (`csp.baseUriDomains`, CSP `base-uri`; only its
    /// own origin without it).
    #[must_use]
    pub fn base_uri_domains<I: IntoIterator<Item = S>, S: Into<String>>(mut self, d: I) -> Self {
        self.csp_mut().base_uri_domains = strings(d);
        self
    }

    /// Asks for the camera (`permissions.camera`).
    #[must_use]
    pub fn camera(mut self) -> Self {
        self.permissions_mut().camera = Some(Empty {});
        self
    }

    /// Asks for the microphone (`permissions.microphone`).
    #[must_use]
    pub fn microphone(mut self) -> Self {
        self.permissions_mut().microphone = Some(Empty {});
        self
    }

    /// Asks for the user's location (`permissions.geolocation`).
    #[must_use]
    pub fn geolocation(mut self) -> Self {
        self.permissions_mut().geolocation = Some(Empty {});
        self
    }

    /// Asks to write to the clipboard (`permissions.clipboardWrite`).
    #[must_use]
    pub fn clipboard_write(mut self) -> Self {
        self.permissions_mut().clipboard_write = Some(Empty {});
        self
    }

    /// A dedicated origin for the view's sandbox (`domain`), for OAuth callbacks or API
    /// allowlists. Its form is the host's to define: see the host's documentation.
    #[must_use]
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border and background around the view
    /// (`prefersBorder`; hosts differ when it is left out).
    #[must_use]
    pub fn prefers_border(mut self, prefers: bool) -> Self {
        self.prefers_border = Some(prefers);
        self
    }

    /// What is wrong with the domains given: each must be an origin such as
    /// `https://api.example.com` (no spaces, quotes, `;` or `,`, which would break the CSP
    /// a host builds from it).
    pub(crate) fn problems(&self, view: &str) -> Vec<String> {
        let csp = self.csp.iter().flat_map(UiCsp::domains);
        csp.chain(self.domain.as_ref())
            .filter(|d| {
                d.is_empty()
                    || d.chars()
                        .any(|c| c.is_whitespace() || matches!(c, ';' | ',' | '\'' | '"'))
            })
            .map(|d| {
                format!(
                    "view `{view}`: {d:?} is not a domain a CSP can carry (an origin such as `https://api.example.com`)"
                )
            })
            .collect()
    }
}

impl Server {
    /// How hosts should show the MCP Apps view `name` (of `#[tool(ui = "name")]`): its CSP
    /// domains, the browser permissions it asks for, a dedicated origin and whether it
    /// wants a border, served as its `ui://` resource's `_meta.ui`. A CSP given here
    /// replaces [`Server::ui_csp`] for this view. A name no tool's view has stops the server
    /// from starting, as does a domain no CSP can carry.
    pub fn ui_meta(mut self, name: impl Into<String>, meta: UiResourceMeta) -> Self {
        self.offerings.views.insert(name.into(), meta);
        self
    }
}
