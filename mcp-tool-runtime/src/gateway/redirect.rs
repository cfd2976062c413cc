//! How a user comes back from signing in, and how the gateway knows it is the same user.
//!
//! The page a user is asked to open is the gateway's own **start link** (`{redirect_uri}?start=…`,
//! single use), not the authorization server's. Opening it sets a random cookie (`HttpOnly`,
//! `SameSite=Lax`, `Secure` when the redirect URI is https, limited to the redirect path) bound
//! to that sign-in, and sends the browser on to the authorization page. The redirect back is
//! taken only from a browser that holds the cookie (compared in constant time) and carries the
//! sign-in's `state`: someone else's browser that was handed the authorization page (or the
//! start link after its first opening) cannot finish the sign-in. The page that browser then
//! sees says how the code exchange ended, not merely that a redirect arrived.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

use crate::client::ClientFuture;
use crate::client::oauth::UserAgent;
use crate::server::core::handle::SignInPage;
use crate::sync::lock;

/// How long a user may take to sign in once the page is shown.
pub(super) const SIGN_IN_WAIT: Duration = Duration::from_secs(300);

/// How long the page the browser comes back to waits for the code exchange to end.
const OUTCOME_WAIT: Duration = Duration::from_secs(30);

/// The most sign-ins all mounts wait for at once.
const MAX_WAITING: usize = 1000;

/// What the browser that came back brings to its sign-in: the redirect's query, and where to
/// say how the sign-in ended (for the page it is shown).
pub(super) struct Arrival {
    query: String,
    outcome: oneshot::Sender<Result<(), String>>,
}

/// A sign-in waiting for its user's browser.
struct Pending {
    /// The authorization page the start link sends the browser to.
    authorize: String,
    /// The start link's id (single use: taken when first opened).
    start: String,
    /// The name of the cookie that binds a browser to this sign-in.
    cookie: String,
    /// SHA-256 of that cookie's value, once the start link was opened.
    binding: Option<[u8; 32]>,
    /// Where the cookie is sent back (the redirect URI's path), and whether only over https.
    path: String,
    secure: bool,
    back: oneshot::Sender<Arrival>,
}

/// The sign-ins the gateway waits for, by the `state` of their authorization request, and
/// their start links, by id.
#[derive(Default)]
pub(crate) struct Redirects {
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    waiting: HashMap<String, Pending>,
    /// Start link id → `state`, for start links not opened yet.
    starts: HashMap<String, String>,
}

/// Compares two byte strings in time that depends only on their lengths.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `bytes` random bytes, as hex.
fn random_hex(bytes: usize) -> Result<String, String> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|e| format!("no randomness: {e}"))?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}

/// The value of cookie `name` in a `Cookie` header's text.
fn cookie_value<'a>(cookies: &'a str, name: &str) -> Option<&'a str> {
    cookies
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
}

/// `text` for an HTML page.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn refused(text: &str) -> SignInPage {
    SignInPage::Page {
        ok: false,
        text: text.to_owned(),
        cookie: None,
    }
}

impl Redirects {
    /// Waits for the browser that opens the start link of a sign-in whose authorization page
    /// is `authorize` (its `state` taken from it) and whose users come back to `redirect_uri`:
    /// the start link, and what the browser brings back.
    fn expect(
        &self,
        authorize: &str,
        redirect_uri: &str,
    ) -> Result<(String, oneshot::Receiver<Arrival>), String> {
        let query = authorize
            .split_once('?')
            .map(|(_, q)| q)
            .unwrap_or_default();
        let state = form_value(query, "state")
            .ok_or_else(|| "the authorization request has no `state`".to_owned())?;
        let (start, slot) = (random_hex(32)?, random_hex(8)?);
        let path = super::connection::redirect_path(redirect_uri).to_owned();
        let mut table = lock(&self.table);
        table.waiting.retain(|_, p| !p.back.is_closed());
        let Table { waiting, starts } = &mut *table;
        starts.retain(|_, state| waiting.contains_key(state));
        if waiting.len() >= MAX_WAITING {
            return Err(format!(
                "{MAX_WAITING} sign-ins are under way already; try again shortly"
            ));
        }
        let (sender, receiver) = oneshot::channel();
        starts.insert(start.clone(), state.clone());
        waiting.insert(
            state,
            Pending {
                authorize: authorize.to_owned(),
                start: start.clone(),
                cookie: format!("mcp-sign-in-{slot}"),
                binding: None,
                path,
                secure: redirect_uri.starts_with("https://"),
                back: sender,
            },
        );
        Ok((format!("{redirect_uri}?start={start}"), receiver))
    }

