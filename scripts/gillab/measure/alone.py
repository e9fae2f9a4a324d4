"""Whether a sample was measured alone: the CPU time other processes used while it ran.

A reader's machine is rarely as quiet as a lab's: a package manager, an editor's indexer, a test
suite or another guest may run beside a sample, and a CPU-bound sample on two CPUs measures them
too.  The load average says little (it is a minute's mean, and counts our own threads); what
decides is the CPU time spent during the sample by processes that are not the sample's.

:class:`Window` reads it with no cooperation from the workload: the machine's busy CPU time over
the sample (Linux ``/proc/stat``: user, nice, system, irq and softirq), less the CPU time of the
harness's *family* (:func:`own_cpu_s`): the harness, every child it has waited for (``getrusage``
of itself and of its children: each sample's workload, its servers and its load generators) and
every process still descended from it (``/proc/<pid>/stat``: a server's CPU-bound processes, a
pool's workers).  While a window is open the harness adopts the orphans of its processes (a fork
server whose parent exited first, a watcher whose command ended): their CPU time stays in the
family, and goes to the harness's children's usage when it reaps them.  Less, too, the *kernel's*
CPU time (its threads, ``kthreadd``'s children, and its interrupts): a sample that writes a file
with ``fsync`` makes the kernel's journal and block threads work for it, and those are no
neighbour's load (recorded as ``kernel_cpu_s``, never judged).
What is left is *foreign* CPU time: user-space processes that are not the sample's.  The same
readings give the sample's *steal* (the share of the machine's CPU time the hypervisor gave to
other guests).

The rule (:func:`is_alone`), fixed before any sample was read against it: a sample is **not
alone** when foreign processes used more than :data:`MOST_FOREIGN_CPUS` of a CPU on average over
its window *and* more than :data:`GRAIN_TICKS` clock ticks in all (the counters' grain: on a
sample of a fifth of a second, a tick or two either way is the counters' rounding, not load).  A
tenth of a CPU is a twentieth of a 2-core machine: on a CPU-bound sample that uses both CPUs, a
neighbour that takes it can shift the sample by about five per cent, half the band of the
narrowest words the documents use ("the same": within ten per cent, :mod:`gillab.judge.lexicon`;
a printed number's own digits may give a narrower one).

A sample that is not alone is stored with the status ``not alone`` (kept raw, never read by a
verdict or a figure) and measured again at the end of its chapter's run (at most
:data:`MEASURE_AGAIN` more times, and never after the run's deadline); a later run resumes what is
still missing.
"""
from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass
from typing import NamedTuple

from . import metadata

MOST_FOREIGN_CPUS = 0.10   # foreign CPU time over the sample's wall time, at most
LIMIT_ENV = "GILLAB_FOREIGN_CPUS"   # another limit (``inf``: every sample alone), named in every run file
GRAIN_TICKS = 5            # and foreign CPU time past this many clock ticks, to count
MEASURE_AGAIN = 2          # a sample not alone is measured again at most this many times
NOT_ALONE = "not alone"    # its status in the store
BUSY = ("user", "nice", "system", "irq", "softirq")
KERNEL = ("irq", "softirq")   # the busy time no process is charged with: the kernel's


def _hz() -> int:
    try:
        return os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError):
        return 100


PR_SET_CHILD_SUBREAPER = 36
KTHREADD = 2               # the kernel's threads are its children (Linux)


class Task(NamedTuple):
    """One process as ``/proc/<pid>/stat`` shows it (a zombie too, until it is reaped)."""
    pid: int
    name: str
    state: str
    ppid: int
    session: int
    ticks: int      # CPU time of the process and of the children it has reaped, in clock ticks
    start: int      # its start time, in clock ticks since boot: with the pid, who it is


def task(pid: int | str) -> Task | None:
    """The process ``pid`` now, or None where it is gone (or there is no ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            text = fh.read()
        head, tail = text.rsplit(")", 1)
        f = tail.split()
        # after the name: state(0) ppid(1) pgrp(2) session(3) ... utime(11) stime(12) cutime(13)
        # cstime(14) ... starttime(19)
        return Task(int(pid), head.split("(", 1)[1], f[0], int(f[1]), int(f[3]),
                    sum(int(x) for x in f[11:15]), int(f[19]))
    except (OSError, IndexError, ValueError):
        return None


def tasks() -> dict[int, Task]:
    """Every process on the machine now (a few milliseconds for a hundred)."""
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return {}
    return {t.pid: t for t in map(task, pids) if t is not None}


def family(procs: dict[int, Task], root: int) -> list[Task]:
    """The processes descended from ``root`` (its children, theirs, ...), ``root`` left out."""
    kids: dict[int, list[Task]] = {}
    for t in procs.values():
        kids.setdefault(t.ppid, []).append(t)
    out, todo = [], [root]
    while todo:
        for t in kids.get(todo.pop(), ()):
            if t.pid != root:
                out.append(t)
                todo.append(t.pid)
    return out


def kernel_ticks(procs: dict[int, Task]) -> dict[tuple[int, int], int]:
    """The kernel's threads (``kthreadd`` and its children) and the CPU time each has used."""
    return {(t.pid, t.start): t.ticks for t in procs.values() if KTHREADD in (t.pid, t.ppid)}


