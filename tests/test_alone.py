"""Whether a sample was measured alone (:mod:`gillab.measure.alone`): the CPU time other processes
used while it ran is read from the machine's counters, a sample past the rule is kept aside (never
read by a verdict) and measured again, and the run, its record and the chapter's page say how many.

The foreign load here is real: a busy process the test starts and stops on events (the sweep's own
steps), never a reading made up."""
from __future__ import annotations

import subprocess
import sys

import pytest

from gillab.measure import alone, campaigns, sweep

BUSY = [sys.executable, "-c", "while True: pass"]


class Busy:
    """Two CPU-bound processes that are not the harness's waited-for children until :meth:`stop`:
    the load of a neighbour on a 2-core machine."""

    def __init__(self):
        self.procs = [subprocess.Popen(BUSY) for _ in range(2)]

    def stop(self):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


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
    assert f"**{len(aside)} samples were measured beside other processes' load**" in words
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


@pytest.mark.alone_rule
def test_a_servers_own_processes_killed_with_it_are_counted_as_the_harness_own():
    """A command whose group holds a CPU-bound process of its own (a server's neighbour process, a
    pool's worker): killed with the group, it is reaped by no process of the harness's, so its CPU
    time is read before the group is signalled, once, and counted as the harness's own."""
    from gillab.measure import procs

    code = ("import subprocess, sys\n"
            "child = subprocess.Popen([sys.executable, '-c', 'n = 4_000_000\\nwhile n: n -= 1\\nprint(1, flush=True)"
            "\\nimport time\\nwhile True: time.sleep(1)'], stdout=subprocess.PIPE)\n"
            "child.stdout.readline()\nprint('counted', flush=True)\nsys.stdin.readline()\n")
    proc = procs.popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "counted"     # the child has done its counting
        before = alone.group_cpu_s
        alone.account_group(proc)
        got = alone.group_cpu_s - before
        alone.account_group(proc)                                # read again: nothing is counted twice
        again = alone.group_cpu_s - before
    finally:
        procs.kill_group(proc)
        proc.communicate()
    assert got > 0.05 and again - got < 0.02
