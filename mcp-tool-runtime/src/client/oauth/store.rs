//! Where the client keeps its tokens and registrations: in memory, or in a file only its owner
//! can read.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::sync::lock;

/// What tokens are kept under: the resource they were issued for, the authorization server
/// that issued them, and whom they act for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TokenKey {
    /// The protected resource (the MCP server's resource identifier).
    pub resource: String,
    /// The authorization server's issuer.
    pub issuer: String,
    /// Whom they act for (empty: the client itself, or its only user).
    pub principal: String,
}

/// An access token and what came with it. Its `Debug` shows no secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The access token.
    pub access_token: String,
    /// The refresh token, when one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires (seconds since the Unix epoch), when said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// When it was obtained (seconds since the Unix epoch): with `expires_at`, its lifetime,
    /// of which the last quarter is not used (it is renewed first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obtained_at: Option<u64>,
    /// The scopes granted (space-separated), when said; else those asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The thumbprint of the DPoP key the access token is bound to (RFC 9449), when it is:
    /// it is sent only with proofs of that key, which lives as long as its connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"(hidden)")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "(hidden)"),
            )
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish()
    }
}

/// The client's registration with one authorization server (stamped with its issuer: a
/// registration is never used with another). Its `Debug` shows no secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// The issuer that registered the client.
    pub issuer: String,
    /// The client id it gave.
    pub client_id: String,
    /// The client secret, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint, when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "(hidden)"),
            )
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .finish()
    }
}

/// Keeps tokens and registrations. Calls are short and made outside of any network wait.
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens kept under `key`.
    fn tokens(&self, key: &TokenKey) -> Option<Tokens>;
    /// Keeps `tokens` under `key` (`None` forgets them).
    fn set_tokens(&self, key: &TokenKey, tokens: Option<Tokens>);
    /// The client's registration with `issuer`.
    fn registration(&self, issuer: &str) -> Option<Registration>;
    /// Keeps the registration with `issuer` (`None` forgets it).
    fn set_registration(&self, issuer: &str, registration: Option<Registration>);

    /// Before the tokens under `key` are refreshed: a store shared by several processes waits
    /// until no other one refreshes them (a short lease), reads them again from where they
    /// are shared, and answers them — another process may have refreshed them already (a
    /// refresh token used twice is refused, or revokes its kind). [`Self::end_refresh`]
    /// follows, whatever came of it. By default: the tokens kept, at once.
    fn begin_refresh<'a>(
        &'a self,
        key: &'a TokenKey,
    ) -> crate::client::ClientFuture<'a, Option<Tokens>> {
        Box::pin(std::future::ready(self.tokens(key)))
    }

    /// After a refresh begun by [`Self::begin_refresh`]: what it kept is where the other
    /// processes read it, and the lease is given back. By default: nothing.
    fn end_refresh<'a>(&'a self, key: &'a TokenKey) -> crate::client::ClientFuture<'a, ()> {
        let _ = key;
        Box::pin(std::future::ready(()))
    }
}

/// The most tokens a store keeps (one per resource, issuer and principal); beyond, the least
/// recently stored are forgotten (their principals authorize again).
pub const MAX_TOKENS: usize = 10_000;

/// The most registrations a store keeps (one per authorization server); beyond, one is
/// forgotten (the client registers again there if it returns).
pub const MAX_REGISTRATIONS: usize = 1_000;

/// What a store holds.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Contents {
    #[serde(default)]
    tokens: Vec<(TokenKey, Tokens)>,
    #[serde(default)]
    registrations: BTreeMap<String, Registration>,
}

impl Contents {
    fn tokens(&self, key: &TokenKey) -> Option<Tokens> {
        self.tokens
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, t)| t.clone())
    }

    fn set_tokens(&mut self, key: &TokenKey, tokens: Option<Tokens>) {
        self.tokens.retain(|(k, _)| k != key);
        if let Some(tokens) = tokens {
            // Tokens that expired and cannot be refreshed are of no use to anyone.
            let now = super::now();
            self.tokens.retain(|(_, t)| {
                t.refresh_token.is_some() || t.expires_at.is_none_or(|at| at > now)
            });
            // The least recently stored go first.
            if self.tokens.len() >= MAX_TOKENS {
                let over = self.tokens.len() + 1 - MAX_TOKENS;
                self.tokens.drain(..over);
            }
            self.tokens.push((key.clone(), tokens));
        }
    }

    fn set_registration(&mut self, issuer: &str, registration: Option<Registration>) {
        match registration {
            Some(r) => {
                if self.registrations.len() >= MAX_REGISTRATIONS
                    && !self.registrations.contains_key(issuer)
                    && let Some(first) = self.registrations.keys().next().cloned()
                {
                    self.registrations.remove(&first);
                }
                self.registrations.insert(issuer.to_owned(), r);
            }
            None => {
                self.registrations.remove(issuer);
            }
        }
    }
}

/// Tokens and registrations in memory: they last as long as the store.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    contents: Mutex<Contents>,
}

impl TokenStore for MemoryTokenStore {
    fn tokens(&self, key: &TokenKey) -> Option<Tokens> {
        lock(&self.contents).tokens(key)
    }

    fn set_tokens(&self, key: &TokenKey, tokens: Option<Tokens>) {
        lock(&self.contents).set_tokens(key, tokens);
    }

    fn registration(&self, issuer: &str) -> Option<Registration> {
        lock(&self.contents).registrations.get(issuer).cloned()
    }

    fn set_registration(&self, issuer: &str, registration: Option<Registration>) {
        lock(&self.contents).set_registration(issuer, registration);
    }
}

