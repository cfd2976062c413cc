//! Who may use the endpoint: the [`Authenticator`](auth::Authenticator) trait and the bearer
//! tokens known in advance (`auth`), the OAuth 2.1 resource server that verifies access tokens
//! (`oauth`, feature `oauth`), and CORS for clients that run in a browser (`cors`).

pub(crate) mod auth;
pub(crate) mod cors;
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub(crate) mod oauth;
