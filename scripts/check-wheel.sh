#!/usr/bin/env bash
# A built wheel is what it claims and works where it claims to: run by .ci/run on the wheels it
# builds and by the release workflow on each Linux wheel before anything is published.
#
#   scripts/check-wheel.sh WHEEL
#
# 1. `auditwheel show` (Linux): a manylinux wheel needs nothing newer than glibc 2.17
#    (manylinux2014), a musllinux wheel links nothing at all (a static binary).
# 2. The wheel installs: into a fresh venv when it is for this machine's libc; a musllinux wheel
#    on a glibc machine with `pip install --target --platform` (pip's own check of its tags).
# 3. Its binary passes the main command (`hcpspec run`, every suite against its embedded
#    targets) from / under `env -i`, nothing but the install on PATH, and names no path of the
#    build machine. A static binary also passes it alone in the container image's root (run as
#    root here: `chroot` into a folder holding only the binary, as the Dockerfile's image).
set -euo pipefail
cd "$(dirname "$0")/.."
wheel="$(readlink -f "${1:?usage: scripts/check-wheel.sh WHEEL}")"
[ -f "$wheel" ] || { echo "check-wheel: $1: no such file"; exit 2; }
source scripts/release-env.sh
name="$(basename "$wheel")"
echo "-- $name"

case "$name" in
  *linux*)
    release_tools auditwheel
    shown="$(auditwheel show "$wheel" 2>&1)" || { echo "$shown"; exit 1; }
    echo "$shown" | sed 's/^/   /' ;;
esac
case "$name" in
  *macosx*)
    libc=native ;;
  *manylinux*)
    # auditwheel names the oldest policy the wheel keeps; 2014 is glibc 2.17.
    tag="$(echo "$shown" | grep -o '"manylinux_2_[0-9]*_[a-z0-9_]*"' | head -n1 | tr -d '"')"
    minor="$(echo "$tag" | sed 's/^manylinux_2_\([0-9]*\)_.*/\1/')"
    [ -n "$minor" ] && [ "$minor" -le 17 ] || { echo "check-wheel: $name needs glibc 2.$minor (manylinux2014 is 2.17)"; exit 1; }
    libc=gnu ;;
  *musllinux*)
    libc=musl ;;
  *) echo "check-wheel: $name is not a manylinux, musllinux or macOS wheel"; exit 1 ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ "$libc" != musl ]; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet "$wheel"
  bin="$work/venv/bin"
else
  platform="$(echo "$name" | sed 's/.*-\(musllinux_[0-9]*_[0-9]*_[a-z0-9_]*\)\.whl$/\1/')"
  python3 -m pip install --quiet --no-deps --only-binary=:all: --platform "$platform" --target "$work/site" "$wheel"
  bin="$work/site/bin"
fi
hc="$(readlink -f "$bin/hcpspec")"
alone() { (cd / && env -i HOME="$work/home" PATH="$bin:/usr/bin:/bin" "$@"); }
alone hcpspec --version
alone hcpspec run --out "$work/run" > "$work/run.log" || { cat "$work/run.log"; exit 1; }
tail -n 2 "$work/run.log"
grep -q "^vectors: embedded (sha256 [0-9a-f]\{64\})" "$work/run.log"
python3 scripts/check-outputs.py "$work/run" 0
alone hcpspec list --format json | python3 -c 'import json, sys; assert len(json.load(sys.stdin)) > 0'
# No path of this machine in the binary: the checkout's, the registry's, the home's.
if strings "$hc" | grep -F -e "$PWD" -e "${CARGO_HOME:-$HOME/.cargo}" -e "$HOME/"; then
  echo "check-wheel: $name's binary names a path of the build machine"; exit 1
fi
if [ "$libc" = musl ]; then
  if file "$hc" | grep -q "dynamically linked"; then echo "check-wheel: $name's binary is not static"; exit 1; fi
  if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
    # The container image's root (Dockerfile): the binary, an empty /tmp and /work, nothing
    # else (no libc, no shell), run as its unprivileged user; with what every container runtime
    # adds, /proc (its own PID namespace) and /dev's null, zero and urandom.
    root="$work/root"
    mkdir -p "$root/tmp" "$root/work" "$root/proc" "$root/dev"
    chmod 1777 "$root/tmp"
    chown 65532:65532 "$root/work"
    for dev in null:3 zero:5 urandom:9; do mknod -m 666 "$root/dev/${dev%:*}" c 1 "${dev#*:}"; done
    cp "$hc" "$root/hcpspec"
    (cd / && env -i HOME=/work "$(command -v unshare)" --mount --pid --fork --mount-proc="$root/proc" \
      "$(command -v chroot)" --userspec=65532:65532 "$root" /hcpspec run --out /work/out > "$work/image.log" 2>&1) \
      || { cat "$work/image.log"; echo "check-wheel: the static binary fails alone in the image's root"; exit 1; }
    python3 scripts/check-outputs.py "$root/work/out" 0
    echo "   passes alone in the image's root (chroot, as user 65532)"
  fi
fi
echo "-- $name: ok"
