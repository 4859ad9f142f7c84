//! `hcpspec shim`: serve an embedded runtime over the shim protocol, and
//! `hcpspec bench --transports`: what each adapter costs against a bare client of its transport.

use hcpspec::adapter::bench;
use hcpspec::error::BadInput;
use hcpspec::exit;
use hcpspec::run::Verdict;
use hcpspec::shim::{self, Service, PROTOCOL};
use hcpspec::suites::hcp::{run_all, RunEnv};
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
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

/// `hcpspec bench --transports`: the round trip of one call through each adapter against a bare
/// client making the same calls over the same transport (`adapter::bench`), and a bare echo;
/// exit 1 when an adapter costs over [`bench::RATIO_BOUND`] its bare client in CPU time (the
/// client's and its server's: what no load moves much). Then, unless `round_trips_only`, the
/// whole contract suite per transport.
pub fn bench_transports(
    iterations: usize,
    vectors: &Path,
    round_trips_only: bool,
) -> Result<i32, BadInput> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let (n, rounds) = (500, 8);
    // Before any thread or child starts: they inherit it.
    let pinned = bench::Pinned::to_one_cpu();
    let on = match &pinned {
        Some(p) => format!("every client and server on CPU {}", p.cpu),
        None => "clients and servers where the scheduler put them (no CPU could be set)".into(),
    };
    println!(
        "round trip of `{}`, 1 client, best mean of {rounds} interleaved rounds of {n} calls,\n\
         {on}\n\
         (the adapter and a bare client: the same requests and answers, each to a server of its\n\
         own; the echo: the bare client against `hcpspec shim --echo`, the transport alone;\n\
         CPU: the client's process and its server's, what the gate judges):",
        bench::METHOD
    );
    println!(
        "  {:<8} {:>11} {:>8} {:>12} {:>9} {:>8} {:>8}",
        "adapter", "adapter µs", "bare µs", "adapter CPU", "bare CPU", "ratio", "echo µs"
    );
    let connect = |spec: &str| -> Result<Box<dyn hcpspec::adapter::Adapter>, BadInput> {
        Ok(hcpspec::suites::hcp::shim::connector(
            spec,
            &Default::default(),
        )?()?)
    };
    let rows = bench::round_trips(&exe, bench::Clock::Own, &connect, n, rounds)?;
    drop(pinned);
    let mut over = Vec::new();
    let us = |c: Option<f64>| c.map_or("-".to_string(), |c| format!("{c:.1}"));
    for r in &rows {
        let (label, a) = (r.label, r.adapter);
        match r.bare {
            Some((bare, echo)) => {
                let ratio = bench::judged(&a, &bare);
                println!(
                    "  {label:<8} {:>11.1} {:>8.1} {:>12} {:>9} {ratio:>7.2}× {:>8.1}",
                    a.wall_us,
                    bare.wall_us,
                    us(a.cpu_us),
                    us(bare.cpu_us),
                    echo.wall_us
                );
                if ratio > bench::RATIO_BOUND {
                    over.push(format!("{label} {ratio:.2}×"));
                }
            }
            None => println!(
                "  {label:<8} {:>11.1} {:>8} {:>12} {:>9} {:>8} {:>8}",
                a.wall_us,
                "-",
                us(a.cpu_us),
                "-",
                "-",
                "-"
            ),
        }
    }
    let measure = match rows.iter().all(|r| r.adapter.cpu_us.is_some()) {
        true => "CPU time",
        false => "wall time (no CPU clocks here)",
    };
    let bound = bench::RATIO_BOUND;
    if over.is_empty() {
        println!("every adapter within {bound}× of its bare client in {measure}");
    } else {
        println!(
            "over the bound of {bound}× its bare client in {measure}: {}",
            over.join(", ")
        );
    }
    let verdict = if over.is_empty() {
        exit::OK
    } else {
        exit::FAILURES
    };
    if round_trips_only {
        return Ok(verdict);
    }
    let cases = hcpspec::suites::load_driving(vectors, "hcp-runtime")
        .map_err(|e| e.to_string())?
        .cases;
    let env = RunEnv::new(vectors, &RunEnv::self_probe())?;
    let claims = hcpspec::suites::hcp::embedded_claims("reference").unwrap_or_default();
    let jobs = crate::cli::cores();
    let serve = |transport: &str| {
        bench::Server::start(&exe, &["--transport", transport, "--runtime", "reference"])
    };
    let (http, ws) = (serve("http")?, serve("ws")?);
    let stdio = [
        exe.display().to_string(),
        "shim".into(),
        "--transport".into(),
        "stdio".into(),
        "--runtime".into(),
        "reference".into(),
    ];
    let specs = [
        ("inproc", "inproc:reference".to_string()),
        ("stdio", format!("stdio:{}", shell_words::join(stdio))),
        ("http", http.url.clone()),
        ("ws", ws.url.clone()),
    ];
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
    Ok(verdict)
}
