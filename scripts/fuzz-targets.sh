#!/usr/bin/env bash
# Run each cargo-fuzz target for N seconds on one core and print its execs/s (libFuzzer's
# final stats). Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`, ~2 min).
#
#   scripts/fuzz-targets.sh [SECONDS] [TARGET...]     (default: 60 s, every target)
#   SANITIZER=address scripts/fuzz-targets.sh 60      (default: none, for the throughput)
#
# New inputs go to fuzz/target/corpus-work/<target>/ (the committed seeds in
# fuzz/corpus/<target>/ are read, never written); crashes to fuzz/artifacts/<target>/.
# A crash input worth keeping goes to fuzz/regressions/<target>/, where `cargo test` replays it.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(pack_load authorize case_load matcher shim_message)
toolchain="${TOOLCHAIN:-+nightly}"
sanitizer="${SANITIZER:-none}"
command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz missing: cargo install cargo-fuzz" >&2; exit 2; }
cargo $toolchain fuzz build -O -s "$sanitizer"
status=0
printf '%-14s %10s %10s %8s  %s\n' target execs execs/s corpus result
for t in "${targets[@]}"; do
  work="target/corpus-work/$t"
  mkdir -p "$work"
  log="target/fuzz-$t.log"
  if cargo $toolchain fuzz run -O -s "$sanitizer" "$t" "$work" "corpus/$t" -- \
      -dict=json.dict -max_total_time="$seconds" -print_final_stats=1 -close_fd_mask=3 >"$log" 2>&1; then
    result=ok
  else
    result="CRASH (see fuzz/$log, fuzz/artifacts/$t/)"
    status=1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  printf '%-14s %10s %10s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$(ls "$work" | wc -l)" "$result"
done
exit $status
