//! What `hcpspec bench --transports` measures per transport: one call through an adapter
//! against a bare client making the same call over the same kind of pipe or socket, byte for
//! byte. Each client talks to a server of its own (a fresh session each, so the runtime ids
//! match), makes the same setup calls, then the measured call again and again: the same
//! requests (the bare client encodes them with the adapter's own [`rpc::frame`]) and so the
//! same answers. The bare client writes a request and reads its answer to the end, nothing
//! more; the adapter does what it does for every call of a case (the schema checks of params,
//! frame and result, the id, the deadline and the size cap, the trace). Against an echo server
//! (`hcpspec shim --echo`) the same bare client measures the floor of the transport itself.

use super::{rpc, Adapter};
use crate::error::BadInput;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// One round trip, repeatable.
pub type Call = Box<dyn FnMut() -> Result<(), String>>;

/// The measured call: the packs of a runtime that has none. Every client sends it for real
/// (`initialize` is not: over stdio it is sent once per process, and the adapter answers it
/// again from memory), and its answer is small, as most of a case's are.
pub const METHOD: &str = "runtime.listPacks";

/// The calls each client makes first, in order, unmeasured: the handshake and one runtime.
fn setup() -> [(&'static str, Value); 2] {
    let create = json!({
        "packDirs": [],
        "principal": { "id": "bench", "kind": "user" },
        "workdir": std::env::temp_dir(),
    });
    [
        ("initialize", crate::shim::greeting()),
        ("runtime.create", create),
    ]
}

/// The call of adapter `a` (a fresh one, as a case gets), after the setup calls.
pub fn adapter(mut a: Box<dyn Adapter>) -> Result<Call, BadInput> {
    let mut runtime_id = Value::Null;
    for (method, params) in setup() {
        let result = a
            .call(method, params)
            .map_err(|e| format!("bench setup: {e}"))?;
        if method == "runtime.create" {
            runtime_id = result["runtime_id"].clone();
        }
    }
    let params = json!({ "runtime_id": runtime_id });
    Ok(Box::new(move || {
        a.call(METHOD, params.clone())
            .map(drop)
            .map_err(|e| e.to_string())
    }))
}

/// A bare client's wire: a request out, the bytes of the next answer back, nothing checked.
trait Wire {
    fn round_trip(&mut self, frame: &str, answer: &mut Vec<u8>) -> Result<(), String>;
}

/// A bare client on `wire`: the setup calls (an echo answers no runtime id: its frames then
/// name none), then the measured call.
fn bare(mut wire: impl Wire + 'static) -> Result<Call, BadInput> {
    let (mut id, mut answer) = (0, Vec::new());
    let mut runtime_id = Value::Null;
    for (method, params) in setup() {
        id += 1;
        wire.round_trip(&rpc::frame(id, method, params), &mut answer)
            .map_err(|e| format!("bench setup: {method}: {e}"))?;
        if method == "runtime.create" {
            let v: Value = serde_json::from_slice(&answer).unwrap_or_default();
            runtime_id = v["result"]["runtime_id"].clone();
        }
    }
    let params = json!({ "runtime_id": runtime_id });
    Ok(Box::new(move || {
        id += 1;
        wire.round_trip(&rpc::frame(id, METHOD, params.clone()), &mut answer)?;
        match answer.is_empty() {
            true => Err("an empty answer".into()),
            false => Ok(()),
        }
    }))
}

/// A child process, killed when dropped.
struct Stdio1 {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl Drop for Stdio1 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Wire for Stdio1 {
    /// Write the line, read one line back, on this thread.
    fn round_trip(&mut self, frame: &str, answer: &mut Vec<u8>) -> Result<(), String> {
        self.line.clear();
        self.line.extend_from_slice(frame.as_bytes());
        self.line.push(b'\n');
        self.stdin
            .write_all(&self.line)
            .and_then(|_| self.stdin.flush())
            .map_err(|e| e.to_string())?;
        answer.clear();
        self.stdout
            .read_until(b'\n', answer)
            .map_err(|e| e.to_string())?;
        answer.pop();
        Ok(())
    }
}

/// A bare stdio client of the shim `argv` starts.
pub fn bare_stdio(argv: &[String]) -> Result<Call, BadInput> {
    bare_stdio_child(argv).map(|(call, _)| call)
}

/// A bare stdio client of the shim `argv` starts, and that shim's pid.
fn bare_stdio_child(argv: &[String]) -> Result<(Call, u32), BadInput> {
    let (program, args) = argv.split_first().ok_or("stdio: empty command")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = BufReader::new(child.stdout.take().expect("piped"));
    let pid = child.id();
    let call = bare(Stdio1 {
        child,
        stdin,
        stdout,
        line: Vec::new(),
    })?;
    Ok((call, pid))
}

/// One keep-alive HTTP/1.1 connection, written and read by hand.
struct Http1 {
    authority: String,
    w: TcpStream,
    r: BufReader<TcpStream>,
    line: String,
}

impl Wire for Http1 {
    /// The request's bytes out, headers and a Content-Length body back.
    fn round_trip(&mut self, frame: &str, answer: &mut Vec<u8>) -> Result<(), String> {
        let request = format!(
            "POST /rpc HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{frame}",
            self.authority,
            frame.len()
        );
        self.w
            .write_all(request.as_bytes())
            .map_err(|e| e.to_string())?;
        let mut length = 0;
        loop {
            self.line.clear();
            self.r
                .read_line(&mut self.line)
                .map_err(|e| e.to_string())?;
            if self.line == "\r\n" || self.line.is_empty() {
                break;
            }
            if let Some((k, v)) = self.line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().map_err(|_| "bad content-length")?;
                }
            }
        }
        answer.resize(length, 0);
        self.r.read_exact(answer).map_err(|e| e.to_string())
    }
}

