"""Record GIL traces: one sample of a chapter's point under the traced twin of a build.

``gillab trace record`` runs, for each chosen point of :data:`PLAN` (the chapters whose documents
state a mechanism), samples of the chapter's own experiment under ``<build>+trace``
(builds.toml ``[[trace]]``) with the trace's environment set: the file to write (``%p``: one per
process, so that a child started with exec keeps its own), and a window of a few hundred ms
inside the sample's steady part.  A shot with ``rounds`` records that many windows, one per run
(a traced statistic's interval is over runs, as every other one's); a convoy shot also measures,
in each round and at the same placement, the *untraced* build's rate with its CPU threads and
alone (in a rotated order), so that the chapter can set the traced waits beside the untraced
cost of a request from one sitting.  The workload's process (the root of the processes that wrote a
trace) is kept in the campaign, under ``traces/<experiment>/``, with the run's metadata (machine,
load average, build, point, the sample's result as context): :func:`gillab.measure.trace_file.store`.

Nothing here changes a measured sample: the traced build is a condition of its own that no sweep
measures, the experiment's code is run as it is, and the environment is the only difference.
"""
from __future__ import annotations

import dataclasses
import io
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import campaigns, interpreters, metadata, provision, trace_file
from . import experiments
from .protocol import point_key
from .experiments.echo import request_cost
from .interpreters import Condition

BUDGET_BYTES = 16 * 2**20    # every trace of a campaign together, compressed (tests/test_traces.py)


@dataclass(frozen=True)
class Shot:
    """One trace to record: a point of an experiment, the builds, and the window (ms after the
    process's first GIL event, and its length)."""

    experiment: str
    point: dict
    builds: tuple[str, ...]
    window: tuple[int, int]
    why: str
    rounds: int = 1             # runs traced, one window each (a statistic over runs needs 7: gillab.stats)
    untraced: bool = False      # convoy: each round also measures the untraced build (busy and alone)
    sizes: tuple = ()           # (parameter, value) pairs over default's: a longer run than default's


# the builds a shot traces, by the part they play (builds.toml [roles]): the documents' old GIL and
# new GIL, and today's
OLD, THEN = interpreters.role("old_gil"), interpreters.role("new_gil_then")
NEW_GIL = (THEN, "3.13.5")
BOTH_GILS = (OLD, THEN, "3.13.5")
SWITCH = (1e-06, 1e-05, 0.0001, 0.001, 0.005, 0.01, 0.1)


CONVOY_ROUNDS = 8             # one more than a median's 95% interval needs (a failed run leaves 7)
# a countdown of two threads is traced at 20,000,000 decrements (default's 5,000,000 last about
# 180 ms on the reference's machine, too short a steady part for a window that must open after a
# slow start under load): both threads hold and hand over the GIL from about 20 ms to 600 ms
COUNTDOWN_SIZES = (("total_decrements", 20_000_000), ("paired", False))   # the k-thread run alone: its window
COUNTDOWN_WINDOW = (200, 100)


def convoy_window() -> tuple[int, int]:
    """The middle three fifths of the client's counted windows at the `default` profile's timing
    (after its warm-up), so that a trace sees requests, never the warm-up or the server idle after
    the client stopped."""
    p = experiments.get("convoy").resolve("default")
    counted = 1000 * p["windows"] * p["window_s"]
    return round(1000 * p["warmup_s"] + counted / 5), round(3 * counted / 5)


def ccbench_window() -> tuple[int, int]:
    """Inside the pings of a latency run at the `default` profile's timing: from 150 ms (the
    client started, the background threads released) to 50 ms before the last ping is sent."""
    p = experiments.get("ccbench").resolve("default")
    return 150, max(50, round(1000 * p["latency_duration"]) - 200)


