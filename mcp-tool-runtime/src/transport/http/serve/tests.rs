//! The accept loop with two runtimes on threads of their own: a connection moves between them
//! between two requests and goes on being served.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::{Bounds, Placement, accept_loop};
use crate::transport::http::access::forwarded::TrustedProxies;

/// Asks, over `stream`, which thread served the request.
async fn who(stream: &mut TcpStream) -> String {
    stream
        .write_all(b"POST /who HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n")
        .await
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("answered")
            .unwrap();
        assert!(n > 0, "the connection closed");
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .expect("a length")
                .parse()
                .unwrap();
            if body.len() >= length {
                assert!(head.starts_with("HTTP/1.1 200"), "{text}");
                return body[..length].to_owned();
            }
        }
    }
}

#[tokio::test]
async fn a_connection_moves_between_runtimes_between_two_requests() {
    // The other runtime, on a thread named `other` until the test ends.
    let (handle_tx, handle_rx) = std::sync::mpsc::channel();
    let (end_tx, end_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("other".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            handle_tx.send(runtime.handle().clone()).unwrap();
            runtime.block_on(async {
                let _ = end_rx.await;
            });
        })
        .unwrap();
    let placement = Placement::new(vec![handle_rx.recv().unwrap()]);
    let router = Router::new().route(
        "/who",
        axum::routing::post(|| async {
            std::thread::current()
                .name()
                .unwrap_or("unnamed")
                .to_owned()
        }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let bounds = Bounds {
        header_timeout: Duration::from_secs(10),
        body_timeout: Duration::from_secs(10),
        max_body: 1024,
        max_connections: 16,
        max_per_address: 16,
        trusted: Arc::new(TrustedProxies::none()),
        placement: placement.clone(),
    };
    let (stop_tx, stop) = watch::channel(false);
    let serving = tokio::spawn(accept_loop(
        listener,
        (router, None),
        bounds,
        stop,
        Duration::from_secs(5),
    ));

    let mut first = TcpStream::connect(address).await.unwrap();
    let here = who(&mut first).await;
    assert_ne!(here, "other");
    let mut second = TcpStream::connect(address).await.unwrap();
    assert_eq!(who(&mut second).await, "other");

    // One runtime in use: the second connection moves after an answer (the one to the request
    // after the change, or already the one before it, whose answer the change may overtake),
    // and is served here from then on; the first stays.
    placement.use_only(1);
    let mut on_second = vec![who(&mut second).await, who(&mut second).await];
    on_second.push(who(&mut second).await);
    assert_eq!(
        on_second[1..],
        [here.clone(), here.clone()],
        "{on_second:?}"
    );
    assert_eq!(who(&mut first).await, here);

    // Both again: one of the two moves back, after one of its answers, and they stay apart.
    placement.use_only(2);
    let mut last = Vec::new();
    for _ in 0..3 {
        last = vec![who(&mut first).await, who(&mut second).await];
    }
    last.sort();
    let mut apart = vec![here.clone(), "other".to_owned()];
    apart.sort();
    assert_eq!(last, apart);

    stop_tx.send(true).unwrap();
    drop((first, second));
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the accept loop ends")
        .unwrap()
        .unwrap();
    end_tx.send(()).unwrap();
    thread.join().unwrap();
}
