"""Adaptive repeats: after ``repeats``, a point whose CI is wider than ``ci_target`` gets another
repeat of every build, up to ``max_repeats``; checked before measuring, recorded in the run file,
resumed like any other sample."""
from __future__ import annotations

import collections
import json

import pytest

from gillab.measure import experiments
from gillab.measure import resume, sweep
from gillab.measure.protocol import point_key
from gillab.measure.profiles import ParameterError

TINY = {"conditions": "3.13.5,3.13.5t", "threads": [1, 2], "total_decrements": 20_000, "repeats": 2}


def _counts(camp_id, data_dir):
    from gillab.measure import campaigns

    store = campaigns.load(camp_id).store("countdown")
    return collections.Counter((r["condition"], r["point"]) for r in store.rows() if r["status"] == "ok")


@pytest.mark.parametrize("bad, message", [
    ({"repeats": 4, "max_repeats": 3}, "max_repeats=3 is below repeats=4"),
    ({"ci_target": 0}, "ci_target=0 is not valid"),
    ({"ci_target": 1.5}, "ci_target=1.5 is not valid: must be a fraction"),
    ({"max_repeats": "many"}, "max_repeats='many' is not valid"),
])
def test_bad_adaptive_parameters_are_refused_before_measuring(bad, message):
    with pytest.raises(ParameterError, match=message):
        experiments.get("countdown").resolve("smoke", bad)


def test_repeats_given_alone_mean_exactly_that_many(monkeypatch):
    # a profile that adapts from 3 to 4 repeats; a reader asking for 9 (or 2) gets 9 (or 2)
    from gillab.measure import profiles

    real = profiles.load_profiles()
    adapting = {**real, "countdown": {**real["countdown"], "default": {
        **{k: v for k, v in real["countdown"]["default"].items() if k not in ("rest_repeats", "claim_grid")},
        "repeats": 3, "max_repeats": 4}}}
    monkeypatch.setattr(profiles, "load_profiles", lambda: adapting)
    exp = experiments.get("countdown")
    assert exp.resolve("default")["max_repeats"] == 4
    assert exp.resolve("default", {"repeats": 9})["max_repeats"] is None
    assert exp.resolve("default", {"repeats": 2})["max_repeats"] is None
    assert exp.resolve("default", {"repeats": 2, "max_repeats": 4})["max_repeats"] == 4


def test_an_experiment_without_a_statistic_refuses_adaptive_repeats():
    # data_race's claim is a count of runs that lost updates: more runs where a CI is wide means nothing
    with pytest.raises(ParameterError, match="data_race: max_repeats=12 asks for adaptive repeats"):
        experiments.get("data_race").resolve("smoke", {"max_repeats": 12})
    assert experiments.get("data_race").resolve("smoke", {"max_repeats": 2})["repeats"] == 2  # = repeats: fixed


def _rows(values: dict, exp, p, keys, ckey):
    """Stored rows as store.measured returns them: (condition, point, repeat) -> row."""
    out = {}
    for (cid, pk), vals in values.items():
        for rep, v in enumerate(vals):
            out[(cid, pk, rep)] = {"seconds": v, "identity_key": keys[cid], "code_key": ckey}
    return out


def test_only_points_whose_ci_is_wide_for_some_build_get_another_repeat():
    exp = experiments.get("countdown")
    p = exp.resolve("smoke", {"threads": [1, 2, 4], "ci_target": 0.05, "max_repeats": 9, "repeats": 3})
    cids = ["A", "B"]
    keys, ckey = {"A": "ka", "B": "kb"}, "code"
    idents = {"A": None, "B": None}
    k1, k2, k4 = (point_key({"threads": n}) for n in (1, 2, 4))
    narrow_a, narrow_b = [1.00, 1.01, 0.99, 1.00, 1.005, 0.995, 1.0], [2.0, 2.02, 1.98, 2.0, 2.01, 1.99, 2.0]
    rows = _rows({
        ("A", k1): narrow_a, ("B", k1): narrow_b,                                    # both within 5%: done
        ("A", k2): narrow_a, ("B", k2): [2.0, 3.0, 1.5, 2.0, 2.5, 1.8, 2.2],        # B spreads 50%: more
        ("A", k4): narrow_a[:6], ("B", k4): narrow_b,          # A lost a sample: 6 left, no 95% interval
    }, exp, p, keys, ckey)
    wide = resume.wide_points(exp, p, cids, rows, keys, ckey, idents, upto=7)
    assert [(point_key(pt), why.split(":")[0]) for pt, why in wide] == [(k2, "B"), (k4, "A")]
    assert "interval ±" in wide[0][1] and "a 95% interval needs 7" in wide[1][1]
    # a sample measured by other code (or another binary) does not count towards the interval
    rows[("A", k1, 1)]["code_key"] = "old"
    wide = resume.wide_points(exp, p, cids, rows, keys, ckey, idents, upto=7)
    assert [point_key(pt) for pt, _ in wide] == [k1, k2, k4] and wide[0][1] == "A: 6 run(s), a 95% interval needs 7"


def test_adaptive_repeats_measure_up_to_the_cap_record_why_and_resume(builds, data_dir, monkeypatch):
    exp = experiments.get("countdown")
    # a target no timing meets: every point gets every repeat up to the cap, for both builds
    wide = dict(TINY, max_repeats=4, ci_target=1e-9)
    pl = sweep.plan("countdown", "smoke", wide)
    assert len(pl.todo) == 2 * 2 * 2 and pl.adaptive_max == 2 * 2 * 2
    res = sweep.measure("countdown", "smoke", wide, progress=False)
    assert res.status == "complete" and res.measured == 16
    assert set(_counts(res.campaign, data_dir).values()) == {4}
    from gillab.measure import campaigns

    store = campaigns.load(res.campaign).store("countdown")
    (run,) = [json.loads(f.read_text()) for f in store.dir.joinpath("runs").glob("*.json")]
    assert [a["repeat"] for a in run["adaptive"]] == [2, 3]
    assert all(len(a["points"]) == 2 and a["samples"] == 4 for a in run["adaptive"])
    assert all("a 95% interval needs 7" in why for a in run["adaptive"] for why in a["points"].values())
    # rerun: every sample, the adaptive ones included, is resumed; nothing is measured again
    again = sweep.measure("countdown", "smoke", wide, progress=False)
    assert again.measured == 0 and again.skipped == 16

    # a target every timing meets, from runs enough for a 95% interval: exactly `repeats`, in a new
    # campaign.  Whether a real 7-run interval is within a target depends on how busy the machine
    # is, so the rule is made to find every interval that exists narrow enough (it still asks for
    # runs while there is none): the sweep's stopping is what is tested, not the machine's noise
    from gillab import stats

    real = stats.wide
    monkeypatch.setattr(stats, "wide", lambda values, target: real(values, target) if len(values) < 7 else "")
    narrow = dict(TINY, repeats=7, max_repeats=9, ci_target=0.99)
    res = sweep.measure("countdown", "smoke", narrow, new_campaign=True, progress=False)
    assert res.measured == 28 and set(_counts(res.campaign, data_dir).values()) == {7}
    assert exp.resolve("smoke", narrow)["max_repeats"] == 9


def test_the_progress_total_grows_with_the_adaptive_rounds(builds, data_dir):
    seen = []
    sweep.measure("countdown", "smoke", dict(TINY, threads=[1], max_repeats=3, ci_target=1e-9),
                  progress=lambda done, total, what: seen.append((done, total)))
    assert seen[0] == (0, 4) and seen[-1] == (6, 6)
    assert all(d <= t for d, t in seen)