def _convoy_shots() -> list[Shot]:
    """The convoy's traced points: 1, 5 and 10 ms beside one CPU thread, pinned (the document's
    setting, where the mechanism rows are judged) and where the OS puts the threads (the regimes),
    and two CPU threads pinned at 5 ms; each over :data:`CONVOY_ROUNDS` runs with its untraced twin."""
    out, window = [], convoy_window()
    for placement in ("pinned", "os"):
        pts = [(si, 1) for si in (0.01, 0.005, 0.001)] + ([(0.005, 2)] if placement == "pinned" else [])
        for si, n in pts:
            point = {"switch_interval": si, "cpu_threads": n, "cpu_processes": 0}
            if placement == "pinned":
                point["placement"] = "pinned"
            out.append(Shot("convoy", point, NEW_GIL, window,
                            f"the echo server's handler beside {n} CPU-bound thread{'s' if n > 1 else ''}, "
                            f"{'pinned' if placement == 'pinned' else 'placed by the OS'}: how long each request "
                            "waits for the GIL, and who holds it meanwhile", CONVOY_ROUNDS, True))
    return out


def _plan() -> list[Shot]:
    out = _convoy_shots()
    out.append(Shot("countdown", {"threads": 2}, BOTH_GILS, COUNTDOWN_WINDOW,
                    "two CPU-bound threads: the old GIL's ticks against the new GIL's forced switching",
                    sizes=COUNTDOWN_SIZES))
    pings = ccbench_window()
    for task in ("pi", "regex", "bz2", "countdown"):
        out.append(Shot("ccbench", {"test": "latency", "task": task, "workers": "threads", "threads": 1,
                                    "policy": "default"}, (OLD, THEN), pings,
                        "ccbench's latency next to one thread of a task: the old GIL against the new"))
    out.append(Shot("fib_server", {"kind": "thread", "scenario": "perf2"}, (THEN,), (700, 600),
                    "Beazley's fib server as the long request arrives"))
    out.append(Shot("data_race", {"threads": 2, "iterations": 100000, "switch_interval": 1e-06},
                    NEW_GIL, (0, 400), "two threads incrementing one counter at a 1 µs interval"))
    return out


PLAN = _plan()


def traced_build(build: str) -> str:
    """The traced twin's build id of a condition id (a GIL twin's traced build is its build's)."""
    for spec in provision.all_specs():
        if spec.build_id == build or (spec.gil_twin and spec.gil_twin[0] == build):
            return spec.build_id + provision.TRACE_SUFFIX
    raise interpreters.ConditionError(f"no build {build!r} in builds.toml")


def traced_condition(cond: Condition) -> Condition:
    """The traced twin of ``cond``: the ``+trace`` binary with the condition's own environment."""
    tid = traced_build(cond.id)
    spec = next(s for s in provision.all_specs() if s.build_id == tid)
    return Condition(cond.id + provision.TRACE_SUFFIX, str(spec.executable()), "provisioned", cond.env,
                     note=spec.doc)


def with_env(cond: Condition, *pairs: tuple[str, str]) -> Condition:
    """``cond`` with ``pairs`` added to its environment (the trace's file and window)."""
    return dataclasses.replace(cond, env=(*cond.env, *pairs))


def shots(experiment: str | None = None, builds: list[str] | None = None) -> list[Shot]:
    out = [s for s in PLAN if experiment in (None, s.experiment)]
    if builds:
        out = [dataclasses.replace(s, builds=tuple(b for b in s.builds if b in builds)) for s in out]
    return [s for s in out if s.builds]


def check(todo: list[tuple[Shot | None, str]]) -> dict[str, Condition]:
    """Every traced build the plan needs, present and valid, before any trace is recorded."""
    conds = {c.id: c for c in interpreters.discover()}
    out, missing = {}, []
    for _, build in todo:
        if build in out:
            continue
        if build not in conds:
            raise interpreters.ConditionError(f"unknown build {build!r}")
        traced = traced_condition(conds[build])
        if not traced.exists:
            missing.append(traced_build(build))
        out[build] = traced
    if missing:
        raise interpreters.ConditionError(
            f"traced builds missing: {', '.join(sorted(set(missing)))}; build them with `make interpreters TRACE=1` "
            f"(or `gillab provision --only {' --only '.join(sorted(set(missing)))}`)")
    return out


