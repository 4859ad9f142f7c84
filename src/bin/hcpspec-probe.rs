//! hcpspec-probe: the wrap bin of the fixture packs (see `hcpspec::suites::hcp::probe`).

fn main() {
    std::process::exit(hcpspec::suites::hcp::probe::main());
}
