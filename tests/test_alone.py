"""Whether a sample was measured alone (:mod:`gillab.measure.alone`): the CPU time other processes
used while it ran is read from the machine's counters, a sample past the rule is kept aside (never
read by a verdict) and measured again, and the run, its record and the chapter's page say how many.

The foreign load here is real: a busy process the test starts and stops on events (the sweep's own
steps), never a reading made up."""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys

import pytest

from gillab.measure import alone, campaigns, sweep

BUSY = [sys.executable, "-c", "while True: pass"]


class Busy:
    """Two CPU-bound processes that are not the harness's: started through a parent that exits at
    once, so that the machine's first process adopts them (a neighbour's load on a 2-core
    machine, not a process of the harness's family, :func:`alone.own_cpu_s`), until :meth:`stop`."""

    def __init__(self):
        quiet = "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL"  # no pipe held
        start = f"import subprocess\nfor _ in range(2): print(subprocess.Popen({BUSY!r}, {quiet}).pid)"
        out = subprocess.run([sys.executable, "-c", start], capture_output=True, text=True, check=True).stdout
        self.pids = [int(x) for x in out.split()]
        self.fds = [os.pidfd_open(pid) for pid in self.pids]

    def stop(self):
        for fd in self.fds:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        for fd in self.fds:                 # a pidfd turns readable when its process has ended
            select.select([fd], [], [], 30)
            os.close(fd)
        self.fds = []


@pytest.mark.alone_rule
def test_the_rule_needs_both_the_share_and_the_counters_grain():
    hz = alone._hz()
    assert alone.is_alone(0.0, 1.0) and alone.is_alone(None, 1.0)
    assert not alone.is_alone(0.5, 1.0)                                   # half a CPU beside a 1-s sample
    assert alone.is_alone(alone.MOST_FOREIGN_CPUS * 1.0, 1.0)             # the edge belongs to alone
    # a tenth of a CPU beside a 0.2-s sample is two ticks' worth: the counters' rounding, not load
    assert alone.is_alone(2 / hz, 0.2)
    assert not alone.is_alone((alone.GRAIN_TICKS + 1) / hz, 0.2)


@pytest.mark.alone_rule
def test_a_window_counts_a_neighbours_cpu_as_foreign_and_its_own_childrens_as_its_own():
    child = [sys.executable, "-c", "import resource\nn = 3_000_000\nwhile n: n -= 1\n"
             "r = resource.getrusage(resource.RUSAGE_SELF)\nprint(r.ru_utime + r.ru_stime)"]
    before = alone.own_cpu_s()
    used = float(subprocess.run(child, capture_output=True, text=True, check=True).stdout)
    assert alone.own_cpu_s() - before >= used * 0.99          # a waited-for child is the harness's own
    busy = Busy()
    try:
        with alone.Window() as w:
            subprocess.run(child, capture_output=True, check=True)
    finally:
        busy.stop()
    r = w.reading
    assert r.foreign_cpu_s is not None and r.foreign_cpus > alone.MOST_FOREIGN_CPUS and not r.alone
    cols = r.columns()
    assert cols["alone"] is False and cols["foreign_cpus"] == pytest.approx(r.foreign_cpus, abs=1e-3)


