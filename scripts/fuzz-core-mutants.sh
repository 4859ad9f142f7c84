#!/usr/bin/env bash
# Proof that `hcpspec fuzz --suite core-api` finds bugs of a core: fuzz the reference core's
# mutants that break one of its invariants (src/suites/core_api/fuzz.rs) from a fixed seed, stop at
# the first finding, print the scripts and time it took; then fuzz the reference, which must find
# nothing.
#
#   scripts/fuzz-core-mutants.sh [SCRIPTS] [SEED] [REFERENCE_SCRIPTS]   (defaults: 150, seed 1, 150)
#
# The proof is by count, "found within SCRIPTS scripts from seed SEED" (from seed 1 each is found
# within 60), which no machine's speed changes; seconds only cap a run that hangs. Exit 1 when a
# mutant survives its budget or the reference yields a finding. The reference plays as many
# scripts as a mutant may: a finding it shares (an oracle's mistake) fails the proof instead of
# passing for a mutant's (40 scripts hid one at script 42).
set -euo pipefail
cd "$(dirname "$0")/.."
budget="${1:-150}"
seed="${2:-1}"
ref_budget="${3:-150}"
# A safety net, not the proof: far past what the budget takes on a slow machine.
cap=600
# $HCPSPEC: a binary already built (CI's, from the packaged crate); else a release build here.
bin="${HCPSPEC:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet --bin hcpspec
  bin=target/release/hcpspec
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# One mutant per invariant: an upgrade on a wrong path, with no token, without the header; another
# session's, an unnamed Tenant-wide and an Agent disk artifact read; an un-journaled gate call run.
mutants="any-path-accepted any-token-accepted no-426 other-session-readable unnamed-tenant-readable agent-disk-readable unjournaled-call-run"
# Two at a time (FUZZ_JOBS), the reference beside them: each plays its own seed's scripts, so
# running several at once changes no count, only the wall time.
par="${FUZZ_JOBS:-2}"
one() {
  local m="$1" log="$out/$1.log"
  "$bin" fuzz --suite core-api --runtime "inproc:mutant:$m" --cases "$budget" --seconds "$cap" --seed "$seed" \
    --max-findings 1 --out "$out/$m" >"$log" 2>/dev/null || true
  local line scripts secs why
  line=$(grep -m1 '^finding: ' "$log" || true)
  scripts=$(sed -n 's/^fuzz: \([0-9]*\) cases in.*/\1/p' "$log")
  if [ -n "$line" ]; then
    secs=$(echo "$line" | sed 's/.*) after \([0-9.]*\) s: .*/\1/')
    why=$(echo "$line" | sed 's/^finding: step [0-9]*: //; s/^finding: //; s/ (from .*//')
    printf '%-26s %7ss %8s  %s\n' "$m" "$secs" "$scripts" "$why" >"$out/$m.row"
  else
    printf '%-26s %8s %8s  %s\n' "$m" "-" "$scripts" "NOT FOUND in ${budget} scripts" >"$out/$m.row"
  fi
}
"$bin" fuzz --suite core-api --runtime inproc:reference --cases "$ref_budget" --seconds "$cap" --seed "$seed" \
  --out "$out/reference" >"$out/reference.log" 2>/dev/null &
source scripts/each.sh
each "$par" one $mutants
status=0
printf '%-26s %8s %8s  %s\n' mutant time scripts "first finding"
for m in $mutants; do
  cat "$out/$m.row"
  if grep -q "NOT FOUND" "$out/$m.row"; then status=1; fi
done
printf '%-26s %8s %8s  %s\n' reference "-" \
  "$(sed -n 's/^fuzz: \([0-9]*\) cases in.*/\1/p' "$out/reference.log")" \
  "$(grep -c '^finding: ' "$out/reference.log" || true) findings"
if grep -q '^finding: ' "$out/reference.log"; then
  grep '^finding: ' "$out/reference.log" >&2
  echo "the reference core yields findings: an invariant is wrong" >&2
  status=1
fi
exit $status
