"""Every process the harness starts dies with the harness, however the harness ends.

Ctrl-C and errors are handled where processes are started (their process group is killed in a
``finally``).  A SIGKILL of the harness runs no ``finally``, so two mechanisms that need no
code in the dying process cover it:

* the **guard pipe**: the harness holds the write end of one pipe for its whole life and
  never writes to it; every child gets the read end.  When the harness ends, however it ends,
  the kernel closes the write end and a read of the pipe returns end-of-file.  A Python
  workload (``workloads/_common.py``) blocks in such a read in a daemon thread and then kills
  its own process group, which holds everything it started (CPU-bound threads and processes,
  a fork server, a writer process).  A thread blocked in ``read`` takes no GIL and no CPU, so
  the guard does not disturb what is measured.
* other programs (nginx, k6, curl) run under ``workloads/_guard.py``, which does the same
  for them: it starts the program in its own process group, waits on the guard pipe, and
  kills the group at end-of-file.

Every child also gets ``PR_SET_PDEATHSIG`` = SIGKILL (Linux), so a direct child dies with the
harness even before its guard thread has started.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from pathlib import Path

GUARD_ENV = "GILLAB_GUARD_FD"
GUARD_SCRIPT = Path(__file__).resolve().parent / "workloads" / "_guard.py"
PR_SET_PDEATHSIG = 1

_guard: tuple[int, int] | None = None   # (read end, write end)
_guard_pid = -1
_prctl = None


def guard_fd() -> int:
    """The read end of this harness process's guard pipe (made on first use, and anew after a
    fork: a pipe whose write end the parent also holds would not tell us of our own end)."""
    global _guard, _guard_pid
    if _guard is None or _guard_pid != os.getpid():
        r, w = os.pipe()      # both ends non-inheritable: only pass_fds hands r to a child
        _guard, _guard_pid = (r, w), os.getpid()
    return _guard[0]


def _load_prctl():
    global _prctl
    if _prctl is None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            _prctl = libc.prctl
        except (OSError, AttributeError):
            _prctl = False
    return _prctl


def _child_setup(prctl, parent: int):
    def setup():  # runs in the child between fork and exec: no imports, no allocation to speak of
        if prctl:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:   # the harness died between fork and prctl
            os._exit(137)
    return setup


def popen(cmd: list[str], *, python_workload: bool, env: dict | None = None, **kw) -> subprocess.Popen:
    """Start ``cmd`` in a new session (its own process group) that dies with the harness.

    ``python_workload``: the command is one of our workloads, which guards itself through
    ``GILLAB_GUARD_FD``; anything else runs under ``workloads/_guard.py``.
    """
    fd = guard_fd()
    env = dict(os.environ if env is None else env)
    env[GUARD_ENV] = str(fd)
    if not python_workload:
        cmd = [sys.executable, "-s", "-B", str(GUARD_SCRIPT), *cmd]
    return subprocess.Popen(cmd, env=env, pass_fds=(fd,), start_new_session=True,
                            preexec_fn=_child_setup(_load_prctl(), os.getpid()), **kw)


def run(cmd: list[str], *, timeout: float, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """``subprocess.run`` for a program that is not ours (k6): guarded, its group killed on any exit."""
    proc = popen(cmd, python_workload=False, env=env, **kw)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        kill_group(proc)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
