#!/usr/bin/env bash
# The wheel behind `pip install hcpspec`: maturin's `bin` bindings put the hcpspec binary on
# PATH, as ruff's and uv's wheels do (pyproject.toml). Uses maturin from PATH, else installs it
# into target/maturin-venv.
#
#   scripts/build-wheel.sh [MATURIN ARGS]   → target/wheels/hcpspec-VERSION-py3-none-PLATFORM.whl
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/release-env.sh
if ! command -v maturin >/dev/null; then
  [ -x target/maturin-venv/bin/maturin ] || {
    python3 -m venv target/maturin-venv
    target/maturin-venv/bin/pip install --quiet "maturin>=1.5,<2"
  }
  PATH="$PWD/target/maturin-venv/bin:$PATH"
fi
rm -f target/wheels/hcpspec-*.whl
maturin build --release --locked --out target/wheels "$@"
