"""full_grid and small_grid: the builds measured at every point, and a narrower grid for the rest.
Both choose what is measured, never what a sample is, so samples of either grid are resumed by
the other."""
from __future__ import annotations

import collections

import pytest

from gillab.measure import experiments
from gillab.measure import grid, resume, sweep
from gillab.measure.protocol import point_key
from gillab.measure.profiles import ParameterError

TINY = {"conditions": "3.13.5,3.13.5t", "threads": [1, 2], "total_decrements": 20_000, "repeats": 2}


@pytest.mark.parametrize("small, message", [
    ("total_decrements=5", "small_grid names 'total_decrements', which does not choose the points"),
    ("threads=3", "its point threads=3 is not a point of the full grid"),
    ("cpu_threads=1", "small_grid names 'cpu_threads', which is not one of its parameters"),
    ("threads=many", "small_grid threads='many' is not valid"),
    ("threads", "'threads' is not name=value"),
    ('{"threads": [1]', "is not a JSON object"),
])
def test_a_small_grid_that_does_not_narrow_the_grid_is_refused_before_measuring(small, message):
    with pytest.raises(ParameterError, match=message):
        sweep.plan("countdown", "smoke", dict(TINY, full_grid="3.13.5", small_grid=small))


def test_a_grid_the_reader_narrows_past_the_profiles_small_grid_says_how_to_measure_it():
    """The `default` profile's small grid is within its own grid; a reader who narrows the grid
    outside it (data_race at 1,000 iterations only) is told what to pass, before measuring."""
    with pytest.raises(ParameterError, match=r"not a point of the full grid; .*a small_grid within it, or none"):
        sweep.plan("data_race", "default", {"iterations": [1000]})
    for small in ("iterations=1000", ""):                  # what the message offers: both are measured
        exp = experiments.get("data_race")
        p = exp.resolve("default", {"iterations": [1000], "small_grid": small})
        assert {pt["iterations"] for pt in exp.points(p)} == {1000}
        g = grid.of(exp, p)
        assert (g.small is None) == (small == "") and (small == "" or g.small == {point_key(x) for x in exp.points(p)})


def test_an_unknown_build_in_full_grid_is_refused():
    with pytest.raises(ParameterError, match="full_grid: unknown condition"):
        sweep.plan("countdown", "smoke", dict(TINY, full_grid="3.13.99", small_grid="threads=1"))


def test_the_small_grid_is_written_three_ways_and_is_not_part_of_the_configuration():
    exp = experiments.get("countdown")
    forms = ["threads=1", {"threads": [1]}, '{"threads": [1]}']
    ps = [exp.resolve("smoke", dict(TINY, full_grid="3.13.5", small_grid=f)) for f in forms]
    assert {grid.of(exp, p).small for p in ps} == {frozenset({"threads=1"})}
    assert {exp.config_id(p) for p in ps} == {exp.config_id(exp.resolve("smoke", TINY))}


def test_builds_outside_full_grid_are_planned_on_the_small_grid_only():
    exp = experiments.get("countdown")
    p = exp.resolve("smoke", dict(TINY, full_grid="3.13.5", small_grid="threads=1"))
    cids = ["3.13.5", "3.13.5t"]
    todo, resumable, reasons, _ = resume.plan_samples(exp, p, cids, {}, set(), {}, "code", dict.fromkeys(cids))
    planned = collections.Counter((cid, point_key(pt)) for _, pt, cid in todo)
    assert planned == {("3.13.5", "threads=1"): 2, ("3.13.5", "threads=2"): 2, ("3.13.5t", "threads=1"): 2}
    (why,) = [k for k in reasons if k.startswith("not applicable")]
    assert "outside the small grid (threads=[1]; full grid: 3.13.5)" in why and reasons[why] == 2
    # without a small grid, full_grid alone changes nothing
    p = exp.resolve("smoke", dict(TINY, full_grid="3.13.5"))
    todo, *_ = resume.plan_samples(exp, p, cids, {}, set(), {}, "code", dict.fromkeys(cids))
    assert len(todo) == 8


def test_a_point_outside_a_builds_small_grid_never_asks_for_adaptive_repeats():
    exp = experiments.get("countdown")
    p = exp.resolve("smoke", dict(TINY, full_grid="3.13.5", small_grid="threads=1", max_repeats=9))
    keys, ckey = {"3.13.5": "a", "3.13.5t": "b"}, "code"
    k1, k2 = point_key({"threads": 1}), point_key({"threads": 2})
    rows = {}
    for cid, pk, vals in (("3.13.5", k1, [1.0] * 7), ("3.13.5", k2, [2.0] * 7),
                          ("3.13.5t", k1, [1.0] * 7)):
        for rep, v in enumerate(vals):
            rows[(cid, pk, rep)] = {"seconds": v, "identity_key": keys[cid], "code_key": ckey}
    idents = dict.fromkeys(keys)
    assert resume.wide_points(exp, p, list(keys), rows, keys, ckey, idents, upto=7) == []
    # the same rows with every build on the full grid: 3.13.5t has no sample at threads=2
    p_all = exp.resolve("smoke", dict(TINY, max_repeats=9))
    wide = resume.wide_points(exp, p_all, list(keys), rows, keys, ckey, idents, upto=7)
    assert [(point_key(pt), why) for pt, why in wide] == [(k2, "3.13.5t: 0 run(s), a 95% interval needs 7")]


