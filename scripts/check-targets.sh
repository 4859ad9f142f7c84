#!/usr/bin/env bash
# Compile-check hcpspec for every platform it ships to but is not built and run on here
# (docs/platforms.md): `cargo check --locked --bins --lib --target T`, warnings as errors. No
# SDK is needed (hcpspec has no C dependencies); a rustup target that is missing is added.
#
#   scripts/check-targets.sh            check every target below
#   scripts/check-targets.sh T...       check these
#   scripts/check-targets.sh --list     print the targets, one a line, and check nothing
#
# Windows is not among them: docs/platforms.md says what keeps hcpspec from it.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=(aarch64-apple-darwin x86_64-apple-darwin)

if [ "${1:-}" = --list ]; then
  printf '%s\n' "${TARGETS[@]}"
  exit 0
fi
[ $# -gt 0 ] && TARGETS=("$@")

installed=$(rustup target list --installed 2>/dev/null || true)
for t in "${TARGETS[@]}"; do
  if ! grep -qx "$t" <<<"$installed"; then
    rustup target add "$t" >/dev/null || {
      echo "check-targets: cannot add the rustup target $t (is rustup on PATH?)" >&2
      exit 1
    }
  fi
done
for t in "${TARGETS[@]}"; do
  echo "check-targets: $t" >&2
  # RUSTFLAGS reaches only the target's artifacts (never build scripts), which only this
  # script builds: the cache stays warm between runs.
  RUSTFLAGS="${RUSTFLAGS:-} -D warnings" cargo check --locked --quiet --bins --lib --target "$t"
done
