"""Processes below a test's process, from /proc: which are there, and which are gone."""
import os
import time
from pathlib import Path


def descendants(pid):
    """Every process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def cmdline(pid) -> bytes:
    """The command line of ``pid``, or b"" once it is gone: a process may end between being
    listed and being read (reading a vanished process's cmdline raises ProcessLookupError)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def wait_gone(pids, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def with_env(key: str, value: str) -> list[int]:
    """Every process whose environment holds ``key=value`` (e.g. a test's private GILLAB_DATA):
    what a test left running, wherever it was re-parented to."""
    needle = f"{key}={value}".encode()
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                if needle in (d / "environ").read_bytes().split(b"\0") and alive(int(d.name)):
                    out.append(int(d.name))
            except OSError:
                continue
    return out
