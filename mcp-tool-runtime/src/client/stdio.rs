//! The client's stdio transport: the server is a process the client starts; messages are
//! lines on its stdin and stdout, and its stderr goes to this process's log.

use std::collections::BTreeMap;
use std::process::Stdio;

use tokio::io::{AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use super::message::Inbound;
use super::{ClientError, MAX_MESSAGE};
use crate::protocol::lines::{Line, Overlong, read_line};
use crate::sync::lock;

/// The longest line of the server's stderr that is logged (a longer one is skipped unkept).
const MAX_LOG_LINE: usize = 64 * 1024;

/// The most lines that may wait for a server that does not read its input: beyond them a
/// request fails at once (the server is unavailable) instead of waiting without a limit.
const MAX_QUEUED: usize = 4096;

pub(crate) struct StdioWire {
    /// The lines for the server's input, written by a task of their own: all those waiting
    /// at once in one write; at most [`MAX_QUEUED`]. Dropping it closes the server's input.
    lines: std::sync::Mutex<Option<mpsc::Sender<String>>>,
    child: std::sync::Mutex<Option<Child>>,
}

impl StdioWire {
    pub(super) fn spawn(
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        inbox: mpsc::UnboundedSender<Inbound>,
    ) -> Result<Self, ClientError> {
        let mut child = Command::new(command)
            .args(args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| ClientError::Unavailable(format!("cannot start `{command}`: {e}")))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        if let Some(stdout) = stdout {
            tokio::spawn(async move {
                let mut reader = BufReader::with_capacity(64 * 1024, stdout);
                let mut line = Vec::with_capacity(4096);
                loop {
                    match read_line(&mut reader, &mut line, MAX_MESSAGE, Overlong::Stop).await {
                        Ok(Line::End) | Err(_) => break,
                        Ok(Line::TooLong(bytes)) => {
                            // An answer may have been in it: the calls waiting fail now, named,
                            // rather than at their time limit.
                            tracing::warn!(
                                bytes,
                                limit = MAX_MESSAGE,
                                "the server sent a line over the limit"
                            );
                            let _ = inbox.send(Inbound::closing(format!(
                                "the server sent a message of {bytes} bytes or more, over the limit of {MAX_MESSAGE}"
                            )));
                            break;
                        }
                        Ok(Line::Complete) => {
                            let text = String::from_utf8_lossy(line.trim_ascii());
                            if !text.is_empty()
                                && inbox
                                    .send(Inbound::message(text.into_owned(), None))
                                    .is_err()
                            {
                                break;
                            }
                        }
                    }
                }
            });
        }
        if let Some(stderr) = stderr {
            let name = command.to_owned();
            tokio::spawn(async move {
                let mut reader = BufReader::new(stderr);
                let mut line = Vec::new();
                loop {
                    match read_line(&mut reader, &mut line, MAX_LOG_LINE, Overlong::Skip).await {
                        Ok(Line::End) | Err(_) => break,
                        Ok(Line::TooLong(bytes)) => {
                            tracing::debug!(server = %name, bytes, "(a log line over the limit, not shown)");
                        }
                        Ok(Line::Complete) => {
                            let text = String::from_utf8_lossy(line.trim_ascii_end());
                            tracing::debug!(server = %name, "{text}");
                        }
                    }
                }
            });
        }
        let (lines, queue) = mpsc::channel(MAX_QUEUED);
        if let Some(stdin) = stdin {
            tokio::spawn(write_lines(stdin, queue));
        }
        Ok(StdioWire {
            lines: std::sync::Mutex::new(Some(lines)),
            child: std::sync::Mutex::new(Some(child)),
        })
    }

    pub(super) async fn send(&self, text: &str) -> Result<(), ClientError> {
        let mut line = String::with_capacity(text.len() + 1);
        line.push_str(text);
        line.push('\n');
        let lines = lock(&self.lines);
        match lines.as_ref().map(|l| l.try_send(line)) {
            Some(Ok(())) => Ok(()),
            Some(Err(mpsc::error::TrySendError::Full(_))) => Err(ClientError::Unavailable(
                format!("the server is not reading its input ({MAX_QUEUED} messages wait)"),
            )),
            _ => Err(ClientError::Unavailable(
                "the server's input is closed".into(),
            )),
        }
    }

    /// Closes the server's input (it should exit) and stops it if it does not.
    pub(super) fn close(&self) {
        lock(&self.lines).take();
        let child = lock(&self.child).take();
        if let Some(mut child) = child {
            tokio::spawn(async move {
                let waited =
                    tokio::time::timeout(std::time::Duration::from_secs(5), child.wait()).await;
                if waited.is_err() {
                    let _ = child.kill().await;
                }
            });
        }
    }
}

/// Writes the queued lines to the server's input, those waiting together in one write, until
/// the queue closes (the input is then closed) or a write fails.
async fn write_lines(stdin: ChildStdin, mut queue: mpsc::Receiver<String>) {
    let mut pipe = BufWriter::with_capacity(64 * 1024, stdin);
    while let Some(line) = queue.recv().await {
        let mut written = pipe.write_all(line.as_bytes()).await;
        while written.is_ok()
            && let Ok(line) = queue.try_recv()
        {
            written = pipe.write_all(line.as_bytes()).await;
        }
        if let Err(e) = written.and(pipe.flush().await) {
            tracing::debug!(error = %e, "the server's input closed");
            // Later sends fail: the queue is closed.
            queue.close();
            return;
        }
    }
    let _ = pipe.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_server_that_does_not_read_makes_sends_fail_once_the_queue_is_full() {
        let (inbox, _inbound) = mpsc::unbounded_channel();
        let wire = StdioWire::spawn("sleep", &["30".to_owned()], &BTreeMap::new(), inbox)
            .expect("start `sleep`");
        let line = "x".repeat(1024);
        let mut refused = None;
        for sent in 0..2 * MAX_QUEUED {
            if let Err(e) = wire.send(&line).await {
                refused = Some((sent, e));
                break;
            }
        }
        let (sent, e) = refused.expect("a send is refused");
        assert!(sent >= MAX_QUEUED, "refused after {sent}");
        assert!(
            matches!(&e, ClientError::Unavailable(why) if why.contains("not reading")),
            "{e:?}"
        );
        wire.close();
    }

    /// A line over the limit is dropped as it comes (never kept whole), and the connection
    /// ends saying why as soon as it passes the limit, even when the line never ends; the
    /// lines before it arrive.
    #[tokio::test]
    async fn a_line_over_the_limit_ends_the_connection_with_its_reason() {
        let (inbox, mut inbound) = mpsc::unbounded_channel();
        let script = format!(
            r#"echo '{{"jsonrpc":"2.0","method":"a"}}'; head -c {} /dev/zero | tr '\0' x; sleep 60"#,
            MAX_MESSAGE + 10
        );
        let wire = StdioWire::spawn("sh", &["-c".to_owned(), script], &BTreeMap::new(), inbox)
            .expect("start `sh`");
        let first = inbound.recv().await.expect("the first line");
        assert!(
            !first.is_last() && first.text.contains("\"method\":\"a\""),
            "{}",
            first.text
        );
        // (The line never ends: without the early stop this would wait the whole minute.)
        let second = tokio::time::timeout(std::time::Duration::from_secs(30), inbound.recv())
            .await
            .expect("the reason, before the line ends")
            .expect("the reason");
        assert!(
            second.is_last(),
            "{}",
            &second.text[..second.text.len().min(80)]
        );
        assert!(
            second
                .text
                .contains(&format!("bytes or more, over the limit of {MAX_MESSAGE}")),
            "{}",
            second.text
        );
        assert!(inbound.recv().await.is_none(), "nothing after it");
        wire.close();
    }

    /// A log line on stderr longer than the limit is skipped as it comes, and the messages on
    /// stdout still arrive.
    #[tokio::test]
    async fn a_long_log_line_is_skipped_and_messages_still_arrive() {
        let (inbox, mut inbound) = mpsc::unbounded_channel();
        let script = format!(
            r#"head -c {} /dev/zero | tr '\0' x >&2; echo >&2; echo '{{"jsonrpc":"2.0","method":"a"}}'"#,
            MAX_LOG_LINE * 4
        );
        let wire = StdioWire::spawn("sh", &["-c".to_owned(), script], &BTreeMap::new(), inbox)
            .expect("start `sh`");
        let first = tokio::time::timeout(std::time::Duration::from_secs(30), inbound.recv())
            .await
            .expect("the message, after the log line")
            .expect("the message");
        assert!(first.text.contains("\"method\":\"a\""), "{}", first.text);
        wire.close();
    }
}
