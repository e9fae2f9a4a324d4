"""A whole run against the reader's time (:mod:`gillab.judge.budget`): the forecast chooses what fits,
names what it leaves, and the deadline stops a sweep between samples with nothing lost."""
from __future__ import annotations

import collections

import pytest

from gillab import stats
from gillab.judge import budget, rounds
from gillab.measure import campaigns, sweep

TINY = {"conditions": "3.13.5,3.13.5t", "threads": [1, 2], "total_decrements": 20_000, "repeats": 2}


def chapter(name, minutes, rows, short=()):
    return budget.ChapterForecast(name, 10, minutes * 60, [f"{name}/r{i}" for i in range(rows)], "test", 7,
                                  short=list(short))


def test_every_chapter_is_measured_when_the_plan_fits():
    plan = [chapter("a", 10, 5), chapter("b", 15, 1)]
    assert budget.choose(plan, 30) == (["a", "b"], [], [])
    assert budget.choose(plan, None) == (["a", "b"], [], [])


def test_a_plan_that_does_not_fit_leaves_out_the_fewest_rows_per_minute_and_names_them():
    plan = [chapter("slow", 20, 2), chapter("fast", 10, 10), chapter("mid", 8, 4),
            budget.ChapterForecast("broken", 0, 0.0, [], "", 0, error="no build")]
    chosen, out, fewest = budget.choose(plan, 20)
    assert chosen == ["fast", "mid"] and fewest == []                        # in the report's order, 18 of 20 minutes
    assert [c.experiment for c in out] == ["slow"]
    text = budget.describe(plan, chosen, 20)
    assert "18.0 minutes of a 20-minute budget" in text and "14 of the 16 judged" in text
    assert "not judged in this budget (their chapters do not fit): slow: slow/r0, slow/r1" in text
    assert "(cannot start)" in text and "(left out: no time)" in text


def test_where_chapters_fit_only_without_their_figures_none_is_left_out():
    """40 minutes whole do not fit 30, but the claims (the points judged rows read) do: every
    chapter is chosen, its figures left for after every chapter's claims; where even the claims
    do not fit, the chapter that decides the fewest rows per minute of its claims is left out."""
    def with_figures(name, minutes, figures, rows):
        c = chapter(name, minutes, rows)
        c.figures = figures * 60
        return c

    plan = [with_figures("a", 20, 12, 5), with_figures("b", 20, 10, 5)]
    assert not budget.whole_fits(plan, 30) and budget.choose(plan, 30) == (["a", "b"], [], [])
    assert "every chapter's claims first (18.0 minutes), then the points no claim reads" in budget.describe(
        plan, ["a", "b"], 30)
    chosen, out, _ = budget.choose(plan, 12)
    assert chosen == ["a"] and [c.experiment for c in out] == ["b"]     # a: 5 rows in 8 minutes, b in 10
    assert budget.choose(plan, 40) == (["a", "b"], [], []) and budget.whole_fits(plan, 40)


def test_a_chapter_whose_claims_do_not_fit_is_measured_at_one_run_a_point_where_that_fits():
    """Not left out while its figures fit: the chapter deciding the fewest rows per minute gives
    way first, measured at one run a point, its judged rows named as too few runs; a chapter that
    does not fit even so is left out."""
    def with_fewest(name, minutes, rows, least):
        c = chapter(name, minutes, rows)
        c.fewest = budget.ChapterForecast(name, 2, least * 60, [], "test", 1, short=list(c.judged))
        return c

    plan = [with_fewest("server", 8, 4, 1), chapter("threads", 20, 40)]
    chosen, out, fewest = budget.choose(plan, 22)
    assert chosen == ["server", "threads"] and out == [] and fewest == ["server"]
    text = budget.describe(plan, chosen, 22, fewest)
    assert "server                 2     1.0           0            0            4  test  (one run a point" in text
    assert "expected: 21.0 minutes of a 22-minute budget" in text and "40 of the 44 judged" in text
    assert "too few runs planned for 4 judged rows" in text and "server/r3" in text
    # where not even one run a point fits, the chapter is left out and named
    chosen, out, fewest = budget.choose(plan, 20.5)
    assert chosen == ["threads"] and [c.experiment for c in out] == ["server"] and fewest == []
    # a slower machine scales the fewest runs too
    assert plan[0].scale(2.0).fewest.seconds == 120.0


