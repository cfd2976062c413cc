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
//!
//! A sign-in waiting for its user is a set of records in the server's store (shared by its
//! replicas, else this process's memory), each single use where it must be (taken
//! atomically): the start link (`sign-in:start:{id}`, giving the `state`), the sign-in
//! (`sign-in:pending:{state}`: the authorization page, the cookie's name and path), and once
//! the link was opened the digest of the cookie it set (`sign-in:bound:{state}`). The start
//! link and the redirect back may reach any replica. The code is exchanged by the replica
//! whose connection asked for it (the PKCE verifier and the connection's DPoP key never leave
//! it): a redirect reaching another replica leaves the query for it (`sign-in:arrival:{state}`,
//! which it polls), and reads how the exchange ended (`sign-in:outcome:{state}`) for the page.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

use crate::client::ClientFuture;
use crate::client::oauth::UserAgent;
use crate::server::core::handle::SignInPage;
use crate::server::replicas::{MemoryReplicaStore, ReplicaStore};
use crate::sync::lock;

/// How long a user may take to sign in once the page is shown.
pub(super) const SIGN_IN_WAIT: Duration = Duration::from_secs(300);

/// How long the page the browser comes back to waits for the code exchange to end.
const OUTCOME_WAIT: Duration = Duration::from_secs(30);

/// How often a replica looks for what the store holds for it (a redirect another replica
/// took, the outcome of an exchange another replica made).
const POLL: Duration = Duration::from_millis(200);

/// The most sign-ins this replica waits for at once (all mounts).
const MAX_WAITING: usize = 1000;

/// How a sign-in's exchange ended, told to the page of the browser that came back.
type Outcome = Result<(), String>;

/// Where to say how the exchange ended: the page waiting on this replica, or the store (the
/// page waits on another).
pub(super) enum Told {
    Here(oneshot::Sender<Outcome>),
    Store(Arc<dyn ReplicaStore>, String),
}

/// What the browser that came back brings to its sign-in: the redirect's query, and where to
/// say how the sign-in ended (for the page it is shown).
pub(super) struct Arrival {
    query: String,
    outcome: Told,
}

/// A sign-in waiting for its user's browser, as the store keeps it.
#[derive(Serialize, Deserialize)]
struct Pending {
    /// The authorization page the start link sends the browser to.
    authorize: String,
    /// The name of the cookie that binds a browser to this sign-in.
    cookie: String,
    /// Where the cookie is sent back (the redirect URI's path), and whether only over https.
    path: String,
    secure: bool,
}

/// How an exchange made on another replica ended, as the store keeps it.
#[derive(Serialize, Deserialize)]
struct StoredOutcome {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failed: Option<String>,
}

/// The sign-ins this replica waits for (by the `state` of their authorization request), and
/// the store where every replica finds them.
pub(crate) struct Redirects {
    store: OnceLock<Arc<dyn ReplicaStore>>,
    /// The store until the server gives its own.
    own: Arc<dyn ReplicaStore>,
    waiting: Mutex<HashMap<String, oneshot::Sender<Arrival>>>,
    /// Whether a stdio user's sign-in page is opened with the desktop's browser.
    pub(crate) open_browser: AtomicBool,
}

impl Default for Redirects {
    fn default() -> Self {
        Redirects {
            store: OnceLock::new(),
            own: Arc::new(MemoryReplicaStore::default()),
            waiting: Mutex::default(),
            open_browser: AtomicBool::new(false),
        }
    }
}

fn start_key(start: &str) -> String {
    format!("sign-in:start:{start}")
}

fn pending_key(state: &str) -> String {
    format!("sign-in:pending:{state}")
}

fn bound_key(state: &str) -> String {
    format!("sign-in:bound:{state}")
}

fn arrival_key(state: &str) -> String {
    format!("sign-in:arrival:{state}")
}

fn outcome_key(state: &str) -> String {
    format!("sign-in:outcome:{state}")
}

