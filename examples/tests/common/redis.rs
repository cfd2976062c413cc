//! A `redis-server` of a test's own, for the tests of the Redis stores.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::common::TIMEOUT;

/// A `redis-server` of this test's own on a free loopback port, without persistence. Killed
/// when dropped.
pub(crate) struct Redis {
    child: Child,
    port: u16,
    log: Arc<Mutex<Vec<u8>>>,
}

impl Redis {
    /// Starts `redis-server` and waits (bounded) until it answers PING. Fails the test when
    /// `redis-server` is not installed.
    pub(crate) fn start() -> Redis {
        let mut last = String::new();
        for _ in 0..5 {
            // A port free a moment ago; if another process takes it first, Redis exits and
            // the next round tries another.
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free loopback port")
                .port();
            let spawned = Command::new("redis-server")
                .args(["--port", &port.to_string()])
                .args(["--bind", "127.0.0.1"])
                .args(["--save", ""])
                .args(["--appendonly", "no"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn();
            let mut child = match spawned {
                Ok(child) => child,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
                    "redis-server is not installed, and the Redis store tests need a real one: \
                     install it (`apt-get install redis-server`, `brew install redis`) and run them again"
                ),
                Err(e) => panic!("cannot start redis-server: {e}"),
            };
            let log = Arc::new(Mutex::new(Vec::new()));
            for mut pipe in [
                Box::new(child.stdout.take().expect("piped")) as Box<dyn Read + Send>,
                Box::new(child.stderr.take().expect("piped")),
            ] {
                let sink = log.clone();
                thread::spawn(move || {
                    let mut chunk = [0u8; 4096];
                    while let Ok(n) = pipe.read(&mut chunk) {
                        if n == 0 {
                            break;
                        }
                        sink.lock().expect("log").extend_from_slice(&chunk[..n]);
                    }
                });
            }
            let mut redis = Redis { child, port, log };
            let deadline = Instant::now() + TIMEOUT;
            loop {
                if redis.ping() {
                    return redis;
                }
                if let Ok(Some(status)) = redis.child.try_wait() {
                    last = format!("redis-server exited ({status}):\n{}", redis.log());
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "redis-server did not answer PING on port {port} within {TIMEOUT:?}:\n{}",
                    redis.log()
                );
                thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("redis-server would not start: {last}");
    }

    /// Whether the server answers PING with PONG, over a raw connection.
    pub(crate) fn ping(&self) -> bool {
        let addr = ([127, 0, 0, 1], self.port).into();
        let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
        if stream.write_all(b"PING\r\n").is_err() {
            return false;
        }
        let mut reply = [0u8; 64];
        let n = stream.read(&mut reply).unwrap_or(0);
        let _ = stream.shutdown(Shutdown::Both);
        reply[..n].starts_with(b"+PONG")
    }

    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The reply to one inline command, over a raw connection.
    pub(crate) fn command(&self, line: &str) -> String {
        let addr = ([127, 0, 0, 1], self.port).into();
        let mut stream =
            TcpStream::connect_timeout(&addr, Duration::from_secs(2)).expect("Redis answers");
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        stream
            .write_all(format!("{line}\r\n").as_bytes())
            .expect("a command sent");
        let mut reply = [0u8; 256];
        let n = stream.read(&mut reply).unwrap_or(0);
        String::from_utf8_lossy(&reply[..n]).trim().to_owned()
    }

    pub(crate) fn log(&self) -> String {
        String::from_utf8_lossy(&self.log.lock().expect("log")).into_owned()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