_depth = 0


def _subreaper(on: bool) -> None:
    """While a window is open, a process of the sample's that loses its parent (a fork server
    whose parent exited, a watcher whose command ended, a server's process whose server was
    killed) is adopted by the harness instead of the machine's first process: its CPU time stays in
    the harness's family, and reaped by the harness (:func:`_reap_adopted`) it goes to the
    harness's children's usage.  ``prctl`` is the one :mod:`gillab.measure.procs` loads once."""
    from .procs import _load_prctl

    prctl = _load_prctl()
    if prctl:
        prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)


def _reap_adopted(procs: dict[int, Task]) -> set[int]:
    """Reap the harness's adopted children that have ended: a zombie whose parent is the harness
    and that is neither a command the harness started (each in a session of its own, or in the
    harness's) nor waited for by anyone else.  The pids reaped."""
    me, mine = os.getpid(), os.getsid(0)
    done = set()
    for t in procs.values():
        if t.ppid == me and t.state == "Z" and t.session not in (t.pid, mine):
            try:
                if os.waitpid(t.pid, os.WNOHANG)[0] == t.pid:
                    done.add(t.pid)
            except ChildProcessError:
                pass
    return done


def own_cpu_s(procs: dict[int, Task] | None = None) -> float:
    """CPU seconds used so far by this process, every child it has waited for (the workload, its
    servers, k6, every process the harness adopted and reaped) and every process still descended
    from it (live, or ended and not yet reaped)."""
    return _own(family(tasks() if procs is None else procs, os.getpid()))


def _own(kin: list[Task]) -> float:
    """:func:`own_cpu_s`, the harness's family (:func:`family`) already found."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime + sum(t.ticks for t in kin) / _hz()


@dataclass
class Reading:
    """What one window over a sample read (see the module's words)."""
    wall_s: float
    foreign_cpu_s: float | None     # None where the machine has no /proc/stat
    steal_share: float | None
    kernel_cpu_s: float | None = None   # the kernel's threads and interrupts: never foreign
    procs_cpu_s: float | None = None    # the two readings foreign_cpu_s is the larger of (:func:`split`)
    machine_cpu_s: float | None = None

    @property
    def foreign_cpus(self) -> float | None:
        """Foreign CPU time over the window's wall time: the mean number of CPUs others used."""
        if self.foreign_cpu_s is None or self.wall_s <= 0:
            return None
        return self.foreign_cpu_s / self.wall_s

    @property
    def alone(self) -> bool:
        return is_alone(self.foreign_cpu_s, self.wall_s)

    def row(self) -> dict:
        """A sample row's status (``ok``, or :data:`NOT_ALONE` with what others used) and columns."""
        why = "" if self.alone else (f"other processes used {self.foreign_cpus:.2f} CPU(s) while it ran "
                                     f"(at most {limit():g})")
        return {"status": "ok" if self.alone else NOT_ALONE, "error": why, **self.columns()}

    def columns(self) -> dict:
        """The sample row's columns for this reading."""
        fc = self.foreign_cpus
        return {"foreign_cpu_s": None if self.foreign_cpu_s is None else round(self.foreign_cpu_s, 3),
                "foreign_cpus": None if fc is None else round(fc, 3),
                **{f"{k}_cpu_s": None if v is None else round(v, 3) for k, v in
                   (("foreign_procs", self.procs_cpu_s), ("foreign_machine", self.machine_cpu_s),
                    ("kernel", self.kernel_cpu_s))},
                "steal_share_sample": self.steal_share, "alone": self.alone}


def foreign(procs: float | None, machine: float | None) -> float | None:
    """The foreign CPU seconds a sample is judged by: the larger of the two readings (the exact one
    cannot see another container's processes; the machine's cannot tell a tick's rounding)."""
    known = [v for v in (procs, machine) if v is not None]
    return max(known) if known else None


def limit() -> float:
    """The foreign CPUs a sample may have beside it: :data:`MOST_FOREIGN_CPUS`, unless
    ``$GILLAB_FOREIGN_CPUS`` sets another (the test suite, whose workers run side by side, sets
    ``inf``); a run file records the limit it measured with, and a whole run measured with another
    than the rule's is not called alone (:func:`gillab.judge.steadiness.alone_of`)."""
    raw = os.environ.get(LIMIT_ENV, "").strip()
    if not raw:
        return MOST_FOREIGN_CPUS
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"${LIMIT_ENV}={raw!r} is not a number of CPUs (e.g. 0.1, or inf)") from None
    if not value >= 0:
        raise ValueError(f"${LIMIT_ENV}={raw!r}: a number of CPUs is at least 0")
    return value