    /// The answer to a browser on the redirect path: the start link (`start=…`) binds the
    /// browser to its sign-in and sends it on; the redirect back (`state=…`) goes to the
    /// sign-in that waits for it, from the browser bound to it only, and the page says how
    /// the sign-in ended.
    pub(crate) async fn page(&self, query: &str, cookies: &str) -> SignInPage {
        if let Some(start) = form_value(query, "start") {
            return self.open(&start);
        }
        let Some(state) = form_value(query, "state") else {
            return refused(
                "This address is where the gateway's sign-ins come back; it was opened without one.",
            );
        };
        let arrived = {
            let mut table = lock(&self.table);
            let Some(pending) = table.waiting.get(&state) else {
                return refused(
                    "No sign-in waits for this answer: it may have expired, or been completed already. Try again from your client.",
                );
            };
            let bound = pending.binding.as_ref().is_some_and(|binding| {
                cookie_value(cookies, &pending.cookie)
                    .is_some_and(|value| same_secret(&Sha256::digest(value.as_bytes()), binding))
            });
            if !bound {
                tracing::warn!(
                    "a sign-in's redirect came back from a browser that did not open its start link: refused"
                );
                return refused(
                    "This browser did not start this sign-in: only the browser that opened the gateway's sign-in link may finish it. Nothing was signed in.",
                );
            }
            table.waiting.remove(&state)
        };
        let Some(pending) = arrived else {
            return refused("No sign-in waits for this answer.");
        };
        let clear = format!(
            "{}=; Max-Age=0; Path={}; HttpOnly; SameSite=Lax{}",
            pending.cookie,
            pending.path,
            if pending.secure { "; Secure" } else { "" }
        );
        let (outcome, told) = oneshot::channel();
        let arrival = Arrival {
            query: query.to_owned(),
            outcome,
        };
        if pending.back.send(arrival).is_err() {
            return refused(
                "The sign-in was given up before this answer came. Try again from your client.",
            );
        }
        let (ok, text) = match tokio::time::timeout(OUTCOME_WAIT, told).await {
            Ok(Ok(Ok(()))) => (
                true,
                "You are signed in. You may close this window and go back to your client."
                    .to_owned(),
            ),
            Ok(Ok(Err(why))) => (
                false,
                format!("Signing in did not succeed: {}", escape(&why)),
            ),
            Ok(Err(_)) => (false, "The sign-in was given up.".to_owned()),
            Err(_) => (
                false,
                format!(
                    "The sign-in did not complete within {} s. Go back to your client to see whether it did.",
                    OUTCOME_WAIT.as_secs()
                ),
            ),
        };
        SignInPage::Page {
            ok,
            text,
            cookie: Some(clear),
        }
    }

    /// A start link opened: the first time, the browser gets the sign-in's cookie and goes on
    /// to the authorization page; every later time, and for a link never given, it is refused.
    fn open(&self, start: &str) -> SignInPage {
        let mut table = lock(&self.table);
        let Some(state) = table.starts.remove(start) else {
            return refused(
                "This sign-in link was used already, or has expired. Start again from your client.",
            );
        };
        let Some(pending) = table.waiting.get_mut(&state) else {
            return refused("This sign-in has expired. Start again from your client.");
        };
        if pending.start != start || pending.binding.is_some() {
            return refused("This sign-in link was used already. Start again from your client.");
        }
        let Ok(value) = random_hex(32) else {
            return refused("The gateway cannot start a sign-in now. Try again shortly.");
        };
        pending.binding = Some(Sha256::digest(value.as_bytes()).into());
        SignInPage::Redirect {
            location: pending.authorize.clone(),
            cookie: format!(
                "{}={value}; Max-Age={}; Path={}; HttpOnly; SameSite=Lax{}",
                pending.cookie,
                SIGN_IN_WAIT.as_secs(),
                pending.path,
                if pending.secure { "; Secure" } else { "" }
            ),
        }
    }
}

