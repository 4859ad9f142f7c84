#!/usr/bin/env bash
# A tag may be released: run first by the release workflow, which stops on any complaint.
#
#   scripts/release-version.sh TAG [CHECKOUT]   → prints the version (TAG without its `v`)
#
# The tag is `vX.Y.Z` (or `vX.Y.Z-PRE`); Cargo.toml's version is X.Y.Z (the wheel takes its
# version from it: pyproject.toml's is dynamic); CHANGELOG.md has a `## X.Y.Z` section, and its
# `## Unreleased` section is empty (its lines moved under the version: docs/releasing.md).
# One line on stderr per complaint, exit 1.
set -euo pipefail
tag="${1:?usage: scripts/release-version.sh TAG [CHECKOUT]}"
root="${2:-$(dirname "$0")/..}"
bad=0
complain() { echo "release-version: $*" >&2; bad=1; }

version="${tag#v}"
[[ "$tag" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || complain "tag $tag is not vX.Y.Z"
crate="$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$root/Cargo.toml" | head -n1)"
[ "$crate" = "$version" ] || complain "tag $tag, but Cargo.toml's version is $crate"
grep -q '^dynamic *= *\[.*"version"' "$root/pyproject.toml" || complain "pyproject.toml's version is not dynamic (it must be Cargo.toml's)"
grep -qx "## $version" "$root/CHANGELOG.md" || complain "CHANGELOG.md has no '## $version' section"
unreleased="$(awk '/^## /{on = ($0 == "## Unreleased"); next} on && NF' "$root/CHANGELOG.md")"
[ -z "$unreleased" ] || complain "CHANGELOG.md's Unreleased section is not empty: move its lines under '## $version'"
[ "$bad" = 0 ] || exit 1
echo "$version"
