//! Which tools a session sees: the selection a tool manager changes (enable, disable,
//! allow-list and block-list modes, batches) over each tool's visibility (`hidden`,
//! `always_visible`).
//!
//! A tool is active when:
//! - it was disabled explicitly: never;
//! - it was enabled explicitly, or is `always_visible`: always;
//! - in allow-list mode: when the list names it;
//! - in block-list mode: when it is not `hidden` and the list does not name it;
//! - otherwise: when it is not `hidden`.

use std::collections::BTreeSet;
use std::sync::RwLock;

use crate::sync::lock;
use crate::tool::Batch;

use crate::server::offerings::catalog::Catalog;

/// Who is on the other end of a connection, for what outlives one request in 2026-07-28 (the
/// tool selection a tool manager changes): the one client of a stdio connection, the
/// authenticated subject of an HTTP request, or nobody known.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) enum Principal {
    /// The client of a stdio connection (or an in-process test client): a stdio server has
    /// exactly one.
    #[default]
    Local,
    /// The subject an authenticator established.
    Subject(String),
    /// An HTTP client without credentials.
    Anonymous,
}

/// How the allow and block lists apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Every tool that is not hidden.
    #[default]
    All,
    /// Only the named tools.
    Allow(BTreeSet<String>),
    /// Every tool that is not hidden, except the named ones.
    Block(BTreeSet<String>),
}

/// One session's tool selection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selection {
    mode: Mode,
    enabled: BTreeSet<String>,
    disabled: BTreeSet<String>,
}

impl Selection {
    /// Whether the selection is the one every session starts with.
    pub(crate) fn is_default(&self) -> bool {
        *self == Selection::default()
    }

    pub(crate) fn is_active(&self, name: &str, hidden: bool, always_visible: bool) -> bool {
        if self.disabled.contains(name) {
            return false;
        }
        if always_visible || self.enabled.contains(name) {
            return true;
        }
        match &self.mode {
            Mode::All => !hidden,
            Mode::Allow(names) => names.contains(name),
            Mode::Block(names) => !hidden && !names.contains(name),
        }
    }

    /// The names of the tools this selection makes active, in order.
    pub(crate) fn active(&self, catalog: &Catalog) -> Vec<String> {
        catalog
            .entries()
            .iter()
            .filter(|e| self.is_active(&e.name, e.def.starts_hidden(), e.def.always_visible()))
            .map(|e| e.name.to_string())
            .collect()
    }

    pub(crate) fn apply(&mut self, change: &Batch) {
        if let Some(allow) = &change.allow {
            self.mode = Mode::Allow(allow.iter().cloned().collect());
            self.enabled.clear();
            self.disabled.clear();
        }
        if let Some(block) = &change.block {
            self.mode = Mode::Block(block.iter().cloned().collect());
            self.enabled.clear();
            self.disabled.clear();
        }
        for name in &change.enable {
            self.disabled.remove(name);
            self.enabled.insert(name.clone());
        }
        for name in &change.disable {
            self.enabled.remove(name);
            self.disabled.insert(name.clone());
        }
    }

    /// The batch that makes this selection out of the default one (how a session's
    /// selection is kept for other replicas).
    pub(crate) fn to_batch(&self) -> Batch {
        let list = |names: &BTreeSet<String>| names.iter().cloned().collect::<Vec<_>>();
        Batch {
            enable: list(&self.enabled),
            disable: list(&self.disabled),
            allow: match &self.mode {
                Mode::Allow(names) => Some(list(names)),
                _ => None,
            },
            block: match &self.mode {
                Mode::Block(names) => Some(list(names)),
                _ => None,
            },
        }
    }
}

/// A session's selection, shared by its calls.
#[derive(Default)]
pub(crate) struct Selector {
    selection: RwLock<Selection>,
}

impl Selector {
    /// A selector starting from `selection` (the server's global one).
    pub(crate) fn starting_at(selection: Selection) -> Self {
        Selector {
            selection: RwLock::new(selection),
        }
    }

    /// Replaces the selection (a session rebuilt from its record).
    pub(crate) fn replace(&self, selection: Selection) {
        *crate::sync::write(&self.selection) = selection;
    }