def test_every_chapter_with_more_than_one_run_a_point_has_a_shorter_plan_to_give_way_to(monkeypatch):
    fc = budget.forecast("default", new_campaign=True)
    flask = next(c for c in fc if c.experiment == "flask_k6")
    assert flask.fewest is not None and flask.fewest.repeats == 1 and flask.fewest.seconds < flask.seconds
    assert flask.fewest.samples * flask.repeats == flask.samples and not flask.fewest.judged
    assert all(c.fewest is None or c.fewest.seconds < c.seconds for c in fc)


def test_rows_whose_planned_runs_are_too_few_are_named_before_measuring():
    text = budget.describe([chapter("a", 5, 2, short=["a/k6 @ 3.13.5"])], ["a"], 30)
    assert "too few runs planned for 1 judged rows" in text and "a/k6 @ 3.13.5" in text


class StopAfter(budget.Deadline):
    """A deadline that passes after ``k`` samples have started: synchronised on the sweep's own
    steps, not on the clock."""

    def __init__(self, k: int):
        super().__init__(None)
        self.calls = 0
        self.k = k

    def check(self, need: float = 0.0) -> None:
        self.calls += 1
        if self.calls > self.k:
            raise budget.OutOfTime("spent")


def test_a_deadline_stops_the_sweep_between_samples_keeps_them_and_the_rerun_resumes(builds, data_dir):
    first = sweep.measure("countdown", "smoke", TINY, progress=False, deadline=StopAfter(3))
    assert first.status == sweep.STOPPED_ON_TIME and first.measured == 3
    store = campaigns.load(first.campaign).store("countdown")
    assert len([r for r in store.rows() if r["status"] == "ok"]) == 3
    (run,) = store.runs()
    assert run["status"] == sweep.STOPPED_ON_TIME
    again = sweep.measure("countdown", "smoke", TINY, campaign=first.campaign, progress=False)
    assert again.status == "complete" and again.skipped == 3 and again.measured == 2 * 2 * 2 - 3
    rows = campaigns.load(first.campaign).store("countdown").rows()
    seen = collections.Counter((r["condition"], r["point"]) for r in rows if r["status"] == "ok")
    assert set(seen.values()) == {2}


def test_a_deadline_already_passed_measures_nothing(builds, data_dir):
    res = sweep.measure("countdown", "smoke", TINY, progress=False, deadline=StopAfter(0))
    assert res.status == sweep.STOPPED_ON_TIME and res.measured == 0


@pytest.mark.parametrize("text", ["0", "-3", "nan", "soon"])
def test_minutes_that_are_not_a_positive_number_are_refused(text):
    import argparse

    from gillab.cli import minutes_arg

    with pytest.raises(argparse.ArgumentTypeError):
        minutes_arg(text)


def test_a_round_is_a_trial_where_the_claims_are_a_best_of_3():
    assert rounds.round_size("countdown") == 3 and rounds.round_size("convoy") == 1
    assert rounds.most_repeats("countdown") == 60 and rounds.most_repeats("convoy") == 20


def test_a_slower_machine_lengthens_the_work_not_what_samples_wait_out():
    c = budget.ChapterForecast("server", 10, 100.0, [], "test", 7, waits=60.0)
    assert c.scale(2.0).seconds == 60.0 + 2 * 40.0
    assert budget.ChapterForecast("cpu", 10, 100.0, [], "test", 7).scale(2.0).seconds == 200.0


def test_a_short_run_spends_its_minutes_where_the_reference_decided_rows():
    many = budget.ChapterForecast("many", 10, 600.0, [f"m/r{i}" for i in range(20)], "test", 7)
    sure = budget.ChapterForecast("sure", 10, 600.0, [f"s/r{i}" for i in range(5)], "test", 7,
                                  decided=[f"s/r{i}" for i in range(5)])
    assert budget.choose([many, sure], 15) == (["sure"], [many], [])
    assert budget.by_yield([many, sure], ["many", "sure"]) == ["sure", "many"]
    # without a reference's outcomes (none decided anywhere) judged rows per minute decide
    bare = [budget.ChapterForecast(c.experiment, 10, c.seconds, c.judged, "test", 7) for c in (many, sure)]
    assert budget.choose(bare, 15)[0] == ["many"]
    assert "ref. decides" in budget.describe([many, sure], ["sure"], 15)


@pytest.fixture(scope="module")
def ref_flat():
    """The reference campaign's verdict rows (read once: reading them judges every chapter)."""
    from gillab.judge import verdicts

    return verdicts.reference_flat()


