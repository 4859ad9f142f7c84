"""A shim the machine starves, for tests/it/deadlines.rs: on each request it shares CPU 0 with
a busy loop of its own at a higher priority (it runs at nice 19, the loop at nice 0), so it
is ready to run most of the time and seldom gets a CPU, then does WORK seconds of CPU work
and answers, saying how long that took in wall time. A deadline that charged the machine's waits
would time it out; one that charges what the shim did (docs/security.md) does not.

python3 starved_shim.py WORK: one JSON-RPC message per line on stdin/stdout."""

import json, os, signal, sys, time

WORK = float(sys.argv[1])
os.sched_setaffinity(0, {0})
busy = os.fork()
if busy == 0:
    os.sched_setaffinity(0, {0})
    while True:
        pass
os.nice(19)


def work(seconds):
    """`seconds` of this process's CPU time, however long the machine takes to give it."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


try:
    for line in sys.stdin:
        req = json.loads(line)
        began = time.monotonic()
        work(WORK)
        took = time.monotonic() - began
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": {"worked": WORK, "wallSeconds": took}}), flush=True)
finally:
    os.kill(busy, signal.SIGKILL)