/// A bare HTTP/1.1 client of the shim at `url` (`http://HOST:PORT`).
pub fn bare_http(url: &str) -> Result<Call, BadInput> {
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let stream = TcpStream::connect(&authority).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let w = stream.try_clone().map_err(|e| e.to_string())?;
    bare(Http1 {
        authority,
        w,
        r: BufReader::new(stream),
        line: String::new(),
    })
}

type Ws1 = tokio_tungstenite::tungstenite::WebSocket<TcpStream>;

impl Wire for Ws1 {
    /// One text frame out, one back (blocking tungstenite).
    fn round_trip(&mut self, frame: &str, answer: &mut Vec<u8>) -> Result<(), String> {
        use tokio_tungstenite::tungstenite::Message;
        self.send(Message::text(frame)).map_err(|e| e.to_string())?;
        match self.read().map_err(|e| e.to_string())? {
            Message::Text(t) => {
                answer.clear();
                answer.extend_from_slice(t.as_bytes());
                Ok(())
            }
            other => Err(format!("not a text frame: {other:?}")),
        }
    }
}

/// A bare WebSocket client of the shim at `url` (`ws://HOST:PORT/PATH`).
pub fn bare_ws(url: &str) -> Result<Call, BadInput> {
    let authority = url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .unwrap_or_default();
    let stream = TcpStream::connect(authority).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (socket, _) = tokio_tungstenite::tungstenite::client(url, stream)
        .map_err(|e| format!("cannot connect to {url}: {e}"))?;
    bare(socket)
}

/// Whose CPU time a measured call is charged: every call's own client side, and the server it
/// reaches (a process of its own, whose CPU clock Linux lets any process read).
#[derive(Clone, Copy, Debug)]
pub enum Clock {
    /// This process, all its threads (an adapter's helper threads are its cost too).
    Own,
    /// The calling thread alone (a test, whose other threads run other tests).
    Caller,
    /// Another process, all its threads: a server.
    Process(u32),
}

