//! The Tokio runtime a server binary runs on: `--threads N` or `MCP_TOOL_THREADS=N`. Without
//! either, the CPUs this process may run on decide (`std::thread::available_parallelism`, which
//! follows the CPU affinity `taskset` sets and the cgroup's CPU quota; `TOKIO_WORKER_THREADS`
//! when set).
//!
//! - One thread: a current-thread runtime, every connection, session and call on the thread
//!   that runs `main`, since a second worker could only take turns with the first and every
//!   hand-off between them costs.
//! - `--http` on N > 1: N threads, each a current-thread runtime of its own (the one running
//!   `main` and N − 1 more), the connections shared between them. A connection, and the
//!   calls it carries, are served on one thread: a short call is read, run and answered
//!   without a hand-off between threads, which on a multi-thread runtime (a worker waking
//!   another to steal the connection's task) cost half as much CPU again as the call. The
//!   threads in use follow the CPUs other processes leave over (`transport::http::serve`'s
//!   placement), a connection moving between two requests.
//! - stdio (and the other commands) on N > 1: a multi-thread runtime with N workers, so that
//!   the calls of the one connection run on every CPU.
//!
//! Either way synchronous tools that may block run on the blocking pool
//! (`Limits::blocking_threads`), and an async tool that awaits holds only its own call: on
//! one thread as on several, other calls and sessions go on meanwhile.

use std::num::NonZeroUsize;

use super::env;

/// The most worker threads a command line may ask for.
const MAX_THREADS: usize = 1024;

/// Reads a number of worker threads (`--threads`, [`env::THREADS`]): 1 to [`MAX_THREADS`].
pub(super) fn parse_threads(text: &str) -> Result<NonZeroUsize, String> {
    text.trim()
        .parse::<NonZeroUsize>()
        .ok()
        .filter(|n| n.get() <= MAX_THREADS)
        .ok_or_else(|| {
            format!("`{text}` is not a number of threads (1 for one thread, at most {MAX_THREADS})")
        })
}

/// The number of worker threads asked for: the command line's, else the environment's, else
/// none (the CPUs decide).
pub(super) fn threads_asked(flag: Option<&str>) -> Result<Option<NonZeroUsize>, String> {
    if let Some(text) = flag {
        return parse_threads(text)
            .map(Some)
            .map_err(|e| format!("--threads: {e}"));
    }
    match std::env::var(env::THREADS) {
        Ok(text) if !text.trim().is_empty() => parse_threads(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", env::THREADS)),
        _ => Ok(None),
    }
}

/// The threads the CPUs (or `TOKIO_WORKER_THREADS`) give when none are asked for.
fn threads_available() -> usize {
    std::env::var("TOKIO_WORKER_THREADS")
        .ok()
        .and_then(|text| parse_threads(&text).ok())
        .map_or_else(
            || std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
            NonZeroUsize::get,
        )
}

/// The runtime `main` blocks on, and for `--http` on several threads the others' runtimes.
pub(super) struct Runtimes {
    pub(super) main: tokio::runtime::Runtime,
    others: Vec<ConnectionThread>,
}

/// A thread running a current-thread runtime of its own, for its share of the connections,
/// until told to stop.
struct ConnectionThread {
    handle: tokio::runtime::Handle,
    stop: tokio::sync::oneshot::Sender<()>,
    stopped: std::sync::mpsc::Receiver<()>,
}

impl Runtimes {
    /// The other threads' runtimes, to share connections with (none: every connection on
    /// `main`'s).
    pub(super) fn others(&self) -> Vec<tokio::runtime::Handle> {
        self.others.iter().map(|t| t.handle.clone()).collect()
    }

    /// Stops every runtime, waiting at most `grace` for each (a blocking tool stuck for ever
    /// must not hold the exit: the threads still running are left behind).
    pub(super) fn shutdown(self, grace: std::time::Duration) {
        let Runtimes { main, others } = self;
        let waits: Vec<_> = others
            .into_iter()
            .map(|thread| {
                // Sent to a thread already gone: nothing to stop.
                let _ = thread.stop.send(());
                thread.stopped
            })
            .collect();
        // Each thread stops its runtime within `grace` of being told, all at once; a little
        // more for the threads themselves. One deadline for all: threads held by a stuck
        // tool are left behind together, not one after another.
        let deadline = std::time::Instant::now() + grace + std::time::Duration::from_millis(500);
        main.shutdown_timeout(grace);
        for stopped in waits {
            let _ =
                stopped.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()));
        }
    }
}

/// Builds the runtimes: `threads` if asked, else as the CPUs this process may use say; at most
/// `blocking` threads in the blocking pool (shared out between the threads of `--http`).
/// `connections`: the command serves HTTP connections, which then get threads of their own.
pub(super) fn build(
    threads: Option<NonZeroUsize>,
    blocking: usize,
    connections: bool,
    grace: std::time::Duration,
) -> std::io::Result<Runtimes> {
    let n = threads.map_or_else(threads_available, NonZeroUsize::get);
    if n == 1 || connections {
        let blocking = blocking.div_ceil(n).max(1);
        let current = || {
            let mut builder = tokio::runtime::Builder::new_current_thread();
            builder.enable_all().max_blocking_threads(blocking);
            builder
        };
        let main = current().build()?;
        let others = (1..n)
            .map(|i| connection_thread(i, current().build()?, grace))
            .collect::<std::io::Result<_>>()?;
        return Ok(Runtimes { main, others });
    }
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(n);
    let main = builder
        .enable_all()
        .max_blocking_threads(blocking)
        .build()?;
    Ok(Runtimes {
        main,
        others: Vec::new(),
    })
}

/// Runs `runtime` on a thread of its own (`http-I`) until told to stop.
fn connection_thread(
    i: usize,
    runtime: tokio::runtime::Runtime,
    grace: std::time::Duration,
) -> std::io::Result<ConnectionThread> {
    let handle = runtime.handle().clone();
    let (stop, told) = tokio::sync::oneshot::channel::<()>();
    let (done, stopped) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(format!("http-{i}"))
        .spawn(move || {
            // Told to stop, or the sender dropped: either way the serving is over.
            runtime.block_on(async {
                let _ = told.await;
            });
            runtime.shutdown_timeout(grace);
            let _ = done.send(());
        })?;
    Ok(ConnectionThread {
        handle,
        stop,
        stopped,
    })
}

#[cfg(test)]
mod tests {
    use super::parse_threads;

    #[test]
    fn a_number_of_threads_is_one_to_the_bound() {
        assert_eq!(parse_threads("1").map(|n| n.get()), Ok(1));
        assert_eq!(parse_threads(" 4 ").map(|n| n.get()), Ok(4));
        assert_eq!(parse_threads("1024").map(|n| n.get()), Ok(1024));
        for bad in ["0", "1025", "-1", "two", "", "1.5"] {
            let message = parse_threads(bad).expect_err(bad);
            assert!(message.contains(&format!("`{bad}`")), "{message}");
        }
    }
}