/// The value of `name` in a URL's query (`application/x-www-form-urlencoded`).
fn form_value(query: &str, name: &str) -> Option<String> {
    let url = reqwest::Url::parse(&format!("http://query.invalid/?{query}")).ok()?;
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The user agent of one sign-in: it shows nothing itself — the gateway's start link goes to
/// the user's call, which asks them to open it — and receives the redirect on the gateway's
/// endpoint.
pub(super) struct SignInAgent {
    pub(super) redirect_uri: String,
    pub(super) redirects: Arc<Redirects>,
    /// Shows the page to the user (through their call).
    pub(super) show: Box<dyn Fn(&str) + Send + Sync>,
    /// Open while the sign-in runs; a connection signed in already that finds its tokens
    /// refused fails at once instead, and its user is asked again by their next call.
    pub(super) open: AtomicBool,
    /// Where to say how the sign-in ended, once the browser came back.
    pub(super) outcome: Mutex<Option<oneshot::Sender<Result<(), String>>>>,
}

impl SignInAgent {
    /// Tells the browser that came back how the sign-in ended (the exchange, the checks).
    pub(super) fn finish(&self, outcome: Result<(), String>) {
        if let Some(told) = lock(&self.outcome).take() {
            let _ = told.send(outcome);
        }
    }
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
            let (start, back) = self.redirects.expect(url, &self.redirect_uri)?;
            (self.show)(&start);
            let arrival = tokio::time::timeout(SIGN_IN_WAIT, back)
                .await
                .map_err(|_| {
                    format!(
                        "the user did not sign in within {} s",
                        SIGN_IN_WAIT.as_secs()
                    )
                })?
                .map_err(|_| "the sign-in was given up".to_owned())?;
            *lock(&self.outcome) = Some(arrival.outcome);
            Ok(format!("{}?{}", self.redirect_uri, arrival.query))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_WAITING, Redirects, SignInPage, cookie_value, escape, form_value};

    const AUTHORIZE: &str = "https://as.example/auth?client_id=c&state=s1";
    const BACK: &str = "https://gw.example/oauth/callback";

    /// Opens `start`: the cookie pair the browser then holds, and where it was sent.
    fn open(redirects: &Redirects, start: &str) -> Option<(String, String)> {
        match redirects.open(start) {
            SignInPage::Redirect { location, cookie } => {
                assert!(
                    cookie.ends_with(
                        "; Max-Age=300; Path=/oauth/callback; HttpOnly; SameSite=Lax; Secure"
                    ),
                    "{cookie}"
                );
                Some((cookie.split(';').next().unwrap().to_owned(), location))
            }
            SignInPage::Page { .. } => None,
        }
    }

    fn start_id(link: &str) -> String {
        form_value(link.split_once('?').unwrap().1, "start").unwrap()
    }

    #[tokio::test]
    async fn a_redirect_is_taken_from_the_browser_that_opened_the_start_link_only() {
        let redirects = Redirects::default();
        let (link, mut back) = redirects.expect(AUTHORIZE, BACK).unwrap();
        assert!(link.starts_with(&format!("{BACK}?start=")), "{link}");
        let start = start_id(&link);
        // The redirect before the link was opened, or without the cookie: refused.
        let refused = |page: SignInPage| matches!(page, SignInPage::Page { ok: false, .. });
        assert!(refused(redirects.page("code=a&state=s1", "").await));
        let (cookie, location) = open(&redirects, &start).unwrap();
        assert_eq!(location, AUTHORIZE);
        // Once only.
        assert!(open(&redirects, &start).is_none());
        assert!(refused(redirects.page(&format!("start={start}"), "").await));
        assert!(refused(redirects.page("code=a&state=s1", "").await));
        let (name, _) = cookie.split_once('=').unwrap();
        let forged = format!("{name}=00");
        assert!(refused(redirects.page("code=a&state=s1", &forged).await));
        assert!(back.try_recv().is_err(), "nothing reached the sign-in");
        // Another state is another sign-in's.
        assert!(refused(redirects.page("code=a&state=other", &cookie).await));
        // The browser that opened the link: the sign-in gets the redirect, and the page waits
        // for its outcome.
        let jar = format!("other=1; {cookie}");
        let page = tokio::spawn(async move {
            let page = redirects.page("code=a&state=s1&iss=x", &jar).await;
            (page, redirects)
        });
        let arrival = back.await.unwrap();
        assert_eq!(arrival.query, "code=a&state=s1&iss=x");
        arrival
            .outcome
            .send(Err("the <token> endpoint said no".into()))
            .unwrap();
        let (page, redirects) = page.await.unwrap();
        match page {
            SignInPage::Page { ok, text, cookie } => {
                assert!(!ok);
                assert_eq!(
                    text,
                    "Signing in did not succeed: the &lt;token&gt; endpoint said no"
                );
                assert!(cookie.unwrap().contains("=; Max-Age=0;"));
            }
            SignInPage::Redirect { .. } => panic!("a page"),
        }
        // Once only.
        assert!(refused(redirects.page("code=a&state=s1", &cookie).await));
    }

    #[test]
    fn sign_ins_given_up_make_room_again() {
        let redirects = Redirects::default();
        let held: Vec<_> = (0..MAX_WAITING)
            .map(|i| {
                redirects
                    .expect(&format!("https://as/auth?state={i}"), BACK)
                    .unwrap()
            })
            .collect();
        assert!(
            redirects
                .expect("https://as/auth?state=more", BACK)
                .is_err()
        );
        drop(held);
        assert!(redirects.expect("https://as/auth?state=more", BACK).is_ok());
        assert_eq!(super::lock(&redirects.table).starts.len(), 1);
    }

    #[test]
    fn cookies_queries_and_pages_are_read_and_written_plainly() {
        assert_eq!(cookie_value("a=1; b=2", "b"), Some("2"));
        assert_eq!(cookie_value("ab=1", "b"), None);
        assert_eq!(
            form_value("a=1&state=x%20y", "state").as_deref(),
            Some("x y")
        );
        assert_eq!(
            escape("<a href='x'>&</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;"
        );
    }
}
