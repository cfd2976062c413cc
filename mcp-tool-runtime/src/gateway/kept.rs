//! Where a per-user mount keeps what its users' sign-ins obtained — each user's tokens and
//! refresh tokens (with the account they signed in as), and the mount's registrations at
//! authorization servers — sealed ([`super::seal`]) under a name made of the record's kind,
//! the mount and the user.
//!
//! The records live in the server's shared store when replicas share one (every replica reads
//! a user's tokens, and a refresh made by one is read by the others before they refresh:
//! [`TokenStore::begin_refresh`] takes a short lease, so a rotated refresh token is never used
//! twice), else in the file the connection names (`sign_in_store`: one process, users stay
//! signed in across a restart), else in this process's memory. The flow reads them through
//! a cache in memory: each user's record is read again from the store before a sign-in and
//! before a refresh, and written back after every change, in order.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::client::ClientFuture;
use crate::client::oauth::{Registration, TokenKey, TokenStore, Tokens};
use crate::server::replicas::ReplicaStore;
use crate::sync::lock;

use super::seal::SealKey;

/// How long a record lives in the store after its last change (a refresh renews it).
const RECORD_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// How long one refresh may hold its lease, and how long another waits for it.
const LEASE_TTL: Duration = Duration::from_secs(30);
const LEASE_WAIT: Duration = Duration::from_secs(10);

/// The most users whose records are cached (beyond, one not being written is dropped from
/// the cache: it is read again from the store when needed).
const MAX_CACHED: usize = 10_000;

/// The most records a sign-in file holds (beyond, the oldest written is dropped: its user
/// signs in again).
const MAX_FILE_RECORDS: usize = 10_000;

/// One user's record.
#[derive(Clone, Default, Serialize, Deserialize)]
struct UserRecord {
    #[serde(default)]
    tokens: Vec<(TokenKey, Tokens)>,
    /// SHA-256 (hex) of the account (`sub`) the user signed in as last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
}

/// Where the records are.
enum Backend {
    /// The server's store: shared by its replicas, or this process's memory.
    Store(Arc<dyn ReplicaStore>),
    /// A file (one process).
    File(FileRecords),
}

/// A mount's sign-ins, as kept. Its `Debug` shows no record.
#[derive(Clone)]
pub(super) struct Kept(Arc<Inner>);

struct Inner {
    mount: String,
    /// The file the connection names, when no store is shared.
    file: Option<PathBuf>,
    at: OnceLock<(Backend, SealKey)>,
    users: Mutex<HashMap<String, UserRecord>>,
    registrations: Mutex<BTreeMap<String, Registration>>,
    /// Changes not written yet, by user: a read from the store does not undo them.
    unwritten: Mutex<HashMap<String, usize>>,
    /// One write at a time: each writes what the cache holds when it runs, so the last one
    /// written is the latest.
    writing: tokio::sync::Mutex<()>,
    /// The leases this process holds, by user.
    leases: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept")
            .field("mount", &self.0.mount)
            .field("file", &self.0.file)
            .finish_non_exhaustive()
    }
}

