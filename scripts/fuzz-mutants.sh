#!/usr/bin/env bash
# Proof that `hcpspec fuzz` finds bugs: fuzz every contract mutant (src/suites/hcp/runtime/mutant.rs)
# in-process from a fixed seed, stop at the first finding, and print the cases and time it took.
# Then fuzz the reference, which must find nothing.
#
#   scripts/fuzz-mutants.sh [CASES] [SEED] [REFERENCE_CASES]   (defaults: 3000, seed 1, 20000)
#
# The proof is by count, "found within CASES cases from seed SEED", which no machine's speed
# changes (one job: the same seed plays the same cases); seconds only cap a run that hangs.
# Exit 1 when a mutant survives its budget or the reference yields a finding.
set -euo pipefail
cd "$(dirname "$0")/.."
budget="${1:-3000}"
seed="${2:-1}"
ref_budget="${3:-20000}"
# A safety net, not the proof: far past what the budget takes on a slow machine.
cap=900
# $HCPSPEC: a binary already built (CI's, from the packaged crate); else a release build here.
bin="${HCPSPEC:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet --bin hcpspec --bin hcpspec-probe
  bin=target/release/hcpspec
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# Mutants of rules the fuzzer neither generates nor judges (leading whitespace in pack files,
# listPacks, connect's answer, the sink without events, the audit of Sense, grants planted in the
# environment, files in the pack directory, a hub script for a public pack, getPack, the Skill
# read-out, the CLI face; and, from the sentence-level matrix, the order of the project and
# confirm checks, the envelope's ids, the hub a pack names, an in-process adapter's argv, the
# Binding in an audit record, availability's shape, the sink's records, a poller on a timer;
# an empty wrap `commands`, a container the pack mutator never empties, only drops or retypes;
# the pipeline's misorders in a runtime that declares no denial map, which only the order cases
# requiring a map tell, as unimplemented; a Binding minted inside exec ahead of the grant or the
# confirm gate, which shows only as the hub outcome a later connect gets; from issue 44's rules part, the Skill's text (its first line, or none), a trigger with only a
# Policy row, a poll at activation, a surface without commands, a write on land brain unaudited;
# and, from issue 44's review of the ledger, the result and a denial's ids in the envelope, the
# reasons of refused activations and connects, listPacks of activated packs only, the CLI face's
# pipeline and envelope, credentials under names other than *_TOKEN (inherited, or a mint
# fallback), the Skill of another pack, `pass_through: false`, a cache file written at install,
# getPack of an unknown pack, a token in listPacks, a Binding reaching another pack's adapter, a
# brain write without a project (the generated packs' brain verbs are reads), availability's land
# and operation, the mode connect reports, a Policy row looked up by verb_key across packs;
# and from issue 44's protocol additions, Sense switched after create (runtime.setSense), a jail
# built through a planted link):
# the contract cases kill each of them (`hcpspec run --mutants`); the fuzzer is not expected to.
not_fuzzed="sense-enable-cached jail-follows-link whitespace-json-refused list-packs-empty token-in-connect polling-as-sense sense-audited grants-from-env pack-rewritten public-pack-minted get-pack-first-installed skill-not-exposed cli-runs-another-command cli-face-unimplemented confirm-before-brain envelope-without-ids unknown-pack-bare-denial binding-hub-renamed inproc-argv-dropped audit-without-binding audit-token-as-binding availability-shape-wrong sense-sink-unrecorded polling-on-a-timer wrap-empty-commands-accepted confirm-before-grants-unmapped project-before-capability-unmapped confirm-before-brain-unmapped binding-before-confirm-unmapped adapter-before-binding-unmapped mint-before-grants mint-before-confirm harness-md-first-line harness-md-unread policy-only-trigger-delivered polling-on-activate commands-optional brain-write-unaudited result-dropped denial-envelope-without-ids activation-denial-reasonless connect-denial-reasonless list-packs-activated-only cli-skips-pipeline env-denylist-scrub env-key-fallback cli-envelope-bare skill-of-first-pack pass-through-member-enough pack-rewritten-on-install get-pack-unknown-empty token-in-list-packs binding-leaks-across-packs brain-reads-only availability-land-local availability-operation-read binding-mode-misreported policy-by-verb-key"
mutants=$(sed -n 's/^ *[A-Za-z]* = "\([a-z-]*\)", \[.*/\1/p' src/suites/hcp/runtime/mutant.rs \
  | grep -vxF -f <(tr ' ' '\n' <<<"$not_fuzzed"))
# Mutants run two at a time (FUZZ_JOBS), the reference beside them: each is one job from its
# own seed, so running several at once changes no count, only the wall time.
par="${FUZZ_JOBS:-2}"
one() {
  local m="$1" log="$out/$1.log"
  "$bin" fuzz --runtime "inproc:mutant:$m" --cases "$budget" --seconds "$cap" --seed "$seed" --jobs 1 \
    --max-findings 1 --out "$out/$m" >"$log" 2>/dev/null || true
  local line cases rule secs
  line=$(grep -m1 '^finding: ' "$log" || true)
  cases=$(sed -n 's/^fuzz: \([0-9]*\) cases in.*/\1/p' "$log")
  if [ -n "$line" ]; then
    rule=$(echo "$line" | sed 's/^finding: \([a-z-]*\) after.*/\1/')
    secs=$(echo "$line" | sed 's/.* after \([0-9.]*\) s .*/\1/')
    printf '%-30s %9ss %7s  %s\n' "$m" "$secs" "$cases" "$rule" >"$out/$m.row"
  else
    printf '%-30s %10s %7s  %s\n' "$m" "-" "$cases" "NOT FOUND in ${budget} cases" >"$out/$m.row"
  fi
}
"$bin" fuzz --runtime inproc:reference --cases "$ref_budget" --seconds "$cap" --seed "$seed" --jobs 1 \
  --out "$out/reference" >"$out/reference.log" 2>/dev/null &
source scripts/each.sh
each "$par" one $mutants
status=0
printf '%-30s %10s %7s  %s\n' mutant time cases "first finding (rule)"
for m in $mutants; do
  cat "$out/$m.row"
  if grep -q "NOT FOUND" "$out/$m.row"; then status=1; fi
done
ref=$(tail -1 "$out/reference.log")
printf '%-30s %10s %7s  %s\n' reference "-" "$(sed -n 's/^fuzz: \([0-9]*\) cases in.*/\1/p' "$out/reference.log")" "$ref"
if grep -q '^finding: ' "$out/reference.log"; then
  echo "the reference yields findings: an oracle is wrong" >&2
  status=1
fi
exit $status
