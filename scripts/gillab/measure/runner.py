"""Run one workload in a fresh process under one condition and read its single JSON line."""
from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import procs
from .interpreters import Condition, clean_env

WORKLOADS = Path(__file__).resolve().parent / "workloads"
MARKER = "GILLAB-RESULT "


class WorkloadError(RuntimeError):
    """The workload did not produce a result: crashed, timed out, or printed no result line."""


@dataclass
class Sample:
    result: dict
    runtime: dict
    rusage: dict
    wall_s: float


def workload_path(name: str) -> Path:
    path = WORKLOADS / f"{name}.py"
    if not path.is_file():
        known = sorted(p.stem for p in WORKLOADS.glob("*.py") if not p.stem.startswith("_"))
        raise WorkloadError(f"unknown workload {name!r}; known: {', '.join(known)}")
    return path


def command(cond: Condition, workload: str, params: dict, *, switch_interval: float | None = None,
            affinity: list[int] | None = None) -> list[str]:
    """The command line of one sample.  An interpreter without ``os.sched_setaffinity`` (2.7)
    is pinned by ``taskset`` instead, before it starts."""
    from .interpreters import identify

    spec = {"params": params, "switch_interval": switch_interval, "affinity": affinity}
    prefix: list[str] = []
    if affinity is not None and identify(cond).version_short.startswith("2."):
        prefix = ["taskset", "-c", ",".join(str(c) for c in affinity)]
        spec["affinity"] = None
    return [*prefix, cond.executable, "-s", "-B", str(workload_path(workload)), json.dumps(spec)]


def run(cond: Condition, workload: str, params: dict, *, timeout: float = 600.0,
        switch_interval: float | None = None, affinity: list[int] | None = None,
        env: dict[str, str] | None = None) -> Sample:
    """Run ``workload`` with ``params`` under ``cond`` in a new process (and process group).

    The process gets a clean environment (no PYTHON* variables of the caller) plus the
    condition's own (e.g. ``PYTHON_GIL=1``) and ``env``.  The whole process group is killed on
    timeout, on Ctrl-C, or on any error, and dies with the harness if the harness is killed
    (:mod:`gillab.measure.procs`), so no workload outlives its sample.
    A failed workload raises :class:`WorkloadError` with its reason.
    """
    cmd = command(cond, workload, params, switch_interval=switch_interval, affinity=affinity)
    if not cond.exists:
        raise WorkloadError(f"interpreter for {cond.id} not found: {cond.executable}")
    full_env = clean_env({**cond.env_dict, **(env or {})})
    t0 = time.perf_counter()
    proc = procs.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        procs.kill_group(proc)
        proc.communicate()
        raise WorkloadError(f"{workload} under {cond.id} timed out after {timeout:g} s") from None
    except BaseException:
        procs.kill_group(proc)
        proc.communicate()
        raise
    procs.kill_group(proc)   # whatever the workload left behind, and its watcher
    wall = time.perf_counter() - t0
    line = next((ln for ln in reversed(out.splitlines()) if ln.startswith(MARKER)), None)
    if line is None:
        tail = (err or out).strip()[-600:]
        raise WorkloadError(f"{workload} under {cond.id} exited {proc.returncode} without a result: {tail}")
    data = json.loads(line[len(MARKER):])
    if not data.get("ok"):
        raise WorkloadError(f"{workload} under {cond.id} failed: {data.get('error')}")
    return Sample(result=data["result"], runtime=data["runtime"] | {
        "gil_enabled_after": data.get("gil_enabled_after")}, rusage=data.get("rusage", {}), wall_s=wall)
