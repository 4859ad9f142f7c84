//! `hcpspec bench --transports` compares like with like: the adapter's calls and the bare
//! client's go through recording shims, and the two recordings are the same, call for call (so
//! no adapter can come out cheaper than its bare client by doing less, as the stdio adapter did
//! when `initialize` was answered from memory). Nothing here is timed.

use hcpspec::adapter::bench;
use hcpspec::shim::{Dispatch, RpcError, Service};
use hcpspec::spec::Spec;
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const HCPSPEC: &str = env!("CARGO_BIN_EXE_hcpspec");
/// Measured calls each client makes, after its setup calls (`initialize`, `runtime.create`).
const CALLS: usize = 4;
const SETUP: usize = 2;

/// A fresh adapter, as a case gets.
fn connect(spec: &Spec) -> Box<dyn hcpspec::adapter::Adapter> {
    hcpspec::adapter::shim_connector(spec, &Default::default()).unwrap()().unwrap()
}

/// A stdio shim serving the reference, what crosses its stdin and stdout copied to `dir/in`
/// and `dir/out` on the way.
fn recording_shim(dir: &Path) -> Vec<String> {
    let q = |p: &Path| shell_words::quote(&p.display().to_string()).into_owned();
    vec![
        "sh".into(),
        "-c".into(),
        format!(
            "tee {} | {} shim --transport stdio --runtime reference | tee {}",
            q(&dir.join("in")),
            shell_words::quote(HCPSPEC),
            q(&dir.join("out"))
        ),
    ]
}

/// The first `n` lines of `path`, once it has them (tee writes its file after the pipe: a
/// moment later), or all it has after a generous wait.
fn first_lines(path: &Path, n: usize) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(String::from).collect();
        if lines.len() >= n || Instant::now() > until {
            return lines.into_iter().take(n).collect();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn over_stdio_the_adapter_and_the_bare_client_exchange_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("adapter"), tmp.path().join("bare"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let spec = Spec::of_shim(&format!("stdio:{}", shell_words::join(recording_shim(&a))))
        .expect("a stdio spec");
    let mut adapter = bench::adapter(connect(&spec)).expect("the adapter's call");
    let mut bare = bench::bare_stdio(&recording_shim(&b)).expect("the bare client's call");
    for _ in 0..CALLS {
        adapter().expect("the adapter's call answered");
        bare().expect("the bare call answered");
    }
    // Every line the bare client sent and got (its setup and its calls) is on the adapter's
    // wire too, in the same order: the handshake, the setup and one request per call.
    let want = SETUP + CALLS;
    assert_eq!(first_lines(&b.join("in"), want).len(), want);
    for side in ["in", "out"] {
        assert_eq!(
            first_lines(&a.join(side), want),
            first_lines(&b.join(side), want),
            "what the adapter's shim {} differs from the bare client's",
            if side == "in" { "read" } else { "wrote" }
        );
    }
}

/// A call as a server answered it: method, params, result.
type Answered = (String, Value, Result<Value, RpcError>);

/// The reference's session, every call it answers recorded.
struct Recorder {
    session: hcpspec::suites::hcp::shim::Session,
    calls: Mutex<Vec<Answered>>,
}

impl Dispatch for Recorder {
    fn dispatch(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let r = self.session.dispatch(method, params.clone());
        let mut calls = self.calls.lock().unwrap();
        calls.push((method.to_string(), params, r.clone()));
        r
    }

    fn close(&self, runtime_ids: Vec<String>) {
        Dispatch::close(&self.session, runtime_ids)
    }
}

/// A recording server of `kind` (http, ws) on a thread of its own for the rest of the tests,
/// and its URL.
fn recording_server(kind: &str) -> (String, Arc<Recorder>) {
    let recorder = Arc::new(Recorder {
        session: hcpspec::suites::hcp::shim::session("reference").unwrap(),
        calls: Mutex::new(Vec::new()),
    });
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let service = Service::Rpc(recorder.clone());
    let url = match kind {
        "http" => {
            std::thread::spawn(move || hcpspec::shim::http::serve(listener, service));
            format!("http://{addr}")
        }
        _ => {
            std::thread::spawn(move || hcpspec::shim::ws::serve(listener, service));
            format!("ws://{addr}/ws")
        }
    };
    (url, recorder)
}

#[test]
fn over_http_and_websocket_the_adapter_and_the_bare_client_make_the_same_calls() {
    for kind in ["http", "ws"] {
        let (a_url, a) = recording_server(kind);
        let (b_url, b) = recording_server(kind);
        let spec = Spec::of_shim(&a_url).unwrap();
        let mut adapter = bench::adapter(connect(&spec)).expect("the adapter's call");
        let mut bare = match kind {
            "http" => bench::bare_http(&b_url),
            _ => bench::bare_ws(&b_url),
        }
        .expect("the bare client");
        for _ in 0..CALLS {
            adapter().expect("the adapter's call answered");
            bare().expect("the bare call answered");
        }
        let (a, b) = (a.calls.lock().unwrap(), b.calls.lock().unwrap());
        assert!(
            b.len() >= CALLS,
            "{kind}: the bare client made {} calls",
            b.len()
        );
        assert_eq!(
            *a, *b,
            "{kind}: the adapter's calls differ from the bare client's"
        );
    }
}
