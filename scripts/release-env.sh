# Sourced by .ci/run and scripts/build-wheel.sh, from the checkout's root: the flags of every
# build of a binary that ships. Panic locations name source files, so the registry's and the
# checkout's paths are remapped: no path of the build machine is in the binary. One value for
# every build, so that `cargo run --release` reuses the wheel's release build.
export RUSTFLAGS="--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo --remap-path-prefix=$PWD=/hcpspec"
