//! The stdio transport: newline-delimited JSON-RPC over any byte stream (stdin/stdout, or an
//! in-memory pipe for tests). Nothing but protocol messages is written to the output.
//!
//! It drives a session through its narrow interface: open, hand it each line, close.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, oneshot};

use crate::protocol::jsonrpc::Message;
use crate::protocol::lines::{Line, Outbox, Overlong, buffered_line, read_line};
use crate::protocol::request::Method;
use crate::protocol::{RpcError, code, jsonrpc};
use crate::server::ServerHandle;
use crate::server::core::session::{Opening, Outbound, Session};

/// Serves one MCP connection over a pair of byte streams until the input ends, then lets the
/// calls in flight finish (within the shutdown grace) and flushes their answers.
///
/// Bounded whatever the client does: a line longer than the message limit is answered with an
/// error and skipped without being kept; while more answers wait than the outbound queue
/// holds (a client that does not read), no more requests are read.
pub(crate) async fn serve_io<R, W>(server: ServerHandle, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_io_until(server, input, output, std::future::pending()).await
}

/// [`serve_io`], also stopping to read when `stop` completes (a signal): the calls in flight
/// then finish within the grace as when the input ends.
pub(crate) async fn serve_io_until<R, W>(
    server: ServerHandle,
    input: R,
    output: W,
    stop: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // `stop` is awaited by a task of its own, which raises a flag: the loop looks at the
    // flag before each line instead of polling `stop` (two signal streams) with each read.
    let stopping = Arc::new(Stopping::default());
    let watch = tokio::spawn({
        let stopping = stopping.clone();
        async move {
            stop.await;
            stopping.asked.store(true, Ordering::Release);
            stopping.wake.notify_one();
        }
    });
    let limits = server.shared.limits.clone();
    let backlog = Arc::new(Outbox::default());
    let low = limits.outbound_queue / 2;
    let (stop_writing, writing_stopped) = oneshot::channel();
    let writer = tokio::spawn(write_messages(
        backlog.clone(),
        output,
        low,
        writing_stopped,
    ));
    let session = Session::open(
        &server,
        Outbound::Lines(backlog.clone()),
        Opening::default(),
    );
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::with_capacity(4096);
    loop {
        if stopping.asked.load(Ordering::Acquire) {
            tracing::info!("stopping: no more requests are read; calls in flight finish");
            break;
        }
        // Most lines are in the reader's buffer already, with the writer not behind: such a
        // line is taken at once, without setting up the waits below.
        let read = if backlog.at_most(limits.outbound_queue)
            && buffered_line(&mut reader, &mut line, limits.max_message)
        {
            Line::Complete
        } else {
            let read = async {
                backlog.below(limits.outbound_queue).await;
                read_line(&mut reader, &mut line, limits.max_message, Overlong::Skip).await
            };
            // `None`: stopped while waiting for input.
            let read = tokio::select! {
                biased;
                read = read => Some(read?),
                () = stopping.wake.notified() => None,
            };
            let Some(read) = read else {
                tracing::info!("stopping: no more requests are read; calls in flight finish");
                break;
            };
            read
        };
        match read {
            Line::End => break,
            Line::TooLong(bytes) => {
                tracing::warn!(
                    bytes,
                    limit = limits.max_message,
                    "a message over the size limit was skipped"
                );
                session.send(jsonrpc::error_response(
                    "null",
                    &RpcError::new(
                        code::INVALID_REQUEST,
                        format!(
                            "Invalid Request: a message of more than {} bytes was skipped",
                            limits.max_message
                        ),
                    ),
                ));
            }
            Line::Complete => {
                let text = line.trim_ascii();
                if !text.is_empty() {
                    // A gateway's first list holds its mounts' tools: while they have not
                    // listed theirs, a line is read ahead for its method (and only then).
                    if session.server.has_unsettled_mounts()
                        && let Ok(Message::Request { method, .. }) = jsonrpc::parse(text)
                        && let Some(settling) = session.server.settling(Method::parse(&method))
                    {
                        settling.await;
                    }
                    session.handle_line(text);
                }
            }
        }
    }
    watch.abort();
    // No answer to a request of ours can come any more.
    session.fail_pending("the client closed its input before answering");
    // The writer ends once every sender is gone: ours now, each call's when it finishes.
    let weak = Arc::downgrade(&session);
    drop(session);
    let mut writer = writer;
    match tokio::time::timeout(limits.shutdown_grace, &mut writer).await {
        Ok(joined) => joined.map_err(io::Error::other)?,
        Err(_) => {
            if let Some(session) = weak.upgrade() {
                tracing::warn!("calls still running after the input closed were cancelled");
                session.close();
            }
            // A blocking tool stuck for ever still holds the session, and with it a sender:
            // the writer writes what is queued and ends without waiting for it.
            let _ = stop_writing.send(());
            writer.await.map_err(io::Error::other)?
        }
    }
}

/// A stop asked for (by a signal), as the read loop sees it.
#[derive(Default)]
struct Stopping {
    asked: AtomicBool,
    /// Wakes a read that waits for input.
    wake: Notify,
}

