"""A shim slow to start, for tests/it/deadlines.rs: it takes SECONDS before it reads anything
(an interpreter importing its modules on a loaded machine), then becomes the shim COMMAND…,
which answers every call at once. Its first call's deadline is `--timeout` and the start-up
allowance (docs/security.md); every later call's is `--timeout`.

python3 slow_start.py SECONDS COMMAND…"""

import os, sys, time

time.sleep(float(sys.argv[1]))
os.execvp(sys.argv[2], sys.argv[2:])
