"""Whether a sample was measured alone: the CPU time other processes used while it ran.

A reader's machine is rarely as quiet as a lab's: a package manager, an editor's indexer, a test
suite or another guest may run beside a sample, and a CPU-bound sample on two CPUs measures them
too.  The load average says little (it is a minute's mean, and counts our own threads); what
decides is the CPU time spent during the sample by processes that are not the sample's.

:class:`Window` reads it with no cooperation from the workload: the machine's busy CPU time over
the sample (Linux ``/proc/stat``: user, nice, system, irq and softirq), less the CPU time of the
harness and every child it has waited for (``getrusage`` of itself and of its children, which
covers each sample's workload, its servers and its load generators, all waited for before the
sample ends) and of the other processes in its commands' groups, read just before each group is
signalled (a server's CPU-bound processes, a pool's workers: :func:`account_group`).
What is left is *foreign* CPU time.  The same readings give the sample's *steal*
(the share of the machine's CPU time the hypervisor gave to other guests).

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

from . import metadata

MOST_FOREIGN_CPUS = 0.10   # foreign CPU time over the sample's wall time, at most
LIMIT_ENV = "GILLAB_FOREIGN_CPUS"   # another limit (``inf``: every sample alone), named in every run file
GRAIN_TICKS = 5            # and foreign CPU time past this many clock ticks, to count
MEASURE_AGAIN = 2          # a sample not alone is measured again at most this many times
NOT_ALONE = "not alone"    # its status in the store
BUSY = ("user", "nice", "system", "irq", "softirq")


def _hz() -> int:
    try:
        return os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError):
        return 100


# CPU seconds used by the processes of a server's group other than the server itself, read just
# before the group is signalled (:func:`account_group`): killed, they are reaped by no one of the
# harness's, so getrusage never sees them (its CPU-bound processes, a pool's workers)
group_cpu_s = 0.0
_counted: dict[tuple[int, int], int] = {}     # (pid, start time) -> the ticks already added


def account_group(proc) -> None:
    """Add to :data:`group_cpu_s` the CPU time (their own and their waited-for children's) the live
    processes of ``proc``'s group other than ``proc`` used since they were last read: called before
    the group is signalled (:func:`gillab.measure.servers._stop`), as often as it is."""
    global group_cpu_s
    pgid = proc.pid
    try:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return
    for pid in pids:
        if pid == pgid:
            continue
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # after the name: state ppid pgrp ... utime(11) stime(12) cutime(13) cstime(14) ... starttime(19)
        if len(fields) > 19 and int(fields[2]) == pgid:
            key, ticks = (pid, int(fields[19])), sum(int(x) for x in fields[11:15])
            group_cpu_s += (ticks - _counted.get(key, 0)) / _hz()
            _counted[key] = ticks


def own_cpu_s() -> float:
    """CPU seconds used so far by this process, every child it has waited for, and the other
    processes of its servers' groups, read before each group was signalled (:data:`group_cpu_s`)."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime + group_cpu_s


@dataclass
class Reading:
    """What one window over a sample read (see the module's words)."""
    wall_s: float
    foreign_cpu_s: float | None     # None where the machine has no /proc/stat
    steal_share: float | None

    @property
    def foreign_cpus(self) -> float | None:
        """Foreign CPU time over the window's wall time: the mean number of CPUs others used."""
        if self.foreign_cpu_s is None or self.wall_s <= 0:
            return None
        return self.foreign_cpu_s / self.wall_s

    @property
    def alone(self) -> bool:
        return is_alone(self.foreign_cpu_s, self.wall_s)

    def columns(self) -> dict:
        """The sample row's columns for this reading."""
        fc = self.foreign_cpus
        return {"foreign_cpu_s": None if self.foreign_cpu_s is None else round(self.foreign_cpu_s, 3),
                "foreign_cpus": None if fc is None else round(fc, 3),
                "steal_share_sample": self.steal_share, "alone": self.alone}


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


class Window:
    """Readings at the start and the end of one sample: ``with Window() as w: ...; w.reading``."""

    def __enter__(self) -> "Window":
        self.reading: Reading | None = None
        self._cpu, self._own, self._t = metadata.cpu_times(), own_cpu_s(), time.monotonic()
        return self

    def __exit__(self, *exc) -> None:
        cpu, own, t = metadata.cpu_times(), own_cpu_s(), time.monotonic()
        foreign = None
        if self._cpu and cpu:
            busy = sum(cpu.get(k, 0) - self._cpu.get(k, 0) for k in BUSY) / _hz()
            foreign = busy - (own - self._own)
        self.reading = Reading(t - self._t, foreign, metadata.steal_share(self._cpu, cpu))


def words() -> str:
    """The rule in one sentence, for the pages that show it."""
    return (f"a sample is measured alone unless processes other than its own used more than "
            f"{MOST_FOREIGN_CPUS:g} of a CPU on average while it ran (and more than {GRAIN_TICKS} clock ticks "
            f"in all); one that was not is kept aside, never read by a verdict, and measured again at the "
            f"end of its chapter's run, at most {MEASURE_AGAIN} more times")