def name_of(shot: Shot, build: str, k: int = 0) -> str:
    """A trace's file name: the point and build, and the round when the shot has several."""
    base = f"{point_key(shot.point)}__{build}".replace("/", "_")
    return base if shot.rounds == 1 else f"{base}__r{k}"


def record(experiment: str | None = None, builds: list[str] | None = None, campaign: str | None = None,
           redo: bool = False, progress=print) -> dict:
    """Record the plan's traces (of one experiment, or all) into the reader's campaign (or the
    one named); a trace already there is kept unless ``redo``.  Returns what was done."""
    # rounds outermost: a sitting cut short has every point's first rounds, not some points' all
    plan = shots(experiment, builds)
    todo = [(s, b, k) for k in range(max((s.rounds for s in plan), default=0))
            for s in plan for b in s.builds if k < s.rounds]
    if not todo:
        raise interpreters.ConditionError("nothing to trace: no shot of the plan matches")
    conds = check([(s, b) for s, b, _ in todo])
    base = {c.id: c for c in interpreters.discover()}
    camp = campaigns.for_measuring(campaign)
    done, kept, failed = [], [], []
    for i, (shot, build, k) in enumerate(todo, 1):
        folder = camp.dir / "traces" / shot.experiment
        name = name_of(shot, build, k)
        if not redo and (folder / f"{name}{trace_file.SUFFIX}").exists():
            kept.append(name)
            continue
        progress(f"[trace {i}/{len(todo)}] {shot.experiment} {point_key(shot.point)} on {build}+trace"
                 + (f", round {k + 1}/{shot.rounds}" if shot.rounds > 1 else ""))
        try:
            done.append(str(one(shot, conds[build], folder, name, k, base.get(build)).relative_to(camp.dir)))
        except (trace_file.TraceError, RuntimeError, OSError) as exc:
            failed.append(f"{shot.experiment} {name}: {exc}")
            progress(f"  failed: {exc}")
    return {"campaign": camp.id, "recorded": done, "kept": kept, "failed": failed}


def roles(result: dict) -> dict[str, str]:
    """The threads an echo sample names (thread id -> role): the handler, each CPU thread, and
    the server's main thread; the client is another process (its pid, in ``client_pid``)."""
    out = {}
    if result.get("server_pid"):
        out[str(result["server_pid"])] = "main (accepts)"
    tids = [t for t in str(result.get("cpu_tids") or "").split(",") if t]
    for j, t in enumerate(tids, 1):
        out[t] = f"CPU thread {j}" if len(tids) > 1 else "CPU thread"
    if result.get("handler_tid"):
        out[str(result["handler_tid"])] = "handler"
    return out


def untraced_twin(exp, p: dict, point: dict, cond: Condition, k: int) -> dict:
    """The untraced build at ``point`` and alone (0 CPU threads, same placement), in an order
    rotated by round ``k``: each run's median window rate, and the cost of a request in switch
    intervals that the convoy's mechanism rows read, ``(1/busy - 1/alone) / interval``."""
    alone = {**point, "cpu_threads": 0}
    out = {}
    for which, pt in ((("busy", point), ("alone", alone)) if k % 2 == 0 else (("alone", alone), ("busy", point))):
        sample = exp.run_sample(p, pt, cond)
        out[f"rps_{which}"] = median_rate(sample.result)
        out[f"placement_regime_{which}"] = sample.result.get("placement_regime")
        # the GIL's own count of hand-offs over the connection and the requests served (no patch)
        out[f"gil_switches_{which}"] = sample.result.get("gil_switches")
        out[f"requests_served_{which}"] = sample.result.get("requests_served")
    out["cost_per_request_intervals"] = request_cost(out["rps_busy"], out["rps_alone"], point["switch_interval"])
    out["condition"] = cond.id
    return out


