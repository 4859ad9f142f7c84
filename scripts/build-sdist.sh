#!/usr/bin/env bash
# The sdist: what pip builds from (with Rust) where no wheel fits. Run by .ci/run and the
# release workflow.
#
#   scripts/build-sdist.sh   → target/wheels/sdist/hcpspec-VERSION.tar.gz
#
# maturin packs the crate's own file list (Cargo.toml's `include`, the list `cargo package`
# ships and .ci/run builds and installs) with pyproject.toml; checked here: every file the
# build reads is in it, and nothing of the repository's that the package leaves out.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/release-env.sh
release_tools maturin
out=target/wheels/sdist
rm -rf "$out"
maturin sdist --out "$out" > /dev/null
sdist="$(ls "$out"/hcpspec-*.tar.gz)"
listing="$(tar -tzf "$sdist" | sed 's,^[^/]*/,,')"
for need in Cargo.toml Cargo.lock pyproject.toml build.rs README.md LICENSE src/lib.rs \
    src/bin/hcpspec/main.rs vectors/contract/suite.json spec/; do
  # A here-string, not a pipe: `grep -q` stops at its first match, and under pipefail the
  # echo it leaves writing (a listing past the pipe's 64 KiB) would fail the check.
  grep -q "^$need" <<<"$listing" || { echo "build-sdist: $sdist lacks $need"; exit 1; }
done
for never in fuzz/ reports/ target/ .ci/; do
  if grep -q "^$never" <<<"$listing"; then echo "build-sdist: $sdist holds $never"; exit 1; fi
done
echo "$sdist: $(echo "$listing" | wc -l) files"
