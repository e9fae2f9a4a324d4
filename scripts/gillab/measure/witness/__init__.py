"""A second witness of the GIL: CPython 3.15's own sampler beside our trace patch.

Every timeline and hand-off count of the report comes from one observer, the trace patch of
``patches/gil-trace/`` built into ``<build>+trace``.  CPython 3.15 ships another: its sampling
profiler (``python -m profiling.sampling``, PEP 799) reads from outside a running process which
thread holds the GIL and which has asked for it (the states its ``--mode gil`` filters on), with
no patch at all.  It can only read a process of its own release, so it witnesses 3.15 (Debian's
build), and the trace witnesses 3.13.5: the same GIL design (a switch interval, a waiter that asks
the holder to drop), two builds.

``gillab trace witness`` records, for each point of :data:`POINTS`, :data:`ROUNDS` rounds; a round
runs, in an order rotated by the round, the 3.15 build witnessed (:mod:`.sampler`, started by the
process itself through :mod:`.hook`'s ``sitecustomize``, attached before the workload runs) and
alone, and the traced 3.13.5 (:func:`gillab.measure.trace_record.one`) and the untraced 3.13.5
alone: every observer's cost is measured in the round it observed (as a time: the countdown's, the
echo's time per request).  Everything is kept in the
campaign under ``witness/<experiment>/``: each witness file, each trace, and each round's times
(``round-<k>.json``).  :mod:`gillab.present.witness_view` reads them.
"""
from __future__ import annotations

import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from .. import campaigns, experiments, interpreters, metadata, trace_file, trace_record
from ..interpreters import Condition
from ..protocol import point_key

HERE = Path(__file__).resolve().parent
SAMPLER = HERE / "sampler.py"
HOOK = HERE / "hook"
WITNESS_ENV = "GILLAB_GIL_WITNESS"
SUFFIX = ".witness.json"
ROUND_SUFFIX = ".round.json"     # a round's times, in the order it ran them
RATE_HZ = 1000               # the profiler's own default rate (1 kHz)
ROUNDS = 7                   # a median's 95% interval over runs needs 7 (gillab.stats)
SINCE = (3, 15)              # the first release whose standard library holds the reader
TRACED = "3.13.5"            # the traced build of the same GIL design


# 40,000,000 decrements over two threads: about 1.5 s on either build, both threads contending from
# the first ms to the last; the window (100 to 500 ms) lies inside on any machine up to three times
# faster than the reference's.  The convoy at the document's setting (one CPU thread, 5 ms, pinned
# as the chapter pins it), over the window its traces use (inside the client's counted windows).
# Each is a trace's shot (gillab.measure.trace_record.Shot) of the traced build, its window the
# witness's too (ms after the process started; the trace's is after its first GIL event, a few ms
# apart), its rounds those `gillab trace witness` asks for.
POINTS = (trace_record.Shot("countdown", {"threads": 2}, (TRACED,), (100, 400),
                            "two CPU-bound threads: the share of the time each holds the GIL and waits for it",
                            rounds=ROUNDS, sizes=(("total_decrements", 40_000_000), ("paired", False))),
          trace_record.Shot("convoy", {"switch_interval": 0.005, "cpu_threads": 1, "cpu_processes": 0,
                                       "placement": "pinned"}, (TRACED,), trace_record.convoy_window(),
                            "the echo server's handler beside one CPU-bound thread: the share of the time the "
                            "handler waits for the GIL and the CPU thread holds it", rounds=ROUNDS))


class WitnessError(RuntimeError):
    """A witness that could not be recorded or read: reported, never read as if it were whole."""


def witness_build(conds: list[Condition] | None = None) -> Condition:
    """The GIL build of CPython 3.15 or later found here (Debian's, provisioned; or one on PATH)."""
    found = []
    for c in conds if conds is not None else interpreters.discover():
        ident = interpreters.identify(c)
        if not ident.available or ident.implementation != "cpython" or ident.py_gil_disabled:
            continue
        try:
            version = tuple(int(x) for x in ident.version.split(".")[:2])
        except ValueError:
            continue
        if version >= SINCE:
            found.append(c)
    if not found:
        raise interpreters.ConditionError(
            "no GIL build of CPython 3.15 or later here: the witness reads with 3.15's own sampler; provision "
            "Debian's (`gillab provision --only debian-3.15`, or `make interpreters`)")
    return found[0]


def witnessed(cond: Condition, out: Path, window: tuple[int, int]) -> Condition:
    """``cond`` with the hook first on its path and the witness asked for (the sampler, its file,
    window and rate)."""
    spec = ",".join(str(x) for x in (SAMPLER, out, window[0], window[1], RATE_HZ))
    return replace(cond, env=(*cond.env, ("PYTHONPATH", str(HOOK)), (WITNESS_ENV, spec)))


def name_of(point: trace_record.Shot, build: str, k: int) -> str:
    return f"{point_key(point.point)}__{build}__r{k}".replace("/", "_")