def sample_meta(shot: Shot, condition: str, executable: str, k: int, sample, load_before, t0: float) -> dict:
    """What an observed sample of ``shot`` keeps beside its observer's file (a trace, a witness):
    the point and build, the window, the machine and its load, the round, the threads' roles and
    the sample's own result as context."""
    return {"experiment": shot.experiment, "point": shot.point, "condition": condition,
            "executable_sha256": interpreters.file_sha256(executable), "window_ms": list(shot.window),
            "sizes": dict(shot.sizes), "why": shot.why, "recorded_at": metadata.now(), "loadavg_before": load_before,
            "loadavg_after": metadata.loadavg(), "seconds": round(time.time() - t0, 3),
            "machine_id": metadata.machine_id(), "boot_id": metadata.boot_id(), "commit": metadata.git_commit(),
            "round": k, "rounds": shot.rounds, "placement": shot.point.get("placement", "os"),
            "roles": roles(sample.result), "sample_result": json.loads(json.dumps(sample.result, default=str))}


def one(shot: Shot, traced: Condition, folder: Path, name: str, k: int = 0, untraced: Condition | None = None) -> Path:
    """One sample of ``shot`` under ``traced``, its workload process's trace stored as ``name``
    (round ``k``); with the untraced build's twin samples first where the shot asks for them."""
    exp = experiments.get(shot.experiment)
    p = exp.resolve("default", dict(shot.sizes))
    twin = untraced_twin(exp, p, shot.point, untraced, k) if shot.untraced and untraced is not None else None
    with tempfile.TemporaryDirectory(prefix="gillab-trace-") as tmp:
        cond = with_env(traced, (trace_file.TRACE_ENV, os.path.join(tmp, "gil-%p.trace")),
                        (trace_file.WINDOW_ENV, f"{shot.window[0]},{shot.window[1]}"))
        load_before, t0 = metadata.loadavg(), time.time()
        sample = exp.run_sample(p, shot.point, cond)
        written = [trace_file.parse(Path(f).read_bytes(), where=Path(f).name) for f in sorted(Path(tmp).glob("gil-*.trace"))]
        if not written:
            raise trace_file.TraceError(f"{traced.id} wrote no trace (is it a traced build?)")
        pids = {t.pid for t in written}
        root = [t for t in written if t.ppid not in pids]
        if len(root) != 1:
            raise trace_file.TraceError(f"{len(root)} processes wrote a trace with no traced parent; expected one")
        if not len(root[0].events):
            raise trace_file.TraceError(f"no GIL event in the window {shot.window[0]}+{shot.window[1]} ms: the sample "
                                    "ended before it opened (a window for this point must start earlier)")
        raw = Path(tmp) / f"gil-{root[0].pid}.trace"
        build = traced.id.removesuffix(provision.TRACE_SUFFIX)
        meta = {**sample_meta(shot, build, traced.executable, k, sample, load_before, t0),
                "traced_build": traced_build(build), "other_processes": len(written) - 1,
                "recorder_version": root[0].version, **({"untraced": twin} if twin else {}),
                "note": "a traced build's sample: context for the trace, never counted in a verdict"}
        return trace_file.store(raw, folder, name, meta)


def campaign_bytes(camp_dir: Path) -> int:
    return sum(p.stat().st_size for p in (Path(camp_dir) / "traces").rglob("*") if p.is_file())


def main_record(args) -> int:
    """``gillab trace record`` (a missing build is the CLI's error, exit 2, like every command's)."""
    out = record(args.experiment, args.builds, args.campaign, args.redo,
                 progress=lambda m: print(m, file=sys.stderr, flush=True))
    print(f"campaign {out['campaign']}: {len(out['recorded'])} recorded, {len(out['kept'])} kept, "
          f"{len(out['failed'])} failed")
    for f in out["failed"]:
        print(f"  failed: {f}")
    return 1 if out["failed"] else 0


