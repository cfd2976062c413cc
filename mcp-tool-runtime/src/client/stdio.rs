//! The client's stdio transport: the server is a process the client starts; messages are
//! lines on its stdin and stdout, and its stderr goes to this process's log.

use std::collections::BTreeMap;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{Mutex, mpsc};

use super::ClientError;
use super::core::Inbound;

/// The longest line read from the server (a message larger than this ends the connection).
const MAX_LINE: usize = 64 << 20;

pub(crate) struct StdioWire {
    stdin: Mutex<Option<ChildStdin>>,
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
                let mut lines = BufReader::new(stdout);
                let mut line = String::new();
                loop {
                    line.clear();
                    match lines.read_line(&mut line).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) if n > MAX_LINE => {
                            tracing::warn!(bytes = n, "the server sent a line over the limit");
                            break;
                        }
                        Ok(_) => {
                            let text = line.trim();
                            if !text.is_empty()
                                && inbox
                                    .send(Inbound {
                                        text: text.to_owned(),
                                        via: None,
                                    })
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
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!(server = %name, "{line}");
                }
            });
        }
        Ok(StdioWire {
            stdin: Mutex::new(stdin),
            child: std::sync::Mutex::new(Some(child)),
        })
    }

    pub(super) async fn send(&self, text: &str) -> Result<(), ClientError> {
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(ClientError::Unavailable(
                "the server's input is closed".into(),
            ));
        };
        let written = async {
            pipe.write_all(text.as_bytes()).await?;
            pipe.write_all(b"\n").await?;
            pipe.flush().await
        };
        written
            .await
            .map_err(|e| ClientError::Unavailable(format!("the server's input: {e}")))
    }

    /// Closes the server's input (it should exit) and stops it if it does not.
    pub(super) fn close(&self) {
        if let Ok(mut stdin) = self.stdin.try_lock() {
            stdin.take();
        }
        let child = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
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
