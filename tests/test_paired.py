"""A run paired inside its process (countdown's ``paired``): a run of k threads times its own
one-thread countdown, A-B-B-A, and the chapters read T(k)/T(1) as each run's own ratio, which the
machine's pace from one process to the next does not move."""
from __future__ import annotations

import pandas as pd
import pytest

from gillab import chapters, stats
from gillab.judge import budget, claims
from gillab.measure import runner
from gillab.measure.experiments import get
from gillab.measure.profiles import ParameterError

# the pace of each process on a VM whose CPUs run at two paces: a one-thread run is on one CPU
PACES = [1.0, 0.7, 1.0, 1.0, 0.7, 0.7, 1.0, 0.7, 1.0, 1.0, 0.7, 1.0, 0.7, 1.0, 1.0, 0.7, 1.0, 0.7, 0.7, 1.0, 1.0]
OTHER = [1.7 - p for p in PACES]       # the one-thread point's process, in the same round, on the other CPU


def test_a_paired_run_times_its_own_one_thread_countdown_abba(builds):
    paired = runner.run(builds["3.13.5"], "countdown", {"threads": 2, "total_decrements": 2_000_000, "paired": True},
                        switch_interval=0.005, timeout=60).result
    segs = [paired[f"abba_{s}_s"] for s in ("a1", "b1", "b2", "a2")]
    assert all(s > 0 for s in segs)
    assert paired["one_thread_seconds"] == pytest.approx(segs[0] + segs[3])
    assert paired["seconds"] == pytest.approx(segs[1] + segs[2])
    assert paired["decrements_per_thread"] == 1_000_000
    assert paired["gil_switches"] > 0               # counted over the two-thread segments
    for threads, asked in ((2, False), (1, True)):  # the document's way; one thread has nothing to pair
        plain = runner.run(builds["3.13.5"], "countdown",
                           {"threads": threads, "total_decrements": 1_000_000, "paired": asked},
                           switch_interval=0.005, timeout=60).result
        assert plain["one_thread_seconds"] is None and plain["abba_a1_s"] is None and plain["seconds"] > 0


def _switch(own: bool, si: float = 0.005) -> pd.DataFrame:
    """Switch-interval samples at 5 ms of one build whose k threads take as long as one (the ratio
    1.0) in every process, at each process's pace: the runs of two threads timed their own one
    thread (``own``) or not; the one-thread point ran in other processes at other paces."""
    rows = []
    for rep, (pace, other) in enumerate(zip(PACES, OTHER)):
        base = {"condition": "b", "switch_interval": si, "repeat": rep, "run_id": "r", "timer_slack_ns": 1,
                "timer_slack_ns_min": 1, "timer_slack_ns_max": 1, "ctx_voluntary": 10, "ctx_involuntary": 1,
                "decrements_per_thread": 1}
        rows.append(base | {"threads": 1, "seconds": 0.5 * other, "gil_switches": 0, "one_thread_seconds": None})
        rows.append(base | {"threads": 2, "seconds": 0.5 * pace, "gil_switches": round(200 * 0.5 * pace),
                            "one_thread_seconds": 0.5 * pace if own else None})
    return pd.DataFrame(rows).assign(gil_enabled=True, status="ok")


def test_a_paired_run_is_read_over_its_own_one_thread_time():
    """The switch interval's row at 2 threads: paired, each run's own ratio (1.0, no spread); the
    same runs read the document's way, over the one-thread point's runs, spread as the paces do."""
    row = {r["claim_id"]: r for r in chapters.of("switch_interval").claims(_switch(True))}[
        "switch_interval/si=0.005/threads=2"]["measured"]["b"]
    assert row["median"] == pytest.approx(1.0) and (row["ci_lo"], row["ci_hi"]) == pytest.approx((1.0, 1.0))
    assert row["verdict"] == "agrees" and row["estimand"] == stats.PAIRED
    assert "own one-thread countdown" in row["note"]
    apart = {r["claim_id"]: r for r in chapters.of("switch_interval").claims(_switch(False))}[
        "switch_interval/si=0.005/threads=2"]["measured"]["b"]
    lo, hi = apart["ci_lo"], apart["ci_hi"]
    assert lo == pytest.approx(0.7) and hi == pytest.approx(1 / 0.7)    # each round's 0.7 / 1.0 or 1.0 / 0.7
    assert apart["verdict"] == "inconclusive"
    s = chapters.of("switch_interval").summary(_switch(True))
    two = s[s["threads"] == 2].iloc[0]
    assert two["slowdown"] == pytest.approx(1.0) and two["slowdown_method"] == stats.PAIRED


def test_a_conclusion_of_k_threads_over_one_reads_each_runs_own_ratio():
    """The document's conclusion at 1 us (two threads over one) reads the same point as the
    chapter's row: each paired run's own ratio; runs that did not pair read the one-thread point."""
    cid = "switch_interval/conclusion/slowdown/si=1e-06"
    own = {r["claim_id"]: r for r in chapters.of("switch_interval").claims(_switch(True, 1e-06))}[cid]["measured"]["b"]
    assert own["median"] == pytest.approx(1.0) and (own["ci_lo"], own["ci_hi"]) == pytest.approx((1.0, 1.0))
    apart = {r["claim_id"]: r for r in chapters.of("switch_interval").claims(_switch(False, 1e-06))}[cid]["measured"]["b"]
    assert (apart["ci_lo"], apart["ci_hi"]) == pytest.approx((0.7, 1 / 0.7))
    assert not claims.over_own_one({"switch_interval": "1e-06", "threads": "4"},
                                   {"switch_interval": "1e-06", "threads": "2"}, _switch(True, 1e-06))


