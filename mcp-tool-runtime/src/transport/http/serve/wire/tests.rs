//! A connection served here, driven through an in-memory pipe with a service of the test's own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::Body;
use futures_util::StreamExt as _;
use tokio::io::{AsyncReadExt as _, DuplexStream};

use super::*;

const WAIT: Duration = Duration::from_secs(10);

fn bounds() -> Bounds {
    Bounds {
        header_timeout: Duration::from_secs(10),
        body_timeout: Duration::from_secs(10),
        max_body: 1024,
    }
}

/// Answers each request with its method, path and body.
async fn echo(request: Request<Whole>) -> Result<Response, Infallible> {
    let (parts, body) = request.into_parts();
    let body = match body.0 {
        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        None => String::new(),
    };
    let text = format!("{} {} {body}", parts.method, parts.uri.path());
    Ok(Response::new(Body::from(text)))
}

/// Serves one end of a pipe with `service`; a hand-off answers `handed: ` and what it was given.
fn served<S>(
    service: S,
    bounds: Bounds,
) -> (
    DuplexStream,
    watch::Sender<bool>,
    tokio::task::JoinHandle<()>,
)
where
    S: hyper::service::Service<Request<Whole>, Response = Response, Error = Infallible>
        + Send
        + 'static,
    S::Future: Send,
{
    // A pipe of 16 KiB: a side that is not read stops the writer, as a socket's would.
    let (client, server) = tokio::io::duplex(16 * 1024);
    let (stop_tx, stop) = watch::channel(false);
    let hand_off = |mut io: Rewind<DuplexStream>| async move {
        let mut got = vec![0u8; 4096];
        let n = io.read(&mut got).await.unwrap();
        let mut said = b"handed: ".to_vec();
        said.extend_from_slice(&got[..n]);
        io.write_all(&said).await.unwrap();
        io.shutdown().await.unwrap();
    };
    let task = tokio::spawn(async move {
        let never = || None::<()>;
        assert!(
            serve(server, service, hand_off, bounds, stop, never)
                .await
                .is_none()
        );
    });
    (client, stop_tx, task)
}

/// Everything the server writes until it closes the connection.
async fn rest(client: &mut DuplexStream) -> String {
    let mut got = Vec::new();
    tokio::time::timeout(WAIT, client.read_to_end(&mut got))
        .await
        .expect("the server closes the connection")
        .unwrap();
    String::from_utf8(got).unwrap()
}

