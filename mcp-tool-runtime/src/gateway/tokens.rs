//! The tokens of a per-user mount's users, and the account each of them signed in as: a user
//! who signed in before and signs in again must come back as the same account of the remote's
//! authorization server (the `sub` of the new access token), or the sign-in is refused and its
//! tokens forgotten.
//!
//! The subject is read from the access token when it is a JWT. It came from the token endpoint
//! itself over the connection the gateway made, so it is the authorization server's word (as
//! OpenID Connect Core §3.1.3.7 lets a client take an ID token from the token endpoint); an
//! opaque access token names no subject the gateway can read, and then no comparison is made.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::client::oauth::{Registration, TokenKey, TokenStore, Tokens};
use crate::sync::lock;

/// The most sign-ins whose tokens are watched at once (beyond, the oldest are no longer
/// checked: they were abandoned).
const MAX_WATCHED: usize = 2000;

/// A random id (128 bits, hex), naming one sign-in.
pub(super) fn new_id() -> Result<String, crate::tool::ToolError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| {
        crate::tool::ToolError::new("SIGN_IN_FAILED", format!("no randomness: {e}"))
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The `sub` of a JWT access token (its payload read, not its signature: see the module).
fn jwt_subject(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    claims["sub"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A mount's token store, watching what each sign-in obtains.
pub(super) struct UserTokens {
    inner: Arc<dyn TokenStore>,
    /// SHA-256 of the subject each user last signed in as.
    subjects: Mutex<HashMap<String, [u8; 32]>>,
    /// The sign-ins under way, by user: where their tokens were kept, once they were.
    watched: Mutex<HashMap<String, Option<TokenKey>>>,
}

impl UserTokens {
    pub(super) fn new(inner: Arc<dyn TokenStore>) -> Self {
        UserTokens {
            inner,
            subjects: Mutex::default(),
            watched: Mutex::default(),
        }
    }

    /// A sign-in of `user` starts: the tokens it obtains are checked by [`Self::check`].
    pub(super) fn begin(&self, user: &str) {
        let mut watched = lock(&self.watched);
        if watched.len() >= MAX_WATCHED {
            watched.clear();
        }
        watched.insert(user.to_owned(), None);
    }

    /// The sign-in of `user` connected: whether the account its tokens act for is the one the
    /// user signed in as before (if any). A stranger's tokens are forgotten.
    pub(super) fn check(&self, user: &str) -> Result<(), String> {
        let Some(Some(key)) = lock(&self.watched).remove(user) else {
            // Tokens kept from before: nothing new was granted.
            return Ok(());
        };
        let Some(subject) = self
            .inner
            .tokens(&key)
            .and_then(|t| jwt_subject(&t.access_token))
        else {
            return Ok(());
        };
        let digest: [u8; 32] = Sha256::digest(subject.as_bytes()).into();
        let mut subjects = lock(&self.subjects);
        match subjects.get(user) {
            Some(before) if before != &digest => {
                drop(subjects);
                self.inner.set_tokens(&key, None);
                Err("the authorization server signed in another account than the one this user signed in with before: refused, and its tokens forgotten".to_owned())
            }
            _ => {
                subjects.insert(user.to_owned(), digest);
                Ok(())
            }
        }
    }
}

impl TokenStore for UserTokens {
    fn tokens(&self, key: &TokenKey) -> Option<Tokens> {
        self.inner.tokens(key)
    }

    fn set_tokens(&self, key: &TokenKey, tokens: Option<Tokens>) {
        if tokens.is_some()
            && let Some(slot) = lock(&self.watched).get_mut(&key.principal)
        {
            *slot = Some(key.clone());
        }
        self.inner.set_tokens(key, tokens);
    }

    fn registration(&self, issuer: &str) -> Option<Registration> {
        self.inner.registration(issuer)
    }

    fn set_registration(&self, issuer: &str, registration: Option<Registration>) {
        self.inner.set_registration(issuer, registration);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    use super::{TokenKey, TokenStore, Tokens, UserTokens, jwt_subject};
    use crate::client::oauth::MemoryTokenStore;

    fn jwt(sub: &str) -> String {
        let payload = URL_SAFE_NO_PAD.encode(format!(r#"{{"sub":"{sub}","aud":"x"}}"#));
        format!("eyJhbGciOiJSUzI1NiJ9.{payload}.c2ln")
    }

    fn granted(store: &UserTokens, user: &str, token: String) -> TokenKey {
        let key = TokenKey {
            resource: "https://r".into(),
            issuer: "https://as".into(),
            principal: user.into(),
        };
        store.set_tokens(
            &key,
            Some(Tokens {
                access_token: token,
                refresh_token: None,
                expires_at: None,
                scope: None,
                obtained_at: None,
                dpop_jkt: None,
            }),
        );
        key
    }

    #[test]
    fn a_user_who_signs_in_again_must_come_back_as_the_same_account() {
        let store = UserTokens::new(Arc::new(MemoryTokenStore::default()));
        store.begin("alice");
        granted(&store, "alice", jwt("alice-at-as"));
        assert_eq!(store.check("alice"), Ok(()));
        // Again, as herself: fine.
        store.begin("alice");
        granted(&store, "alice", jwt("alice-at-as"));
        assert_eq!(store.check("alice"), Ok(()));
        // Again, as someone else: refused, and the tokens forgotten.
        store.begin("alice");
        let key = granted(&store, "alice", jwt("bob-at-as"));
        let refused = store.check("alice").unwrap_err();
        assert!(refused.contains("another account"), "{refused}");
        assert!(store.tokens(&key).is_none());
        // Bob's first sign-in is his own; an opaque token is not compared.
        store.begin("bob");
        granted(&store, "bob", jwt("bob-at-as"));
        assert_eq!(store.check("bob"), Ok(()));
        store.begin("bob");
        granted(&store, "bob", "opaque".into());
        assert_eq!(store.check("bob"), Ok(()));
        // A refresh outside a sign-in is not watched.
        granted(&store, "carol", jwt("x"));
        assert_eq!(store.check("carol"), Ok(()));
        assert_eq!(jwt_subject("a.b"), None);
        assert_eq!(jwt_subject(&jwt("")), None);
    }
}