def test_a_small_grid_run_is_completed_by_a_full_grid_run_without_measuring_twice(builds, data_dir):
    from gillab.measure import campaigns

    small = sweep.measure("countdown", "smoke", dict(TINY, full_grid="3.13.5", small_grid="threads=1"),
                          progress=False)
    assert small.status == "complete" and small.measured == 6
    full = sweep.measure("countdown", "smoke", TINY, campaign=small.campaign, progress=False)
    assert full.skipped == 6 and full.measured == 2
    rows = campaigns.load(small.campaign).store("countdown").rows()
    seen = collections.Counter((r["condition"], r["point"]) for r in rows if r["status"] == "ok")
    assert seen == {(c, point_key({"threads": n})): 2 for c in ("3.13.5", "3.13.5t") for n in (1, 2)}
    assert {r["run_id"] for r in rows if r["condition"] == "3.13.5t" and r["point"] == "threads=2"} == {full.run_id}


# -- rest_repeats, claim_grid, claim_builds: the runs of the claims' points and of the rest --------

def runs_at(g, cid: str, point: dict, repeats: int) -> int:
    """How many of ``repeats`` runs ``cid`` gets at ``point`` on grid ``g`` (0 outside it)."""
    return sum(1 for rep in range(repeats) if g.reason(cid, point, rep) is None)


def test_points_no_claim_reads_get_rest_repeats_and_the_claims_points_every_repeat():
    exp = experiments.get("countdown")
    p = exp.resolve("smoke", dict(TINY, repeats=5, rest_repeats=2, claim_grid="threads=2", claim_builds="3.13.5"))
    cids = ["3.13.5", "3.13.5t"]
    todo, _, reasons, _ = resume.plan_samples(exp, p, cids, {}, set(), {}, "code", dict.fromkeys(cids))
    planned = collections.Counter((cid, point_key(pt)) for _, pt, cid in todo)
    assert planned == {("3.13.5", "threads=1"): 2, ("3.13.5", "threads=2"): 5,
                       ("3.13.5t", "threads=1"): 2, ("3.13.5t", "threads=2"): 2}
    # the runs beyond rest_repeats are the later repeats, so that a claim's runs stay paired
    assert sorted(rep for rep, pt, cid in todo if cid == "3.13.5" and pt["threads"] == 2) == [0, 1, 2, 3, 4]
    (why,) = [k for k in reasons if k.startswith("not applicable")]
    assert "beyond the 2 runs of a point no claim reads" in why and reasons[why] == 3 + 3 + 3
    g = grid.of(exp, p)
    assert [runs_at(g, c, {"threads": n}, 5) for c in cids for n in (1, 2)] == [2, 5, 2, 2]
    # claim_builds alone: those builds everywhere; the claim tier is not part of the configuration
    p2 = exp.resolve("smoke", dict(TINY, repeats=5, rest_repeats=1, claim_builds="3.13.5t"))
    assert [runs_at(grid.of(exp, p2), c, {"threads": 1}, 5) for c in cids] == [1, 5]
    assert exp.config_id(p) == exp.config_id(p2) == exp.config_id(exp.resolve("smoke", TINY))


def test_the_claim_tier_composes_with_the_small_grid():
    exp = experiments.get("countdown")
    p = exp.resolve("smoke", dict(TINY, repeats=4, rest_repeats=1, full_grid="3.13.5", small_grid="threads=1",
                                  claim_grid="threads=2"))
    g = grid.of(exp, p)
    # 3.13.5t is not measured at threads=2 at all (small grid), and once at threads=1 (no claim there)
    assert [runs_at(g, c, {"threads": n}, 4) for c in ("3.13.5", "3.13.5t") for n in (1, 2)] == [1, 4, 1, 0]


