#!/usr/bin/env python3
"""A correct runtime that decides the spec's open points its own way, for tests/it/fuzz.rs.

    open_points_shim.py CHOICE...

It is examples/python-shim's minihcp (a complete HCP runtime) behind its shim, as hcpspec's
reference reads the spec, except for the CHOICEs named, each a freedom
vectors/contract/ASSUMPTIONS.md grants:

    rule-names       its own lint rule names (R1 …), declared in initialize's `rules` map
    spec-lint-rules  only the spec's row-2 lint rules (none of hcpspec's profile rules)
    credential-file  the Binding in a file named by HCP_CREDENTIAL_FILE, not HCP_BINDING
    mint-in-exec     a Binding minted inside every exec; connect optional
    own-home         a HOME of its own (the adapter's cwd) in every adapter's environment
    sense-default-on Sense on unless `sense.enable` is false, for activated packs
    activation-last  activation checked after the capability axes and the confirm gate
    own-json-text    an arg that is no string reaches the argv as Python's own JSON text
                     (`{"a": 1}`, `1e+308`): any JSON text of the value renders it
    refuse-blank-ids runtime.create refuses a blank Principal id or kind, tenant or project
                     (-32602 invalid params): nothing in the spec gives such an id a meaning

`hcpspec fuzz` must find nothing on it: each choice is a way the spec lets a runtime be.
"""

import dataclasses
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python-shim"))

import minihcp  # noqa: E402
import shim  # noqa: E402

CHOICES = {
    "rule-names": {"rule_names": minihcp.OTHER_RULE_NAMES, "words": minihcp.OTHER_WORDS},
    "spec-lint-rules": {"spec_lint_rules_only": True},
    "credential-file": {"credential_file": True},
    "mint-in-exec": {"mint_in_exec": True},
    "sense-default-on": {"sense_on_unless_disabled": True},
    "activation-last": {"activation_last": True},
}


def main() -> int:
    fields = {"name": "open-points"}
    for choice in sys.argv[1:]:
        if choice == "own-home":
            given = minihcp.Runtime.adapter_env

            def adapter_env(self, pack_id, verb_key, given=given):
                # Set by the runtime, not inherited: the jail is the adapter's home.
                return {**given(self, pack_id, verb_key), "HOME": self.config.workdir}

            minihcp.Runtime.adapter_env = adapter_env
        elif choice == "own-json-text":
            minihcp._arg_text = lambda v: v if isinstance(v, str) else json.dumps(v)
        elif choice == "refuse-blank-ids":
            given_config = shim.config_from

            def config_from(p, given_config=given_config):
                config = given_config(p)
                ids = [config.principal["id"], config.principal["kind"], config.tenant_id, config.project_id]
                if any(i is not None and not i.strip() for i in ids):
                    raise shim.RpcError(shim.INVALID_PARAMS, "invalid params: a blank id")
                return config

            shim.config_from = config_from
        elif choice in CHOICES:
            fields.update(CHOICES[choice])
        else:
            sys.stderr.write(f"open_points_shim.py: unknown choice {choice}\n")
            return 2
    reading = dataclasses.replace(minihcp.REFERENCE, **fields)
    minihcp.READINGS = {"reference": reading}
    sys.argv = sys.argv[:1]
    return shim.main()


if __name__ == "__main__":
    sys.exit(main())