/// Writes the lines of `outbox` as they come, each batch (all that is queued) at once and
/// flushed: messages sent while a batch is being written go in the next one. Writes until
/// the sender is gone and every line is written, or until `stop`: then what is queued is
/// written and nothing more is taken. Once it ends (or fails), no more lines are taken.
async fn write_messages<W: AsyncWrite + Unpin>(
    outbox: Arc<Outbox>,
    mut out: W,
    low: usize,
    mut stop: oneshot::Receiver<()>,
) -> io::Result<()> {
    /// Refuses lines once the writer is gone, however it ends.
    struct Gone<'a>(&'a Outbox);
    impl Drop for Gone<'_> {
        fn drop(&mut self) {
            self.0.refuse();
        }
    }
    let _gone = Gone(&outbox);
    let mut batch = Vec::new();
    let mut stopping = false;
    loop {
        let more = tokio::select! {
            biased;
            more = outbox.take(&mut batch) => more,
            stopped = &mut stop, if !stopping => {
                stopping = true;
                // A stop dropped unsent (the serving future was dropped) is no stop.
                if stopped.is_ok() {
                    outbox.refuse();
                }
                continue;
            }
        };
        if !more {
            break;
        }
        out.write_all(&batch).await?;
        out.flush().await?;
        outbox.written(batch.len(), low);
        batch.clear();
        // A burst's buffer does not stay for ever.
        if batch.capacity() > 1 << 20 {
            batch = Vec::new();
        }
    }
    out.flush().await?;
    out.shutdown().await
}

impl ServerHandle {
    /// Serves MCP on this process's stdin and stdout until stdin closes; then lets the calls
    /// in flight finish (within the shutdown grace, 10 s by default) and flushes their
    /// answers.
    ///
    /// When stdin and stdout are pipes (as MCP hosts launch servers), they are driven as
    /// non-blocking pipes by the runtime's reactor; otherwise (a terminal, a file) through
    /// Tokio's blocking stdio threads.
    pub async fn serve_stdio(&self) -> io::Result<()> {
        self.start_mounts();
        let server = self.clone();
        // The session runs as a task of the runtime, not in the caller's future: `main` is
        // usually driven by `block_on` on a thread of its own, and every message would then
        // cross between that thread and the runtime's workers.
        let serve = async move {
            #[cfg(target_os = "linux")]
            if let Some((input, output)) = stdio_pipes() {
                return serve_io_until(server, input, output, stop_signal()).await;
            }
            serve_io_until(
                server,
                tokio::io::stdin(),
                tokio::io::stdout(),
                stop_signal(),
            )
            .await
        };
        match tokio::spawn(serve).await {
            Ok(result) => result,
            Err(e) => Err(io::Error::other(format!("the stdio session failed: {e}"))),
        }
    }
}

/// Completes on SIGTERM or Ctrl-C (SIGINT): the server then stops reading and lets the calls
/// in flight answer, as when stdin closes.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Stdin and stdout reopened as non-blocking pipes (new open file descriptions, so the flag
/// does not leak to the file descriptors the process inherited), when both are pipes.
#[cfg(target_os = "linux")]
fn stdio_pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::unix::fs::FileTypeExt;
    let is_pipe = |path: &str| std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
    if !is_pipe("/proc/self/fd/0") || !is_pipe("/proc/self/fd/1") {
        return None;
    }
    let input = std::fs::File::open("/proc/self/fd/0").ok()?;
    let output = std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/self/fd/1")
        .ok()?;
    let input = tokio::net::unix::pipe::Receiver::from_file(input).ok()?;
    let output = tokio::net::unix::pipe::Sender::from_file(output).ok()?;
    Some((input, output))
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::sync::Mutex;
    use std::task::{Context, Poll};

    use super::*;

    /// An output that records what each write got, and each flush.
    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<String>>>);

    impl AsyncWrite for Recorder {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            let mut log = self.0.lock().unwrap();
            log.push(String::from_utf8_lossy(buf).into_owned());
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.0.lock().unwrap().push("flush".into());
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn messages_queued_together_are_written_and_flushed_together_in_order() {
        let outbox = Arc::new(Outbox::default());
        let output = Recorder::default();
        let (_stop, stopped) = oneshot::channel();
        // Three answers queued before the writer runs (pipelined requests), then a lone one.
        outbox.push("1");
        outbox.push("2");
        outbox.push("3");
        let writer = tokio::spawn(write_messages(outbox.clone(), output.clone(), 0, stopped));
        while output.0.lock().unwrap().len() < 2 {
            tokio::task::yield_now().await;
        }
        outbox.push("4");
        outbox.end();
        writer.await.unwrap().unwrap();
        assert_eq!(
            *output.0.lock().unwrap(),
            ["1\n2\n3\n", "flush", "4\n", "flush", "flush"]
        );
        // The writer is gone: nothing more is taken.
        assert!(outbox.is_refused());
        assert!(outbox.at_most(0));
    }

    #[tokio::test]
    async fn a_stop_writes_what_is_queued_and_takes_nothing_more() {
        let outbox = Arc::new(Outbox::default());
        let output = Recorder::default();
        let (stop, stopped) = oneshot::channel();
        outbox.push("queued");
        stop.send(()).unwrap();
        write_messages(outbox.clone(), output.clone(), 0, stopped)
            .await
            .unwrap();
        outbox.push("late");
        assert_eq!(*output.0.lock().unwrap(), ["queued\n", "flush", "flush"]);
    }
}