def test_the_claims_points_may_be_a_union_of_tiers():
    """Where the claims read two corners of a grid (convoy: every interval with 0-2 CPU threads,
    and 4 CPU threads at 5 ms only), the claim grid is the union of narrower grids, written as a
    list (profiles.toml) or tiers joined by | (the command line), with the same result."""
    exp = experiments.get("switch_interval")
    base = {"conditions": "3.13.5", "switch_intervals": [0.005, 0.001, 0.0001], "threads": [1, 2, 4],
            "total_decrements": 20_000, "repeats": 4, "rest_repeats": 1}
    written = ([{"switch_intervals": [0.005, 0.001], "threads": [1, 2]}, {"switch_intervals": [0.005], "threads": [4]}],
               "switch_intervals=0.005,0.001; threads=1,2 | switch_intervals=0.005; threads=4")
    got = []
    for claim in written:
        g = grid.of(exp, exp.resolve("smoke", dict(base, claim_grid=claim)))
        got.append({(si, n): runs_at(g, "3.13.5", {"switch_interval": si, "threads": n, "timer_slack_ns": 1}, 4)
                    for si in base["switch_intervals"] for n in base["threads"]})
        assert g.describe_claim() == "switch_intervals=[0.005, 0.001]; threads=[1, 2] or switch_intervals=[0.005]; threads=[4]"
    assert got[0] == got[1] == {(0.005, 1): 4, (0.005, 2): 4, (0.005, 4): 4, (0.001, 1): 4, (0.001, 2): 4,
                                (0.001, 4): 1, (0.0001, 1): 1, (0.0001, 2): 1, (0.0001, 4): 1}
    with pytest.raises(ParameterError, match="holds no point of the grid"):
        grid.of(exp, exp.resolve("smoke", dict(base, claim_grid="threads=8 | switch_intervals=0.5")))
    # a grid the reader narrowed narrows the profile's claims' points with it
    g = grid.of(exp, exp.resolve("smoke", dict(base, threads=[1, 2], claim_grid=written[0])))
    assert runs_at(g, "3.13.5", {"switch_interval": 0.005, "threads": 2, "timer_slack_ns": 1}, 4) == 4
    with pytest.raises(ParameterError, match="empty tier"):
        exp.resolve("smoke", dict(base, claim_grid="threads=1 | "))


TIER_BASE = {"conditions": "3.13.5,3.13.5t", "switch_intervals": [0.005, 0.001], "threads": [1, 2],
             "total_decrements": 20_000, "repeats": 3, "rest_repeats": 1}


def tier_grid(claim, **extra):
    """switch_interval's grid of :data:`TIER_BASE` (and ``extra``) with ``claim`` as its claim grid,
    and the runs each build gets at each of its points."""
    exp = experiments.get("switch_interval")
    g = grid.of(exp, exp.resolve("smoke", dict(TIER_BASE, claim_grid=claim, **extra)))
    return g, {(c, si, n): runs_at(g, c, {"switch_interval": si, "threads": n, "timer_slack_ns": 1}, 3)
               for c in ("3.13.5", "3.13.5t") for si in (0.005, 0.001) for n in (1, 2)}


def test_a_claim_tier_may_name_its_own_builds():
    """A tier with ``builds`` gives every repeat at its points to those builds only (ccbench: the
    old GIL's echo next to a regex thread takes 36 s a run; today's build is judged there)."""
    for claim in ([{"threads": [1]}, {"switch_intervals": [0.001], "threads": [2], "builds": "3.13.5t"}],
                  "threads=1 | switch_intervals=0.001; threads=2; builds=3.13.5t"):
        g, got = tier_grid(claim)
        assert got == {("3.13.5", 0.005, 1): 3, ("3.13.5", 0.005, 2): 1, ("3.13.5", 0.001, 1): 3, ("3.13.5", 0.001, 2): 1,
                       ("3.13.5t", 0.005, 1): 3, ("3.13.5t", 0.005, 2): 1, ("3.13.5t", 0.001, 1): 3,
                       ("3.13.5t", 0.001, 2): 3}
        assert "builds=3.13.5t" in g.describe_claim()
    with pytest.raises(ParameterError, match="claim_grid's builds"):
        tier_grid("threads=1; builds=3.13.99")


