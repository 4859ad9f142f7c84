#!/usr/bin/env python3
"""A harness that reports the environment it was launched with: it writes it, as JSON, to
the file named by its one argument, and exits. hcpspec's tests read it (tests/harness_env.rs)."""
import json, os, sys

with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump(dict(os.environ), f)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
