#!/usr/bin/env bash
# Regenerate reports/published/: the compatibility report of the in-repo runtimes, rendered
# from one result.json, and checked in headless Chromium (needs Debian's `chromium`).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
out=reports/published
rm -rf "$out"
runtimes=(--runtime inproc:reference --runtime inproc:stub)
if [ -f examples/python-shim/shim.py ]; then
  # Both readings of the spec: the reference's choices, and every open point decided otherwise.
  runtimes+=(--runtime "stdio:python3 examples/python-shim/shim.py")
  runtimes+=(--runtime "stdio:python3 examples/python-shim/shim.py --reading other")
fi
./target/release/hcpspec run "${runtimes[@]}" --out "$out"
python3 scripts/check-report.py "$out"
