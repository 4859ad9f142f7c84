//! hcpspec's HTTP client (reqwest): every HTTP request hcpspec makes, but the shim adapter's,
//! goes through a [`reqwest::Client`] with hcpspec's settings ([`new_client`]): one shared
//! client and its connection pool for the whole process (the core-api suite's gate calls and
//! posts). The HTTP shim adapter's blocking calls go through `http1.rs` (one request shape, on
//! the calling thread, without reqwest's CPU per call: docs/bench.md), with the same rules.
//!
//! - **Loopback only** (docs/security.md): a client reads no proxy variable (`HTTP_PROXY` must
//!   not route a loopback call anywhere else) and follows no redirect (an implementation must not
//!   send hcpspec to another host). Callers check their URLs with
//!   [`loopback_origin`](super::loopback::loopback_origin) first; no TLS is built in.
//! - **One runtime for its connections.** A pooled connection is a task on the runtime that
//!   opened it; cases run on runtimes of their own that end with the case, and a connection left
//!   in the pool by one would break the next case's call ("runtime dropped the dispatch task").
//!   So every request of the shared client runs on this module's runtime
//!   ([`on_client_runtime`]), which lives as long as the process, and callers on any runtime
//!   await its answer.
//! - **The references' own clients.** The in-process reference implementations (the reference
//!   harness, the reference core's Tool Gate) stand for implementations under test, not for
//!   hcpspec: each makes its own client ([`new_client`], the same settings) and calls on its own
//!   runtime, as an implementation in another process would. A harness-api scenario plays on one
//!   thread, and a request on another runtime would reorder what its snapshot records.
//!
//! Each caller keeps its own bounds (deadline, body cap): a client has none, so that a bound's
//! breach is the caller's evidence, said in its words.

use std::future::Future;
use std::sync::OnceLock;

/// hcpspec's shared client, made on first use; a clone shares its pool. Run its requests with
/// [`on_client_runtime`].
pub fn client() -> reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(new_client).clone()
}

/// A client of its own, with hcpspec's settings: HTTP/1.1, no proxy, no redirect, no TLS.
pub fn new_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .tcp_nodelay(true)
        .build()
        // Without TLS, proxies or a custom resolver nothing in the build can fail.
        .expect("an HTTP client without TLS or proxies builds")
}

/// The runtime the shared client's connections live on, for the life of the process. One
/// worker: a second cost every call ~20 µs of thread hops on this 2-core machine.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("hcpspec-http")
            .enable_all()
            .build()
            .expect("the HTTP client's runtime starts")
    })
}

/// Run `work` (a request and the reading of its answer) on the client's runtime, from any
/// runtime. Dropping the returned future (a case that ended, a caller's timeout) aborts it.
pub async fn on_client_runtime<F>(work: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    struct Abort<T>(tokio::task::JoinHandle<T>);
    impl<T> Drop for Abort<T> {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let mut task = Abort(runtime().spawn(work));
    match (&mut task.0).await {
        Ok(v) => v,
        // Aborted only by dropping `task`, so it panicked: the caller panics as it would have.
        Err(e) => match e.try_into_panic() {
            Ok(p) => std::panic::resume_unwind(p),
            Err(e) => panic!("an HTTP request of hcpspec's client ended: {e}"),
        },
    }
}

/// The innermost cause of a client's error: what happened (refused, reset, closed early).
pub fn why(e: &reqwest::Error) -> String {
    let mut why = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        why = c.to_string();
        cause = c.source();
    }
    why
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    /// A redirect is an answer, never followed: an implementation cannot send hcpspec elsewhere.
    #[test]
    fn a_redirect_is_not_followed() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/rpc", l.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).unwrap();
            s.write_all(
                b"HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:1/rpc\r\ncontent-length: 0\r\n\r\n",
            )
            .unwrap();
        });
        let client = super::client();
        let status = super::runtime()
            .block_on(super::on_client_runtime(async move {
                client
                    .post(url)
                    .body("{}")
                    .send()
                    .await
                    .map(|r| r.status().as_u16())
            }))
            .unwrap();
        assert_eq!(status, 307);
        server.join().unwrap();
    }
}
