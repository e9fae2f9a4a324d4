"""Every process the harness starts dies with the harness, however the harness ends.

Ctrl-C and errors are handled where processes are started (their process group is killed in a
``finally``).  A SIGKILL of the harness runs no ``finally``, so the cover needs no code in the
dying process:

* the **guard pipe**: the harness holds the write end of one pipe for its whole life and never
  writes to it.  When the harness ends, however it ends, the kernel closes the write end and a
  read of the pipe returns end-of-file.
* every command runs in a new session (its own process group) through a small ``bash`` prelude:
  a background *watcher* blocks reading the guard pipe, then ``exec`` replaces bash with the
  command, which keeps bash's process id (so a server's threads can still be read from
  ``/proc/<pid>``).  At end-of-file the watcher kills the whole group (``kill -9 0``): the
  workload, every thread and process it started (CPU-bound neighbours, a fork server, nginx
  workers), and itself.  The watcher is a process of its own, so it needs no GIL and works for
  any program and any interpreter (2.7 included).  The workload itself carries no extra thread.
* the command also gets ``PR_SET_PDEATHSIG`` = SIGKILL, so it dies at once with the harness;
  the watcher (not a child of the harness) then clears away the rest of its group.

When a command ends normally its watcher is still blocked: :func:`kill_group` (which every
caller runs when a sample is done) ends it.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import signal
import subprocess

GUARD_ENV = "GILLAB_GUARD_FD"
PR_SET_PDEATHSIG = 1
# $0 is a name for ps; "$@" is the command.  The watcher's stdio is /dev/null, so that it never
# holds the command's output pipes open (a reader waiting for end-of-file would wait forever).
PRELUDE = ('( read -r _ <&"$GILLAB_GUARD_FD"; kill -9 0 ) </dev/null >/dev/null 2>&1 & '
           'unset GILLAB_GUARD_FD; exec "$@"')

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
    def setup():  # runs in the child between fork and exec
        if prctl:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:   # the harness died between fork and prctl
            os._exit(137)
    return setup


def guarded_command(cmd: list[str]) -> list[str]:
    return [shutil.which("bash") or "/bin/bash", "-c", PRELUDE, "gillab-guarded", *cmd]


def popen(cmd: list[str], *, env: dict | None = None, **kw) -> subprocess.Popen:
    """Start ``cmd`` in a new session (its own process group) that dies with the harness."""
    fd = guard_fd()
    env = dict(os.environ if env is None else env)
    env[GUARD_ENV] = str(fd)
    return subprocess.Popen(guarded_command(cmd), env=env, pass_fds=(fd,), start_new_session=True,
                            preexec_fn=_child_setup(_load_prctl(), os.getpid()), **kw)


def run(cmd: list[str], *, timeout: float, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """``subprocess.run`` for a guarded command; its whole group is killed when it is done."""
    proc = popen(cmd, env=env, **kw)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        kill_group(proc)
        if proc.returncode is None:
            proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Kill the process group of ``proc``: what is left of the command, and its watcher."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
