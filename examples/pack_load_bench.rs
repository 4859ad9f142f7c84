//! Throughput of the `pack_load` fuzz target's body without libFuzzer: every file of the given
//! corpus directories replayed through `hcpspec::suites::hcp::fuzz::targets::pack_load`, round after round,
//! on one thread, for about `SECONDS`; then the loader alone on each fixture pack, typed and
//! schema-first. See docs/bench.md.
//!
//!   cargo run --release --example pack_load_bench -- [SECONDS] DIR...
//!   cargo run --release --example pack_load_bench -- 10 fuzz/corpus/pack_load

use hcpspec::suites::hcp::fuzz::targets;
use hcpspec::suites::hcp::mutate::pack::{embedded_fixtures, PackState};
use hcpspec::suites::hcp::pack;
use std::time::{Duration, Instant};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let seconds: f64 = match args.first().and_then(|a| a.parse().ok()) {
        Some(s) => {
            args.remove(0);
            s
        }
        None => 10.0,
    };
    if args.is_empty() {
        args.push("fuzz/corpus/pack_load".into());
    }
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    for dir in &args {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for f in files {
            inputs.push((f.display().to_string(), std::fs::read(&f).unwrap()));
        }
    }
    let raw = inputs
        .iter()
        .filter(|(_, d)| {
            matches!(d.first(), Some(b'{' | b'[' | b' ' | b'\n' | b'\t' | b'"'))
                || d.contains(&0xFF)
        })
        .count();

    // One unmeasured round: the schemas compile and the fixtures parse once per process.
    for (_, d) in &inputs {
        targets::pack_load(d);
    }
    let budget = Duration::from_secs_f64(seconds);
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let mut execs = 0u64;
    let mut rounds = 0u64;
    while start.elapsed() < budget || rounds < 3 {
        for (_, d) in &inputs {
            targets::pack_load(d);
        }
        execs += inputs.len() as u64;
        rounds += 1;
    }
    let t = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    println!(
        "pack_load: {} inputs ({raw} raw, {} structured), {rounds} rounds, {execs} execs in {t:.2} s = {:.0} execs/s ({cpu:.2} s of CPU: {:.0} execs per CPU second)",
        inputs.len(),
        inputs.len() - raw,
        execs as f64 / t,
        execs as f64 / cpu
    );

    // The loader alone on each fixture (a valid pack: the common case of structured inputs).
    let time = |f: &dyn Fn()| {
        let n = 2000;
        let best = (0..5)
            .map(|_| {
                let s = Instant::now();
                for _ in 0..n {
                    f();
                }
                s.elapsed().as_secs_f64() / n as f64
            })
            .fold(f64::MAX, f64::min);
        best * 1e6
    };
    println!("load_files of a fixture pack, best mean of 5 × 2000, µs:");
    println!("  {:<10} {:>8} {:>14}", "fixture", "typed", "schema-first");
    for f in embedded_fixtures() {
        let files = PackState::of(&f).files("");
        let typed = time(&|| {
            std::hint::black_box(pack::load_files(std::hint::black_box(&files)).is_ok());
        });
        let slow = time(&|| {
            std::hint::black_box(
                pack::load_files_schema_first(std::hint::black_box(&files)).is_ok(),
            );
        });
        println!("  {:<10} {typed:>8.1} {slow:>14.1}", f.name);
    }
}

/// CPU time of this process: on a shared machine, execs per CPU second is the steadier figure.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