/// The answers in `text`, each without its `date` line.
fn answers(text: &str) -> Vec<String> {
    text.split("HTTP/1.1 ")
        .filter(|a| !a.is_empty())
        .map(|a| {
            a.lines()
                .filter(|l| !l.starts_with("date: "))
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// What an echo server within `bounds` writes, to its close, to a client that sends `sent`.
async fn answered(bounds: Bounds, sent: &[u8]) -> String {
    let (mut client, _stop, task) = served(hyper::service::service_fn(echo), bounds);
    client.write_all(sent).await.unwrap();
    let text = rest(&mut client).await;
    task.await.unwrap();
    text
}

#[tokio::test]
async fn requests_sent_ahead_are_answered_in_order() {
    let text = answered(
        bounds(),
        b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n\
          POST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyz\
          GET /c HTTP/1.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(
        answers(&text),
        [
            "200 OK|content-length: 7||GET /a ",
            "200 OK|content-length: 11||POST /b xyz",
            "200 OK|content-length: 7|connection: close||GET /c ",
        ],
        "{text}"
    );
}

#[tokio::test]
async fn a_request_of_another_shape_hands_the_connection_over_with_its_bytes() {
    let chunked = "POST /d HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let text = answered(
        bounds(),
        format!("GET /a HTTP/1.1\r\n\r\n{chunked}").as_bytes(),
    )
    .await;
    let (first, handed) = text.split_once("handed: ").expect("handed over");
    assert_eq!(answers(first), ["200 OK|content-length: 7||GET /a "]);
    assert_eq!(handed, chunked);
}

#[tokio::test]
async fn a_head_answer_has_its_length_and_no_body() {
    let text = answered(
        bounds(),
        b"HEAD /h HTTP/1.1\r\n\r\nGET /g HTTP/1.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(
        answers(&text),
        [
            "200 OK|content-length: 8|",
            "200 OK|content-length: 7|connection: close||GET /g "
        ],
        "{text}"
    );
}

#[tokio::test]
async fn a_stream_is_sent_in_chunks_as_it_comes() {
    let (second_tx, second_rx) = tokio::sync::oneshot::channel::<()>();
    let second = Arc::new(std::sync::Mutex::new(Some(second_rx)));
    let service = hyper::service::service_fn(move |_request: Request<Whole>| {
        let second = second.lock().unwrap().take().unwrap();
        async move {
            let first =
                futures_util::stream::once(async { Ok::<_, Infallible>(Bytes::from("one")) });
            let later = futures_util::stream::once(async move {
                second.await.unwrap();
                Ok(Bytes::from("second"))
            });
            Ok::<_, Infallible>(Response::new(Body::from_stream(first.chain(later))))
        }
    });
    let (mut client, _stop, task) = served(service, bounds());
    client
        .write_all(b"GET /s HTTP/1.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    // The first chunk comes before the second is made.
    let mut got = Vec::new();
    while !got.ends_with(b"3\r\none\r\n") {
        let mut buf = [0u8; 1024];
        let n = tokio::time::timeout(WAIT, client.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    second_tx.send(()).unwrap();
    let text = String::from_utf8(got).unwrap() + &rest(&mut client).await;
    assert_eq!(
        answers(&text),
        ["200 OK|transfer-encoding: chunked|connection: close||3|one|6|second|0|"],
        "{text}"
    );
    task.await.unwrap();
}

/// The bounds, with head and body deadlines as given.
fn deadlines(header_timeout: Duration, body_timeout: Duration) -> Bounds {
    Bounds {
        header_timeout,
        body_timeout,
        ..bounds()
    }
}

#[tokio::test]
async fn late_requests_are_answered_408_and_an_idle_connection_closed() {
    let short = Duration::from_millis(100);
    let body = answered(
        deadlines(WAIT, short),
        b"POST /b HTTP/1.1\r\nContent-Length: 10\r\n\r\nab",
    )
    .await;
    let head = answered(deadlines(short, WAIT), b"GET /a HTTP/1.1\r\nHost").await;
    for text in [&body, &head] {
        assert!(
            text.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
            "{text}"
        );
        assert!(text.contains("connection: close\r\n"), "{text}");
    }
    assert!(
        body.contains("the body did not arrive within 0 s"),
        "{body}"
    );
    assert_eq!(answered(deadlines(short, WAIT), b"").await, "");
}

#[tokio::test]
async fn a_client_that_closes_its_side_ends_the_work_for_it() {
    struct Dropped(Arc<AtomicBool>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    let service = hyper::service::service_fn(move |_request: Request<Whole>| {
        let guard = Dropped(flag.clone());
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
            Ok::<_, Infallible>(Response::new(Body::empty()))
        }
    });
    let (mut client, _stop, task) = served(service, bounds());
    client.write_all(b"GET /w HTTP/1.1\r\n\r\n").await.unwrap();
    client.shutdown().await.unwrap();
    tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test]
async fn a_stopping_server_closes_an_idle_connection_and_ends_a_busy_one_after_its_answer() {
    let (mut client, stop, task) = served(hyper::service::service_fn(echo), bounds());
    client.write_all(b"GET /a HTTP/1.1\r\n\r\n").await.unwrap();
    let mut buf = [0u8; 1024];
    let n = tokio::time::timeout(WAIT, client.read(&mut buf))
        .await
        .unwrap()
        .unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200 OK"));
    stop.send(true).unwrap();
    assert_eq!(rest(&mut client).await, "");
    tokio::time::timeout(WAIT, task).await.unwrap().unwrap();

    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    let release = Arc::new(std::sync::Mutex::new(Some(release_rx)));
    let service = hyper::service::service_fn(move |_request: Request<Whole>| {
        let release = release.lock().unwrap().take();
        async move {
            if let Some(release) = release {
                let _ = release.await;
            }
            Ok::<_, Infallible>(Response::new(Body::from("done")))
        }
    });
    let (mut client, stop, task) = served(service, bounds());
    client.write_all(b"GET /b HTTP/1.1\r\n\r\n").await.unwrap();
    tokio::task::yield_now().await;
    stop.send(true).unwrap();
    release_tx.send(()).unwrap();
    let text = rest(&mut client).await;
    assert_eq!(
        answers(&text),
        ["200 OK|content-length: 4|connection: close||done"],
        "{text}"
    );
    task.await.unwrap();
}

#[tokio::test]
async fn a_body_longer_than_its_stated_length_ends_the_connection() {
    let service = hyper::service::service_fn(|_request: Request<Whole>| async {
        let mut response = Response::new(Body::from("abcdef"));
        response
            .headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from_static("3"));
        Ok::<_, Infallible>(response)
    });
    let (mut client, _stop, task) = served(service, bounds());
    client
        .write_all(b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    let text = rest(&mut client).await;
    assert_eq!(answers(&text), ["200 OK|content-length: 3||abc"], "{text}");
    task.await.unwrap();
}

#[tokio::test]
async fn a_body_that_comes_in_parts_is_read_whole() {
    let (mut client, _stop, task) = served(hyper::service::service_fn(echo), bounds());
    for part in [
        &b"POST /b HTTP/1.1\r\nConnection: close\r\nContent-Length: 10\r\n\r\nab"[..],
        b"cdef",
        b"ghij",
    ] {
        client.write_all(part).await.unwrap();
        tokio::task::yield_now().await;
    }
    let text = rest(&mut client).await;
    assert_eq!(
        answers(&text),
        ["200 OK|content-length: 18|connection: close||POST /b abcdefghij"],
        "{text}"
    );
    task.await.unwrap();
}

#[tokio::test]
async fn requests_sent_ahead_are_read_no_further_than_the_bound() {
    let service = hyper::service::service_fn(|_request: Request<Whole>| async {
        std::future::pending::<()>().await;
        Ok::<_, Infallible>(Response::new(Body::empty()))
    });
    let (mut client, _stop, _task) = served(service, bounds());
    // Twice the bound: the server holds at most the bound, the pipe 16 KiB more.
    let ahead = b"GET /a HTTP/1.1\r\n\r\n".repeat(2 * READ_AHEAD / 18);
    let wrote = tokio::time::timeout(Duration::from_millis(500), client.write_all(&ahead)).await;
    assert!(wrote.is_err(), "the server read past its bound");
}

#[tokio::test]
async fn a_connection_moves_only_between_requests_with_nothing_of_the_next_read() {
    let (mut client, server) = tokio::io::duplex(16 * 1024);
    let (_stop_tx, stop) = watch::channel(false);
    let never_handed =
        |_: Rewind<DuplexStream>| async { unreachable!("no request of another shape") };
    // Two requests sent together: the second is read with the first, so no move between them.
    client
        .write_all(b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    let asked = Arc::new(AtomicBool::new(false));
    let moving = {
        let asked = asked.clone();
        move || {
            asked.store(true, Ordering::Relaxed);
            Some("elsewhere")
        }
    };
    let service = hyper::service::service_fn(echo);
    let serving = serve(
        server,
        service,
        never_handed,
        bounds(),
        stop.clone(),
        moving,
    );
    let (server, to) = tokio::time::timeout(WAIT, serving)
        .await
        .expect("given back after the second answer")
        .expect("moved, not ended");
    assert_eq!(to, "elsewhere");
    assert!(asked.load(Ordering::Relaxed));
    // Both answered before the move; the connection served on from where it went.
    let mut got = vec![0u8; 4096];
    let mut text = String::new();
    while text.matches("HTTP/1.1 200").count() < 2 {
        let n = client.read(&mut got).await.unwrap();
        text.push_str(std::str::from_utf8(&got[..n]).unwrap());
    }
    assert!(text.contains("GET /a") && text.contains("GET /b"), "{text}");
    client
        .write_all(b"GET /c HTTP/1.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let service = hyper::service::service_fn(echo);
    let again = serve(server, service, never_handed, bounds(), stop, || None::<()>);
    assert!(again.await.is_none());
    let last = rest(&mut client).await;
    assert_eq!(
        answers(&last),
        ["200 OK|content-length: 7|connection: close||GET /c "]
    );
}
