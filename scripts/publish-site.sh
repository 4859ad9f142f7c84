#!/usr/bin/env bash
# Build reports/site/: the compatibility site of the repository's own implementations
# (reports/registry.json, docs/publishing.md). Runs every suite against its embedded
# references, and the Python example shim (both readings) when python3 is there, into
# reports/results/, then `hcpspec site`. HCPSPEC=path/to/hcpspec skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${HCPSPEC:-}" ]; then
  cargo build --release
  HCPSPEC=./target/release/hcpspec
fi
results=reports/results
mkdir -p "$results"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A run exits 1 when a case fails: the result is still what the site shows.
"$HCPSPEC" run --out "$tmp/embedded" >"$tmp/embedded.log" 2>&1 || [ $? -eq 1 ]
cp "$tmp/embedded/result.json" "$results/embedded.json"
if command -v python3 >/dev/null && [ -f examples/python-shim/shim.py ]; then
  "$HCPSPEC" run --suite contract \
    --runtime "stdio:python3 examples/python-shim/shim.py" \
    --runtime "stdio:python3 examples/python-shim/shim.py --reading other" \
    --out "$tmp/python" >"$tmp/python.log" 2>&1 || [ $? -eq 1 ]
  cp "$tmp/python/result.json" "$results/python.json"
fi
rm -rf reports/site
"$HCPSPEC" site --registry reports/registry.json --out reports/site
echo "open reports/site/index.html"