def test_the_reference_decided_rows_are_judged_rows_with_a_definite_outcome(ref_flat):
    from gillab.judge import verdicts

    flat = ref_flat
    decided, judged = budget.decided_rows(flat), budget.judged_rows(flat)
    names = {row for rows in judged.values() for row, _ in rows}
    assert decided and decided < names
    j = verdicts.judged(flat)
    outcome = {f"{c} @ {b}": o for c, b, o in zip(j["claim_id"], j["condition"], j["outcome"])}
    assert {outcome[r] for r in decided} <= {"agrees", "higher", "lower"}
    assert all(outcome[r] not in ("agrees", "higher", "lower") for r in names - decided)


# a committed default run of 30 minutes: many of its rows straddle their band, some close to an
# edge (the reference's rounds decided most of those it could)
SHORT_RUN = "amd-epyc-2c-20261127T153842Z"


def test_a_row_counts_where_the_reference_decides_it_at_the_planned_runs():
    """A row the reference decided counts at no more runs than it had; one it left straddling
    counts only at the runs its spread projects a definite outcome at, more than it had and at most
    the confidence sequence's; a row no plausible number of runs decides is not counted at all.
    Read on a short run's rows as if they were the reference's: a reference whose rounds went
    where its spread projected a decision has few such rows left."""
    from gillab.judge import claims, verdicts

    flat = verdicts.flat(verdicts.verdicts(SHORT_RUN))
    runs = budget.deciding_runs(flat)
    decided = budget.decided_rows(flat)
    j = verdicts.judged(flat)
    had = {f"{c} @ {b}": int(n) * claims.trial_size(c) for c, b, n in zip(j["claim_id"], j["condition"], j["n"])}
    assert decided <= set(runs) and all(runs[k] <= had[k] for k in decided)
    assert any(0 < runs[k] < had[k] for k in decided), "no decided row projected to fewer runs: the rule cannot say"
    projected = {k: v for k, v in runs.items() if k not in decided}
    assert projected and all(had[k] < v <= stats.ADAPTIVE_MAX * claims.trial_size(k.split(" @ ")[0])
                             for k, v in projected.items())
    straddling = verdicts.straddling(j)
    assert {f"{c} @ {b}" for c, b in zip(straddling["claim_id"], straddling["condition"])} - set(projected), \
        "every straddling row projected to decide: the projection cannot say no"


def test_fewer_planned_runs_decide_fewer_of_a_chapters_rows(ref_flat):
    """switch_interval's ratios lie near 1 in a narrow band: at default's 7 rounds its interval is
    the range of the rounds, so the rows it decides there are fewer than at the 20 of `verdicts`."""
    if "switch_interval" in budget._measured_again():
        pytest.skip("the reference measured switch_interval at an earlier configuration: its spread projects "
                    "nothing about today's sizes until it is measured again")
    flat = ref_flat
    rows, runs = budget.judged_rows(flat).get("switch_interval", []), budget.deciding_runs(flat)
    planned = budget.forecast_chapter("switch_interval", "verdicts", None, rows, new_campaign=True, decided=runs)
    fewer = budget.forecast_chapter("switch_interval", "default", None, rows, new_campaign=True, decided=runs)
    assert planned.repeats > fewer.repeats
    assert len(fewer.decided) < len(planned.decided) <= len(planned.judged)
    assert set(fewer.decided) <= set(planned.decided)


def test_what_a_sample_waits_out_is_never_longer_than_the_reference_sample_took():
    """The declared waits (windows, warm-ups, a load tool's duration) against every committed
    sample of the reference at default's sizes (`verdicts` measures default's configuration): a
    sample cannot wait longer than it ran."""
    from gillab.measure import experiments
    from gillab.measure.protocol import point_key

    from gillab.judge import keyguard

    ref = campaigns.load(campaigns.reference_id())
    again = {d.chapter for d in keyguard.declared() if d.reference == ref.id}   # another configuration's samples
    waiting = set()
    for name in experiments.names():
        if name in again:
            continue
        exp = experiments.get(name)
        p = exp.resolve("default")
        points = {point_key(pt): pt for pt in exp.points(p)}
        for r in ref.store(name).rows():
            if r.get("status") == "ok" and r.get("profile") in ("default", "verdicts") and r.get("point") in points \
                    and r.get("process_wall_s"):
                w = experiments.waits(name, p, points[r["point"]])
                assert w <= float(r["process_wall_s"]), (name, r["point"], r["condition"])
                if w > 0:
                    waiting.add(name)
    assert {"convoy", "affinity", "ccbench", "flask_k6", "fib_server", "stall"} - again <= waiting


