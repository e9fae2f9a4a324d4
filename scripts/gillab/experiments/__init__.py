"""Experiments: what to measure, how to sweep it, and how to read the results back.

An experiment names a workload, its parameters, the grid of points a parameter set expands
to, and the metric.  :func:`measure` runs the sweep: every check first, then for each repeat,
each point, each condition (interleaved, so drift on a shared machine hits every condition
alike) one fresh process per sample, each sample stored the moment it is measured.  Samples
already stored for the same configuration are skipped, so a killed sweep resumes where it
stopped.
"""
from __future__ import annotations

import hashlib
import json
import math
import sys
import time
import uuid
from dataclasses import dataclass, field

from .. import interpreters, metadata, runner
from ..profiles import Param, ParameterError, resolve
from ..store import ExperimentStore

REGISTRY: dict[str, "Experiment"] = {}

# Parameters that say how much/how long to measure but not *what* a sample is.
NOT_CONFIG = ("conditions", "repeats", "timeout")


class Experiment:
    name: str = ""
    workload: str = ""
    title: str = ""
    document: str = ""
    metric: str = "seconds"
    lower_is_better: bool = True
    params: dict[str, Param] = {}
    point_keys: tuple[str, ...] = ()

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.name:
            REGISTRY[cls.name] = cls()

    # grid --------------------------------------------------------------------------------
    def points(self, p: dict) -> list[dict]:
        raise NotImplementedError

    def workload_params(self, p: dict, point: dict) -> dict:
        return {**{k: v for k, v in p.items() if k in self.params and k not in self.point_keys}, **point}

    def run_sample(self, p: dict, point: dict, cond) -> "runner.Sample":
        """Measure one sample of ``point`` under ``cond``: by default one workload process.

        The point may carry its own ``switch_interval`` or ``affinity`` (for experiments that
        sweep them); otherwise the run-wide parameters apply.  A result holding ``rows`` (a
        list of dicts) is stored as one row each, e.g. one per 1-second window of a rate.
        """
        return runner.run(cond, self.workload, self.workload_params(p, point), timeout=p["timeout"],
                          switch_interval=point.get("switch_interval", p["switch_interval"]),
                          affinity=point.get("affinity", p["affinity"]))

    # analysis: by default the functions of the experiment's own module
    def _module(self):
        return sys.modules[type(self).__module__]

    def summary(self, df):
        return self._module().summary(df)

    def verdicts(self, df) -> list[dict]:
        return self._module().verdicts(df)

    def check(self, p: dict) -> None:
        """Experiment-specific checks across parameters (raise ParameterError)."""

    def resolve(self, profile: str = "default", overrides: dict | None = None) -> dict:
        p = resolve(self.name, self.params, profile, overrides)
        self.check(p)
        return p

    def config(self, p: dict) -> dict:
        return {k: v for k, v in p.items() if k not in NOT_CONFIG}

    def config_id(self, p: dict) -> str:
        blob = json.dumps(self.config(p), sort_keys=True)
        return hashlib.sha1(blob.encode()).hexdigest()[:12]


