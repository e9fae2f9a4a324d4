"""GIL traces: what the GIL did between threads, read from a traced build (``<build>+trace``).

A traced build (builds.toml ``[[trace]]``, the patches of ``patches/gil-trace/``) records, per
event, a monotonic time in ns, the kernel's thread id and what happened: a thread *wants* the
GIL, *takes* it, *drops* it of its own accord (a blocking call), *asks the holder to drop* (the
new GIL's timed-out wait), drops it *because it was asked* (new GIL), or drops it at its *check
interval* (the old GIL's 100 ticks).  The harness runs one sample of a chapter's point under the
traced twin of a build with the trace's environment set (:func:`record`), keeps the file in the
campaign beside the samples (``<experiment>/traces/``, compressed, with the run's metadata) and
reads it back here (:func:`read`), checked: a damaged or missing trace is reported, never read as
if it were whole.

A trace explains a measurement; it never replaces one.  Its sample's numbers are kept with it as
context and are never counted in a verdict (the traced build's own hooks cost time:
``benchmarks/trace_overhead.py`` measures how much).

What a trace says, computed (:func:`spans`, :func:`summary`): per thread, how long each hold
and each wait lasted, hand-offs per second, forced drops and drop requests per second, and for
a thread that blocks (the echo server's handler) how long each of its waits lasted in switch
intervals.  :func:`chrome` writes the Chrome trace-event JSON a standard trace viewer opens.
"""
from __future__ import annotations

import functools
import json
import lzma
import os
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

TRACE_ENV = "GILLAB_GIL_TRACE"
WINDOW_ENV = "GILLAB_GIL_TRACE_WINDOW"
EVENTS_ENV = "GILLAB_GIL_TRACE_EVENTS"
SUFFIX = ".gtrace.xz"
MAGIC = b"GILTRACE"
HEADER = struct.Struct("<8sIIQQQQQII")            # 64 bytes: see patches/gil-trace/gillab_gil_trace.h
EVENT = np.dtype([("t_ns", "<u8"), ("tid", "<u4"), ("event", "u1"), ("flags", "u1"), ("pad", "u1", (2,))])
VERSIONS = (1, 2)             # 1: the first recorder (hooks inside the GIL's mutex); 2: kept out of it
CLIPPED = 1                   # flags: a wait or hold under way when the window opened, cut at its edge

WANT, TAKE, DROP, REQUEST, DROP_FORCED, DROP_TICKS = 1, 2, 3, 4, 5, 6
EVENT_NAMES = {WANT: "wants", TAKE: "takes", DROP: "drops", REQUEST: "asks the holder to drop",
               DROP_FORCED: "drops when asked", DROP_TICKS: "drops at its check interval"}
DROPS = (DROP, DROP_FORCED, DROP_TICKS)
IMPLEMENTATIONS = {1: "the old GIL (2.7's check interval)", 2: "the new GIL (3.9's switch interval)",
                   3: "nogil-3.9 with its GIL on", 4: "the new GIL (3.13's switch interval)"}
REASONS = {1: "at exit", 2: "on SIGTERM", 3: "when its window closed"}


class TraceError(ValueError):
    """A trace file that is missing, cut short or not a GIL trace: reported, never read as whole."""


@dataclass(frozen=True)
class Trace:
    """One process's GIL events, oldest first, with the header the traced build wrote."""

    implementation: int
    t0_ns: int
    lost: int
    pid: int
    interval: int                 # switch interval in µs (new GIL) or check interval in ticks (old)
    reason: int
    events: np.ndarray            # EVENT records
    meta: dict = field(default_factory=dict)
    ppid: int = 0
    unfinished: int = 0           # slots another thread was still writing when the file was written
    version: int = 2              # the recorder's version (VERSIONS)

    @property
    def old_gil(self) -> bool:
        return self.implementation == 1

    @functools.cached_property
    def threads(self) -> list[int]:
        """Thread ids, the main thread (its id is the process id) first, then by first event."""
        tids, first = np.unique(self.events["tid"], return_index=True)
        by_first = [int(t) for t in tids[np.argsort(first)]]
        return sorted(by_first, key=lambda t: t != self.pid)       # stable: the rest keep their order

    @functools.cached_property
    def _labels(self) -> dict[int, str]:
        roles = {int(t): str(r) for t, r in (self.meta.get("roles") or {}).items()}
        others = [t for t in self.threads if t != self.pid]
        default = {self.pid: "main", **{t: f"thread {k}" for k, t in enumerate(others, 1)}}
        return {t: roles.get(t, name) for t, name in default.items()}

    @functools.cached_property
    def _spans(self) -> pd.DataFrame:
        return _spans_of(self)

    @property
    def span_ns(self) -> int:
        return int(self.events["t_ns"][-1] - self.events["t_ns"][0]) if len(self.events) else 0

    def label(self, tid: int) -> str:
        """The thread's role where the recorder named it (``handler``, ``CPU thread 1``: the
        metadata's ``roles``), else ``main`` for the main thread and ``thread k`` by first event."""
        return self._labels[tid]


