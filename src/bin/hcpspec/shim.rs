//! `hcpspec shim`: serve an embedded runtime over the shim protocol, and
//! `hcpspec bench --transports`: what each transport costs against a bare echo.

use hcpspec::error::BadInput;
use hcpspec::exit;
use hcpspec::run::Verdict;
use hcpspec::shim::{self, Service, PROTOCOL};
use hcpspec::suites::hcp::{run_all, RunEnv};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
    Ws,
}

#[derive(clap::Args)]
pub struct ShimArgs {
    /// stdio: one message per line on stdin/stdout; http: POST /rpc; ws: one message per text frame.
    #[arg(long, value_enum, default_value = "stdio")]
    pub transport: Transport,
    /// The embedded runtime to serve: reference, stub or mutant:NAME.
    #[arg(long, default_value = "reference")]
    pub runtime: String,
    /// Where http and ws listen. Only 127.0.0.1 is ever bound; port 0 picks a free port, and the
    /// first stdout line says which (`listening on http://127.0.0.1:PORT`).
    #[arg(long, default_value = "127.0.0.1:0", value_name = "127.0.0.1:PORT")]
    pub listen: String,
    /// Echo every message back instead of serving a runtime (the floor of `bench --transports`).
    #[arg(long, hide = true)]
    pub echo: bool,
}

/// `127.0.0.1:PORT`, `localhost:PORT`, `:PORT` or `PORT`; anything else is refused.
fn loopback(listen: &str) -> Result<SocketAddr, BadInput> {
    let port = match listen.rsplit_once(':') {
        Some(("" | "127.0.0.1" | "localhost", port)) => port,
        None => listen,
        Some(_) => {
            return Err(BadInput(format!(
                "--listen {listen}: hcpspec shim only ever binds 127.0.0.1 (give 127.0.0.1:PORT)"
            )))
        }
    };
    let port: u16 = port
        .parse()
        .map_err(|_| format!("--listen {listen}: not a port"))?;
    Ok(SocketAddr::from(([127, 0, 0, 1], port)))
}

pub fn serve(a: &ShimArgs) -> Result<i32, BadInput> {
    // A core's control shim (docs/core-protocol.md) or a host shim (docs/host-protocol.md):
    // their state is a whole case.
    if let Some(make) = case_target(&a.runtime)? {
        return serve_case_target(a, make);
    }
    let name = a.runtime.strip_prefix("inproc:").unwrap_or(&a.runtime);
    let service = if a.echo {
        Service::Echo
    } else {
        hcpspec::suites::hcp::shim::service(name).ok_or_else(|| {
            format!(
                "--runtime {}: no embedded runtime `{name}` (reference, stub, mutant:NAME)",
                a.runtime
            )
        })?
    };
    let what = if a.echo {
        "an echo".to_string()
    } else {
        format!("{name} ({PROTOCOL})")
    };
    if a.transport == Transport::Stdio {
        eprintln!("hcpspec shim: serving {what} over stdio");
        let out = std::io::BufWriter::new(std::io::stdout().lock());
        shim::stdio::serve(&service, std::io::stdin().lock(), out)
            .map_err(|e| format!("stdio: {e}"))?;
        return Ok(exit::OK);
    }
    let (listener, url) = listen(a, &what)?;
    let served = match a.transport {
        Transport::Http => shim::http::serve(listener, service),
        _ => shim::ws::serve(listener, service),
    };
    served.map_err(|e| format!("{url}: {e}"))?;
    Ok(exit::OK)
}

