//! Why a server could not start or stopped.

use std::fmt;
use std::io;

/// Why a server could not start. Lists every problem found, not only the first.
#[derive(Clone, PartialEq, Eq)]
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

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the MCP server cannot start:")?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for StartError {}

/// An error that stops a server.
#[non_exhaustive]
pub enum Error {
    /// The server could not start (its tools have problems).
    Start(StartError),
    /// Reading or writing the transport failed.
    Io(io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Start(e) => fmt::Display::fmt(e, f),
            Error::Io(e) => write!(f, "i/o error: {e}"),
        }
    }
}

// `main` returning `Err` prints the `Debug` form: make it the readable one.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}

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
