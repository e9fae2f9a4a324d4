"""A whole run against the reader's time (:mod:`gillab.judge.budget`): the forecast chooses what fits,
names what it leaves, and the deadline stops a sweep between samples with nothing lost."""
from __future__ import annotations

import collections

import pytest

from gillab.judge import budget
from gillab.measure import campaigns, sweep

TINY = {"conditions": "3.13.5,3.13.5t", "threads": [1, 2], "total_decrements": 20_000, "repeats": 2}


def chapter(name, minutes, rows, short=()):
    return budget.ChapterForecast(name, 10, minutes * 60, [f"{name}/r{i}" for i in range(rows)], "test", 7,
                                  short=list(short))


def test_every_chapter_is_measured_when_the_plan_fits():
    plan = [chapter("a", 10, 5), chapter("b", 15, 1)]
    assert budget.choose(plan, 30) == (["a", "b"], [])
    assert budget.choose(plan, None) == (["a", "b"], [])


def test_a_plan_that_does_not_fit_leaves_out_the_fewest_rows_per_minute_and_names_them():
    plan = [chapter("slow", 20, 2), chapter("fast", 10, 10), chapter("mid", 8, 4),
            budget.ChapterForecast("broken", 0, 0.0, [], "", 0, error="no build")]
    chosen, out = budget.choose(plan, 20)
    assert chosen == ["fast", "mid"]                        # in the report's order, 18 of 20 minutes
    assert [c.experiment for c in out] == ["slow"]
    text = budget.describe(plan, chosen, 20)
    assert "18.0 minutes of a 20-minute budget" in text and "14 of the 16 judged" in text
    assert "not judged in this budget (their chapters do not fit): slow: slow/r0, slow/r1" in text
    assert "(cannot start)" in text and "(left out: no time)" in text


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
    assert budget.round_size("countdown") == 3 and budget.round_size("convoy") == 1
    assert budget.most_repeats("countdown") == 60 and budget.most_repeats("convoy") == 20