fn digest_hex(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Kept {
    pub(super) fn new(mount: &str, file: Option<PathBuf>) -> Kept {
        Kept(Arc::new(Inner {
            mount: mount.to_owned(),
            file,
            at: OnceLock::new(),
            users: Mutex::default(),
            registrations: Mutex::default(),
            unwritten: Mutex::default(),
            writing: tokio::sync::Mutex::new(()),
            leases: Mutex::default(),
        }))
    }

    /// Where the records go, once the server is known: its shared store, else the file, else
    /// its memory. An error when the file is named and the keys would not open it after a
    /// restart.
    pub(super) fn attach(
        &self,
        store: &Arc<dyn ReplicaStore>,
        shared: bool,
        key: SealKey,
    ) -> Result<(), String> {
        let backend = match &self.0.file {
            Some(path) if !shared => {
                if !key.lasts() {
                    return Err(format!(
                        "the sign-ins of mount `{}` are kept in `{}`, sealed under a key derived from the request-state key: set `MCP_TOOL_STATE_KEY` (or `Server::state_key`), or what is kept there opens in this process only",
                        self.0.mount,
                        path.display()
                    ));
                }
                Backend::File(FileRecords::new(path.clone()))
            }
            _ => {
                if shared && !key.lasts() {
                    tracing::warn!(mount = %self.0.mount, "the replicas share sign-ins sealed under a random key: set `MCP_TOOL_STATE_KEY` alike on every replica, or each reads only its own");
                }
                Backend::Store(store.clone())
            }
        };
        let _ = self.0.at.set((backend, key));
        Ok(())
    }

    /// The record's name in the store (the mount and the user hashed: no subject in a key
    /// name), and the name it is sealed under.
    fn names(&self, kind: &str, user: &str) -> (String, String) {
        (
            format!("sign-in:{kind}:{}", digest_hex(&[&self.0.mount, user])),
            format!("mcp-tool/sign-in/{kind}\0{}\0{user}", self.0.mount),
        )
    }

    /// Reads `(key, name)` from the store and opens it: `None` when absent or unreadable
    /// (logged, without its contents); an error when the store did not answer (what is
    /// cached then stays).
    async fn read(&self, key: &str, name: &str) -> Result<Option<Vec<u8>>, ()> {
        let Some((backend, seal)) = self.0.at.get() else {
            return Err(());
        };
        let sealed = match backend {
            Backend::Store(store) => match within(store.get(key)).await {
                Ok(found) => found,
                Err(e) => {
                    tracing::warn!(mount = %self.0.mount, error = %e, "a sign-in could not be read from the store");
                    return Err(());
                }
            },
            Backend::File(file) => file.get(key),
        };
        let Some(sealed) = sealed else {
            return Ok(None);
        };
        match seal.open(name, &sealed) {
            Ok(plain) => Ok(Some(plain)),
            Err(e) => {
                tracing::warn!(mount = %self.0.mount, error = %e, "a kept sign-in does not open: ignored");
                Ok(None)
            }
        }
    }

    async fn write(&self, key: &str, name: &str, plain: Option<Vec<u8>>) {
        let Some((backend, seal)) = self.0.at.get() else {
            return;
        };
        let sealed = match plain.map(|p| seal.seal(name, &p)).transpose() {
            Ok(sealed) => sealed,
            Err(e) => {
                tracing::warn!(mount = %self.0.mount, error = %e, "a sign-in could not be sealed");
                return;
            }
        };
        let done = match (backend, sealed) {
            (Backend::Store(store), Some(s)) => within(store.put(key, &s, RECORD_TTL)).await,
            (Backend::Store(store), None) => within(store.remove(key)).await,
            (Backend::File(file), sealed) => file.set(key, sealed),
        };
        if let Err(e) = done {
            tracing::warn!(mount = %self.0.mount, error = %e, "a sign-in could not be written");
        }
    }

    /// Reads `user`'s record (and the mount's registrations) again from the store, unless
    /// changes of this process are still to be written.
    pub(super) async fn load(&self, user: &str) {
        let _writing = self.0.writing.lock().await;
        let (key, name) = self.names("user", user);
        let Ok(record) = self.read(&key, &name).await else {
            return;
        };
        let record = record.and_then(|bytes| serde_json::from_slice::<UserRecord>(&bytes).ok());
        if lock(&self.0.unwritten).get(user).is_none_or(|n| *n == 0) {
            let mut users = lock(&self.0.users);
            match record {
                Some(record) => {
                    make_room(&mut users, &self.0.unwritten);
                    users.insert(user.to_owned(), record);
                }
                None => {
                    users.remove(user);
                }
            }
        }
        let (key, name) = self.names("registrations", "");
        if let Ok(Some(bytes)) = self.read(&key, &name).await
            && let Ok(found) = serde_json::from_slice::<BTreeMap<String, Registration>>(&bytes)
        {
            let mut registrations = lock(&self.0.registrations);
            for (issuer, registration) in found {
                // One kept already (this process registered first) stays: its tokens are its.
                registrations.entry(issuer).or_insert(registration);
            }
        }
    }

    /// Writes `user`'s record as the cache holds it now, in a task of its own.
    fn changed(&self, user: &str) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        *lock(&self.0.unwritten).entry(user.to_owned()).or_default() += 1;
        let (kept, user) = (self.clone(), user.to_owned());
        let write = async move {
            kept.save(&user).await;
            let mut unwritten = lock(&kept.0.unwritten);
            if let Some(n) = unwritten.get_mut(&user) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    unwritten.remove(&user);
                }
            }
        };
        runtime.spawn(write);
    }

    async fn save(&self, user: &str) {
        let _writing = self.0.writing.lock().await;
        let (key, name) = self.names("user", user);
        let record = lock(&self.0.users).get(user).cloned();
        let plain = record
            .filter(|r| !r.tokens.is_empty() || r.subject.is_some())
            .and_then(|r| serde_json::to_vec(&r).ok());
        self.write(&key, &name, plain).await;
    }

    /// The account `user` signed in as last (SHA-256, hex).
    pub(super) fn subject(&self, user: &str) -> Option<String> {
        lock(&self.0.users)
            .get(user)
            .and_then(|r| r.subject.clone())
    }

    pub(super) fn set_subject(&self, user: &str, subject: String) {
        {
            let mut users = lock(&self.0.users);
            make_room(&mut users, &self.0.unwritten);
            users.entry(user.to_owned()).or_default().subject = Some(subject);
        }
        self.changed(user);
    }

    /// Takes the lease on refreshing `user`'s tokens: waits (bounded) while another process
    /// holds it. Whether this process took it.
    async fn lease(&self, user: &str) -> bool {
        let Some((backend, _)) = self.0.at.get() else {
            return false;
        };
        let (key, _) = self.names("lease", user);
        let deadline = tokio::time::Instant::now() + LEASE_WAIT;
        loop {
            let taken = match backend {
                Backend::Store(store) => within(store.put_new(&key, "1", LEASE_TTL))
                    .await
                    .unwrap_or(false),
                // One process: the leases of its own refreshes.
                Backend::File(_) => lock(&self.0.leases).insert(user.to_owned()),
            };
            if taken {
                if let Backend::Store(_) = backend {
                    lock(&self.0.leases).insert(user.to_owned());
                }
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!(mount = %self.0.mount, "another refresh of a user's tokens held its lease too long: refreshing anyway");
                return false;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn unlease(&self, user: &str) {
        if !lock(&self.0.leases).remove(user) {
            return;
        }
        if let Some((Backend::Store(store), _)) = self.0.at.get() {
            let (key, _) = self.names("lease", user);
            if let Err(e) = within(store.remove(&key)).await {
                tracing::debug!(error = %e, "a refresh lease could not be given back: it expires");
            }
        }
    }
}

/// Drops a cached record whose changes are written, when the cache is full.
fn make_room(users: &mut HashMap<String, UserRecord>, unwritten: &Mutex<HashMap<String, usize>>) {
    if users.len() < MAX_CACHED {
        return;
    }
    let unwritten = lock(unwritten);
    if let Some(key) = users.keys().find(|k| !unwritten.contains_key(*k)).cloned() {
        users.remove(&key);
    }
}

/// One store operation, bounded in time.
async fn within<T>(operation: crate::server::replicas::ReplicaFuture<'_, T>) -> Result<T, String> {
    match tokio::time::timeout(Duration::from_secs(5), operation).await {
        Ok(done) => done.map_err(|e| e.to_string()),
        Err(_) => Err("the store did not answer within 5 s".to_owned()),
    }
}

impl TokenStore for Kept {
    fn tokens(&self, key: &TokenKey) -> Option<Tokens> {
        lock(&self.0.users)
            .get(&key.principal)?
            .tokens
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, t)| t.clone())
    }

    fn set_tokens(&self, key: &TokenKey, tokens: Option<Tokens>) {
        {
            let mut users = lock(&self.0.users);
            make_room(&mut users, &self.0.unwritten);
            let record = users.entry(key.principal.clone()).or_default();
            record.tokens.retain(|(k, _)| k != key);
            if let Some(tokens) = tokens {
                record.tokens.push((key.clone(), tokens));
            }
        }
        self.changed(&key.principal);
    }

    fn registration(&self, issuer: &str) -> Option<Registration> {
        lock(&self.0.registrations).get(issuer).cloned()
    }

    fn set_registration(&self, issuer: &str, registration: Option<Registration>) {
        {
            let mut registrations = lock(&self.0.registrations);
            match registration {
                Some(r) => {
                    registrations.insert(issuer.to_owned(), r);
                }
                None => {
                    registrations.remove(issuer);
                }
            }
        }
        let kept = self.clone();
        let write = async move {
            let _writing = kept.0.writing.lock().await;
            let (key, name) = kept.names("registrations", "");
            let all = lock(&kept.0.registrations).clone();
            kept.write(&key, &name, serde_json::to_vec(&all).ok()).await;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(write);
        }
    }

    fn begin_refresh<'a>(&'a self, key: &'a TokenKey) -> ClientFuture<'a, Option<Tokens>> {
        Box::pin(async move {
            self.lease(&key.principal).await;
            self.load(&key.principal).await;
            self.tokens(key)
        })
    }

    fn end_refresh<'a>(&'a self, key: &'a TokenKey) -> ClientFuture<'a, ()> {
        Box::pin(async move {
            // What the refresh kept is written before the lease goes: the next holder reads it.
            self.save(&key.principal).await;
            self.unlease(&key.principal).await;
        })
    }
}