def _witness_once(exp, p, point: trace_record.Shot, cond: Condition, folder: Path, name: str,
                  k: int) -> tuple[Path, float]:
    with tempfile.TemporaryDirectory(prefix="gillab-witness-") as tmp:
        out = Path(tmp) / "witness.json"
        load_before, t0 = metadata.loadavg(), time.time()
        sample = exp.run_sample(p, point.point, witnessed(cond, out, point.window))
        if not out.is_file():
            raise WitnessError(f"{cond.id}: the witness wrote nothing (did the hook run?)")
        data = json.loads(out.read_text())
    if not data.get("samples"):
        raise WitnessError(f"{cond.id}: the witness took no sample in the window {point.window[0]}+{point.window[1]} ms"
                           f" ({data.get('stopped')})")
    data["meta"] = {**trace_record.sample_meta(point, cond.id, cond.executable, k, sample, load_before, t0),
                    "note": "a witnessed sample: context for the witness, never counted in a verdict"}
    path = folder / f"{name}{SUFFIX}"
    path.write_text(json.dumps(data, separators=(",", ":")))
    return path, trace_record.seconds_of(point.experiment, sample.result)


def record(campaign: str | None = None, rounds: int = ROUNDS, redo: bool = False, progress=print) -> dict:
    """Record every point's rounds into the reader's campaign (or the one named); a round already
    there is kept unless ``redo``.  Every build is checked before anything runs."""
    if rounds < 1:
        raise interpreters.ConditionError(f"rounds must be at least 1, not {rounds}")
    conds = interpreters.discover()
    witness = witness_build(conds)
    base = {c.id: c for c in conds}
    if TRACED not in base:
        raise interpreters.ConditionError(f"build {TRACED} is not provisioned here (`make interpreters`)")
    traced = trace_record.check([(None, TRACED)])[TRACED]
    camp = campaigns.for_measuring(campaign)
    done, kept, failed = [], [], []
    for k in range(rounds):
        for point in POINTS:
            point = replace(point, rounds=rounds)
            exp = experiments.get(point.experiment)
            p = exp.resolve("default", dict(point.sizes))
            folder = camp.dir / "witness" / point.experiment
            folder.mkdir(parents=True, exist_ok=True)
            times = folder / f"{point_key(point.point)}__r{k}{ROUND_SUFFIX}"
            if times.exists() and not redo:
                kept.append(times.name)
                continue
            progress(f"[witness {k + 1}/{rounds}] {point.experiment} {point_key(point.point)}: "
                     f"{witness.id} witnessed and alone, {TRACED}+trace and {TRACED} alone")
            runs = [("witnessed", witness), ("alone", witness), ("traced", base[TRACED]), ("alone", base[TRACED])]
            runs = runs[k % len(runs):] + runs[:k % len(runs)]
            seconds, files = {}, []
            try:
                for how, cond in runs:
                    if how == "witnessed":
                        path, s = _witness_once(exp, p, point, cond, folder, name_of(point, cond.id, k), k)
                        files.append(path.name)
                    elif how == "traced":
                        path = trace_record.one(point, traced, folder, name_of(point, cond.id, k), k)
                        files.append(path.name)
                        meta = json.loads(path.with_name(path.name.removesuffix(trace_file.SUFFIX) + ".json").read_text())
                        s = trace_record.seconds_of(point.experiment, meta["sample_result"])
                    else:
                        s = trace_record.seconds_of(point.experiment, exp.run_sample(p, point.point, cond).result)
                    seconds[f"{cond.id} {how}"] = s
            except (WitnessError, trace_file.TraceError, RuntimeError, OSError) as exc:
                failed.append(f"{point.experiment} round {k}: {exc}")
                progress(f"  failed: {exc}")
                continue
            times.write_text(json.dumps({"round": k, "order": [f"{c.id} {h}" for h, c in runs], "seconds": seconds,
                                         "files": files, "witness_build": witness.id, "traced_build": TRACED,
                                         "recorded_at": metadata.now(), "boot_id": metadata.boot_id()}, indent=1))
            done.append(times.name)
    return {"campaign": camp.id, "recorded": done, "kept": kept, "failed": failed}


def main(args) -> int:
    """``gillab trace witness``."""
    import sys

    out = record(args.campaign, args.rounds, args.redo, progress=lambda m: print(m, file=sys.stderr, flush=True))
    print(f"campaign {out['campaign']}: {len(out['recorded'])} rounds recorded, {len(out['kept'])} kept, "
          f"{len(out['failed'])} failed")
    for f in out["failed"]:
        print(f"  failed: {f}")
    return 1 if out["failed"] else 0


def stored(folder: Path) -> tuple[list[dict], list[str]]:
    """The witness files of a folder (each with its ``meta``), and those that could not be read."""
    good, bad = [], []
    for path in sorted(Path(folder).glob(f"*{SUFFIX}")):
        try:
            data = json.loads(path.read_text())
            if not isinstance(data.get("samples"), list) or "meta" not in data:
                raise ValueError("no samples or no metadata")
        except (ValueError, OSError) as exc:
            bad.append(f"{path.name}: {exc}")
            continue
        data["file"] = path.name
        good.append(data)
    return good, bad


def rounds_of(folder: Path) -> list[dict]:
    """Each round's times (``<point>__r<k>.round.json``), oldest round first."""
    out = []
    for path in sorted(Path(folder).glob(f"*{ROUND_SUFFIX}")):
        try:
            out.append(json.loads(path.read_text()))
        except ValueError:
            continue
    return sorted(out, key=lambda r: r.get("round", 0))