def is_alone(foreign_cpu_s: float | None, wall_s: float) -> bool:
    """The rule: alone unless foreign CPU time passed both the share (:func:`limit`) and the
    grain.  A machine with no counters is taken as alone (nothing says otherwise; its rows say the
    counters were missing by their empty columns)."""
    if foreign_cpu_s is None or wall_s <= 0:
        return True
    return not (foreign_cpu_s > limit() * wall_s and foreign_cpu_s > GRAIN_TICKS / _hz())


@dataclass
class _Mark:
    """The counters at one end of a window."""
    cpu: dict                          # the machine's (/proc/stat)
    own: float                         # the harness's family's CPU seconds (:func:`own_cpu_s`)
    kernel: dict                       # the kernel's threads' ticks, by (pid, start)
    others: dict                       # every other process's ticks, by (pid, start)
    seen: set                          # every process there, by (pid, start)
    t: float


def _mark() -> _Mark:
    procs = tasks()
    gone = _reap_adopted(procs)
    procs = {pid: t for pid, t in procs.items() if pid not in gone}
    me = os.getpid()
    kin = family(procs, me)
    ours = {t.pid for t in kin} | {me}
    kernel = kernel_ticks(procs)
    others = {(t.pid, t.start): t.ticks for t in procs.values() if t.pid not in ours and (t.pid, t.start) not in kernel}
    return _Mark(metadata.cpu_times(), _own(kin), kernel, others,
                 {(t.pid, t.start) for t in procs.values()}, time.monotonic())


def split(start: _Mark, end: _Mark) -> dict[str, float | None]:
    """The CPU seconds between two marks, read two ways (see the module's words):

    * ``procs``: what the processes that are neither the harness's family nor the kernel's used,
      each read from its own counters (exact; a process that ended in between is counted in the
      one that reaped it, less what it had used before the window);
    * ``machine``: the machine's busy time (``/proc/stat``, sampled at each clock tick) less the
      family's and the kernel's (its threads and its interrupts): it also sees processes this
      harness cannot (another container's), within a few ticks;
    * ``kernel``: the kernel's threads and interrupts (a sample's ``fsync`` is theirs to do).

    ``machine`` and ``kernel`` are None where there is no ``/proc/stat``, ``procs`` where there is
    no ``/proc``."""
    threads = sum(ticks - start.kernel.get(key, 0) for key, ticks in end.kernel.items())
    procs = None
    if start.seen and end.seen:
        procs = (sum(ticks - start.others.get(key, 0) for key, ticks in end.others.items())
                 - sum(ticks for key, ticks in start.others.items() if key not in end.seen)) / _hz()
    if not start.cpu or not end.cpu:
        return {"procs": procs, "machine": None, "kernel": None}
    busy = sum(end.cpu.get(k, 0) - start.cpu.get(k, 0) for k in BUSY)
    interrupts = sum(end.cpu.get(k, 0) - start.cpu.get(k, 0) for k in KERNEL)
    kernel = (threads + interrupts) / _hz()
    return {"procs": procs, "machine": busy / _hz() - (end.own - start.own) - kernel, "kernel": kernel}


class Window:
    """Readings at the start and the end of one sample: ``with Window() as w: ...; w.reading``;
    or of several measurements one after another, each read with :meth:`lap`.  While one is open
    the harness adopts the orphans of its processes (:func:`_subreaper`)."""

    def __enter__(self) -> "Window":
        global _depth
        self.reading: Reading | None = None
        if _depth == 0:
            _subreaper(True)
        _depth += 1
        self._start = _mark()
        return self

    def lap(self) -> Reading:
        """The reading since the window opened or since the last lap; the next lap starts now."""
        end = _mark()
        cpu = split(self._start, end)
        reading = Reading(end.t - self._start.t, foreign(cpu["procs"], cpu["machine"]),
                          metadata.steal_share(self._start.cpu, end.cpu), cpu["kernel"],
                          cpu["procs"], cpu["machine"])
        self._start = end
        return reading

    def __exit__(self, *exc) -> None:
        global _depth
        self.reading = self.lap()
        _depth -= 1
        if _depth == 0:
            _subreaper(False)


def words() -> str:
    """The rule in one sentence, for the pages that show it."""
    return (f"a sample is measured alone unless processes other than its own used more than "
            f"{MOST_FOREIGN_CPUS:g} of a CPU on average while it ran (and more than {GRAIN_TICKS} clock ticks "
            f"in all); one that was not is kept aside, never read by a verdict, and measured again at the "
            f"end of its chapter's run, at most {MEASURE_AGAIN} more times")
