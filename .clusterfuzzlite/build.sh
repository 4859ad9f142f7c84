#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build: every cargo-fuzz target of fuzz/ into $OUT, each with its
# seed corpus (fuzz/corpus/T and fuzz/regressions/T as T_seed_corpus.zip) and the JSON
# dictionary (T.dict). In the container $SRC, $OUT and $SANITIZER come from the base image;
# locally, from a checkout (docs/fuzzing.md, "ClusterFuzzLite"):
#
#   OUT=/tmp/cflite-out SRC=/tmp SANITIZER=none RUSTC_BOOTSTRAP=1 .clusterfuzzlite/build.sh
#
# The targets are named here, not discovered: a target added to fuzz/Cargo.toml and not here
# fails this build (below) and tests/it/clusterfuzzlite.rs, instead of going unfuzzed.
TARGETS=(pack_load authorize case_load matcher shim_message)

# The container's working directory is the checkout ($SRC/hcpspec); locally, wherever this is.
if [ ! -f fuzz/Cargo.toml ]; then
  if [ -f "${SRC:-}/hcpspec/fuzz/Cargo.toml" ]; then
    cd "$SRC/hcpspec"
  else
    cd "$(dirname "$0")/.."
  fi
fi
: "${OUT:?OUT: the directory the fuzz targets go to}"
mkdir -p "$OUT"

declared=$(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -vx hcpspec-fuzz | sort)
named=$(printf '%s\n' "${TARGETS[@]}" | sort)
if [ "$declared" != "$named" ]; then
  echo "build.sh: TARGETS ($(echo $named)) differ from fuzz/Cargo.toml's [[bin]]s ($(echo $declared))" >&2
  exit 1
fi

# address (the default) and the others are cargo-fuzz's own; in the container, `coverage` is
# handled by the base image's cargo wrapper; `none` (locally) builds without a sanitizer.
flags=(-O)
case "${SANITIZER:-address}" in
  none) flags+=(-s none) ;;
esac
cd fuzz
cargo fuzz build "${flags[@]}"
triple=$(rustc -vV | sed -n 's/^host: //p')
for t in "${TARGETS[@]}"; do
  cp "target/$triple/release/$t" "$OUT/$t"
  cp json.dict "$OUT/$t.dict"
  rm -f "$OUT/${t}_seed_corpus.zip"
  # -j: flat; a seed's name is its content's label, and the two folders never share a name.
  zip -q -j "$OUT/${t}_seed_corpus.zip" corpus/"$t"/* $(ls -d regressions/"$t"/* 2>/dev/null || true)
done
echo "build.sh: ${#TARGETS[@]} targets in $OUT: ${TARGETS[*]}"