impl Clock {
    /// CPU time so far; None where the clock cannot be read (not Linux, a process gone).
    fn read(self) -> Option<std::time::Duration> {
        #[cfg(target_os = "linux")]
        {
            let id = match self {
                Clock::Own => libc::CLOCK_PROCESS_CPUTIME_ID,
                Clock::Caller => libc::CLOCK_THREAD_CPUTIME_ID,
                Clock::Process(pid) => {
                    let mut id: libc::clockid_t = 0;
                    // SAFETY: `id` is a valid out-pointer for the call.
                    if unsafe { libc::clock_getcpuclockid(pid as libc::pid_t, &mut id) } != 0 {
                        return None;
                    }
                    id
                }
            };
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `t` is a valid out-pointer for the call.
            if unsafe { libc::clock_gettime(id, &mut t) } != 0 {
                return None;
            }
            Some(std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = self;
            None
        }
    }
}

/// Keeps the calling thread, and every thread and process it starts, on one CPU (the first it
/// may run on) while it lives; dropped, every thread of this process may run where it could
/// before. Which CPUs a client and its server land on moves a call's CPU time by 3-5× (a wakeup
/// across CPUs costs both sides more than one on the same CPU), and the scheduler decides it
/// per process pair: a ratio of two pairs was the luck of their placement. On one CPU both pay
/// the same.
pub struct Pinned {
    pub cpu: usize,
    #[cfg(target_os = "linux")]
    before: libc::cpu_set_t,
}

impl Pinned {
    /// None where the CPU cannot be set (not Linux, or not allowed).
    pub fn to_one_cpu() -> Option<Pinned> {
        #[cfg(target_os = "linux")]
        {
            let size = std::mem::size_of::<libc::cpu_set_t>();
            // SAFETY: a zeroed cpu_set_t is an empty set; the calls read or fill it within
            // `size`; 0 is the calling thread.
            unsafe {
                let mut before: libc::cpu_set_t = std::mem::zeroed();
                if libc::sched_getaffinity(0, size, &mut before) != 0 {
                    return None;
                }
                let cpu = (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &before))?;
                let mut one: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut one);
                (libc::sched_setaffinity(0, size, &one) == 0).then_some(Pinned { cpu, before })
            }
        }
        #[cfg(not(target_os = "linux"))]
        None
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // Every thread: those started while pinned (a runtime's workers) kept the one CPU.
        #[cfg(target_os = "linux")]
        for task in std::fs::read_dir("/proc/self/task")
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) {
                // SAFETY: `before` is a valid set of its size; a thread gone is an error only.
                unsafe {
                    libc::sched_setaffinity(
                        tid,
                        std::mem::size_of::<libc::cpu_set_t>(),
                        &self.before,
                    );
                }
            }
        }
    }
}

/// A call and the clocks its CPU time is read on.
pub struct Measured {
    pub call: Call,
    pub clocks: Vec<Clock>,
}

/// What a call cost, the best mean of its rounds for each measure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// Wall time, µs: what a user waits, and what the machine's load moves.
    pub wall_us: f64,
    /// CPU time of its clocks, µs (None where a clock cannot be read): the load moves it little,
    /// since time spent waiting, for an answer or for a CPU, is not in it.
    pub cpu_us: Option<f64>,
}

/// The CPU time of `clocks` so far, None if any cannot be read.
fn cpu_now(clocks: &[Clock]) -> Option<std::time::Duration> {
    clocks.iter().map(|c| c.read()).sum()
}

/// Each call's cost: the best mean over `rounds` rounds of `n` calls, the calls interleaved
/// round by round (so a busy moment of the machine hits them alike), after `n` unmeasured calls
/// each. The best wall mean and the best CPU mean are each the least of its rounds.
pub fn best_means(calls: &mut [Measured], n: usize, rounds: usize) -> Result<Vec<Cost>, BadInput> {
    for c in calls.iter_mut() {
        for _ in 0..n {
            (c.call)()?;
        }
    }
    let per_call = |d: std::time::Duration| d.as_secs_f64() * 1e6 / n.max(1) as f64;
    let mut best = vec![
        Cost {
            wall_us: f64::MAX,
            cpu_us: Some(f64::MAX),
        };
        calls.len()
    ];
    for _ in 0..rounds {
        for (c, b) in calls.iter_mut().zip(&mut best) {
            let cpu = cpu_now(&c.clocks);
            let t = std::time::Instant::now();
            for _ in 0..n {
                (c.call)()?;
            }
            b.wall_us = b.wall_us.min(per_call(t.elapsed()));
            b.cpu_us = match (b.cpu_us, cpu, cpu_now(&c.clocks)) {
                (Some(best), Some(a), Some(z)) => Some(best.min(per_call(z.saturating_sub(a)))),
                _ => None,
            };
        }
    }
    Ok(best)
}

/// The ratio an adapter is judged by against its bare client: CPU time where both have it,
/// which no load moves much (docs/bench.md); wall time only where CPU clocks cannot be read.
pub fn judged(adapter: &Cost, bare: &Cost) -> f64 {
    match (adapter.cpu_us, bare.cpu_us) {
        (Some(a), Some(b)) if b > 0.0 => a / b,
        _ => adapter.wall_us / bare.wall_us,
    }
}

/// The most an adapter's round trip may cost against its bare client's, in the judged measure
/// ([`judged`]), before `hcpspec bench --transports` fails (docs/bench.md).
pub const RATIO_BOUND: f64 = 2.0;

/// A `hcpspec shim` child process, killed when dropped.
pub struct Server {
    child: Child,
    pub url: String,
}