    pub(crate) fn read(&self) -> std::sync::RwLockReadGuard<'_, Selection> {
        crate::sync::read(&self.selection)
    }

    /// The active tools' names, in order.
    pub(crate) fn active(&self, catalog: &Catalog) -> Vec<String> {
        self.read().active(catalog)
    }

    /// Applies a batch; returns the active tools afterwards and whether that list changed.
    /// Unknown names are refused before anything changes.
    pub(crate) fn apply(
        &self,
        catalog: &Catalog,
        batch: &Batch,
    ) -> Result<(Vec<String>, bool), String> {
        check_names(catalog, batch)?;
        let before = self.active(catalog);
        {
            let mut selection = crate::sync::write(&self.selection);
            selection.apply(batch);
        }
        let after = self.active(catalog);
        let changed = before != after;
        Ok((after, changed))
    }
}

/// Refuses a batch that names a tool the catalog does not have.
pub(crate) fn check_names(catalog: &Catalog, batch: &Batch) -> Result<(), String> {
    let unknown: Vec<&str> = batch
        .enable
        .iter()
        .chain(&batch.disable)
        .chain(batch.allow.iter().flatten())
        .chain(batch.block.iter().flatten())
        .map(String::as_str)
        .filter(|n| catalog.get(n).is_none())
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(format!("no tool is named {}", quoted(&unknown)))
    }
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch() -> Batch {
        Batch::default()
    }

    #[test]
    fn hidden_tools_need_enabling_and_always_visible_ones_survive_modes() {
        let mut s = Selection::default();
        assert!(s.is_active("a", false, false));
        assert!(!s.is_active("h", true, false));
        s.apply(&Batch {
            enable: vec!["h".into()],
            ..batch()
        });
        assert!(s.is_active("h", true, false));
        s.apply(&Batch {
            allow: Some(vec!["a".into()]),
            ..batch()
        });
        assert!(s.is_active("a", false, false));
        assert!(!s.is_active("b", false, false));
        assert!(
            !s.is_active("h", true, false),
            "a mode switch forgets enables"
        );
        assert!(s.is_active("v", false, true), "always visible");
        s.apply(&Batch {
            block: Some(vec!["a".into()]),
            ..batch()
        });
        assert!(!s.is_active("a", false, false));
        assert!(s.is_active("b", false, false));
        assert!(!s.is_active("h", true, false));
        s.apply(&Batch {
            disable: vec!["v".into()],
            ..batch()
        });
        assert!(!s.is_active("v", false, true), "an explicit disable wins");
    }

    #[test]
    fn a_subjects_selection_is_asked_of_the_store_once_and_a_change_heard_first_wins() {
        let principals = Principals::default();
        let alice = Principal::Subject("alice".into());
        assert!(principals.unknown(&alice));
        assert!(!principals.unknown(&Principal::Anonymous));
        assert!(!principals.unknown(&Principal::Local));
        // The store had none: not asked again, until a change is heard of.
        principals.recalled(&alice, None);
        assert!(!principals.unknown(&alice));
        assert!(!principals.holds(&alice));
        assert!(principals.unknown(&alice));
        let mut stored = Selection::default();
        stored.apply(&Batch {
            enable: vec!["h".into()],
            ..batch()
        });
        principals.recalled(&alice, Some(stored.clone()));
        assert_eq!(principals.get(&alice), Some(stored.clone()));
        assert!(principals.holds(&alice));
        // A later answer from the store does not undo what is held.
        principals.recalled(&alice, Some(Selection::default()));
        assert_eq!(principals.get(&alice), Some(stored));
    }
}

/// The most principals whose tool selections a server keeps (2026-07-28); beyond, the one
/// changed longest ago is forgotten.
pub(crate) const MAX_PRINCIPALS: usize = 10_000;

/// The tool selections of principals, for stateless requests (2026-07-28): with no session,
/// what a tool manager changes belongs to who made the request — the one client of a stdio
/// connection, or an authenticated subject. An anonymous HTTP client has no selection of its
/// own: it sees the server's.
///
/// Replicas sharing state keep each subject's selection in the store too (under
/// [`selection_key`], for [`SELECTION_TTL`] from its last change), and tell each other of
/// changes: a replica that holds none for a subject looks in the store once
/// (`ServerHandle::recall_selection`), and remembers when there is none.
#[derive(Default)]
pub(crate) struct Principals {
    map: std::sync::Mutex<std::collections::HashMap<Principal, (Selection, u64)>>,
    /// Subjects the store was asked about and had no selection for (cleared when full).
    none_stored: std::sync::Mutex<std::collections::HashSet<Principal>>,
    clock: std::sync::atomic::AtomicU64,
}

