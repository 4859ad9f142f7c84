# Sourced by .ci/run and the release scripts, from the checkout's root: the flags of every
# build of a binary that ships. Panic locations name source files, so the registry's and the
# checkout's paths are remapped: no path of the build machine is in the binary. One value for
# every build, so that `cargo run --release` reuses the wheel's release build.
export RUSTFLAGS="--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo --remap-path-prefix=$PWD=/hcpspec"

# `release_tools PKG…`: the Python tools of a release (maturin, ziglang, auditwheel) in one venv,
# target/release-tools, put first on PATH; each installed once, at the versions pinned here.
release_tools() {
  local venv="$PWD/target/release-tools" pkg spec
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
  for pkg in "$@"; do
    case "$pkg" in
      maturin) spec="maturin>=1.5,<2" ;;
      # zig links the manylinux2014 (glibc 2.17) and musllinux binaries (`maturin --zig`).
      ziglang) spec="ziglang>=0.13,<0.18" ;;
      auditwheel) spec="auditwheel>=6,<7" ;;
      *) echo "release_tools: no pin for $pkg" >&2; return 2 ;;
    esac
    "$venv/bin/python" -c "import importlib.metadata as m, sys; m.version(sys.argv[1])" "$pkg" 2>/dev/null \
      || "$venv/bin/pip" install --quiet "$spec"
  done
  case ":$PATH:" in *":$venv/bin:"*) ;; *) PATH="$venv/bin:$PATH" ;; esac
}
