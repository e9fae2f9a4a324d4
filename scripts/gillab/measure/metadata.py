"""What a run was measured on: machine, kernel, load, interpreter identities, code version."""
from __future__ import annotations

import datetime as _dt
import functools
import os
import platform
import re
import subprocess
import sys

from ..paths import portable, repo_root  # noqa: F401 - portable: the stored files' paths


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


# CPU flags that change what a workload costs here (hashing, vector code, timers, virtualization)
FLAGS_THAT_MATTER = ("avx", "avx2", "avx512f", "sha_ni", "aes", "bmi2", "constant_tsc", "nonstop_tsc",
                     "hypervisor", "ht")


def cpu_details() -> dict:
    """Vendor, family, model, stepping, microcode, frequency, caches and the flags that matter:
    what tells two "AMD EPYC, 2 cores" machines apart."""
    info: dict = {}
    try:
        with open("/proc/cpuinfo") as f:
            first = f.read().split("\n\n", 1)[0]
    except OSError:
        first = ""
    fields = {}
    for line in first.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    for key, name, conv in (("vendor_id", "vendor", str), ("cpu family", "family", int), ("model", "model", int),
                            ("stepping", "stepping", int), ("microcode", "microcode", str),
                            ("cpu MHz", "mhz_now", float), ("cache size", "cache_per_core", str),
                            ("bogomips", "bogomips", float)):
        if key in fields:
            try:
                info[name] = conv(fields[key])
            except ValueError:
                info[name] = fields[key]
    flags = set(fields.get("flags", "").split())
    info["flags"] = [f for f in FLAGS_THAT_MATTER if f in flags]
    for name, path in (("mhz_max", "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"),
                       ("mhz_min", "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_min_freq")):
        try:
            with open(path) as f:
                info[name] = int(f.read().strip()) / 1000
        except (OSError, ValueError):
            info[name] = None
    info["caches"] = _caches()
    info["hypervisor"] = hypervisor() if "hypervisor" in flags else None
    return info


def _caches() -> dict:
    out = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return out
    for e in entries:
        if not e.startswith("index"):
            continue
        try:
            with open(f"{base}/{e}/level") as f:
                level = f.read().strip()
            with open(f"{base}/{e}/type") as f:
                kind = f.read().strip()
            with open(f"{base}/{e}/size") as f:
                size = f.read().strip()
        except OSError:
            continue
        out[f"L{level}{'d' if kind == 'Data' else 'i' if kind == 'Instruction' else ''}"] = size
    return out


@functools.lru_cache(maxsize=None)
def hypervisor() -> str:
    """Which hypervisor (and container), as ``lscpu`` and ``systemd-detect-virt`` say."""
    parts = []
    for cmd in (["lscpu"], ["systemd-detect-virt", "--vm"], ["systemd-detect-virt", "--container"]):
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=5).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        if cmd[0] == "lscpu":
            m = re.search(r"^Hypervisor vendor:\s*(.+)$", out, re.M)
            if m:
                parts.append(m.group(1).strip())
        elif out.strip() and out.strip() != "none":
            parts.append(out.strip())
    return " / ".join(dict.fromkeys(parts)) or "yes (unknown)"


def boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return None


def fingerprint(m: dict | None = None) -> str:
    """A short hash of what the results depend on: CPU identity, cores, memory, hypervisor.

    Two machines with the same fingerprint are the same *kind* of machine; the kernel, the
    load and the time of day are recorded per run but are not part of it.
    """
    import hashlib
    import json

    m = m or machine()
    cpu = m.get("cpu") or {}
    key = {"cpu_model": m.get("cpu_model"), "cores": m.get("cpu_count"),
           "memory_gib": round((m.get("memory_bytes") or 0) / 2 ** 30),
           **{k: cpu.get(k) for k in ("vendor", "family", "model", "stepping", "flags", "caches", "hypervisor")}}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


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


CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def cpu_times() -> dict[str, int]:
    """The machine's CPU time so far, in clock ticks, per kind (Linux ``/proc/stat``); empty
    where there is none.  Two readings give the share of a run's time the hypervisor gave to
    other guests (*steal*): on a shared VM the best single sign that the machine was not quiet."""
    try:
        with open("/proc/stat") as fh:
            first = fh.readline().split()
    except OSError:
        return {}
    if not first or first[0] != "cpu":
        return {}
    return {k: int(v) for k, v in zip(CPU_FIELDS, first[1:])}


def steal_share(start: dict, end: dict) -> float | None:
    """The fraction of all CPU time between two :func:`cpu_times` readings that was stolen."""
    if not start or not end:
        return None
    total = sum(end.get(k, 0) - start.get(k, 0) for k in CPU_FIELDS)
    return round((end.get("steal", 0) - start.get("steal", 0)) / total, 4) if total > 0 else None


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
    info["cpu"] = cpu_details()
    info["fingerprint"] = fingerprint(info)
    return info


def harness() -> dict:
    return {"python": sys.version, "executable": sys.executable, **git_commit()}


def filesystem_of(path) -> dict:
    """The mount holding ``path``: file system type and device, from /proc/mounts."""
    from pathlib import Path

    path = Path(path).resolve()
    best = None
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            mnt = mnt.replace("\\040", " ")
            if (str(path) + "/").startswith(mnt.rstrip("/") + "/") and (best is None or len(mnt) > len(best[1])):
                best = (dev, mnt, fstype)
    if best is None:
        return {"device": "?", "mountpoint": "?", "fstype": "?"}
    return {"device": best[0], "mountpoint": best[1], "fstype": best[2]}