@pytest.mark.alone_rule
def test_samples_beside_foreign_load_are_kept_aside_and_measured_again(builds, data_dir, monkeypatch):
    """The load runs through the chapter's planned samples and stops when the sweep turns to the
    samples it kept aside: those measured beside it are stored as `not alone` with their reading,
    none of them is read as a sample, each is measured again, and the counts add up in the run file
    and on the chapter's page."""
    from gillab.judge import results

    busy = {}
    real_take, real_again = sweep._Run.take, sweep._Run.again

    def take(self, batch):
        if "load" not in busy:
            busy["load"] = Busy()
        return real_take(self, batch)

    def again(self):
        busy.pop("load").stop()            # the neighbour is gone before anything is measured again
        return real_again(self)

    monkeypatch.setattr(sweep._Run, "take", take)
    monkeypatch.setattr(sweep._Run, "again", again)
    try:
        res = sweep.measure("st_loop", "smoke", {"conditions": "3.13.5"}, campaign="beside", new_campaign=True,
                            progress=False)
    finally:
        if "load" in busy:
            busy.pop("load").stop()
    rows = campaigns.load("beside").store("st_loop").rows()
    aside = [r for r in rows if r["status"] == alone.NOT_ALONE]
    assert aside and res.not_alone == len({(r["condition"], r["point"], r["repeat"]) for r in aside})
    for r in aside:
        assert float(r["foreign_cpus"]) > alone.MOST_FOREIGN_CPUS and r["alone"] == "False"
        assert "other processes used" in r["error"]
    ok = [r for r in rows if r["status"] == "ok"]
    assert all(r["alone"] == "True" for r in ok)
    # every sample kept aside was measured again; what is still not alone is left to a later run
    keys_ok = {(r["condition"], r["point"], r["repeat"]) for r in ok}
    kept = {(r["condition"], r["point"], r["repeat"]) for r in aside}
    assert res.measured_again == len(kept & keys_ok) and res.measured_again + len(kept - keys_ok) == res.not_alone
    (run,) = campaigns.runs(campaigns.load("beside"))
    assert run["not_alone"] == res.not_alone and run["measured_again"] == res.measured_again
    # the chapter's page says so, in counts that add up
    from gillab.present import page

    words = page.aside_words("beside", "st_loop", res.config_id)
    assert f"**{len(kept)} sample{'s were' if len(kept) != 1 else ' was'} measured beside other processes' load**" in words
    assert len(aside) == len(kept) or f"{len(aside)} rows kept aside" in words   # a sample tried again is one sample
    assert f"{res.measured_again} of the {res.not_alone} measured again alone" in words
    assert page.aside_words("beside", "st_loop", "no-such-config") == ""
    # no verdict or figure reads them: the samples the analyses load are the ok ones (on a machine
    # busy with more than this test's neighbour, none may be)
    if ok:
        frame = results.samples("st_loop", campaign="beside")
        assert set(frame["status"]) == {"ok"} and len(frame) == len(ok)
    else:
        with pytest.raises(results.NoData):
            results.samples("st_loop", campaign="beside")


@pytest.mark.alone_rule
def test_a_measurement_before_the_sweep_is_read_alone_or_not_like_a_sample(builds, data_dir, monkeypatch):
    """A chapter's measurements that belong to the run (b2_download's curl ceiling) are each read in
    a window of their own: one measured beside foreign load is stored as `not alone` with its
    reading, and counted; the next, the neighbour gone, is stored with its own reading."""
    from gillab.measure import experiments

    child = [sys.executable, "-c", "n = 3_000_000\nwhile n: n -= 1"]

    def before_sweep(self, p, needed, add_row):
        try:
            subprocess.run(child, check=True)
        finally:
            busy.stop()
        add_row("ceiling", {"threads": 1}, 0, {"seconds": 1.0})
        subprocess.run(child, check=True)
        add_row("ceiling", {"threads": 1}, 1, {"seconds": 1.0})

    monkeypatch.setattr(type(experiments.get("st_loop")), "before_sweep", before_sweep, raising=False)
    # the neighbour starts before the sweep (a process started inside a window descends from the
    # harness, and is its own) and stops once the first measurement is done
    busy = Busy()
    try:
        res = sweep.measure("st_loop", "smoke", {"conditions": "3.13.5"}, campaign="ceiling", new_campaign=True,
                            progress=False)
    finally:
        busy.stop()
    rows = [r for r in campaigns.load("ceiling").store("st_loop").rows() if r["condition"] == "ceiling"]
    assert [r["repeat"] for r in rows] == ["0", "1"]
    first, second = rows
    assert first["status"] == alone.NOT_ALONE and float(first["foreign_cpus"]) > alone.MOST_FOREIGN_CPUS
    assert "other processes used" in first["error"] and first["foreign_procs_cpu_s"] != ""
    # the second has its own reading (on a machine busy with more than this test's neighbour it
    # may be kept aside too)
    assert second["status"] == ("ok" if second["alone"] == "True" else alone.NOT_ALONE)
    assert res.not_alone >= 1


@pytest.mark.alone_rule
def test_the_rule_is_written_once_and_said_in_words():
    words = alone.words()
    assert f"{alone.MOST_FOREIGN_CPUS:g} of a CPU" in words and f"at most {alone.MEASURE_AGAIN} more times" in words


