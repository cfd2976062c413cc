//! The Tokio runtime a server binary runs on: `--threads N` or `MCP_TOOL_THREADS=N`, where 1
//! is a current-thread runtime (every connection, session and call on the thread that runs
//! `main`) and N > 1 a multi-thread one with N workers. Without either, the CPUs this process
//! may run on decide (`std::thread::available_parallelism`, which follows the CPU affinity
//! `taskset` sets and the cgroup's CPU quota): one CPU, a current-thread runtime, since a
//! second worker could only take turns with the first and every hand-off between them costs;
//! more, a multi-thread runtime with a worker per CPU (Tokio's default, which
//! `TOKIO_WORKER_THREADS` still sets).
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

/// Builds the runtime: `threads` workers if asked, else as the CPUs this process may use say;
/// at most `blocking` threads in the blocking pool.
pub(super) fn build(
    threads: Option<NonZeroUsize>,
    blocking: usize,
) -> std::io::Result<tokio::runtime::Runtime> {
    let one = match threads {
        Some(n) => n.get() == 1,
        None => std::thread::available_parallelism().map_or(1, NonZeroUsize::get) == 1,
    };
    let mut builder = if one {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    if let Some(n) = threads.filter(|_| !one) {
        builder.worker_threads(n.get());
    }
    builder.enable_all().max_blocking_threads(blocking).build()
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
