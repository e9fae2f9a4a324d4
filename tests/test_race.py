"""The race behind the convoy (gillab.present.race): what a handler's release is read as
(gillab.measure.trace_file.releases), the race's shares and the cost they predict, on synthetic
traces with known answers, and on the committed campaigns from two kinds of CPU."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from gillab.measure import trace_file
from gillab.present import race

from test_traces import MS, D, F, R, T, W, raw

H, C = 5, 6          # the handler and the CPU thread
US = 1_000


def _trace(events, *, untraced_cost=None, rnd=0, interval=5000):
    tr = trace_file.parse(raw(events, pid=1, interval=interval))
    meta = {"condition": "3.13.5", "placement": "pinned", "round": rnd,
            "point": {"switch_interval": interval / 1e6, "cpu_threads": 1, "cpu_processes": 0},
            "sample_result": {"handler_tid": H, "cpu_tids": str(C)}}
    if untraced_cost is not None:
        meta["untraced"] = {"cost_per_request_intervals": untraced_cost}
    return dataclasses.replace(tr, meta=meta)


def _request(t0: int, lose_recv: bool, lose_send: bool) -> list:
    """One request from ``t0``: a recv and a send, each a release of the GIL by the handler.  A lost
    release: the CPU thread takes the GIL 8 µs after the drop, the handler's call returns at 30 µs
    and it waits until the CPU thread drops when asked, one interval after it asked; a won one:
    the call returns at 3 µs and the handler takes the GIL straight back."""
    ev, t = [], t0
    for lose in (lose_recv, lose_send):
        if lose:
            ev += [(t, H, D), (t + 8 * US, C, T), (t + 30 * US, H, W), (t + 30 * US + 5 * MS, H, R),
                   (t + 30 * US + 5 * MS + 10, C, F), (t + 30 * US + 5 * MS + 40, H, T), (t + 30 * US + 5 * MS + 60, C, W)]
            t += 6 * MS
        else:
            ev += [(t, H, D), (t + 3 * US, H, W), (t + 3 * US + 100, H, T)]
            t += 1 * MS
    return ev


def _run(pattern, **kw):
    events, t = [(0, C, W), (10, H, T)], 100
    for recv, send in pattern:
        events += _request(t, recv, send)
        t = events[-1][0] + MS
    return _trace(events, **kw)


def test_a_release_is_lost_when_another_thread_takes_the_gil_before_the_handler_wants_it_back():
    tr = _run([(True, False)])
    rel = trace_file.releases(tr, H)
    assert rel["lost"].tolist() == [True, False]
    assert rel["wake_us"].iloc[0] == pytest.approx(8.0) and np.isnan(rel["wake_us"].iloc[1])
    assert rel["call_us"].tolist() == pytest.approx([30.0, 3.0])
    assert rel["wait_us"].tolist() == pytest.approx([5000.04, 0.1])


def test_the_waits_a_request_makes_times_a_waits_length_predict_its_cost():
    # three requests, two of their six releases lost: a third of the releases, 2/3 of a wait a request
    tr = _run([(True, False), (False, False), (False, True)], untraced_cost=0.7)
    r = race.run(tr)
    assert (r["releases"], r["lost"]) == (6, 2)
    assert r["lost_share"] == pytest.approx(1 / 3)
    assert r["waits_per_request"] == pytest.approx(2 / 3)
    assert r["wait_intervals"] == pytest.approx(5000.04 / 5000)
    assert r["predicted_cost"] == pytest.approx(2 / 3 * 5000.04 / 5000)
    assert r["wake_us"] == pytest.approx(8.0)
    assert r["call_won_us"] == pytest.approx(3.0) and r["call_lost_us"] == pytest.approx(30.0)
    assert r["untraced_cost"] == 0.7


def test_a_run_that_loses_no_race_predicts_no_cost():
    r = race.run(_run([(False, False)] * 3))
    assert r["lost_share"] == 0 and r["predicted_cost"] == 0 and np.isnan(r["wait_intervals"])


def test_over_runs_a_point_has_intervals_only_with_the_runs_a_median_needs():
    few = [_run([(True, False), (False, False)], rnd=k, untraced_cost=0.5) for k in range(3)]
    pts = race.points(few)
    (row,) = pts.to_dict("records")
    assert row["runs"] == 3 and not row["lost_share"]["conclusive"]
    assert "too few runs" in race.table(pts)["releases lost to a CPU thread"].iloc[0]
    # the untraced cost measured in each round scatters around the prediction (0.5 intervals)
    many = [_run([(True, False), (False, False)], rnd=k, untraced_cost=0.5 * (0.91 + 0.03 * k)) for k in range(7)]
    (row,) = race.points(many).to_dict("records")
    assert row["lost_share"]["conclusive"] and row["lost_share"]["median"] == pytest.approx(0.25)
    assert row["agreement"]["n"] == 7 and row["agreement"]["word"] == "are consistent"
    far = [_run([(True, False), (False, False)], rnd=k, untraced_cost=0.25 * (0.91 + 0.03 * k)) for k in range(7)]
    (row,) = race.points(far).to_dict("records")
    assert row["agreement"]["word"] == "traced higher"
    assert race.table(race.points(far))["predicted / untraced"].iloc[0].endswith("predicted higher")


@pytest.fixture(scope="module")
def committed():
    return race.across("convoy")


def test_the_committed_traces_give_the_race_on_two_kinds_of_cpu(committed):
    df, damaged = committed
    assert not damaged
    assert df["machine"].nunique() >= 2, "the reference's traces and another CPU's"
    # a point whose handler let the GIL go at least once has every statistic; one starved for its
    # whole window (two CPU threads at 100 ms, traced once) has none, and its cells say so
    some = df[df["releases"] > 0]
    for col in ("lost_share", "wait_intervals", "predicted_cost"):
        assert all(r["n"] > 0 for r in some[col]), col
    assert all(r["n"] > 0 for r in some[some["lost"] > 0]["wake_us"])
    none = race.table(df[df["releases"] == 0])
    assert (none["releases lost to a CPU thread"] == "-").all()
    # a sentence for each campaign whose points have the runs an interval needs, then the two parts
    # side by side across machines, then the campaigns left to the table
    read = {c for c, g in df.groupby("campaign") if any(r["conclusive"] for r in g["lost_share"])}
    said = race.sentences(df)
    assert len(read) >= 2 and all(sum(f"`{c}`" in x for x in said[:len(read)]) == 1 for c in read)
    assert said[len(read)].startswith("**At 5 ms, on 2 kinds of machine**")
    # then why a lost race costs more than an interval at the shorter ones: the time beyond it
    assert said[len(read) + 1].startswith("**Beyond the interval**") and "at 1 ms" in said[len(read) + 1]
    # then, for each campaign whose traced runs carry the interpreter's own count, the check
    # against it (the traces recorded with the count: 2026-11-30)
    checked = [s for s in said if s.startswith("**Checked without our patch**")]
    assert any("`amd-epyc-2c-20261130-traces`" in s for s in checked)
    assert said[len(read) + 2:len(read) + 2 + len(checked)] == checked
    rest = set(df["campaign"]) - read
    assert len(said) == len(read) + 2 + len(checked) + bool(rest)
    assert all(f"`{c}`" in said[-1] for c in rest)


def test_a_requests_two_calls_are_told_apart_by_their_length():
    # every request loses the race after its slow call (30 µs) and wins it after its quick one (3 µs)
    r = race.run(_run([(True, False)] * 3))
    assert r["slow_call_us"] == pytest.approx(30.0) and r["slow_lost_share"] == 1.0
    assert r["quick_call_us"] == pytest.approx(3.0) and r["quick_lost_share"] == 0.0
    # whichever comes first in the window
    r = race.run(_run([(False, True)] * 3))
    assert (r["quick_lost_share"], r["slow_lost_share"]) == (0.0, 1.0)


def test_the_trace_is_checked_against_the_interpreters_own_count_of_hand_offs():
    """Ten requests, each losing its recv: two hand-offs a request in the trace (the CPU thread
    takes the GIL, the handler takes it back).  A run whose server counted two a request agrees
    (1.0), one that counted four says the trace saw half; without a count there is nothing to set
    it against, never a ratio made up."""
    pattern = [(True, False)] * 10
    for counted, ratio in ((2.0, 1.0), (4.0, 0.5)):
        tr = _run(pattern)
        tr.meta["sample_result"].update(gil_switches=counted * 500, requests_served=500)
        r = race.run(tr)
        assert r["counted_handoffs"] == pytest.approx(counted)
        assert r["traced_over_counted"] == pytest.approx(ratio, rel=0.06)     # the first take is one more
    assert np.isnan(race.run(_run(pattern))["traced_over_counted"])
    assert np.isnan(race.counted_handoffs({"gil_switches": None, "requests_served": 10}))


def test_the_witness_sentence_says_whether_every_points_interval_holds_one():
    trs = []
    for k in range(9):
        tr = _run([(True, False)] * 10, untraced_cost=1.0, rnd=k)
        tr.meta["sample_result"].update(gil_switches=(2.0 + 0.01 * (k - 4)) * 500, requests_served=500)
        trs.append(tr)
    df = race.points(trs).assign(campaign="c", machine="m")
    said = [s for s in race.sentences(df) if s.startswith("**Checked without our patch**")]
    assert len(said) == 1 and "holds 1 at 1 of the 1 points" in said[0] and "the trace sees" in said[0]


def test_a_lost_races_wait_beyond_the_interval_is_read_as_its_own_time_or_a_share():
    """A wait after a lost release is the interval and then some (the synthetic run: 40 ns after the
    CPU thread's forced drop); over a campaign's runs at each interval that time is *its own* where it
    grew from the shortest interval by less than the square root of the intervals' ratio on every
    campaign, *a share* where by more on every one, and neither is said where a bound holds it."""
    r = race.run(_run([(True, False)] * 2))
    assert r["wait_beyond_us"] == pytest.approx(0.04, abs=1e-6)

    def at(beyond: dict, width: float = 0.1):
        rows = [{"campaign": c, "machine": m, "cpu_threads": 1, "switch_interval": si,
                 "beyond_pooled": {"n": 20, "median": us, "lo": us * (1 - width), "hi": us * (1 + width),
                                   "conclusive": True}}
                for (c, m), v in beyond.items() for si, us in v.items()]
        return race._beyond_sentences(pd.DataFrame(rows))

    own = at({("a", "A"): {0.001: 100, 0.005: 120}, ("b", "B"): {0.001: 90, 0.005: 100, 0.01: 150}})
    assert len(own) == 1 and "it grew far less than the interval did" in own[0]
    assert "90 to 100 µs at 1 ms (9% to 10% of the interval)" in own[0] and "2 campaigns on 2 kinds" in own[0]
    share = at({("a", "A"): {0.001: 100, 0.005: 500}})
    assert "it grew as a share of the interval would" in share[0]
    # a growth of 2.2 times over 5 times the interval: sqrt(5) = 2.24 lies inside its bounds
    assert "neither plainly" in at({("a", "A"): {0.001: 100, 0.005: 220}})[0]
    assert at({("a", "A"): {0.005: 100}}) == []          # one interval: nothing to compare
