//! The stdio transport: newline-delimited JSON-RPC over any byte stream (stdin/stdout, or an
//! in-memory pipe for tests). Nothing but protocol messages is written to the output.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

use crate::server::{ServerCore, Session};

/// How long calls still running when the input closes may take to finish.
const DRAIN: Duration = Duration::from_secs(10);

/// Serves one MCP connection over a pair of byte streams until the input ends, then lets the
/// calls in flight finish (for at most 10 seconds) and flushes their answers.
pub async fn serve_io<R, W>(core: Arc<ServerCore>, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(write_messages(rx, output));
    let session = Session::new(core, tx);
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
                session.abort_all();
            }
            writer.await.map_err(io::Error::other)?
        }
    }
}

/// Writes each message on its own line, flushing only when no more messages are waiting.
async fn write_messages<W: AsyncWrite + Unpin>(
    mut rx: mpsc::UnboundedReceiver<String>,
    output: W,
) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, output);
    while let Some(message) = rx.recv().await {
        out.write_all(message.as_bytes()).await?;
        out.write_all(b"\n").await?;
        while let Ok(message) = rx.try_recv() {
            out.write_all(message.as_bytes()).await?;
            out.write_all(b"\n").await?;
        }
        out.flush().await?;
    }
    out.flush().await?;
    out.shutdown().await
}

/// Serves MCP on this process's stdin and stdout.
pub async fn serve_stdio(core: Arc<ServerCore>) -> io::Result<()> {
    serve_io(core, tokio::io::stdin(), tokio::io::stdout()).await
}