def test_the_reference_forecast_keeps_a_server_chapters_windows_at_any_speed():
    convoy = budget.forecast_chapter("convoy", "default", None, [], new_campaign=True)
    countdown = budget.forecast_chapter("countdown", "default", None, [], new_campaign=True)
    assert 0 < convoy.waits < convoy.seconds and countdown.waits == 0
    one, slow = convoy.seconds, convoy.scale(2.0).seconds
    assert one < slow < 2 * one
    assert countdown.scale(2.0).seconds == 2 * budget.forecast_chapter(
        "countdown", "default", None, [], new_campaign=True).seconds


def test_ccbench_tool_waits_are_the_workloads_own_constants():
    import ast

    from gillab.measure import runner
    from gillab.measure.experiments import ccbench

    tree = ast.parse(open(runner.workload_path("ccbench")).read())
    consts = {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
              for t in node.targets if isinstance(t, ast.Name) and isinstance(node.value, ast.Constant)}
    assert ccbench.TOOL_WAITS == consts["TOOL_READY_WAIT"] + consts["TOOL_DURATION"]


class _Store:
    """A chapter's samples as a campaign's store gives them (rows in file order; no run files)."""

    def __init__(self, rows):
        self._rows = rows

    def rows(self):
        return self._rows

    def runs(self):
        return []


def test_the_forecast_times_a_point_by_the_samples_a_page_reads_not_those_measured_again():
    """A point measured again after its measuring code changed (ccbench's starved runs: 35 s
    before, 6 s after) is forecast at the newer samples' time, as the page reads only those."""
    def row(key, repeat, wall):
        return {"status": "ok", "config": "c1", "condition": "2.7.18", "point": "p", "repeat": str(repeat),
                "identity_key": "i", "code_key": key, "run_id": key, "process_wall_s": str(wall)}

    old = [row("old0000000000000", r, 35.0 + r) for r in range(8)]
    new = [row("new0000000000000", r, 6.0 + r / 10) for r in range(3)]
    t = budget._timing_from(_Store(old + new), "c1", "ccbench")
    assert t.per_point == {("2.7.18", "p"): pytest.approx(6.1)}
    assert budget._timing_from(_Store(old), "c1", "ccbench").per_point[("2.7.18", "p")] == pytest.approx(38.5)
    assert budget._timing_from(_Store(old + new), "other", "ccbench") is None


class _Campaign:
    """A campaign as the forecast reads it: an id, a machine kind and one chapter's store."""

    def __init__(self, store):
        self.id, self.fingerprint, self.is_contributed, self._store = "yours", "kind", False, store

    def store(self, name):
        return self._store


@pytest.fixture
def yours_only(monkeypatch):
    """``serve(rows)``: every chapter read from one campaign of yours whose store holds ``rows``, and
    no other campaign on file (the forecast's and the sweep's estimate's only source of times)."""
    from gillab.measure import campaigns

    def serve(rows):
        here = _Campaign(_Store(rows))
        monkeypatch.setattr(campaigns, "for_reading", lambda name, campaign=None: (here, None))
        monkeypatch.setattr(campaigns, "all_campaigns", lambda: [])
        return here
    return serve


def test_other_sizes_are_timed_by_the_samples_a_page_reads(yours_only):
    """Where no campaign holds the planned configuration, the forecast times each point at another
    configuration's samples: the current ones too, never those measured again after the code
    changed; a sample stored as many rows (ccbench's pings) counts once in the chapter's median."""
    def row(key, repeat, wall, ping=0):
        return {"status": "ok", "config": "seen", "profile": "default", "condition": "2.7.18", "point": "p",
                "repeat": str(repeat), "ping": str(ping), "identity_key": "i", "code_key": key, "run_id": key,
                "process_wall_s": str(wall)}

    old = [row("old0000000000000", r, 35.0) for r in range(8)]
    new = [row("new0000000000000", r, 6.0, ping) for r in range(3) for ping in range(5)]
    yours_only(old + new)
    t = budget.timing("ccbench", "planned-but-never-measured")
    assert "other sizes" in t.basis
    assert t.per_point == {("2.7.18", "p"): pytest.approx(6.0)}
    assert t.median == pytest.approx(6.0)


