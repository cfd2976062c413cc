//! How a user comes back from signing in: the gateway's user agent for one sign-in, which
//! hands the authorization page to the user's call and waits for the authorization server's
//! redirect, and the table of redirects waited for, by their `state`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::client::ClientFuture;
use crate::client::oauth::UserAgent;
use crate::sync::lock;

/// How long a user may take to sign in once the page is shown.
pub(super) const SIGN_IN_WAIT: Duration = Duration::from_secs(300);

/// The most sign-ins all mounts wait for at once.
const MAX_WAITING: usize = 1000;

/// The redirects the gateway waits for, by the `state` of their authorization request.
#[derive(Default)]
pub(crate) struct Redirects {
    waiting: Mutex<HashMap<String, oneshot::Sender<String>>>,
}

impl Redirects {
    fn expect(&self, state: &str) -> Result<oneshot::Receiver<String>, String> {
        let mut waiting = lock(&self.waiting);
        waiting.retain(|_, sender| !sender.is_closed());
        if waiting.len() >= MAX_WAITING {
            return Err(format!(
                "{MAX_WAITING} sign-ins are under way already; try again shortly"
            ));
        }
        let (sender, receiver) = oneshot::channel();
        waiting.insert(state.to_owned(), sender);
        Ok(receiver)
    }

    /// Hands a redirect (its query) to the sign-in that waits for its `state`; whether one
    /// did.
    pub(crate) fn arrived(&self, query: &str) -> bool {
        let Some(state) = form_value(query, "state") else {
            return false;
        };
        let sender = lock(&self.waiting).remove(&state);
        sender.is_some_and(|s| s.send(query.to_owned()).is_ok())
    }
}

/// The value of `name` in a URL's query (`application/x-www-form-urlencoded`).
fn form_value(query: &str, name: &str) -> Option<String> {
    let url = reqwest::Url::parse(&format!("http://query.invalid/?{query}")).ok()?;
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The user agent of one sign-in: it shows nothing itself — the page goes to the user's call,
/// which asks them to open it — and receives the redirect on the gateway's endpoint.
pub(super) struct SignInAgent {
    pub(super) redirect_uri: String,
    pub(super) redirects: Arc<Redirects>,
    /// Shows the page to the user (through their call).
    pub(super) show: Box<dyn Fn(&str) + Send + Sync>,
    /// Open while the sign-in runs; a connection signed in already that finds its tokens
    /// refused fails at once instead, and its user is asked again by their next call.
    pub(super) open: AtomicBool,
}

impl UserAgent for SignInAgent {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(&'a self, url: &'a str) -> ClientFuture<'a, Result<String, String>> {
        Box::pin(async move {
            if !self.open.load(Ordering::SeqCst) {
                return Err(
                    "the user's authorization ended; they are asked to sign in again".into(),
                );
            }
            let query = url.split_once('?').map(|(_, q)| q).unwrap_or_default();
            let state = form_value(query, "state")
                .ok_or_else(|| "the authorization request has no `state`".to_owned())?;
            let back = self.redirects.expect(&state)?;
            (self.show)(url);
            let query = tokio::time::timeout(SIGN_IN_WAIT, back)
                .await
                .map_err(|_| {
                    format!(
                        "the user did not sign in within {} s",
                        SIGN_IN_WAIT.as_secs()
                    )
                })?
                .map_err(|_| "the sign-in was given up".to_owned())?;
            Ok(format!("{}?{query}", self.redirect_uri))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_WAITING, Redirects, form_value};

    #[test]
    fn a_redirect_goes_to_the_sign_in_that_waits_for_its_state_only() {
        let redirects = Redirects::default();
        let mut waiting = redirects.expect("s1").unwrap();
        assert!(!redirects.arrived("code=abc&state=other"));
        assert!(!redirects.arrived("code=abc"));
        assert!(redirects.arrived("code=abc&state=s1&iss=http%3A%2F%2Fas"));
        assert_eq!(
            waiting.try_recv().unwrap(),
            "code=abc&state=s1&iss=http%3A%2F%2Fas"
        );
        // Once only.
        assert!(!redirects.arrived("code=abc&state=s1"));
        assert_eq!(
            form_value("a=1&state=x%20y", "state").as_deref(),
            Some("x y")
        );
    }

    #[test]
    fn sign_ins_given_up_make_room_again() {
        let redirects = Redirects::default();
        let held: Vec<_> = (0..MAX_WAITING)
            .map(|i| redirects.expect(&i.to_string()).unwrap())
            .collect();
        assert!(redirects.expect("one more").is_err());
        drop(held);
        assert!(redirects.expect("one more").is_ok());
    }
}