/// Bind `--listen` on loopback and say where on stdout's first line (`listening on URL`).
fn listen(a: &ShimArgs, what: &str) -> Result<(std::net::TcpListener, String), BadInput> {
    let addr = loopback(&a.listen)?;
    let listener =
        std::net::TcpListener::bind(addr).map_err(|e| format!("--listen {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let url = match a.transport {
        Transport::Http => format!("http://{bound}"),
        _ => format!("ws://{bound}/ws"),
    };
    println!("listening on {url}");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    eprintln!("hcpspec shim: serving {what} on {url}");
    Ok((listener, url))
}

/// `PREFIX:NAME` (`core:reference`, `host:mutant:…`): an embedded target of a suite whose shim
/// holds a whole case, found through the registry.
fn case_target(runtime: &str) -> Result<Option<(String, hcpspec::suites::serve::Make)>, BadInput> {
    let Some((prefix, name)) = runtime.split_once(':') else {
        return Ok(None);
    };
    let Some(shim) = hcpspec::suites::registered()
        .into_iter()
        .filter_map(|s| s.shim())
        .find(|s| s.prefix == prefix)
    else {
        return Ok(None);
    };
    if (shim.make)(name).is_none() {
        return Err(BadInput(format!(
            "--runtime {runtime}: no embedded {prefix} `{name}` (reference, mutant:NAME, variant:NAME; `hcpspec list --mutants` names them)"
        )));
    }
    let (make, name) = (shim.make, name.to_string());
    let maker: hcpspec::suites::serve::Make =
        std::sync::Arc::new(move || make(&name).expect("checked above"));
    Ok(Some((format!("{runtime} ({})", shim.protocol), maker)))
}

fn serve_case_target(
    a: &ShimArgs,
    (what, make): (String, hcpspec::suites::serve::Make),
) -> Result<i32, BadInput> {
    use hcpspec::suites::serve;
    if a.transport == Transport::Stdio {
        eprintln!("hcpspec shim: serving {what} over stdio");
        serve::stdio(&mut *make()).map_err(|e| format!("stdio: {e}"))?;
        return Ok(exit::OK);
    }
    let (listener, url) = listen(a, &what)?;
    match a.transport {
        Transport::Http => serve::http(listener, make),
        _ => serve::ws(listener, make),
    }
    .map_err(|e| format!("{url}: {e}"))?;
    Ok(exit::OK)
}

/// A `hcpspec shim` child process, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(exe: &Path, args: &[&str]) -> Result<Server, BadInput> {
        let mut child = Command::new(exe)
            .arg("shim")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().expect("piped"))
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .ok_or_else(|| format!("hcpspec shim {args:?} said {line:?}"))?
            .to_string();
        Ok(Server { child, url })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The request an adapter sends for `initialize`, byte for byte.
fn initialize_frame() -> String {
    serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocol": PROTOCOL } }).to_string()
}

/// One round trip, repeatable.
type Call = Box<dyn FnMut() -> Result<(), String>>;

/// The best mean µs per call of each of `calls` over `rounds` rounds of `n` calls, the calls
/// interleaved round by round (so that a busy moment of the machine hits them alike), after
/// `n` unmeasured calls each.
fn best_means(calls: &mut [Call], n: usize, rounds: usize) -> Result<Vec<f64>, BadInput> {
    for c in calls.iter_mut() {
        for _ in 0..n {
            c()?;
        }
    }
    let mut best = vec![f64::MAX; calls.len()];
    for _ in 0..rounds {
        for (c, b) in calls.iter_mut().zip(&mut best) {
            let t = Instant::now();
            for _ in 0..n {
                c()?;
            }
            *b = b.min(t.elapsed().as_secs_f64() * 1e6 / n as f64);
        }
    }
    Ok(best)
}

fn adapter_call(spec: &str) -> Result<Call, BadInput> {
    let mut a = hcpspec::suites::hcp::shim::connector(spec, &Default::default())?()?;
    let params = serde_json::json!({ "protocol": PROTOCOL });
    Ok(Box::new(move || {
        a.call("initialize", params.clone())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }))
}