# -- what tracing costs ---------------------------------------------------------------------------
OVERHEAD_POINTS = (("countdown", {"threads": 1}, BOTH_GILS), ("countdown", {"threads": 2}, BOTH_GILS),
                   *(("convoy", {"switch_interval": si, "cpu_threads": 1, "cpu_processes": 0, "placement": "pinned"},
                      NEW_GIL) for si in (0.001, 0.005, 0.01)))
OVERHEAD_BUILDS = BOTH_GILS
VARIANTS = ("untraced", "traced, off", "traced, on")
OVERHEAD_FILE = "overhead.csv"


def median_rate(result: dict) -> float:
    """An echo sample's rate: its median window's requests per second (nan without windows)."""
    rates = sorted(float(r["rps"]) for r in result.get("rows", []))
    return rates[len(rates) // 2] if rates else float("nan")


def seconds_of(experiment: str, result: dict) -> float:
    """What one sample cost, as a time: the countdown's seconds, the echo's time per request
    (the inverse of its median window's rate)."""
    if experiment == "countdown":
        return float(result["seconds"])
    rate = median_rate(result)
    return 1.0 / rate if rate > 0 else float("nan")


def overhead(rounds: int = 12, builds: tuple = OVERHEAD_BUILDS, campaign: str | None = None, progress=print) -> Path:
    """Interleaved rounds of each build's untraced binary, its traced twin with tracing off, and
    with it on (the whole run), at :data:`OVERHEAD_POINTS`; the three in a rotated order each
    round.  Every sample is appended to ``traces/overhead.csv`` of the campaign as it is
    measured (a rerun adds rounds after those stored)."""
    import csv

    from .store import atomic_write_text

    conds = check([(None, b) for b in builds])
    base = {c.id: c for c in interpreters.discover()}
    camp = campaigns.for_measuring(campaign)
    path = camp.dir / "traces" / OVERHEAD_FILE
    rows = list(csv.DictReader(path.open())) if path.exists() else []
    first = 1 + max((int(r["round"]) for r in rows), default=0)
    fields = ["round", "experiment", "point", "build", "variant", "seconds", "loadavg_1m", "at", "boot_id", "commit"]
    jobs = [(e, pt, b) for e, pt, on in OVERHEAD_POINTS for b in builds if b in on]
    commit = metadata.git_commit().get("commit", "")
    # the countdown's runs alone, one process a point: a paired run's one-thread segments are no part of `seconds`
    resolved = {e: experiments.get(e).resolve("default", {"paired": False} if e == "countdown" else None)
                for e, _, _ in jobs}
    for r in range(first, first + rounds):
        for k, (e, pt, b) in enumerate(jobs):
            exp, p = experiments.get(e), resolved[e]
            turn = (r + k) % len(VARIANTS)
            for variant in VARIANTS[turn:] + VARIANTS[:turn]:
                progress(f"[overhead round {r}] {e} {point_key(pt)} {b}: {variant}")
                with tempfile.TemporaryDirectory(prefix="gillab-overhead-") as tmp:
                    cond = base[b] if variant == "untraced" else conds[b]
                    if variant == "traced, on":
                        cond = with_env(cond, (trace_file.TRACE_ENV, os.path.join(tmp, "gil-%p.trace")))
                    sample = exp.run_sample(p, pt, cond)
                rows.append({"round": r, "experiment": e, "point": point_key(pt), "build": b, "variant": variant,
                             "seconds": repr(seconds_of(e, sample.result)), "loadavg_1m": metadata.loadavg()[0],
                             "at": metadata.now(), "boot_id": metadata.boot_id(), "commit": commit})
                buf = io.StringIO()
                w = csv.DictWriter(buf, fieldnames=fields)
                w.writeheader()
                w.writerows(rows)
                atomic_write_text(path, buf.getvalue())
    return path


def main_overhead(args) -> int:
    path = overhead(args.rounds, tuple(args.builds or OVERHEAD_BUILDS), args.campaign,
                    progress=lambda m: print(m, file=sys.stderr, flush=True))
    print(f"{path}: every sample so far")
    return 0