def parse(data: bytes, meta: dict | None = None, where: str = "trace") -> Trace:
    """A trace from the bytes a traced build wrote, checked whole."""
    if len(data) < HEADER.size:
        raise TraceError(f"{where}: {len(data)} bytes, shorter than a trace's header")
    magic, version, impl, t0, n, lost, pid, interval, reason, ppid = HEADER.unpack_from(data)
    if magic != MAGIC or version not in VERSIONS:
        raise TraceError(f"{where}: not a GIL trace of version 1 or 2 (magic {magic!r}, version {version})")
    body = len(data) - HEADER.size
    if body != n * EVENT.itemsize:
        raise TraceError(f"{where}: the header says {n} events, the file holds {body / EVENT.itemsize:g}: cut short")
    events = np.frombuffer(data, dtype=EVENT, offset=HEADER.size, count=n)
    unfinished = int((events["event"] == 0).sum())     # a slot still being written when the file was
    events = events[events["event"] != 0]
    # a thread may be preempted between reading the clock and taking its slot, so slots are not in
    # time order (they are sorted below); but no event can precede the recorder's start (t0, read
    # before any event's clock) or come a day after it
    t = events["t_ns"]
    if len(events) and ((t < t0).any() or (t > t0 + 86_400 * 10**9).any()):
        raise TraceError(f"{where}: an event's time lies outside the trace's run: damaged")
    bad = sorted(set(np.unique(events["event"]).tolist()) - set(EVENT_NAMES))
    if bad:
        raise TraceError(f"{where}: unknown event codes {bad}: damaged")
    order = np.argsort(events["t_ns"], kind="stable")   # threads write their slots a few ns apart
    return Trace(impl, t0, lost, pid, interval, reason, events[order], dict(meta or {}), ppid, unfinished, version)


def read(path: Path) -> Trace:
    """A stored trace (``<name>.gtrace.xz`` and its ``<name>.json``), checked."""
    path = Path(path)
    meta_path = path.with_name(path.name.removesuffix(SUFFIX) + ".json")
    try:
        data = lzma.decompress(path.read_bytes())
    except (OSError, lzma.LZMAError, EOFError) as exc:
        raise TraceError(f"{path.name}: cannot be read: {exc}") from None
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError) as exc:
        raise TraceError(f"{meta_path.name}: the trace's metadata cannot be read: {exc}") from None
    return parse(data, meta, path.name)


def store(raw: Path, folder: Path, name: str, meta: dict) -> Path:
    """Keep a traced build's file in ``folder`` as ``name`` (compressed) with its metadata,
    checked first and written atomically: a file that does not read is refused."""
    data = Path(raw).read_bytes()
    trace = parse(data, meta, name)
    meta = {**meta, "events": int(len(trace.events)), "lost": trace.lost, "unfinished": trace.unfinished,
            "pid": trace.pid,
            "implementation": IMPLEMENTATIONS.get(trace.implementation, "?"), "interval": trace.interval,
            "written": REASONS.get(trace.reason, "?"), "span_ms": round(trace.span_ns / 1e6, 3)}
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}{SUFFIX}"
    for path, blob in ((folder / f"{name}.json", (json.dumps(meta, indent=1, sort_keys=True) + "\n").encode()),
                       (target, lzma.compress(data, preset=9))):
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.")
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)
    return target