/// A file of sealed records (one process), replaced whole at each change: written beside it,
/// then renamed over it; only its owner may read or write it (mode 0600 on Unix).
struct FileRecords {
    path: PathBuf,
    records: Mutex<Option<BTreeMap<String, FileRecord>>>,
}

#[derive(Clone, Serialize, Deserialize)]
struct FileRecord {
    sealed: String,
    /// When it was written (seconds since the Unix epoch).
    at: u64,
}

#[derive(Default, Serialize, Deserialize)]
struct FileContents {
    #[serde(default)]
    records: BTreeMap<String, FileRecord>,
}

impl FileRecords {
    fn new(path: PathBuf) -> FileRecords {
        FileRecords {
            path,
            records: Mutex::new(None),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut BTreeMap<String, FileRecord>) -> T) -> T {
        let mut guard = lock(&self.records);
        let records = guard.get_or_insert_with(|| self.read());
        f(records)
    }

    fn read(&self) -> BTreeMap<String, FileRecord> {
        match std::fs::read(&self.path) {
            Ok(bytes) => match serde_json::from_slice::<FileContents>(&bytes) {
                Ok(contents) => contents.records,
                Err(e) => {
                    tracing::warn!(path = %self.path.display(), line = e.line(), "the sign-in store is not one this gateway wrote; starting empty");
                    BTreeMap::new()
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "the sign-in store could not be read; starting empty");
                BTreeMap::new()
            }
        }
    }

