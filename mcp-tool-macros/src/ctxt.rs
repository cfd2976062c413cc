//! The error collector every stage writes into (serde's `Ctxt` pattern).
//!
//! Parsing and checking never stop at the first problem: each one is pushed here, and the entry
//! point calls [`Ctxt::check`] once, which combines them into one `syn::Error` so that the user
//! sees every error of an item in one build. Forgetting to call `check` is a bug in this crate,
//! caught by the `Drop` impl in tests.

use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

use quote::ToTokens;

/// Collects the errors of one macro invocation.
pub(crate) struct Ctxt {
    /// `None` once [`Ctxt::check`] has consumed the errors.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Adds an error spanning the tokens of `obj` (its first to its last token).
    pub(crate) fn error_spanned_by<A: ToTokens, T: Display>(&self, obj: A, msg: T) {
        self.syn_error(syn::Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// Adds an error produced by `syn` (a parse failure).
    pub(crate) fn syn_error(&self, err: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("`Ctxt` used after `check`")
            .push(err);
    }

    /// Consumes the collector: `Ok` if nothing was reported, else every error combined, in the
    /// order they were found.
    pub(crate) fn check(self) -> syn::Result<()> {
        let errors = self
            .errors
            .borrow_mut()
            .take()
            .expect("`Ctxt::check` called twice");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // A bug in this crate, not in the user's code: every path through an entry point ends
        // in `check`. Not panicking while already panicking keeps the first message readable.
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}