/// A bare client: write the frame, read one line back, on this thread.
fn echo_stdio(exe: &Path) -> Result<Call, BadInput> {
    struct Echo(Child);
    impl Drop for Echo {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Echo(
        Command::new(exe)
            .args(["shim", "--transport", "stdio", "--echo"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?,
    );
    let mut stdin: ChildStdin = child.0.stdin.take().expect("piped");
    let mut stdout = BufReader::new(child.0.stdout.take().expect("piped") as ChildStdout);
    let frame = initialize_frame() + "\n";
    let mut line = String::new();
    Ok(Box::new(move || {
        let _alive = &child;
        stdin
            .write_all(frame.as_bytes())
            .and_then(|_| stdin.flush())
            .map_err(|e| e.to_string())?;
        line.clear();
        stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        (line.len() == frame.len())
            .then_some(())
            .ok_or_else(|| "echo mismatch".to_string())
    }))
}

/// A bare HTTP/1.1 client on one keep-alive connection: request bytes out, headers and a
/// Content-Length body back.
fn echo_http(url: &str) -> Result<Call, BadInput> {
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let stream = TcpStream::connect(&authority).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut w = stream.try_clone().map_err(|e| e.to_string())?;
    let mut r = BufReader::new(stream);
    let body = initialize_frame();
    let request = format!(
        "POST /rpc HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut line = String::new();
    let mut got = Vec::new();
    Ok(Box::new(move || {
        w.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
        let mut length = 0;
        loop {
            line.clear();
            r.read_line(&mut line).map_err(|e| e.to_string())?;
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v
                        .trim()
                        .parse()
                        .map_err(|_| "bad content-length".to_string())?;
                }
            }
        }
        got.resize(length, 0);
        r.read_exact(&mut got).map_err(|e| e.to_string())?;
        (length == body.len())
            .then_some(())
            .ok_or_else(|| "echo mismatch".to_string())
    }))
}

/// A bare WebSocket client (tungstenite, blocking): one text frame out, one back.
fn echo_ws(url: &str) -> Result<Call, BadInput> {
    use tokio_tungstenite::tungstenite::{client, Message};
    let authority = url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .unwrap_or_default();
    let stream = TcpStream::connect(authority).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (mut socket, _) = client(url, stream).map_err(|e| e.to_string())?;
    let frame = initialize_frame();
    Ok(Box::new(move || {
        socket
            .send(Message::text(frame.clone()))
            .map_err(|e| e.to_string())?;
        match socket.read().map_err(|e| e.to_string())? {
            Message::Text(t) if t.len() == frame.len() => Ok(()),
            other => Err(format!("echo mismatch: {other:?}")),
        }
    }))
}

/// `hcpspec bench --transports`: the round trip of `initialize` through each adapter against a
/// bare echo over the same pipe or socket, then the whole contract suite per transport.
pub fn bench_transports(iterations: usize, vectors: &Path) -> Result<i32, BadInput> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let x = exe.display().to_string();
    let cases = hcpspec::suites::load_driving(vectors, "hcp-runtime")
        .map_err(|e| e.to_string())?
        .cases;
    let env = RunEnv::new(vectors, &RunEnv::self_probe())?;
    let claims = hcpspec::suites::hcp::embedded_claims("reference").unwrap_or_default();
    let jobs = crate::cli::cores();
    let http = Server::start(&exe, &["--transport", "http", "--runtime", "reference"])?;
    let ws = Server::start(&exe, &["--transport", "ws", "--runtime", "reference"])?;
    let http_echo = Server::start(&exe, &["--transport", "http", "--echo"])?;
    let ws_echo = Server::start(&exe, &["--transport", "ws", "--echo"])?;
    let specs = [
        ("inproc", "inproc:reference".to_string()),
        (
            "stdio",
            format!(
                "stdio:{} shim --transport stdio --runtime reference",
                shell_words::quote(&x)
            ),
        ),
        ("http", http.url.clone()),
        ("ws", ws.url.clone()),
    ];
    let (n, rounds) = (500, 8);
    println!("round trip of `initialize`, 1 client, best mean of {rounds} interleaved rounds of {n} calls:");
    println!(
        "  {:<8} {:>12} {:>14} {:>8}",
        "adapter", "adapter µs", "bare echo µs", "ratio"
    );
    for (label, spec) in &specs {
        let mut calls = vec![adapter_call(spec)?];
        match *label {
            "stdio" => calls.push(echo_stdio(&exe)?),
            "http" => calls.push(echo_http(&http_echo.url)?),
            "ws" => calls.push(echo_ws(&ws_echo.url)?),
            _ => {}
        }
        let us = best_means(&mut calls, n, rounds)?;
        match us.get(1) {
            Some(e) => println!("  {label:<8} {:>12.1} {e:>14.1} {:>7.2}×", us[0], us[0] / e),
            None => println!("  {label:<8} {:>12.1} {:>14} {:>8}", us[0], "-", "-"),
        }
    }
    println!(
        "\nthe contract suite, {} cases on {jobs} jobs, best of {}:",
        cases.len(),
        iterations.max(1)
    );
    println!(
        "  {:<8} {:>9} {:>10} {:>10}",
        "adapter", "seconds", "cases/s", "÷ inproc"
    );
    // Iterations interleave the transports, so that a busy moment hits them alike.
    let connectors = specs
        .iter()
        .map(|(_, spec)| hcpspec::suites::hcp::shim::connector(spec, &Default::default()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut best = vec![f64::MAX; specs.len()];
    let mut passed = vec![0; specs.len()];
    for _ in 0..iterations.max(1) {
        for (k, connect) in connectors.iter().enumerate() {
            let t = Instant::now();
            let results = run_all(&cases, &env, &claims, jobs, connect, &|_| {});
            best[k] = best[k].min(t.elapsed().as_secs_f64());
            passed[k] = results
                .iter()
                .filter(|r| matches!(r.verdict, Verdict::Pass))
                .count();
        }
    }
    for (k, (label, _)) in specs.iter().enumerate() {
        let note = if passed[k] == cases.len() {
            String::new()
        } else {
            format!("   ({} of {} passed)", passed[k], cases.len())
        };
        println!(
            "  {label:<8} {:>9.3} {:>10.0} {:>9.2}×{note}",
            best[k],
            cases.len() as f64 / best[k],
            best[k] / best[0]
        );
    }
    Ok(exit::OK)
}
