//! The stdio transport: newline-delimited JSON-RPC over any byte stream (stdin/stdout, or an
//! in-memory pipe for tests). Nothing but protocol messages is written to the output.
//!
//! It drives a session through its narrow interface: open, hand it each line, close.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

use crate::server::ServerHandle;
use crate::server::session::{Opening, Outgoing, Session};

/// How long calls still running when the input closes may take to finish.
const DRAIN: Duration = Duration::from_secs(10);

/// Serves one MCP connection over a pair of byte streams until the input ends, then lets the
/// calls in flight finish (for at most 10 seconds) and flushes their answers.
pub(crate) async fn serve_io<R, W>(server: ServerHandle, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel::<Outgoing>();
    let writer = tokio::spawn(write_messages(rx, output));
    let session = Session::open(&server, tx, Opening::default());
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        let text = line.trim_ascii();
        if !text.is_empty() {
            session.handle_line(text);
        }
    }
    // The writer ends once every sender is gone: ours now, each call's when it finishes.
    let weak = Arc::downgrade(&session);
    drop(session);
    let mut writer = writer;
    match tokio::time::timeout(DRAIN, &mut writer).await {
        Ok(joined) => joined.map_err(io::Error::other)?,
        Err(_) => {
            if let Some(session) = weak.upgrade() {
                tracing::warn!("calls still running after the input closed were cancelled");
                session.close();
            }
            writer.await.map_err(io::Error::other)?
        }
    }
}

/// Writes each message on its own line, flushing only when no more messages are waiting.
async fn write_messages<W: AsyncWrite + Unpin>(
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    output: W,
) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, output);
    while let Some(message) = rx.recv().await {
        write_message(&mut out, &message).await?;
        while let Ok(message) = rx.try_recv() {
            write_message(&mut out, &message).await?;
        }
        out.flush().await?;
    }
    out.flush().await?;
    out.shutdown().await
}

async fn write_message<W: AsyncWrite + Unpin>(out: &mut W, message: &Outgoing) -> io::Result<()> {
    // An empty message only marks the end of a cancelled request.
    if message.text.is_empty() {
        return Ok(());
    }
    out.write_all(message.text.as_bytes()).await?;
    out.write_all(b"\n").await
}

impl ServerHandle {
    /// Serves MCP on this process's stdin and stdout until stdin closes; then lets the calls
    /// in flight finish (for at most 10 seconds) and flushes their answers.
    ///
    /// When stdin and stdout are pipes (as MCP hosts launch servers), they are driven as
    /// non-blocking pipes by the runtime's reactor; otherwise (a terminal, a file) through
    /// Tokio's blocking stdio threads.
    pub async fn serve_stdio(&self) -> io::Result<()> {
        let server = self.clone();
        // The session runs as a task of the runtime, not in the caller's future: `main` is
        // usually driven by `block_on` on a thread of its own, and every message would then
        // cross between that thread and the runtime's workers.
        let serve = async move {
            #[cfg(target_os = "linux")]
            if let Some((input, output)) = stdio_pipes() {
                return serve_io(server, input, output).await;
            }
            serve_io(server, tokio::io::stdin(), tokio::io::stdout()).await
        };
        match tokio::spawn(serve).await {
            Ok(result) => result,
            Err(e) => Err(io::Error::other(format!("the stdio session failed: {e}"))),
        }
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