def get(name: str) -> Experiment:
    from . import (affinity, b2_download, convoy, countdown, data_race, flask_k6,  # noqa: F401  (registers)
                   freethreading, sha256, switch_interval)

    if name not in REGISTRY:
        raise ParameterError(f"unknown experiment {name!r}; known: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name]


def point_key(point: dict) -> str:
    return ",".join(f"{k}={point[k]}" for k in sorted(point))


@dataclass
class RunResult:
    run_id: str
    experiment: str
    machine: str
    params: dict
    config_id: str
    measured: int = 0
    skipped: int = 0
    failed: int = 0
    missing_conditions: list = field(default_factory=list)
    status: str = "running"


def _affinity_str(cpus) -> str:
    return "" if cpus is None else ",".join(str(c) for c in cpus)


def plan(exp: Experiment, p: dict, conds: list, done: set) -> list[tuple[int, dict, object]]:
    todo = []
    for rep in range(p["repeats"]):
        for point in exp.points(p):
            for cond in conds:
                if (cond.id, point_key(point), rep) not in done:
                    todo.append((rep, point, cond))
    return todo


def measure(name: str, profile: str = "default", overrides: dict | None = None, *,
            machine: str | None = None, progress: bool = True) -> RunResult:
    """Run (or resume) a sweep.  Every check happens before the first sample."""
    exp = get(name)
    p = exp.resolve(profile, overrides)
    conds = interpreters.select(p["conditions"])
    idents = {c.id: interpreters.identify(c) for c in conds}
    missing = [c.id for c in conds if not idents[c.id].available]
    usable = [c for c in conds if idents[c.id].available]
    if not usable:
        raise ParameterError(
            "none of the requested conditions is available: "
            + "; ".join(f"{c.id}: {idents[c.id].error}" for c in conds)
            + ". Build the core ones with `gillab provision` (or `make interpreters`).")
    for cid in missing:
        print(f"[gillab] {name}: {cid} is not available ({idents[cid].error}); "
              "it is reported as not measured, not replaced.", file=sys.stderr)
    machine = machine or metadata.machine_id()
    store = ExperimentStore(exp.name, machine)
    cfg = exp.config_id(p)
    run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + uuid.uuid4().hex[:6]
    result = RunResult(run_id, exp.name, machine, p, cfg, missing_conditions=missing)
    with store.lock():
        todo = plan(exp, p, usable, store.done(cfg))
        result.skipped = p["repeats"] * len(exp.points(p)) * len(usable) - len(todo)
        meta = {
            "run_id": run_id, "experiment": exp.name, "title": exp.title, "document": exp.document,
            "profile": profile, "params": p, "config_id": cfg, "config": exp.config(p),
            "conditions": {c.id: _identity_record(c, idents[c.id]) for c in conds},
            "missing_conditions": missing,
            "machine": metadata.machine(), "harness": metadata.harness(),
            "started": metadata.now(), "loadavg_start": metadata.loadavg(),
            "planned_samples": len(todo), "skipped_already_measured": result.skipped,
            "status": "running",
        }
        store.write_run(meta)
        hook = getattr(exp, "before_sweep", None)
        if hook is not None:  # measurements that belong to the run, not to a condition
            done = store.done(cfg)

            def needed(cid, point, rep):
                return (cid, point_key(point), rep) not in done

            def add_row(cid, point, rep, result):
                store.append({"run_id": run_id, "experiment": exp.name, "profile": profile, "config": cfg,
                              "condition": cid, "point": point_key(point), "repeat": rep, **point,
                              "time": metadata.now(), "loadavg_1m": (metadata.loadavg() or [math.nan])[0],
                              "status": "ok", "error": "", **result})

            hook(p, needed, add_row)
        bar = _progress(len(todo), f"{exp.name} [{profile}]", progress)
        try:
            for rep, point, cond in todo:
                rows = _sample(exp, p, cfg, run_id, profile, rep, point, cond)
                store.extend(rows)
                if rows[0]["status"] == "ok":
                    result.measured += 1
                else:
                    result.failed += 1
                    print(f"[gillab] failed: {cond.id} {point_key(point)} repeat {rep}: {rows[0]['error']}",
                          file=sys.stderr)
                bar.set_postfix_str(f"{cond.id} {point_key(point)} r{rep}", refresh=False)
                bar.update(1)
            result.status = "complete" if not result.failed else "complete with failures"
        except BaseException as exc:
            result.status = f"interrupted ({type(exc).__name__})"
            raise
        finally:
            bar.close()
            meta.update(status=result.status, finished=metadata.now(), loadavg_end=metadata.loadavg(),
                        measured=result.measured, failed=result.failed)
            store.write_run(meta)
    return result


def _identity_record(cond, ident) -> dict:
    """The condition's identity, plus the provisioning record of a build made here."""
    from .. import provision

    rec = ident.as_dict() | {"note": cond.note}
    if cond.origin == "provisioned":
        spec = next(sp for sp in provision.build_specs() if str(sp.executable()) == cond.executable)
        rec["build_record"] = provision.read_marker(spec)
    return rec


def _progress(total: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="sample", disable=not enabled or total == 0,
                file=sys.stderr, dynamic_ncols=True)


def _sample(exp, p, cfg, run_id, profile, rep, point, cond) -> list[dict]:
    load1 = (metadata.loadavg() or [math.nan])[0]
    row = {
        "run_id": run_id, "experiment": exp.name, "profile": profile, "config": cfg,
        "condition": cond.id, "point": point_key(point), "repeat": rep, **point,
        **{k: (json.dumps(v) if isinstance(v, list) else v) for k, v in exp.config(p).items()
           if k not in point},
        "time": metadata.now(), "loadavg_1m": load1,
    }
    try:
        s = exp.run_sample(p, point, cond)
    except runner.WorkloadError as exc:
        return [row | {"status": "failed", "error": str(exc)}]
    rt = s.runtime
    common = row | {
        "status": "ok", "error": "",
        **{k: v for k, v in s.result.items() if not isinstance(v, (dict, list))},
        "python": rt.get("python"), "py_gil_disabled": rt.get("py_gil_disabled"),
        "gil_enabled": rt.get("gil_enabled"), "gil_enabled_after": rt.get("gil_enabled_after"),
        "switch_interval_runtime": rt.get("switch_interval"),
        "affinity_runtime": _affinity_str(rt.get("affinity")),
        **s.rusage, "process_wall_s": round(s.wall_s, 6),
    }
    sub = s.result.get("rows")
    if not sub:
        return [common]
    return [common | {k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()}
            for r in sub]