def test_other_sizes_scale_each_points_time_by_the_work_its_samples_did(yours_only):
    """A point timed at other sizes takes its samples' seconds in proportion to the work the plan
    gives it: seed's switch interval counts 20 times default's decrements (and its grown point
    more), so it is forecast at 20 times their seconds, not at default's; a point none of them
    measured at the median sample's seconds per decrement; a chapter that declares no work is not
    scaled."""
    from gillab.measure import experiments

    def row(point, threads, per_thread, wall):
        return {"status": "ok", "config": "seen", "profile": "default", "condition": "3.9.2", "point": point,
                "repeat": "0", "identity_key": "i", "code_key": "k", "run_id": "r", "process_wall_s": str(wall),
                "threads": str(threads), "decrements_per_thread": str(per_thread)}

    yours_only([row("si=0.005,threads=1", 1, 5_000_000, 0.2), row("si=0.005,threads=2", 2, 2_500_000, 0.3),
                row("si=0.1,threads=1", 1, 25_000_000, 1.0)])
    seed = experiments.get("switch_interval").resolve("seed")
    t = budget.timing("switch_interval", "planned-but-never-measured")
    assert "in proportion to its work" in t.basis
    overhead = t.overhead
    at = {"switch_interval": 0.005, "threads": 2}
    assert t.seconds("3.9.2", "si=0.005,threads=2", experiments.work("switch_interval", seed, at)) - overhead \
        == pytest.approx(0.3 * 20)
    grown = {"switch_interval": 0.1, "threads": 1}
    assert experiments.work("switch_interval", seed, grown) == 200_000_000
    assert t.seconds("3.9.2", "si=0.1,threads=1", 200_000_000) - overhead == pytest.approx(8.0)
    # a point the other sizes never measured: the median sample (0.3 s for 5,000,000), scaled
    assert t.seconds("3.9.2", "si=0.001,threads=8", 100_000_000) - overhead == pytest.approx(6.0)
    assert t.seconds("3.9.2", "si=0.005,threads=2") - overhead == pytest.approx(0.3)     # no work given
    assert experiments.work("convoy", experiments.get("convoy").resolve("seed"), {}) is None


def test_defaults_judged_rows_keep_their_runs_on_a_machine_half_as_slow_again():
    """`default`'s plan on the reference's times, on a machine 1.5 times slower: every chapter's
    claims fit the budget (none left out, none cut to one run a point) and no judged row is planned
    with too few runs, so that a reader's run there judges the documents' conclusions."""
    import copy

    from gillab.measure.profiles import BUDGET_MINUTES

    base = budget.forecast("default", new_campaign=True)
    assert {c.basis for c in base if not c.error} == {f"campaign {campaigns.reference_id()}"}
    slow = [copy.deepcopy(c).scale(1.5) for c in base]
    choice = budget.choose(slow, BUDGET_MINUTES)
    assert choice.left_out == [] and choice.fewest == [], choice
    # the version sweep's rows are the history profile's (its builds, 3.7 to 3.11, only it measures)
    short = [k for c in slow for k in c.short]
    assert short and all(" @ bytedeco-" in k for k in short), short
    assert sum(len(c.judged) for c in slow) >= 60


def test_a_sample_read_at_other_sizes_is_forecast_at_least_what_it_waits_out(yours_only):
    """seed's convoy waits out a second of warm-up and five 1-second windows a sample; times read at
    default's sizes (a fifth of that) never forecast it shorter than those waits."""
    from gillab.measure import experiments

    rows = [{"status": "ok", "config": "seen", "profile": "default", "condition": "3.9.2", "point": "p",
             "repeat": str(r), "identity_key": "i", "code_key": "k", "run_id": "r", "process_wall_s": "1.2"}
            for r in range(3)]
    yours_only(rows)
    p = experiments.get("convoy").resolve("seed")
    todo = sweep.plan("convoy", "seed", new_campaign=True, params=p).todo
    waits = sum(experiments.waits("convoy", p, pt) for _, pt, _ in todo)
    c = budget.forecast_chapter("convoy", "seed", None, [], new_campaign=True)
    assert "other sizes" in c.basis and c.samples == len(todo)
    assert c.waits == pytest.approx(waits) and c.seconds >= waits > 6 * len(todo)