@pytest.mark.alone_rule
def test_another_limit_is_checked_before_measuring_and_named_in_the_record(builds, data_dir, monkeypatch):
    from gillab.judge import steadiness
    from gillab.measure.profiles import ParameterError

    monkeypatch.setenv(alone.LIMIT_ENV, "lots")
    with pytest.raises(ParameterError, match=r"GILLAB_FOREIGN_CPUS='lots' is not a number of CPUs"):
        sweep.measure("st_loop", "smoke", {"conditions": "3.13.5"}, campaign="refused", new_campaign=True,
                      progress=False)
    assert not (data_dir / "results" / "refused").exists()
    monkeypatch.setenv(alone.LIMIT_ENV, "inf")
    res = sweep.measure("st_loop", "smoke", {"conditions": "3.13.5"}, campaign="raised", new_campaign=True,
                        progress=False)
    (run,) = campaigns.runs(campaigns.load("raised"))
    assert run["foreign_limit"] == float("inf") and res.not_alone == 0
    rec = {"version": 2, "foreign_limit": float("inf"), "experiments": []}
    assert steadiness.alone_of(rec).outcome == steadiness.NOT_RECORDED
    assert "GILLAB_FOREIGN_CPUS=inf" in steadiness.alone_of(rec).why


def test_an_orphan_of_a_sample_is_adopted_and_its_cpu_counted_as_the_harness_own():
    """A workload's process that outlives its parent (a fork server whose parent exited first): in
    a window the harness adopts it, so its CPU time (and that of the children it reaped) is the
    harness's own, counted once, and nothing of it is read as foreign.  Without adoption the
    machine's first process reaps it and its CPU time is lost to the family (counted foreign)."""
    from gillab.measure import procs

    grandchild = ("import resource, sys\nn = 3_000_000\nwhile n: n -= 1\n"
                  "r = resource.getrusage(resource.RUSAGE_SELF)\nprint(r.ru_utime + r.ru_stime, flush=True)")
    # the parent starts the grandchild and exits at once: the grandchild holds the output pipe, so
    # the harness reads its line (its own CPU time) when it is done
    parent = f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {grandchild!r}])\n"
    with alone.Window() as w:
        before = alone.own_cpu_s()
        done = procs.run([sys.executable, "-c", parent], timeout=60, stdout=subprocess.PIPE, text=True)
        after = alone.own_cpu_s()
    used = float(done.stdout)
    assert after - before >= used * 0.9                 # the orphan's CPU is the harness's own
    assert after - before < used + 1.0                   # and once (the parent's start-up beside it)
    assert w.reading.procs_cpu_s is not None
    # what others used is the other workers' and the machine's, never the orphan's busy loop
    assert w.reading.procs_cpu_s < w.reading.wall_s * 2 - used * 0.9


def test_the_two_readings_leave_out_the_family_and_the_kernel():
    """The arithmetic of a window (:func:`alone.split`) on counters given to it: a neighbour that
    ran, one that ended (counted in the process that reaped it, less what it had used before), the
    kernel's threads and interrupts, and the harness's family."""
    hz = alone._hz()
    k, n, gone, reaper = (2, 1), (500, 9), (600, 9), (1, 0)
    start = alone._Mark(cpu={"user": 1000, "system": 0, "irq": 0, "softirq": 10}, own=5.0,
                        kernel={k: 50}, others={n: 100, gone: 30, reaper: 0}, seen={k, n, gone, reaper}, t=0.0)
    # over the window: the family used 1 s, the neighbour 20 ticks, the ended process 10 more
    # (reaped by pid 1, whose counters jump by all 40 of its ticks), a kernel thread 7, interrupts 3
    end = alone._Mark(cpu={"user": 1000 + hz + 20 + 10 + 7, "system": 0, "irq": 0, "softirq": 13}, own=6.0,
                      kernel={k: 57}, others={n: 120, reaper: 40}, seen={k, n, reaper}, t=2.0)
    got = alone.split(start, end)
    assert got["procs"] == pytest.approx(30 / hz)
    assert got["kernel"] == pytest.approx(10 / hz)
    assert got["machine"] == pytest.approx(30 / hz)
    assert alone.foreign(got["procs"], None) == got["procs"] and alone.foreign(None, None) is None
    assert alone.foreign(0.1, -0.2) == 0.1
