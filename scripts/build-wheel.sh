#!/usr/bin/env bash
# The wheel behind `pip install hcpspec`: maturin's `bin` bindings put the hcpspec binary on
# PATH, as ruff's and uv's wheels do (pyproject.toml). Run by .ci/run and the release workflow.
#
#   scripts/build-wheel.sh [TARGET] [MATURIN ARGS]   → target/wheels/TARGET/hcpspec-VERSION-py3-none-PLATFORM.whl
#
# TARGET is a Rust target triple (default: this machine's). `*-linux-gnu` wheels are linked by
# zig (`maturin --zig`, ziglang from PyPI) against glibc 2.17's symbols, as manylinux2014, so
# they install where people run CI; `*-linux-musl` ones are musllinux_1_2, a static binary
# linked by Rust's own musl (the same build as `cargo install --target`, which .ci/run reuses;
# zig links another architecture's).
# Other targets (macOS) build natively. maturin, ziglang and rustup's target are installed when
# missing (scripts/release-env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/release-env.sh
target="$(rustc -vV | sed -n 's/^host: //p')"
case "${1:-}" in ""|-*) ;; *) target="$1"; shift ;; esac
case "$target" in
  *-linux-gnu) platform=(--zig --compatibility manylinux2014) ;;
  # Another architecture's musl needs another linker: zig's.
  "$(uname -m)"-*-linux-musl) platform=(--compatibility musllinux_1_2) ;;
  *-linux-musl) platform=(--zig --compatibility musllinux_1_2) ;;
  *) platform=() ;;
esac
release_tools maturin
[ ${#platform[@]} = 0 ] || release_tools ziglang
rustup target list --installed 2>/dev/null | grep -qx "$target" || rustup target add "$target"
out="target/wheels/$target"
rm -rf "$out"
maturin build --release --locked --target "$target" "${platform[@]}" --out "$out" "$@"
