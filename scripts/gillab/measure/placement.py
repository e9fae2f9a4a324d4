"""Where the threads of an echo sample ran: read from ``/proc`` by the harness, outside the
measured processes, while the client counts.

On a 2-CPU machine an echo sample keeps three threads busy (the client, the server's handler and
a CPU-bound thread), so two of them share a CPU, and which two decides what a request costs: the
convoy chapter's runs fall into regimes by it.  :class:`Sampler` reads, every ``period`` seconds,
the CPU each of the server's threads and the client last ran on (``/proc/<pid>/task/<tid>/stat``,
field 39), and :func:`summary` turns the reads into a sample's placement: each role's CPU and how
often it was there, its migrations, and how often the handler shared a CPU with a CPU thread or
with the client.  Nothing is read inside the measured processes (a read there costs the handler
a GIL hand-over: see the echo server's docstring), and the sampler only reads files.

:func:`pin` is the other half: the document's setting measured on purpose.  Its machine had four
logical CPUs, so the CPU-bound thread had a core to itself while the handler and the client ran
elsewhere; here the CPU threads get one CPU, and the server's other threads (the handler, which
its main thread starts after the pin) and the client the other.  The handler and the client
alternate (each waits for the other's byte), so they share a CPU without competing for it.
"""
from __future__ import annotations

import os
import threading
from collections import Counter

PLACEMENTS = ("os", "pinned")
PERIOD_S = 0.02


def processor(pid: int, tid: int | None = None) -> int | None:
    """The CPU a thread last ran on (``None`` once it is gone)."""
    path = f"/proc/{pid}/task/{tid}/stat" if tid is not None else f"/proc/{pid}/stat"
    try:
        with open(path) as f:
            return int(f.read().rsplit(")", 1)[1].split()[36])
    except (OSError, IndexError, ValueError):
        return None


def involuntary(pid: int, tid: int | None = None) -> int | None:
    """A thread's involuntary context switches so far (``None`` once it is gone)."""
    path = f"/proc/{pid}/task/{tid}/status" if tid is not None else f"/proc/{pid}/status"
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("nonvoluntary_ctxt_switches"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


class Sampler:
    """Reads where the server's threads and the client run, every ``period`` s, on a thread of
    the harness, until :meth:`stop`.  ``reads`` maps (pid, tid) to the CPUs read in order."""

    def __init__(self, server_pid: int, period: float = PERIOD_S):
        self.server_pid, self.period = server_pid, period
        self.client_pid: int | None = None
        self.reads: dict[tuple[int, int], list[int]] = {}
        self.client_involuntary: int | None = None
        self.polls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gillab-placement", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def _find_client(self) -> None:
        """The client: the harness's child running ``echo_client.py`` (started after the sampler)."""
        me = str(os.getpid())
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == self.server_pid:
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = f.read().rsplit(")", 1)[1].split()[1]
                if ppid != me:
                    continue
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if b"echo_client.py" in f.read():
                        self.client_pid = int(entry)
                        return
            except (OSError, IndexError):
                continue

    def _read(self, pid: int, tid: int) -> None:
        cpu = processor(pid, tid)
        if cpu is not None:
            self.reads.setdefault((pid, tid), []).append(cpu)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            try:
                tids = [int(t) for t in os.listdir(f"/proc/{self.server_pid}/task")]
            except OSError:
                tids = []
            for tid in tids:
                self._read(self.server_pid, tid)
            if self.client_pid is None:
                self._find_client()
            if self.client_pid is not None:
                self._read(self.client_pid, self.client_pid)
                ivc = involuntary(self.client_pid)
                if ivc is not None:
                    self.client_involuntary = ivc
            self.polls += 1

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)


def _role(cpus: list[int]) -> dict:
    if not cpus:
        return {"cpu": None, "share": None, "migrations": None}
    cpu, count = Counter(cpus).most_common(1)[0]
    return {"cpu": cpu, "share": round(count / len(cpus), 3),
            "migrations": sum(1 for a, b in zip(cpus, cpus[1:]) if a != b)}


def _together(a: list[int], others: list[list[int]]) -> float | None:
    """The share of reads in which ``a`` ran on the same CPU as one of ``others`` (reads aligned
    from the end: every list ends at the sampler's last poll of a live thread)."""
    if not a or not others or not all(others):
        return None
    n = min(len(a), *(len(o) for o in others))
    a = a[-n:]
    rest = [o[-n:] for o in others]
    return round(sum(1 for i in range(n) if any(a[i] == o[i] for o in rest)) / n, 3)


REGIMES = {"alone": "no CPU thread", "shares": "handler beside a CPU thread",
           "apart": "handler apart from the CPU threads", "moves": "handler moving between the two"}


def regime(with_cpu_thread: float | None, cpu_threads: int) -> str:
    """A sample's placement in words: where the handler ran against the CPU threads (shared a CPU
    in at least 80% of the reads, at most 20%, or between)."""
    if cpu_threads == 0:
        return REGIMES["alone"]
    if with_cpu_thread is None:
        return "not read"
    if with_cpu_thread >= 0.8:
        return REGIMES["shares"]
    if with_cpu_thread <= 0.2:
        return REGIMES["apart"]
    return REGIMES["moves"]


def summary(s: Sampler, handler_tid: int | None, cpu_tids: list[int], placement: str) -> dict:
    """A sample's placement as flat result fields (stored with every window row)."""
    handler = s.reads.get((s.server_pid, handler_tid), []) if handler_tid else []
    cpu = [s.reads.get((s.server_pid, t), []) for t in cpu_tids]
    client = s.reads.get((s.client_pid, s.client_pid), []) if s.client_pid else []
    out = {"placement": placement, "placement_polls": s.polls, "client_pid": s.client_pid,
           "handler_with_cpu_thread": _together(handler, cpu) if cpu_tids else None,
           "handler_with_client": _together(handler, [client]) if client else None,
           "client_ctx_involuntary": s.client_involuntary}
    for name, reads in (("handler", handler), ("client", client)):
        out.update({f"{name}_{k}": v for k, v in _role(reads).items()})
    flat = [c for reads in cpu for c in reads]
    r = _role(flat)
    out.update({"cpu_threads_cpu": r["cpu"], "cpu_threads_share": r["share"],
                "cpu_threads_migrations": sum(_role(x)["migrations"] or 0 for x in cpu) if cpu else None})
    out["placement_regime"] = regime(out["handler_with_cpu_thread"], len(cpu_tids))
    return out


def pin(server_pid: int, cpu_tids: list[int], cpus: list[int]) -> tuple[list[int], list[int]]:
    """The pinned placement: the CPU threads on the last of ``cpus``, the server's main thread (and
    so the handler it starts later) on the first; returns (the server's and client's CPUs, the
    CPU threads' CPUs).  Needs at least two CPUs."""
    if len(cpus) < 2:
        raise ValueError("a pinned placement needs at least 2 CPUs")
    home, away = [cpus[0]], [cpus[-1]]
    os.sched_setaffinity(server_pid, home)
    for tid in cpu_tids:
        os.sched_setaffinity(tid, away)
    return home, away
