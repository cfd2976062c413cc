//! What changed in what a server offers, as its listeners and sessions are told.

use crate::server::offerings::selection::Principal;

/// What changed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Change<'a> {
    /// The tool list: of everyone, or of one principal (its selection changed).
    Tools(Option<&'a Principal>),
    Prompts,
    Resources,
    /// One resource's contents.
    Updated(&'a str),
}
