#!/usr/bin/env bash
# Mutation-test the reference runtime and the linter with cargo-mutants: every mutant of their
# code that no contract case fails is a rule the cases do not pin down. On demand, not in CI
# (tens of minutes on 2 cores). Results and the score: docs/mutation.md.
#
#   scripts/cargo-mutants.sh [EXTRA cargo-mutants ARGS…]
#
# Needs `cargo install cargo-mutants --locked`. Only the contract cases judge (the `contract::`
# trials of tests/suites.rs, on the reference and the stub), never the self-checks: a mutant
# hook (`self.broken(…)`) or a variant's branch (`self.chose(…)`) is code the cases reach only
# through inproc:mutant:* and inproc:variant:*, so it is excluded here.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo mutants \
  -f src/suites/hcp/runtime/reference/mod.rs -f src/suites/hcp/runtime/reference/authz.rs \
  -f src/suites/hcp/runtime/reference/hub.rs -f src/suites/hcp/runtime/adapter.rs -f src/suites/hcp/pack/lint.rs \
  -E 'overstrict_lint|unchecked_install|invent_policy|first_values|with_blank_args' \
  -E 'Reference::(broken|chose|words|mint_for_exec|run_in_own_jail)' \
  -E 'Mutant::|Variant::|env_grants|public_connected|public_unconnected|mint_in_exec' \
  -E 'ReferenceFactory>::info' \
  --timeout 120 --output target/mutants "$@" \
  -- --test suites -- contract::
