#!/usr/bin/env bash
# The GitHub release's text: CHANGELOG.md's section of one version, without its heading.
#
#   scripts/release-notes.sh VERSION [CHECKOUT]
set -euo pipefail
version="${1:?usage: scripts/release-notes.sh VERSION [CHECKOUT]}"
root="${2:-$(dirname "$0")/..}"
notes="$(awk -v h="## $version" '/^## /{on = ($0 == h); next} on' "$root/CHANGELOG.md")"
[ -n "$(echo "$notes" | tr -d '[:space:]')" ] || { echo "release-notes: CHANGELOG.md has no text under '## $version'" >&2; exit 1; }
echo "$notes"