def test_a_claim_tier_may_give_its_points_runs_of_its_own_measured_with_the_claims():
    """Today's builds' one run where the then-and-now rows read: a tier with its own ``repeats``
    (and its own builds, beyond ``claim_builds``) gets that many runs, and a run short of time
    measures them with the claims, not after the figures' points."""
    for claim in ([{"threads": [1, 2]}, {"switch_intervals": [0.005], "builds": "3.13.5t", "repeats": 2}],
                  "threads=1,2 | switch_intervals=0.005; builds=3.13.5t; repeats=2"):
        g, got = tier_grid(claim, claim_builds="3.13.5")
        assert got == {("3.13.5", 0.005, 1): 3, ("3.13.5", 0.005, 2): 3, ("3.13.5", 0.001, 1): 3, ("3.13.5", 0.001, 2): 3,
                       ("3.13.5t", 0.005, 1): 2, ("3.13.5t", 0.005, 2): 2, ("3.13.5t", 0.001, 1): 1,
                       ("3.13.5t", 0.001, 2): 1}
        assert "repeats=2" in g.describe_claim()
        first = grid.claims_first(g)
        with_claims = {(si, n) for si in (0.005, 0.001) for n in (1, 2)
                       if first.reason("3.13.5t", {"switch_interval": si, "threads": n, "timer_slack_ns": 1}, 0) is None}
        assert with_claims == {(0.005, 1), (0.005, 2)}
    # as many as every repeat: allowed, the same as a tier with no runs of its own
    _, got = tier_grid("threads=1,2 | switch_intervals=0.005; builds=3.13.5t; repeats=3", claim_builds="3.13.5")
    assert got[("3.13.5t", 0.005, 1)] == 3
    for bad, message in (("4", "between rest_repeats=1 and repeats=3"), ("0", "between rest_repeats=1 and repeats=3"),
                         ("two", "not a whole number of runs")):
        with pytest.raises(ParameterError, match=message):
            tier_grid(f"threads=1,2 | switch_intervals=0.005; builds=3.13.5t; repeats={bad}", claim_builds="3.13.5")


@pytest.mark.parametrize("extra, message", [
    ({"claim_grid": "threads=2"}, "without rest_repeats every point gets every repeat"),
    ({"claim_builds": "3.13.5"}, "without rest_repeats every point gets every repeat"),
    ({"rest_repeats": 1}, "needs claim_grid or claim_builds"),
    ({"rest_repeats": 3, "claim_grid": "threads=2"}, "rest_repeats=3 is more than repeats=2"),
    ({"rest_repeats": 1, "claim_grid": "threads=3"}, "claim_grid's tier .* holds no point of the grid"),
    ({"rest_repeats": 1, "claim_grid": "total_decrements=5"}, "claim_grid names 'total_decrements'"),
    ({"rest_repeats": 1, "claim_builds": "3.13.99"}, "claim_builds: unknown condition"),
    ({"rest_repeats": 1, "claim_builds": "3.13.5", "max_repeats": 4}, "cannot be combined"),
])
def test_a_claim_tier_that_cannot_work_is_refused_before_measuring(extra, message):
    with pytest.raises(ParameterError, match=message):
        sweep.plan("countdown", "smoke", dict(TINY, **extra))


def test_a_run_with_the_claim_tier_measures_and_resumes_as_planned(builds, data_dir):
    from gillab.measure import campaigns

    tier = dict(TINY, repeats=3, rest_repeats=1, claim_grid="threads=1")
    first = sweep.measure("countdown", "smoke", tier, progress=False)
    assert first.status == "complete" and first.measured == 2 * (3 + 1)
    again = sweep.measure("countdown", "smoke", tier, campaign=first.campaign, progress=False)
    assert again.measured == 0 and again.skipped == 8
    rows = campaigns.load(first.campaign).store("countdown").rows()
    seen = collections.Counter((r["condition"], r["point"]) for r in rows if r["status"] == "ok")
    assert seen == {(c, point_key({"threads": n})): (3 if n == 1 else 1) for c in ("3.13.5", "3.13.5t") for n in (1, 2)}


def test_claims_first_measures_the_claims_points_and_a_later_run_adds_the_rest(builds, data_dir):
    """A run short of time measures a chapter's claims first (the points its judged rows read, all
    their runs); the chapter measured again afterwards resumes them and adds the points no claim
    reads, once each: together exactly the chapter's planned samples, none measured twice."""
    from gillab.measure import campaigns

    tier = dict(TINY, repeats=3, rest_repeats=1, claim_grid="threads=1")
    first = sweep.measure("countdown", "smoke", tier, progress=False, claims_first=True)
    assert first.status == "complete" and first.measured == 2 * 3
    plan = sweep.plan("countdown", "smoke", tier, campaign=first.campaign)
    assert len(plan.todo) == 2 and {point_key(pt) for _, pt, _ in plan.todo} == {point_key({"threads": 2})}
    rest = sweep.measure("countdown", "smoke", tier, campaign=first.campaign, progress=False)
    assert rest.measured == 2 and rest.skipped == 6
    rows = campaigns.load(first.campaign).store("countdown").rows()
    seen = collections.Counter((r["condition"], r["point"]) for r in rows if r["status"] == "ok")
    assert seen == {(c, point_key({"threads": n})): (3 if n == 1 else 1) for c in ("3.13.5", "3.13.5t") for n in (1, 2)}
    # a chapter without claim tiers has nothing to leave for later
    whole = sweep.plan("countdown", "smoke", TINY, new_campaign=True, claims_first=True)
    assert len(whole.todo) == 2 * 2 * TINY["repeats"]
