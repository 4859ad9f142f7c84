//! hcpspec-pod-probe: the pod probe a core's control shim runs as a pod Agent's image
//! (`pod.probe`, docs/core-protocol.md; see `hcpspec::suites::core_api::probe`).

fn main() {
    std::process::exit(hcpspec::suites::core_api::probe::main());
}
