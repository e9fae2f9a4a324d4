"""One sample: a workload run once under one build, in a fresh process, inside a window that
reads whether it had the machine to itself (:mod:`gillab.measure.alone`), turned into the rows the
store keeps (:mod:`gillab.measure.sweep` runs them in its interleaved order)."""
from __future__ import annotations

import math
import subprocess

from . import alone, metadata, runner
from .protocol import point_key
from .venvs import VenvError


def _affinity_str(cpus) -> str:
    return "" if cpus is None else ",".join(str(c) for c in cpus)


def identity_record(cond, ident) -> dict:
    """The condition's identity, plus the provisioning record of a build made here."""
    from . import provision

    rec = ident.as_dict() | {"note": cond.note}
    if cond.origin == "provisioned":
        spec = provision.spec_for_executable(cond.executable)
        rec["build_record"] = provision.read_marker(spec) if spec else None
    return rec


# a workload that failed or timed out, a build's venv that cannot be made (no registry, a pip
# error), a server or process that cannot start (a busy port, a missing binary)
SAMPLE_FAILURES = (runner.WorkloadError, VenvError, OSError, subprocess.SubprocessError)


def sample(exp, p, cfg, run_id, profile, rep, point, cond) -> list[dict]:
    """One sample of ``exp`` at ``point`` under ``cond`` (repeat ``rep``): its rows, stored as they are
    (``ok``, ``not alone`` with what others used, or ``failed`` with why)."""
    load1 = (metadata.loadavg() or [math.nan])[0]
    row = {
        "run_id": run_id, "experiment": exp.name, "profile": profile, "config": cfg,
        "condition": cond.id, "point": point_key(point), "repeat": rep, **point,
        **{k: v for k, v in exp.config(p).items() if k not in point},
        "time": metadata.now(), "loadavg_1m": load1,
    }
    try:
        with alone.Window() as window:
            s = exp.run_sample(p, point, cond)
    except SAMPLE_FAILURES as exc:   # this sample, this build: recorded with its reason; the sweep goes on
        why = str(exc) if isinstance(exc, runner.WorkloadError) else f"{type(exc).__name__}: {exc}"
        return [row | {"status": "failed", "error": why}]
    rt = s.runtime
    seen = window.reading
    common = row | {
        **seen.row(),
        **{k: v for k, v in s.result.items() if not isinstance(v, (dict, list))},
        "python": rt.get("python"), "py_gil_disabled": rt.get("py_gil_disabled"),
        "gil_enabled": rt.get("gil_enabled"), "gil_enabled_after": rt.get("gil_enabled_after"),
        "switch_interval_runtime": rt.get("switch_interval"),
        "check_interval_runtime": rt.get("check_interval"), "nogil_fork": rt.get("nogil_fork"),
        "affinity_runtime": _affinity_str(rt.get("affinity")),
        **s.rusage, "process_wall_s": round(s.wall_s, 6),
    }
    sub = s.result.get("rows")
    if not sub:
        return [common]
    return [common | r for r in sub]