/// Tokens and registrations in a JSON file that only its owner may read or write (mode 0600
/// on Unix), replaced whole (written beside it, then renamed) on each change. A file that
/// cannot be read starts the store empty (logged, without its contents); one that cannot be
/// written is logged, and the store goes on in memory.
pub struct FileTokenStore {
    path: PathBuf,
    contents: Mutex<Option<Contents>>,
}

impl fmt::Debug for FileTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileTokenStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl FileTokenStore {
    /// The store in the file at `path` (created at the first change).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore {
            path: path.into(),
            contents: Mutex::new(None),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Contents) -> (T, bool)) -> T {
        let mut guard = lock(&self.contents);
        let contents = guard.get_or_insert_with(|| self.load());
        let (out, changed) = f(contents);
        if changed && let Err(e) = self.save(contents) {
            tracing::warn!(path = %self.path.display(), error = %e, "the token store could not be written");
        }
        out
    }

    fn load(&self) -> Contents {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!(
                    path = %self.path.display(),
                    line = e.line(),
                    "the token store is not a store this client wrote; starting empty"
                );
                Contents::default()
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Contents::default(),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "the token store could not be read; starting empty");
                Contents::default()
            }
        }
    }

    fn save(&self, contents: &Contents) -> std::io::Result<()> {
        let text = serde_json::to_vec_pretty(contents).map_err(std::io::Error::other)?;
        write_private(&self.path, &text)
    }
}

/// Writes `bytes` to `path` whole or not at all, readable by its owner only: into `path.tmp`
/// (mode 0600, narrowed too when an earlier run left it wider), synced, then renamed into
/// place. What keeps tokens on disk (the client's token store, the gateway's sign-ins) writes
/// through here.
pub(crate) fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut temporary = path.to_path_buf().into_os_string();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(&temporary)?;
    #[cfg(unix)]
    {
        // A file left by an earlier run may have been created wider.
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temporary, path)
}

impl TokenStore for FileTokenStore {
    fn tokens(&self, key: &TokenKey) -> Option<Tokens> {
        self.with(|c| (c.tokens(key), false))
    }

    fn set_tokens(&self, key: &TokenKey, tokens: Option<Tokens>) {
        self.with(|c| {
            c.set_tokens(key, tokens);
            ((), true)
        });
    }

    fn registration(&self, issuer: &str) -> Option<Registration> {
        self.with(|c| (c.registrations.get(issuer).cloned(), false))
    }

    fn set_registration(&self, issuer: &str, registration: Option<Registration>) {
        self.with(|c| {
            c.set_registration(issuer, registration);
            ((), true)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{
        FileTokenStore, MAX_TOKENS, MemoryTokenStore, Registration, TokenKey, TokenStore, Tokens,
    };

    #[test]
    fn a_store_forgets_dead_tokens_and_keeps_at_most_its_bound() {
        let store = MemoryTokenStore::default();
        let token = |expires_at: Option<u64>, refresh: bool| Tokens {
            access_token: "at".into(),
            refresh_token: refresh.then(|| "rt".into()),
            expires_at,
            scope: None,
            dpop_jkt: None,
            obtained_at: None,
        };
        store.set_tokens(&key("expired"), Some(token(Some(1), false)));
        store.set_tokens(&key("refreshable"), Some(token(Some(1), true)));
        store.set_tokens(&key("first"), Some(token(None, false)));
        assert_eq!(store.tokens(&key("expired")), None, "expired, no refresh");
        assert!(store.tokens(&key("refreshable")).is_some());
        for i in 0..MAX_TOKENS {
            store.set_tokens(&key(&format!("p{i}")), Some(token(None, false)));
        }
        assert_eq!(super::lock(&store.contents).tokens.len(), MAX_TOKENS);
        assert_eq!(store.tokens(&key("refreshable")), None, "the oldest went");
        assert_eq!(store.tokens(&key("first")), None);
        assert!(
            store
                .tokens(&key(&format!("p{}", MAX_TOKENS - 1)))
                .is_some()
        );
    }

    fn key(principal: &str) -> TokenKey {
        TokenKey {
            resource: "https://mcp.example.com/mcp".into(),
            issuer: "https://as.example.com".into(),
            principal: principal.into(),
        }
    }

    #[test]
    fn a_file_store_keeps_tokens_per_principal_in_an_owner_only_file() {
        let dir = std::env::temp_dir().join(format!("mcp-tool-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens.json");
        let _ = std::fs::remove_file(&path);
        let store = FileTokenStore::new(&path);
        let tokens = Tokens {
            access_token: "at-alice".into(),
            refresh_token: Some("rt-alice".into()),
            expires_at: Some(1),
            scope: Some("read".into()),
            dpop_jkt: None,
            obtained_at: None,
        };
        store.set_tokens(&key("alice"), Some(tokens.clone()));
        store.set_registration(
            "https://as.example.com",
            Some(Registration {
                issuer: "https://as.example.com".into(),
                client_id: "id".into(),
                client_secret: Some("s3cret".into()),
                token_endpoint_auth_method: None,
            }),
        );
        // Another store on the same file (a later run) sees them; bob has none.
        let again = FileTokenStore::new(&path);
        assert_eq!(again.tokens(&key("alice")), Some(tokens));
        assert_eq!(again.tokens(&key("bob")), None);
        assert_eq!(
            again
                .registration("https://as.example.com")
                .map(|r| r.client_id),
            Some("id".into())
        );
        assert!(again.registration("https://other.example.com").is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        again.set_tokens(&key("alice"), None);
        assert_eq!(FileTokenStore::new(&path).tokens(&key("alice")), None);
        // Debug shows no secret.
        let shown = format!("{:?}", again.registration("https://as.example.com"));
        assert!(!shown.contains("s3cret"), "{shown}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
