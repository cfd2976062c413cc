//! The bounds a server keeps whatever its clients do: every one configurable, every one with a
//! default that is safe for a server on the open network. Exceeding one gives the client a
//! clear error (or closes its connection cleanly) and is logged; it never stalls other
//! clients. The HTTP transport's own bounds (header and idle timeouts, connections, body
//! size) are in its configuration.

use std::time::Duration;

/// A server's limits ([`Server::limits`](crate::server::Server::limits)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The largest message a stdio client may send, in bytes (default 16 MiB). A longer line
    /// is answered with an error and skipped.
    pub max_message: usize,
    /// How many bytes of answers may wait for a slow reader on one connection before the
    /// server stops reading its requests (default 16 MiB): backpressure, not memory growth.
    pub outbound_queue: usize,
    /// How long a tool waits for the client to answer one of its requests (elicitation,
    /// sampling, roots) before the request fails (default 10 minutes).
    pub client_wait: Duration,
    /// The most calls one connection or session may have running (default 1024); more are
    /// refused with an error until some finish.
    pub max_in_flight: usize,
    /// The most 2025-11-25 sessions the server keeps at once (default 10,000); an
    /// `initialize` beyond is refused.
    pub max_sessions: usize,
    /// The most of those one client may hold (default 1,000): the sessions of one subject
    /// when requests carry credentials, else of one address. An `initialize` beyond is
    /// refused (503) for that client only, so one client cannot take every session.
    pub max_sessions_per_client: usize,
    /// The most `subscriptions/listen` streams the server keeps open (default 512: each
    /// holds an HTTP connection, and this leaves the other half of the default 1,024 to
    /// requests). A `subscriptions/listen` beyond is answered with an error at once.
    pub max_listen_streams: usize,
    /// The most of those one client may hold (default 32): its subject, else its address.
    pub max_listen_per_client: usize,
    /// How long calls still running may take to finish when the input closes or the server
    /// is told to stop (default 10 s).
    pub shutdown_grace: Duration,
    /// About how many bytes of tool definitions one `tools/list` page holds at most (default
    /// 4 MiB); a page ends before a tool that would pass it (a larger tool has a page of its
    /// own), as well as after [`Server::page_size`](crate::server::Server::page_size) tools.
    pub max_page_bytes: usize,
    /// The most tools a mounted server may list (default 2,000): a gateway stops reading a
    /// longer list, mounts none of it and says why in its log.
    pub max_mount_tools: usize,
    /// The most bytes of tool definitions a mounted server may list (default 16 MiB), with
    /// the same outcome beyond.
    pub max_mount_bytes: usize,
    /// The most threads of the blocking pool, where plain `fn` tools start (default 512; used
    /// by [`Server::run`](crate::server::Server::run), which builds the runtime).
    pub blocking_threads: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message: 16 << 20,
            outbound_queue: 16 << 20,
            client_wait: Duration::from_secs(600),
            max_in_flight: 1024,
            max_sessions: 10_000,
            max_sessions_per_client: 1_000,
            shutdown_grace: Duration::from_secs(10),
            max_listen_streams: 512,
            max_listen_per_client: 32,
            max_page_bytes: 4 << 20,
            max_mount_tools: 2_000,
            max_mount_bytes: 16 << 20,
            blocking_threads: 512,
        }
    }
}

impl Limits {
    /// The largest message a stdio client may send.
    #[must_use]
    pub fn max_message(mut self, bytes: usize) -> Self {
        self.max_message = bytes.max(1024);
        self
    }

    /// How many bytes of answers may wait for a slow reader.
    #[must_use]
    pub fn outbound_queue(mut self, bytes: usize) -> Self {
        self.outbound_queue = bytes.max(64 * 1024);
        self
    }

    /// How long a tool waits for the client's answer.
    #[must_use]
    pub fn client_wait(mut self, wait: Duration) -> Self {
        self.client_wait = wait;
        self
    }

    /// The most calls running per connection or session.
    #[must_use]
    pub fn max_in_flight(mut self, calls: usize) -> Self {
        self.max_in_flight = calls.max(1);
        self
    }

    /// The most 2025-11-25 sessions kept at once.
    #[must_use]
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions.max(1);
        self
    }

    /// The most 2025-11-25 sessions one client (a subject, else an address) may hold.
    #[must_use]
    pub fn max_sessions_per_client(mut self, sessions: usize) -> Self {
        self.max_sessions_per_client = sessions.max(1);
        self
    }

    /// The most threads of the blocking pool.
    #[must_use]
    pub fn blocking_threads(mut self, threads: usize) -> Self {
        self.blocking_threads = threads.max(1);
        self
    }

    /// The most listen streams open at once, of all clients and of one.
    #[must_use]
    pub fn max_listen_streams(mut self, streams: usize, per_client: usize) -> Self {
        self.max_listen_streams = streams.max(1);
        self.max_listen_per_client = per_client.max(1);
        self
    }

    /// About how many bytes of tool definitions one `tools/list` page holds.
    #[must_use]
    pub fn max_page_bytes(mut self, bytes: usize) -> Self {
        self.max_page_bytes = bytes.max(1024);
        self
    }

    /// The most tools, and bytes of their definitions, a mounted server may list.
    #[must_use]
    pub fn max_mount_list(mut self, tools: usize, bytes: usize) -> Self {
        self.max_mount_tools = tools.max(1);
        self.max_mount_bytes = bytes.max(1024);
        self
    }

    /// How long running calls may take to finish at shutdown.
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }
}