impl Server {
    /// `exe shim ARGS`, once it says where it listens.
    pub fn start(exe: &Path, args: &[&str]) -> Result<Server, BadInput> {
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

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One transport's costs: its adapter's, and (but in-process) its bare client's and the
/// echo's.
pub struct Row {
    pub label: &'static str,
    pub adapter: Cost,
    pub bare: Option<(Cost, Cost)>,
}

/// Makes the adapter a case gets for a runtime spec (the suite's connector: this layer knows
/// no suite).
pub type Connect<'a> = &'a dyn Fn(&str) -> Result<Box<dyn Adapter>, BadInput>;

/// The round trips of every transport (in-process, stdio, HTTP, WebSocket), `exe` serving the
/// reference (`exe shim`), each call's client side read on `own` ([`Clock::Own`] or, in a test,
/// [`Clock::Caller`]) and its server's process besides.
pub fn round_trips(
    exe: &Path,
    own: Clock,
    connect: Connect,
    n: usize,
    rounds: usize,
) -> Result<Vec<Row>, BadInput> {
    let serve = |transport: &str, runtime: &[&str]| {
        let mut args = vec!["--transport", transport];
        args.extend(runtime);
        Server::start(exe, &args)
    };
    let reference = ["--runtime", "reference"];
    let stdio = |runtime: &[&str]| {
        let mut argv = vec![exe.display().to_string(), "shim".into()];
        argv.extend(
            ["--transport", "stdio"]
                .iter()
                .chain(runtime)
                .map(|a| a.to_string()),
        );
        argv
    };
    let mut rows = Vec::new();
    for label in ["inproc", "stdio", "http", "ws"] {
        // Per transport: a server for the adapter, one for the bare client, and an echo.
        let mut servers = Vec::new();
        let spec = match label {
            "inproc" => "inproc:reference".to_string(),
            "stdio" => format!("stdio:{}", shell_words::join(stdio(&reference))),
            _ => {
                servers.push(serve(label, &reference)?);
                servers.push(serve(label, &reference)?);
                servers.push(serve(label, &["--echo"])?);
                servers[0].url.clone()
            }
        };
        let a = connect(&spec)?;
        let mut pids: Vec<u32> = a.whose().pids.iter().map(|&p| p as u32).collect();
        let mut calls = vec![adapter(a)?];
        match label {
            "stdio" => {
                for runtime in [&reference[..], &["--echo"]] {
                    let (call, pid) = bare_stdio_child(&stdio(runtime))?;
                    calls.push(call);
                    pids.push(pid);
                }
            }
            "http" | "ws" => {
                pids.clear();
                for s in &servers {
                    pids.push(s.pid());
                }
                for s in &servers[1..] {
                    calls.push(match label {
                        "http" => bare_http(&s.url)?,
                        _ => bare_ws(&s.url)?,
                    });
                }
            }
            _ => {}
        }
        let mut measured: Vec<Measured> = calls
            .into_iter()
            .enumerate()
            .map(|(k, call)| Measured {
                call,
                clocks: std::iter::once(own)
                    .chain(pids.get(k).map(|&p| Clock::Process(p)))
                    .collect(),
            })
            .collect();
        let costs = best_means(&mut measured, n, rounds)?;
        rows.push(Row {
            label,
            adapter: costs[0],
            bare: costs.get(1).zip(costs.get(2)).map(|(b, e)| (*b, *e)),
        });
    }
    Ok(rows)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::Pinned;

    /// The CPUs a process may run on, from its status (`Cpus_allowed_list`).
    fn allowed(status: &str) -> String {
        let line = status.lines().find(|l| l.starts_with("Cpus_allowed_list:"));
        line.expect("a Linux status")
            .split(':')
            .nth(1)
            .unwrap()
            .trim()
            .into()
    }

    #[test]
    fn pinned_a_child_runs_on_one_cpu_and_unpinned_every_thread_may_run_where_it_could() {
        let before = allowed(&std::fs::read_to_string("/proc/thread-self/status").unwrap());
        let pinned = Pinned::to_one_cpu().expect("a Linux thread may narrow its own CPUs");
        let child = std::process::Command::new("cat")
            .arg("/proc/self/status")
            .output()
            .expect("cat runs");
        assert_eq!(
            allowed(&String::from_utf8_lossy(&child.stdout)),
            pinned.cpu.to_string()
        );
        // A thread started while pinned, as a runtime's worker is, is unpinned at the drop.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (back, told) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            let _ = rx.recv();
            let _ = back.send(std::fs::read_to_string("/proc/thread-self/status").unwrap());
        });
        drop(pinned);
        tx.send(()).unwrap();
        assert_eq!(allowed(&told.recv().unwrap()), before);
        assert_eq!(
            allowed(&std::fs::read_to_string("/proc/thread-self/status").unwrap()),
            before
        );
        worker.join().unwrap();
    }
}
