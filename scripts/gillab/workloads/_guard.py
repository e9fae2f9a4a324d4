"""Run a program that is not one of our workloads (nginx, k6, curl) so that it dies with the
harness: ``python _guard.py PROGRAM ARGS...``.

The guard is the leader of its process group (the harness starts it in a new session); it
starts the program in the same group and waits.  A daemon thread blocks reading the guard pipe
(``GILLAB_GUARD_FD``, whose write end only the harness holds): end-of-file means the harness is
gone, and the guard kills the whole group.  SIGTERM and SIGINT sent to the guard alone are
passed on to the group.  The guard exits with the program's exit status.
"""
import os
import signal
import subprocess
import sys
import threading


def watch(fd):
    while True:
        try:
            if not os.read(fd, 1):
                break
        except OSError:
            break
    os.killpg(os.getpgrp(), signal.SIGKILL)


def main(argv):
    if not argv:
        sys.stderr.write("usage: _guard.py PROGRAM [ARGS...]\n")
        return 2
    fd = os.environ.get("GILLAB_GUARD_FD")
    if fd:
        t = threading.Thread(target=watch, args=(int(fd),))
        t.daemon = True
        t.start()
    env = dict(os.environ)
    env.pop("GILLAB_GUARD_FD", None)
    proc = subprocess.Popen(argv, env=env)

    def forward(sig, _frame):
        try:
            proc.send_signal(sig)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    rc = proc.wait()
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
