#!/usr/bin/env bash
# The release's assets and their checksums: SHA256SUMS over every file in DIR (wheels, sdist,
# crate), then checked back, so what is uploaded is what was checked.
#
#   scripts/release-checksums.sh DIR   → DIR/SHA256SUMS (`sha256sum -c SHA256SUMS` verifies a download)
set -euo pipefail
dir="${1:?usage: scripts/release-checksums.sh DIR}"
cd "$dir"
rm -f SHA256SUMS
files=()
while IFS= read -r f; do files+=("$f"); done < <(find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | LC_ALL=C sort)
[ ${#files[@]} -gt 0 ] || { echo "release-checksums: $dir has no files" >&2; exit 1; }
sha256sum -- "${files[@]}" > SHA256SUMS
sha256sum --quiet -c SHA256SUMS
echo "$(wc -l < SHA256SUMS) files in $dir/SHA256SUMS"