def _countdown(own: bool) -> pd.DataFrame:
    """Countdown samples of one build whose 2 threads take 1.1 times one thread's time in every
    process; a trial's three processes at one pace, the one-thread point's at the other."""
    rows = []
    for rep in range(len(PACES)):
        pace = PACES[rep - rep % 3]
        other = 1.7 - pace
        base = {"condition": "b", "repeat": rep, "run_id": "r", "total_decrements": 1_000, "gil_enabled": True,
                "status": "ok"}
        rows.append(base | {"threads": 1, "seconds": 2.0 * other, "one_thread_seconds": None})
        rows.append(base | {"threads": 2, "seconds": 2.2 * pace, "one_thread_seconds": 2.0 * pace if own else None})
    return pd.DataFrame(rows)


def test_the_best_of_3_with_one_thread_is_of_the_runs_own():
    """Countdown's T(2)/T(1), the document's best of 3 a trial: paired, the best of a trial's own
    one-thread times (1.1 in every trial); apart, the one-thread point's best of 3 in the trial."""
    from gillab.chapters import over_threads

    g = _countdown(True)
    r = over_threads.time_ratio(g, 2, 1, 3)
    assert r["method"] == stats.PAIRED_TRIALS and r["n"] == 7
    assert r["ratio"] == pytest.approx(1.1) and (r["ci_lo"], r["ci_hi"]) == pytest.approx((1.1, 1.1))
    assert over_threads.time_ratio(g, 2, 1, 1)["ratio"] == pytest.approx(1.1)   # one run a trial: each run's own
    apart = over_threads.time_ratio(_countdown(False), 2, 1, 3)
    assert apart["ci_hi"] - apart["ci_lo"] > 0.1
    row = {r["claim_id"]: r for r in chapters.of("countdown").claims(g)}["countdown/threads=2"]["measured"]["b"]
    assert row["median"] == pytest.approx(1.1) and "own one-thread countdown" in row["note"]


def test_a_point_of_runs_from_before_reads_the_one_thread_point():
    g = _countdown(True)
    g.loc[g.index[-1], "one_thread_seconds"] = None       # one run of the point was not paired
    assert not claims.own_one_thread(g[g["threads"] == 2])
    assert claims.own_one_thread(_countdown(True).query("threads == 2"))
    assert not claims.own_one_thread(_countdown(True).query("threads == 2").drop(columns="one_thread_seconds"))


def test_pairing_is_how_a_run_is_measured_not_what():
    """One configuration paired or not (the code key tells runs of the new workload apart); the
    countdown's default and verdicts pair, the switch interval's keep one process a point (their
    cost for no row more, profiles.toml), as do the documents' sizes."""
    for name in ("countdown", "switch_interval"):
        exp = get(name)
        assert exp.config_id(exp.resolve("default")) == exp.config_id(exp.resolve("default", {"paired": "true"}))
        assert exp.config_id(exp.resolve("default")) == exp.config_id(exp.resolve("default", {"paired": "false"}))
        assert exp.resolve("seed")["paired"] is False
        assert exp.resolve("smoke")["paired"] is True
    assert get("countdown").resolve("default")["paired"] and get("countdown").resolve("verdicts")["paired"]
    assert not get("switch_interval").resolve("default")["paired"]
    with pytest.raises(ParameterError, match="must be true or false"):
        get("countdown").resolve("default", {"paired": "maybe"})


def test_a_point_is_forecast_as_the_plan_measures_it_paired_or_not(builds, monkeypatch):
    """Times read from runs that did not pair (the reference's) add the point's one-thread time to
    each paired sample; times read from paired runs are taken as they are for a paired plan, and
    without their one-thread countdown for a plan of one process a point."""
    def forecast(paired, timed_paired=()):
        t = budget.Timing({("3.13.5", "threads=1"): 1.0, ("3.13.5", "threads=2"): 2.0}, 1.5, 0.0, "test",
                          set(timed_paired))
        monkeypatch.setattr(budget, "timing", lambda *a, **k: t)
        return budget.forecast_chapter("countdown", "default", None, [], new_campaign=True, overrides={
            "conditions": "3.13.5", "threads": [1, 2], "repeats": 1, "paired": paired, "claim_grid": "",
            "rest_repeats": None, "full_grid": "all", "small_grid": ""}).seconds

    assert forecast(False) == pytest.approx(3.0)
    assert forecast(True) == pytest.approx(4.0)
    paired_before = [("3.13.5", "threads=2")]     # the 2-thread time read was a paired run's: 2.0 with its one thread
    assert forecast(True, paired_before) == pytest.approx(3.0)
    assert forecast(False, paired_before) == pytest.approx(2.0)


def test_the_method_section_counts_the_runs_that_timed_their_own_one_thread():
    from types import SimpleNamespace

    from gillab.present import page

    def line(name, df):
        return page.Chapter.pairing_line(SimpleNamespace(exp=get(name), df=df))

    paired = _countdown(True)
    assert "Of its 21 runs of more than one thread, 21 timed their own one-thread countdown" in line("countdown", paired)
    some = paired.copy()
    some.loc[some.index[-1], "one_thread_seconds"] = None
    assert "20 timed their own" in line("countdown", some) and "the other 1 read" in line("countdown", some)
    assert "Each of its 21 runs of more than one thread ran in a process of its own" in line("switch_interval",
                                                                                              _switch(False))
    assert line("sha256", paired) == ""          # no pairing there
