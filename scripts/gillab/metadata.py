"""What a run was measured on: machine, kernel, load, interpreter identities, code version."""
from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import subprocess
import sys

from .paths import repo_root


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def machine_id() -> str:
    """A stable name for this kind of machine: ``$GILLAB_MACHINE``, else CPU model + core count.

    Host names on CI and cloud machines change every boot, so they make poor folder names; the
    CPU model and the number of cores are what the results depend on.
    """
    if os.environ.get("GILLAB_MACHINE"):
        return re.sub(r"[^A-Za-z0-9._-]+", "-", os.environ["GILLAB_MACHINE"]).strip("-")
    model = cpu_model().lower()
    model = re.sub(r"\((r|tm)\)|cpu|processor|@.*$|\d+-core", " ", model)
    slug = re.sub(r"[^a-z0-9]+", "-", model).strip("-") or "unknown"
    return f"{slug}-{os.cpu_count()}c"


def git_commit() -> dict:
    root = repo_root()

    def git(*args):
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""

    commit = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", "scripts", "notebooks"))
    return {"commit": commit or None, "dirty": dirty if commit else None}


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def portable(obj):
    """The same data with this machine's home folder written ``~`` and the checkout ``<repo>``:
    stored files name builds by where they live relative to those, not by one machine's paths."""
    if isinstance(obj, str):
        root, home = str(repo_root()), os.path.expanduser("~")
        out = obj.replace(root, "<repo>")
        return out.replace(home + "/", "~/") if home not in ("/", "") else out
    if isinstance(obj, dict):
        return {k: portable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [portable(v) for v in obj]
    return obj


def machine() -> dict:
    uname = platform.uname()
    info = {
        "machine_id": machine_id(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity_of_harness": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_bytes": memory_bytes(),
        "os": f"{uname.system} {uname.release}",
        "kernel": uname.version,
        "arch": uname.machine,
    }
    try:
        with open("/etc/os-release") as f:
            m = re.search(r'^PRETTY_NAME="?([^"\n]*)', f.read(), re.M)
            info["distribution"] = m.group(1) if m else None
    except OSError:
        info["distribution"] = None
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") as f:
            info["cpu_governor"] = f.read().strip()
    except OSError:
        info["cpu_governor"] = None
    return info


def harness() -> dict:
    return {"python": sys.version, "executable": sys.executable, **git_commit()}
