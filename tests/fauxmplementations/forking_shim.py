"""A stdio shim whose processes try to outlive hcpspec, for tests/it/stdio_orphans.rs.

python3 forking_shim.py fork PIDFILE CMD...: starts a child, a child in a session of its own and
a double-forked daemon (an orphan at once), each sleeping long with stdin, stdout and stderr on
/dev/null; once all three are up, appends "SHIM CHILD SETSID DAEMON" to PIDFILE and becomes CMD
(a real shim, `hcpspec shim --runtime …`, on the same pipes), which answers every case.

python3 forking_shim.py crash: writes a traceback to stderr (holding $HCPSPEC_CRASH_CANARY) and
exits 1 before any answer.

python3 forking_shim.py reaper LEFTFILE CMD...: runs CMD (hcpspec) as a child subreaper, so that
whatever CMD leaves behind, running or a zombie, is re-parented here when it exits; writes
"PID STATE" for each of those to LEFTFILE, then kills and reaps them, and exits as CMD did."""

import ctypes, os, signal, subprocess, sys, time


def quiet():
    fd = os.open(os.devnull, os.O_RDWR)
    for i in (0, 1, 2):
        os.dup2(fd, i)


def sleeper(w, setsid):
    if setsid:
        os.setsid()
    quiet()
    os.write(w, f"{os.getpid()} ".encode())
    time.sleep(600)
    os._exit(0)


MODE = sys.argv[1]
if MODE == "fork":
    r, w = os.pipe()
    if os.fork() == 0:
        sleeper(w, False)
    if os.fork() == 0:
        sleeper(w, True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            sleeper(w, False)
        os._exit(0)
    pids = b""
    while pids.count(b" ") < 3:
        pids += os.read(r, 64)
    os.close(r)
    os.close(w)
    with open(sys.argv[2], "a") as f:
        f.write(f"{os.getpid()} {pids.decode().strip()}\n")
    os.execvp(sys.argv[3], sys.argv[3:])
elif MODE == "crash":
    sys.stderr.write("Traceback (most recent call last):\n")
    sys.stderr.write('  File "shim.py", line 1, in <module>\n')
    # A value of hcpspec's environment (the shim inherits it) that must come out redacted.
    sys.stderr.write(f"KeyError: {os.environ.get('HCPSPEC_CRASH_CANARY')}\n")
    sys.stderr.write("RuntimeError: forking-shim-crash-line-7c1e\n")
    sys.exit(1)
elif MODE == "reaper":
    PR_SET_CHILD_SUBREAPER = 36
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    code = subprocess.call(sys.argv[3:])
    me = os.getpid()
    left = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            left.append((int(p), fields[0]))
    with open(sys.argv[2], "w") as f:
        for pid, state in left:
            f.write(f"{pid} {state}\n")
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
    sys.exit(code)
