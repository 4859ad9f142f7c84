//! hcpspec-probe: the wrap bin of the fixture packs (see `hcpspec::probe`).

fn main() {
    std::process::exit(hcpspec::probe::main());
}