def stored(folder: Path, beside: tuple[str, ...] = ()) -> tuple[list[Trace], list[str]]:
    """Every trace in ``folder``, and what could not be read (one line each, like a damaged
    sample: reported, left out).  ``beside``: the endings of other files kept in the folder
    (a witness's), which are not a trace's metadata."""
    good, damaged = [], []
    for path in sorted(Path(folder).glob(f"*{SUFFIX}")):
        try:
            good.append(read(path))
        except TraceError as exc:
            damaged.append(str(exc))
    for meta in sorted(Path(folder).glob("*.json")):
        if meta.name.endswith(beside) if beside else False:
            continue
        if not meta.with_name(meta.name.removesuffix(".json") + SUFFIX).exists():
            damaged.append(f"{meta.name}: its trace file is missing")
    return good, damaged


# -- what a trace says --------------------------------------------------------------------------
def spans(trace: Trace) -> pd.DataFrame:
    """Each thread's holds (from taking the GIL to dropping it) and waits (from wanting it to
    taking it): columns thread (tid), kind, start_ns, end_ns, dur_ns, clipped (under way when
    the window opened: its start is the window's, version 2 only), and for a hold how it
    ended (``drops``, ``drops when asked``, ``drops at its check interval``).  Computed once per
    trace (every table and figure of a chapter reads them); callers select, never change them."""
    return trace._spans


def _spans_of(trace: Trace) -> pd.DataFrame:
    rows = []
    for tid in trace.threads:
        ev = trace.events[trace.events["tid"] == tid]
        want = take = None
        want_clipped = take_clipped = False
        for t, e, f in zip(ev["t_ns"].tolist(), ev["event"].tolist(), ev["flags"].tolist()):
            if e == WANT:
                want, want_clipped = t, bool(f & CLIPPED)
            elif e == TAKE:
                if want is not None:
                    rows.append((tid, "wait", want, t, "", want_clipped))
                want, take, take_clipped = None, t, bool(f & CLIPPED)
            elif e in DROPS and take is not None:
                rows.append((tid, "hold", take, t, EVENT_NAMES[e], take_clipped))
                take = None
    out = pd.DataFrame(rows, columns=["tid", "kind", "start_ns", "end_ns", "ended_by", "clipped"])
    out["dur_ns"] = out["end_ns"] - out["start_ns"]
    return out


def handoffs(trace: Trace) -> int:
    """How many times the GIL went from one thread to another."""
    takes = trace.events[trace.events["event"] == TAKE]["tid"]
    return int((takes[1:] != takes[:-1]).sum()) if len(takes) > 1 else 0


def releases(trace: Trace, tid: int) -> pd.DataFrame:
    """Each time ``tid`` let the GIL go of its own accord (a blocking call) and took it back within
    the window: when (``t_ns``), how long its call took until it wanted the GIL again
    (``call_us``), whether another thread took the GIL in between (``lost``), that thread's wake-up
    from ``tid``'s drop to its take (``wake_us``, lost releases only) and ``tid``'s wait for the
    GIL from wanting it to taking it (``wait_us``)."""
    ev = trace.events
    rows = []
    dropped = wanted = other_took = None
    for t, who, what in zip(ev["t_ns"].tolist(), ev["tid"].tolist(), ev["event"].tolist()):
        if who == tid:
            if what == DROP:
                dropped, wanted, other_took = t, None, None
            elif what == WANT and dropped is not None:
                wanted = t
            elif what == TAKE and dropped is not None:
                if wanted is not None:
                    lost = other_took is not None
                    rows.append((dropped, (wanted - dropped) / 1e3, lost,
                                 (other_took - dropped) / 1e3 if lost else np.nan, (t - wanted) / 1e3))
                dropped = None
        elif what == TAKE and dropped is not None and other_took is None:
            other_took = t
    return pd.DataFrame(rows, columns=["t_ns", "call_us", "lost", "wake_us", "wait_us"]).astype(
        {"lost": bool, "call_us": float, "wake_us": float, "wait_us": float})