/// How long a subject's selection stays in the shared store after its last change.
pub(crate) const SELECTION_TTL: std::time::Duration =
    std::time::Duration::from_secs(30 * 24 * 3600);

/// The store key of `subject`'s tool selection.
pub(crate) fn selection_key(subject: &str) -> String {
    format!("selection:{subject}")
}

impl Principals {
    /// Whether the store needs asking for `principal`'s selection: an authenticated subject
    /// this replica holds none for and has not asked about.
    pub(crate) fn unknown(&self, principal: &Principal) -> bool {
        matches!(principal, Principal::Subject(_))
            && !lock(&self.map).contains_key(principal)
            && !lock(&self.none_stored).contains(principal)
    }

    /// Whether this replica holds `principal`'s selection; if not, the store is asked again
    /// at its next request (a change heard of for a principal held nowhere here is not
    /// applied to the server's selection: the store has the whole of it).
    pub(crate) fn holds(&self, principal: &Principal) -> bool {
        let map = lock(&self.map);
        if map.contains_key(principal) {
            return true;
        }
        lock(&self.none_stored).remove(principal);
        false
    }

    /// What the store said of `principal`'s selection: it, or none. Kept unless a change
    /// heard meanwhile made one here already.
    pub(crate) fn recalled(&self, principal: &Principal, stored: Option<Selection>) {
        let mut map = lock(&self.map);
        if map.contains_key(principal) {
            return;
        }
        match stored {
            Some(selection) => {
                let stamp = self
                    .clock
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                map.insert(principal.clone(), (selection, stamp));
                if map.len() > MAX_PRINCIPALS {
                    forget_oldest(&mut map);
                }
            }
            None => {
                let mut none = lock(&self.none_stored);
                if none.len() >= MAX_PRINCIPALS {
                    none.clear();
                }
                none.insert(principal.clone());
            }
        }
    }

    /// The selection of `principal`, if it has its own.
    pub(crate) fn get(&self, principal: &Principal) -> Option<Selection> {
        lock(&self.map).get(principal).map(|(s, _)| s.clone())
    }

    /// Whether the tool `name` is active in `principal`'s own selection (read in place);
    /// `None` when it has none.
    pub(crate) fn is_active(
        &self,
        principal: &Principal,
        name: &str,
        hidden: bool,
        always_visible: bool,
    ) -> Option<bool> {
        lock(&self.map)
            .get(principal)
            .map(|(s, _)| s.is_active(name, hidden, always_visible))
    }

    /// Applies a batch to `principal`'s selection (starting from `base`, the server's);
    /// returns the active tools afterwards and whether that list changed.
    pub(crate) fn apply(
        &self,
        principal: &Principal,
        base: &Selection,
        catalog: &Catalog,
        batch: &Batch,
    ) -> Result<(Vec<String>, bool), String> {
        if *principal == Principal::Anonymous {
            return Err(
                "changing the tools needs a session (protocol 2025-11-25) or an authenticated client (2026-07-28): this request has neither"
                    .into(),
            );
        }
        check_names(catalog, batch)?;
        let stamp = self
            .clock
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut map = lock(&self.map);
        lock(&self.none_stored).remove(principal);
        let (selection, changed_at) = map
            .entry(principal.clone())
            .or_insert_with(|| (base.clone(), stamp));
        let before = selection.active(catalog);
        selection.apply(batch);
        *changed_at = stamp;
        let after = selection.active(catalog);
        let changed = before != after;
        if map.len() > MAX_PRINCIPALS {
            forget_oldest(&mut map);
        }
        Ok((after, changed))
    }

    /// Applies a batch to every principal's selection (a change of the server's).
    pub(crate) fn apply_all(&self, batch: &Batch) {
        for (selection, _) in lock(&self.map).values_mut() {
            selection.apply(batch);
        }
    }
}

/// Forgets the selection changed longest ago (kept in the store, if shared, still).
fn forget_oldest(map: &mut std::collections::HashMap<Principal, (Selection, u64)>) {
    if let Some(oldest) = map
        .iter()
        .min_by_key(|(_, (_, at))| *at)
        .map(|(p, _)| p.clone())
    {
        tracing::warn!(principal = ?oldest, "too many principals' tool selections kept: forgetting the oldest");
        map.remove(&oldest);
    }
}