def test_a_sweeps_own_estimate_scales_other_sizes_and_keeps_the_waits(yours_only):
    """`gillab measure --plan` (and the 12-hour guard) read the same way: samples read at another
    configuration in proportion to the work a planned sample does, never less than what it waits
    out, never more than its timeout."""
    from gillab.measure import experiments

    def row(wall, **cols):
        return {"status": "ok", "config": "seen", "condition": "3.9.2", "point": "p", "repeat": str(wall),
                "process_wall_s": str(wall), **cols}

    yours_only([row(0.3, total_decrements="5000000"), row(0.5, total_decrements="5000000")])
    plan = sweep.plan("countdown", "seed", new_campaign=True)
    assert "in proportion to each sample's work" in plan.estimate_basis
    assert plan.estimate_s == pytest.approx(len(plan.todo) * 0.4 * 20)      # 100,000,000 decrements a run
    capped = sweep.plan("countdown", "seed", {"timeout": 2}, new_campaign=True)    # a sample is killed at 2 s
    assert capped.estimate_s == pytest.approx(len(capped.todo) * 2) and "its timeout" in capped.estimate_basis
    yours_only([row(1.2), row(1.4)])
    plan = sweep.plan("convoy", "seed", new_campaign=True)
    p = experiments.get("convoy").resolve("seed")
    waits = sum(experiments.waits("convoy", p, pt) for _, pt, _ in plan.todo)
    assert "what each waits out" in plan.estimate_basis and plan.estimate_s == pytest.approx(waits)


def test_other_sizes_scale_only_the_time_beyond_what_a_sample_waits_out(yours_only):
    """seed's perf2 asks for fib(40) where default asked fib(32): its time beyond the counting
    before and after the long request grows with the fib calls, the counting (5 s against 1 s)
    is seed's own; the forecast and the sweep's own estimate read it the same way."""
    from gillab.measure import experiments
    from gillab.measure.experiments.fib_server import calls

    def row(repeat):
        return {"status": "ok", "config": "seen", "profile": "default", "condition": "3.9.2", "repeat": str(repeat),
                "point": "kind=thread,scenario=perf2", "kind": "thread", "scenario": "perf2", "long_n": "32",
                "before_s": "0.6", "after_s": "0.4", "identity_key": "i", "code_key": "k", "run_id": "r",
                "process_wall_s": "1.7"}

    yours_only([row(r) for r in range(3)])
    seed = experiments.get("fib_server").resolve("seed")
    at = {"kind": "thread", "scenario": "perf2"}
    assert experiments.waits("fib_server", seed, at) == 5.0
    beyond = 0.7 * calls(40) / calls(32)                   # about 33 s: 47 times the 0.7 s of fib(32)
    t = budget.timing("fib_server", "planned-but-never-measured")
    assert t.waited == {("3.9.2", "kind=thread,scenario=perf2"): pytest.approx(1.0)}
    took = t.seconds("3.9.2", "kind=thread,scenario=perf2", experiments.work("fib_server", seed, at), 5.0)
    assert took - t.overhead == pytest.approx(beyond + 5.0)
    # without the planned waits, the whole time scales, as for a chapter that waits out nothing
    assert t.seconds("3.9.2", "kind=thread,scenario=perf2", experiments.work("fib_server", seed, at)) - t.overhead \
        == pytest.approx(1.7 * calls(40) / calls(32))
    plan = sweep.plan("fib_server", "seed", {"scenarios": ["perf2"], "kinds": ["thread"]}, new_campaign=True)
    assert "beyond what it waits out" in plan.estimate_basis
    assert plan.estimate_s == pytest.approx(len(plan.todo) * (beyond + 5.0))


def test_a_fib_servers_work_is_the_fib_calls_its_timed_requests_make():
    """The workload's fib(n) makes 2 F(n) - 1 calls; a sample's work counts the calls of the requests
    it times: perf1's before and after, perf2's long one, the lock-out's one more than the forks."""
    from gillab.measure import experiments
    from gillab.measure.experiments.fib_server import calls

    made = [0]

    def fib(n):
        made[0] += 1
        return 1 if n <= 2 else fib(n - 1) + fib(n - 2)

    for n in (1, 2, 3, 12, 18):
        made[0] = 0
        fib(n)
        assert calls(n) == made[0], n
    p = experiments.get("fib_server").resolve("seed")
    assert experiments.work("fib_server", p, {"kind": "pool", "scenario": "perf1"}) == 10 * calls(30)
    assert experiments.work("fib_server", p, {"kind": "pool", "scenario": "perf2"}) == calls(40)
    assert experiments.work("fib_server", p, {"kind": "prefork", "scenario": "lockout"}) == 9 * calls(30)
    # a stored row (text) says the same of the sample it was
    row = {k: str(v) for k, v in p.items() if not isinstance(v, list)} | {"kind": "pool", "scenario": "perf2"}
    assert experiments.work("fib_server", row, row) == calls(40)
    assert experiments.waits_done("fib_server", row) == 5.0