def summary(trace: Trace) -> dict:
    """Per thread: holds and waits (count, median and 90th percentile in ms, share of the time
    held); for the process: hand-offs, drop requests and forced drops per second."""
    s = spans(trace)
    seconds = trace.span_ns / 1e9 or float("nan")
    per = {}
    for tid in trace.threads:
        mine = s[s["tid"] == tid]
        holds, waits = mine[mine["kind"] == "hold"]["dur_ns"] / 1e6, mine[mine["kind"] == "wait"]["dur_ns"] / 1e6
        per[trace.label(tid)] = {
            "holds": len(holds), "hold_median_ms": _q(holds, 0.5), "hold_p90_ms": _q(holds, 0.9),
            "waits": len(waits), "wait_median_ms": _q(waits, 0.5), "wait_p90_ms": _q(waits, 0.9),
            "held_share": float(holds.sum() / 1e3 / seconds) if len(holds) else 0.0}
    count = {e: int((trace.events["event"] == e).sum()) for e in EVENT_NAMES}
    return {"seconds": seconds, "events": int(len(trace.events)), "lost": trace.lost,
            "handoffs_per_s": handoffs(trace) / seconds, "requests_per_s": count[REQUEST] / seconds,
            "forced_drops_per_s": count[DROP_FORCED] / seconds, "tick_drops_per_s": count[DROP_TICKS] / seconds,
            "threads": per}


def _q(x: pd.Series, q: float) -> float:
    return float(x.quantile(q)) if len(x) else float("nan")


def waits_in_intervals(trace: Trace, tid: int) -> np.ndarray:
    """Each wait of thread ``tid`` in switch intervals (new GIL only: the old GIL has no interval
    in time)."""
    if trace.old_gil or not trace.interval:
        raise TraceError("the old GIL has no switch interval to count waits in")
    s = spans(trace)
    return (s[(s["tid"] == tid) & (s["kind"] == "wait")]["dur_ns"].to_numpy() / 1e3) / trace.interval


def chrome(trace: Trace) -> dict:
    """The trace as Chrome trace-event JSON (``chrome://tracing``, Perfetto): holds and waits as
    complete events, drop requests as instants, one row per thread named by its role (handler,
    CPU thread, main), the echo client as a process of its own with where it ran, times in µs."""
    t0 = int(trace.events["t_ns"][0]) if len(trace.events) else 0
    out = [{"ph": "M", "name": "process_name", "pid": trace.pid,
            "args": {"name": f"{trace.meta.get('condition', '?')} {trace.meta.get('experiment', '')} "
                             f"{trace.meta.get('point', '')}".strip()}}]
    for tid in trace.threads:
        out.append({"ph": "M", "name": "thread_name", "pid": trace.pid, "tid": tid, "args": {"name": trace.label(tid)}})
    r = trace.meta.get("sample_result") or {}
    if r.get("client_pid"):         # the echo client: another process, untraced; named, with where it ran
        where = {k: r.get(k) for k in ("client_cpu", "client_share", "client_migrations", "placement",
                                       "placement_regime") if r.get(k) is not None}
        out += [{"ph": "M", "name": "process_name", "pid": int(r["client_pid"]),
                 "args": {"name": f"client ({r.get('client_condition', '?')}, untraced, not in this trace)"}},
                {"ph": "M", "name": "thread_name", "pid": int(r["client_pid"]), "tid": int(r["client_pid"]),
                 "args": {"name": "client", **where}}]
    for r in spans(trace).itertuples():
        out.append({"ph": "X", "name": "holds the GIL" if r.kind == "hold" else "waits for the GIL",
                    "cat": r.kind, "pid": trace.pid, "tid": int(r.tid), "ts": (r.start_ns - t0) / 1e3,
                    "dur": r.dur_ns / 1e3, **({"args": {"ended": r.ended_by}} if r.ended_by else {})})
    for t, tid in zip(*(trace.events[trace.events["event"] == REQUEST][k] for k in ("t_ns", "tid"))):
        out.append({"ph": "i", "s": "t", "name": "asks the holder to drop", "pid": trace.pid, "tid": int(tid),
                    "ts": (int(t) - t0) / 1e3})
    return {"traceEvents": out, "displayTimeUnit": "ms", "otherData": {k: str(v) for k, v in trace.meta.items()}}
