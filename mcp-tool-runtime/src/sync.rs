//! Helpers over `std::sync` that every layer uses: the one copy of each (locking a `Mutex`,
//! reading or writing an `RwLock`, whatever a panicking holder left).
//!
//! Layer: the bottom one; imports nothing of the crate.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `m`, even if a thread panicked while holding it: the crate's mutexes guard maps and
/// flags changed one whole step at a time, so what a panic leaves behind is consistent, and one
/// failed call must not make every later one panic too.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Reads `l`, even if a thread panicked while writing it (as [`lock`] does).
pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

/// Writes `l`, even if a thread panicked while writing it (as [`lock`] does).
pub(crate) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_mutex_still_locks() {
        let m = Mutex::new(1);
        let poisoned = std::panic::catch_unwind(|| {
            let _held = m.lock().unwrap();
            panic!("poison it");
        });
        assert!(poisoned.is_err() && m.is_poisoned());
        *lock(&m) += 1;
        assert_eq!(*lock(&m), 2);
    }
}
