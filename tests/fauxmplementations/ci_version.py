"""minihcp (examples/python-shim) with its version embedding the commit, as a CI build's does:
`0.3.0+$GITHUB_SHA`. What GitHub sets is no secret: the version must come out as it is."""

import os
import runpy
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python-shim")
sys.path.insert(0, HERE)

import minihcp  # noqa: E402

minihcp.VERSION = "0.3.0+" + os.environ.get("GITHUB_SHA", "local")
runpy.run_path(os.path.join(HERE, "shim.py"), run_name="__main__")
