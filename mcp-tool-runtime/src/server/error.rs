//! Why a server could not start or stopped.

use std::fmt;
use std::io;

/// Why a server could not start. Lists every problem found, not only the first.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("the MCP server cannot start:{}", listed(.problems))]
pub struct StartError {
    problems: Vec<String>,
}

impl StartError {
    pub(crate) fn new(problems: Vec<String>) -> Self {
        StartError { problems }
    }

    /// Each problem, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Debug for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// An error that stops a server.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server could not start (its tools have problems).
    #[error("{0}")]
    Start(StartError),
    /// Reading or writing the transport failed.
    #[error("i/o error: {0}")]
    Io(io::Error),
}

/// Each problem on a line of its own, as a list.
fn listed(problems: &[String]) -> String {
    problems.iter().map(|p| format!("\n  - {p}")).collect()
}

// `main` returning `Err` prints the `Debug` form: make it the readable one.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl From<StartError> for Error {
    fn from(e: StartError) -> Self {
        Error::Start(e)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn errors_read_as_they_did_and_name_no_source() {
        let start = StartError::new(vec!["two tools are named `a`".into(), "no `b`".into()]);
        let said = "the MCP server cannot start:\n  - two tools are named `a`\n  - no `b`";
        assert_eq!(start.to_string(), said);
        assert_eq!(format!("{start:?}"), said);
        assert_eq!(Error::from(start).to_string(), said);
        let io = Error::from(io::Error::other("closed"));
        assert_eq!(io.to_string(), "i/o error: closed");
        assert_eq!(format!("{io:?}"), "i/o error: closed");
        assert!(
            io.source().is_none(),
            "the i/o error is in the message already"
        );
    }
}