    fn get(&self, key: &str) -> Option<String> {
        self.with(|records| records.get(key).map(|r| r.sealed.clone()))
    }

    fn set(&self, key: &str, sealed: Option<String>) -> Result<(), String> {
        self.with(|records| {
            match sealed {
                Some(sealed) => {
                    if records.len() >= MAX_FILE_RECORDS
                        && !records.contains_key(key)
                        && let Some(oldest) = records
                            .iter()
                            .min_by_key(|(_, r)| r.at)
                            .map(|(k, _)| k.clone())
                    {
                        records.remove(&oldest);
                    }
                    records.insert(
                        key.to_owned(),
                        FileRecord {
                            sealed,
                            at: now_secs(),
                        },
                    );
                }
                None => {
                    records.remove(key);
                }
            }
            self.save(records).map_err(|e| {
                format!(
                    "the sign-in store `{}` could not be written: {e}",
                    self.path.display()
                )
            })
        })
    }

    fn save(&self, records: &BTreeMap<String, FileRecord>) -> std::io::Result<()> {
        let contents = FileContents {
            records: records.clone(),
        };
        let text = serde_json::to_vec_pretty(&contents).map_err(std::io::Error::other)?;
        crate::client::oauth::write_private(&self.path, &text)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::{Kept, SealKey, TokenKey, TokenStore, Tokens};
    use crate::server::replicas::{MemoryReplicaStore, ReplicaStore};
    use crate::server::state::StateKey;

    fn seal(material: &[u8]) -> SealKey {
        SealKey::from_state_key(&StateKey::new(&[material.to_vec()], Duration::ZERO).unwrap())
    }

    fn key(user: &str) -> TokenKey {
        TokenKey {
            resource: "https://r".into(),
            issuer: "https://as".into(),
            principal: user.into(),
        }
    }

    /// The tests' access tokens hold a `.`, which base64url (a sealed text) never spells: a
    /// token's absence from a sealed record is then not left to chance.
    fn tokens(access: &str) -> Tokens {
        Tokens {
            access_token: access.into(),
            refresh_token: Some(format!("refresh-{access}")),
            expires_at: None,
            scope: None,
            obtained_at: None,
            dpop_jkt: None,
        }
    }

    async fn settle(kept: &Kept) {
        for _ in 0..200 {
            if super::lock(&kept.0.unwritten).is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("the writes did not end");
    }

    #[tokio::test]
    async fn replicas_read_each_others_tokens_sealed_and_under_their_own_names() {
        let store: Arc<dyn ReplicaStore> = Arc::new(MemoryReplicaStore::default());
        let material = [3u8; 40];
        let (a, b) = (Kept::new("m", None), Kept::new("m", None));
        a.attach(&store, true, seal(&material)).unwrap();
        b.attach(&store, true, seal(&material)).unwrap();
        a.set_tokens(&key("alice"), Some(tokens("at.1")));
        a.set_subject("alice", "abc".into());
        settle(&a).await;
        // Sealed in the store: no token in it.
        let (name, _) = a.names("user", "alice");
        let raw = store.get(&name).await.unwrap().unwrap();
        assert!(!raw.contains("at.1") && !raw.contains("refresh"), "{raw}");
        assert!(!name.contains("alice"), "{name}");
        b.load("alice").await;
        assert_eq!(b.tokens(&key("alice")).unwrap().access_token, "at.1");
        assert_eq!(b.subject("alice").as_deref(), Some("abc"));
        // Alice's record copied under Bob's name does not open as his.
        let (bobs, _) = a.names("user", "bob");
        store
            .put(&bobs, &raw, Duration::from_secs(60))
            .await
            .unwrap();
        b.load("bob").await;
        assert!(b.tokens(&key("bob")).is_none());
        // Another mount's keeper reads nothing of this one's.
        let other = Kept::new("n", None);
        other.attach(&store, true, seal(&material)).unwrap();
        other.load("alice").await;
        assert!(other.tokens(&key("alice")).is_none());
        // A keeper under another key reads nothing.
        let stranger = Kept::new("m", None);
        stranger.attach(&store, true, seal(&[4u8; 40])).unwrap();
        stranger.load("alice").await;
        assert!(stranger.tokens(&key("alice")).is_none());
        assert!(!format!("{a:?}").contains("at.1"));
    }

    #[tokio::test]
    async fn a_refresh_waits_for_anothers_and_reads_what_it_kept() {
        let store: Arc<dyn ReplicaStore> = Arc::new(MemoryReplicaStore::default());
        let material = [5u8; 32];
        let (a, b) = (Kept::new("m", None), Kept::new("m", None));
        a.attach(&store, true, seal(&material)).unwrap();
        b.attach(&store, true, seal(&material)).unwrap();
        a.set_tokens(&key("alice"), Some(tokens("at.1")));
        settle(&a).await;
        b.load("alice").await;
        let k = key("alice");
        // A refreshes: B's refresh waits for A's lease, then reads A's rotated tokens.
        assert_eq!(a.begin_refresh(&k).await.unwrap().access_token, "at.1");
        let (b2, k2) = (b.clone(), k.clone());
        let waiting = tokio::spawn(async move {
            let seen = b2.begin_refresh(&k2).await;
            b2.end_refresh(&k2).await;
            seen
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!waiting.is_finished(), "B waits while A refreshes");
        a.set_tokens(&k, Some(tokens("at.2")));
        a.end_refresh(&k).await;
        let seen = waiting.await.unwrap().unwrap();
        assert_eq!(seen.access_token, "at.2");
        assert_eq!(seen.refresh_token.as_deref(), Some("refresh-at.2"));
    }

    #[tokio::test]
    async fn a_file_keeps_sign_ins_across_a_restart_under_a_given_key_only() {
        let dir = std::env::temp_dir().join(format!("mcp-tool-kept-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sign-ins.json");
        let _ = std::fs::remove_file(&path);
        let memory: Arc<dyn ReplicaStore> = Arc::new(MemoryReplicaStore::default());
        let material = [6u8; 32];
        let first = Kept::new("m", Some(path.clone()));
        first.attach(&memory, false, seal(&material)).unwrap();
        first.set_tokens(&key("alice"), Some(tokens("at.1")));
        settle(&first).await;
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("at.1"), "{text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Another process (a restart): it reads the file.
        let again = Kept::new("m", Some(path.clone()));
        again.attach(&memory, false, seal(&material)).unwrap();
        again.load("alice").await;
        assert_eq!(again.tokens(&key("alice")).unwrap().access_token, "at.1");
        // A random key would not open it after a restart: refused, and said why.
        let random = SealKey::from_state_key(&StateKey::random(Duration::ZERO).unwrap());
        let e = Kept::new("m", Some(path.clone()))
            .attach(&memory, false, random)
            .unwrap_err();
        assert!(e.contains("MCP_TOOL_STATE_KEY"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