/// One store operation, bounded in time; `None` when it failed (logged).
async fn stored<T>(operation: crate::server::replicas::ReplicaFuture<'_, T>) -> Option<T> {
    match tokio::time::timeout(Duration::from_secs(5), operation).await {
        Ok(Ok(done)) => Some(done),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "a sign-in's record could not be reached");
            None
        }
        Err(_) => {
            tracing::warn!("the store did not answer within 5 s for a sign-in's record");
            None
        }
    }
}

/// Compares two byte strings in time that depends only on their lengths.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `bytes` random bytes, as hex.
fn random_hex(bytes: usize) -> Result<String, String> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|e| format!("no randomness: {e}"))?;
    Ok(hex(&buffer))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
    /// The store the sign-ins' records live in: the server's, once it gave it.
    pub(crate) fn attach(&self, store: Arc<dyn ReplicaStore>) {
        let _ = self.store.set(store);
    }

    pub(crate) fn open_browser(&self) -> bool {
        self.open_browser.load(Ordering::Relaxed)
    }

    fn store(&self) -> &Arc<dyn ReplicaStore> {
        self.store.get().unwrap_or(&self.own)
    }

    /// Waits for the browser that opens the start link of a sign-in whose authorization page
    /// is `authorize` (its `state` taken from it) and whose users come back to `redirect_uri`:
    /// the start link, the `state`, and what the browser brings back (if it comes back here).
    async fn expect(
        &self,
        authorize: &str,
        redirect_uri: &str,
    ) -> Result<(String, String, oneshot::Receiver<Arrival>), String> {
        let query = authorize
            .split_once('?')
            .map(|(_, q)| q)
            .unwrap_or_default();
        let state = form_value(query, "state")
            .ok_or_else(|| "the authorization request has no `state`".to_owned())?;
        let (start, slot) = (random_hex(32)?, random_hex(8)?);
        let path = super::connection::redirect_path(redirect_uri).to_owned();
        let receiver = {
            let mut waiting = lock(&self.waiting);
            waiting.retain(|_, back| !back.is_closed());
            if waiting.len() >= MAX_WAITING {
                return Err(format!(
                    "{MAX_WAITING} sign-ins are under way already; try again shortly"
                ));
            }
            let (sender, receiver) = oneshot::channel();
            waiting.insert(state.clone(), sender);
            receiver
        };
        let pending = Pending {
            authorize: authorize.to_owned(),
            cookie: format!("mcp-sign-in-{slot}"),
            path,
            secure: redirect_uri.starts_with("https://"),
        };
        let text = serde_json::to_string(&pending).map_err(|e| e.to_string())?;
        let store = self.store();
        let kept = stored(store.put(&pending_key(&state), &text, SIGN_IN_WAIT))
            .await
            .is_some()
            && stored(store.put_new(&start_key(&start), &state, SIGN_IN_WAIT))
                .await
                .unwrap_or(false);
        if !kept {
            lock(&self.waiting).remove(&state);
            return Err("the sign-in could not be kept in the store; try again shortly".to_owned());
        }
        Ok((format!("{redirect_uri}?start={start}"), state, receiver))
    }

    /// What the browser brings back to sign-in `state`: here, or through the store (it came
    /// back to another replica).
    async fn arrival(
        &self,
        state: &str,
        mut here: oneshot::Receiver<Arrival>,
    ) -> Result<Arrival, String> {
        let store = self.store().clone();
        let key = arrival_key(state);
        let deadline = tokio::time::Instant::now() + SIGN_IN_WAIT;
        loop {
            tokio::select! {
                came = &mut here => {
                    return came.map_err(|_| "the sign-in was given up".to_owned());
                }
                () = tokio::time::sleep(POLL) => {}
            }
            if let Some(Some(query)) = stored(store.take(&key)).await {
                lock(&self.waiting).remove(state);
                return Ok(Arrival {
                    query,
                    outcome: Told::Store(store, state.to_owned()),
                });
            }
            if tokio::time::Instant::now() >= deadline {
                lock(&self.waiting).remove(state);
                return Err(format!(
                    "the user did not sign in within {} s",
                    SIGN_IN_WAIT.as_secs()
                ));
            }
        }
    }

    /// The answer to a browser on the redirect path: the start link (`start=…`) binds the
    /// browser to its sign-in and sends it on; the redirect back (`state=…`) goes to the
    /// sign-in that waits for it, from the browser bound to it only, and the page says how
    /// the sign-in ended.
    pub(crate) async fn page(&self, query: &str, cookies: &str) -> SignInPage {
        if let Some(start) = form_value(query, "start") {
            return self.open(&start).await;
        }
        let Some(state) = form_value(query, "state") else {
            return refused(
                "This address is where the gateway's sign-ins come back; it was opened without one.",
            );
        };
        let store = self.store().clone();
        let pending = stored(store.get(&pending_key(&state)))
            .await
            .flatten()
            .and_then(|text| serde_json::from_str::<Pending>(&text).ok());
        let Some(pending) = pending else {
            return refused(
                "No sign-in waits for this answer: it may have expired, or been completed already. Try again from your client.",
            );
        };
        let binding = stored(store.get(&bound_key(&state))).await.flatten();
        let bound = binding.as_deref().is_some_and(|binding| {
            cookie_value(cookies, &pending.cookie).is_some_and(|value| {
                same_secret(
                    hex(&Sha256::digest(value.as_bytes())).as_bytes(),
                    binding.as_bytes(),
                )
            })
        });
        if !bound {
            tracing::warn!(
                "a sign-in's redirect came back from a browser that did not open its start link: refused"
            );
            return refused(
                "This browser did not start this sign-in: only the browser that opened the gateway's sign-in link may finish it. Nothing was signed in.",
            );
        }
        // Once only, whichever replica it reaches.
        if stored(store.take(&bound_key(&state)))
            .await
            .flatten()
            .is_none()
        {
            return refused("No sign-in waits for this answer.");
        }
        let _ = stored(store.remove(&pending_key(&state))).await;
        let clear = format!(
            "{}=; Max-Age=0; Path={}; HttpOnly; SameSite=Lax{}",
            pending.cookie,
            pending.path,
            if pending.secure { "; Secure" } else { "" }
        );
        let told = self.deliver(&store, &state, query).await;
        let (ok, text) = match told {
            Err(page) => return page,
            Ok(Some(Ok(()))) => (
                true,
                "You are signed in. You may close this window and go back to your client."
                    .to_owned(),
            ),
            Ok(Some(Err(why))) => (
                false,
                format!("Signing in did not succeed: {}", escape(&why)),
            ),
            Ok(None) => (
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

    /// Gives the redirect's query to the sign-in `state` — waiting here, or on another replica
    /// (through the store) — and waits for how its exchange ended (`None`: not in time).
    async fn deliver(
        &self,
        store: &Arc<dyn ReplicaStore>,
        state: &str,
        query: &str,
    ) -> Result<Option<Outcome>, SignInPage> {
        let here = lock(&self.waiting).remove(state);
        if let Some(back) = here {
            let (outcome, told) = oneshot::channel();
            let arrival = Arrival {
                query: query.to_owned(),
                outcome: Told::Here(outcome),
            };
            if back.send(arrival).is_err() {
                return Err(refused(
                    "The sign-in was given up before this answer came. Try again from your client.",
                ));
            }
            return Ok(match tokio::time::timeout(OUTCOME_WAIT, told).await {
                Ok(Ok(outcome)) => Some(outcome),
                Ok(Err(_)) => Some(Err("the sign-in was given up".to_owned())),
                Err(_) => None,
            });
        }
        if stored(store.put(&arrival_key(state), query, OUTCOME_WAIT))
            .await
            .is_none()
        {
            return Err(refused(
                "The gateway could not pass this answer on. Try again from your client.",
            ));
        }
        let deadline = tokio::time::Instant::now() + OUTCOME_WAIT;
        while tokio::time::Instant::now() < deadline {
            tokio::time::sleep(POLL).await;
            if let Some(Some(text)) = stored(store.take(&outcome_key(state))).await {
                let outcome = serde_json::from_str::<StoredOutcome>(&text)
                    .ok()
                    .and_then(|o| o.failed)
                    .map_or(Ok(()), Err);
                return Ok(Some(outcome));
            }
        }
        Ok(None)
    }

    /// A start link opened: the first time, the browser gets the sign-in's cookie and goes on
    /// to the authorization page; every later time, and for a link never given, it is refused.
    async fn open(&self, start: &str) -> SignInPage {
        let store = self.store().clone();
        let Some(state) = stored(store.take(&start_key(start))).await.flatten() else {
            return refused(
                "This sign-in link was used already, or has expired. Start again from your client.",
            );
        };
        let pending = stored(store.get(&pending_key(&state)))
            .await
            .flatten()
            .and_then(|text| serde_json::from_str::<Pending>(&text).ok());
        let Some(pending) = pending else {
            return refused("This sign-in has expired. Start again from your client.");
        };
        let Ok(value) = random_hex(32) else {
            return refused("The gateway cannot start a sign-in now. Try again shortly.");
        };
        let binding = hex(&Sha256::digest(value.as_bytes()));
        if !stored(store.put_new(&bound_key(&state), &binding, SIGN_IN_WAIT))
            .await
            .unwrap_or(false)
        {
            return refused("This sign-in link was used already. Start again from your client.");
        }
        SignInPage::Redirect {
            location: pending.authorize,
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
    pub(super) outcome: Mutex<Option<Told>>,
}

impl SignInAgent {
    /// Tells the browser that came back how the sign-in ended (the exchange, the checks).
    pub(super) fn finish(&self, outcome: Outcome) {
        match lock(&self.outcome).take() {
            Some(Told::Here(told)) => {
                let _ = told.send(outcome);
            }
            Some(Told::Store(store, state)) => {
                let text = serde_json::to_string(&StoredOutcome {
                    failed: outcome.err(),
                })
                .unwrap_or_default();
                tokio::spawn(async move {
                    let _ = stored(store.put(&outcome_key(&state), &text, OUTCOME_WAIT)).await;
                });
            }
            None => {}
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
            let (start, state, back) = self.redirects.expect(url, &self.redirect_uri).await?;
            (self.show)(&start);
            let arrival = self.redirects.arrival(&state, back).await?;
            *lock(&self.outcome) = Some(arrival.outcome);
            Ok(format!("{}?{}", self.redirect_uri, arrival.query))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{MAX_WAITING, Redirects, SignInPage, Told, cookie_value, escape, form_value};
    use crate::server::replicas::{MemoryReplicaStore, ReplicaStore};

    const AUTHORIZE: &str = "https://as.example/auth?client_id=c&state=s1";
    const BACK: &str = "https://gw.example/oauth/callback";

    /// Opens `start`: the cookie pair the browser then holds, and where it was sent.
    async fn open(redirects: &Redirects, start: &str) -> Option<(String, String)> {
        match redirects.open(start).await {
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

    fn refused(page: &SignInPage) -> bool {
        matches!(page, SignInPage::Page { ok: false, .. })
    }

    #[tokio::test]
    async fn a_redirect_is_taken_from_the_browser_that_opened_the_start_link_only() {
        let redirects = Arc::new(Redirects::default());
        let (link, state, mut back) = redirects.expect(AUTHORIZE, BACK).await.unwrap();
        assert_eq!(state, "s1");
        assert!(link.starts_with(&format!("{BACK}?start=")), "{link}");
        let start = start_id(&link);
        // The redirect before the link was opened, or without the cookie: refused.
        assert!(refused(&redirects.page("code=a&state=s1", "").await));
        let (cookie, location) = open(&redirects, &start).await.unwrap();
        assert_eq!(location, AUTHORIZE);
        // Once only.
        assert!(open(&redirects, &start).await.is_none());
        assert!(refused(
            &redirects.page(&format!("start={start}"), "").await
        ));
        assert!(refused(&redirects.page("code=a&state=s1", "").await));
        let (name, _) = cookie.split_once('=').unwrap();
        let forged = format!("{name}=00");
        assert!(refused(&redirects.page("code=a&state=s1", &forged).await));
        assert!(back.try_recv().is_err(), "nothing reached the sign-in");
        // Another state is another sign-in's.
        assert!(refused(
            &redirects.page("code=a&state=other", &cookie).await
        ));
        // The browser that opened the link: the sign-in gets the redirect, and the page waits
        // for its outcome.
        let jar = format!("other=1; {cookie}");
        let page = {
            let redirects = redirects.clone();
            tokio::spawn(async move { redirects.page("code=a&state=s1&iss=x", &jar).await })
        };
        let arrival = back.await.unwrap();
        assert_eq!(arrival.query, "code=a&state=s1&iss=x");
        let Told::Here(outcome) = arrival.outcome else {
            panic!("told here")
        };
        outcome
            .send(Err("the <token> endpoint said no".into()))
            .unwrap();
        match page.await.unwrap() {
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
        assert!(refused(&redirects.page("code=a&state=s1", &cookie).await));
    }

    /// Three replicas sharing a store: the sign-in waits on the first, its start link is
    /// opened on the second, the browser comes back to the third.
    #[tokio::test]
    async fn the_start_link_and_the_redirect_may_reach_other_replicas() {
        let store: Arc<dyn ReplicaStore> = Arc::new(MemoryReplicaStore::default());
        let replicas: Vec<Arc<Redirects>> = (0..3)
            .map(|_| {
                let r = Redirects::default();
                r.attach(store.clone());
                Arc::new(r)
            })
            .collect();
        let (link, state, back) = replicas[0].expect(AUTHORIZE, BACK).await.unwrap();
        let (cookie, _) = open(&replicas[1], &start_id(&link)).await.unwrap();
        // The link is single use on every replica.
        assert!(open(&replicas[2], &start_id(&link)).await.is_none());
        // Without the cookie, on any replica: refused.
        assert!(refused(&replicas[2].page("code=a&state=s1", "").await));
        let waiting = {
            let first = replicas[0].clone();
            tokio::spawn(async move {
                let arrival = first.arrival(&state, back).await.unwrap();
                assert_eq!(arrival.query, "code=a&state=s1");
                arrival
            })
        };
        let page = {
            let third = replicas[2].clone();
            tokio::spawn(async move { third.page("code=a&state=s1", &cookie).await })
        };
        let arrival = waiting.await.unwrap();
        let agent = super::SignInAgent {
            redirect_uri: BACK.into(),
            redirects: replicas[0].clone(),
            show: Box::new(|_| {}),
            open: true.into(),
            outcome: std::sync::Mutex::new(Some(arrival.outcome)),
        };
        agent.finish(Ok(()));
        match page.await.unwrap() {
            SignInPage::Page { ok, text, .. } => assert!(ok, "{text}"),
            SignInPage::Redirect { .. } => panic!("a page"),
        }
    }

    #[tokio::test]
    async fn sign_ins_given_up_make_room_again() {
        let redirects = Redirects::default();
        let mut held = Vec::new();
        for i in 0..MAX_WAITING {
            held.push(
                redirects
                    .expect(&format!("https://as/auth?state={i}"), BACK)
                    .await
                    .unwrap(),
            );
        }
        assert!(
            redirects
                .expect("https://as/auth?state=more", BACK)
                .await
                .is_err()
        );
        drop(held);
        assert!(
            redirects
                .expect("https://as/auth?state=more", BACK)
                .await
                .is_ok()
        );
        assert_eq!(super::lock(&redirects.waiting).len(), 1);
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
