"""What decides a row that differs between kinds of CPU (gillab.judge.causes, gillab.judge.across):
the rows definite on two CPU groups on different sides are every one listed, each with its cause
where CAUSES.toml has one, and none that agrees, is open or was measured with other code."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from gillab import stats
from gillab.judge import across, causes, claims
from gillab.measure import campaigns
from gillab.measure.profiles import ParameterError


def _row(campaign, claim_id, outcome, *, role="judged", this_code=True, measured=1.0, condition="3.13.5"):
    return {"campaign": campaign, "claim_id": claim_id, "condition": condition, "outcome": outcome,
            "claim_role": role, "this_code": this_code, "document": "000", "experiment": claim_id.split("/")[0],
            "claim": claim_id, "measured": measured, "ci_low": measured * 0.9, "ci_high": measured * 1.1}


@pytest.fixture
def two_cpus(monkeypatch):
    """Campaigns a1, a2 on one kind of CPU, b1 on another."""
    monkeypatch.setattr(across, "cpu_groups", lambda cs=None: {"CPU A": ["a1", "a2"], "CPU B": ["b1"]})


def test_every_row_definite_on_two_kinds_of_cpu_on_different_sides_is_listed_with_its_cause(two_cpus):
    v = pd.DataFrame([
        _row("a1", "sha256/beyond_cores/threads=8", "agrees"), _row("b1", "sha256/beyond_cores/threads=8", "lower"),
        _row("a1", "primes/ft_single_slower", "agrees"), _row("b1", "primes/ft_single_slower", "lower"),
        # one kind's campaigns inconclusive and definite: the kind's outcome is the definite one
        _row("a1", "countdown/threads=2", "inconclusive"), _row("a2", "countdown/threads=2", "higher"),
        _row("b1", "countdown/threads=2", "agrees"),
        # the same on both kinds, open on one, a machine row, other code: none of them listed
        _row("a1", "countdown/threads=4", "agrees"), _row("b1", "countdown/threads=4", "agrees"),
        _row("a1", "countdown/threads=8", "agrees"), _row("b1", "countdown/threads=8", "inconclusive"),
        _row("a1", "convoy/mechanism/si=0.005/cpu_threads=1", "lower", role="machine"),
        _row("b1", "convoy/mechanism/si=0.005/cpu_threads=1", "agrees", role="machine"),
        _row("a1", "sha256/threads=2", "agrees", this_code=False), _row("b1", "sha256/threads=2", "lower"),
        # two campaigns of one kind on different sides: that kind has no outcome, nothing to set beside
        _row("a1", "sha256/threads=4", "agrees"), _row("a2", "sha256/threads=4", "lower"),
        _row("b1", "sha256/threads=4", "higher"),
    ])
    got = across.contradictions(v)
    assert sorted(got["claim_id"]) == ["countdown/threads=2", "primes/ft_single_slower",
                                       "sha256/beyond_cores/threads=8"]
    by = got.set_index("claim_id")
    assert by.at["countdown/threads=2", "outcome"] == "higher" and by.at["countdown/threads=2", "beside_outcome"] == "agrees"
    assert by.at["primes/ft_single_slower", "cause"] == causes.of("primes/ft_single_slower").decided_by
    assert by.at["primes/ft_single_slower", "witness"] == "ft_single_cost"
    assert by.at["sha256/beyond_cores/threads=8", "cause"] == causes.of("sha256/beyond_cores/threads=8").decided_by
    assert by.at["countdown/threads=2", "cause"] == ""          # no entry explains it: listed as such
    assert "(`a1`)" in by.at["sha256/beyond_cores/threads=8", "values"]


def test_one_kind_of_cpu_has_nothing_to_contradict(monkeypatch):
    monkeypatch.setattr(across, "cpu_groups", lambda cs=None: {"CPU A": ["a1", "b1"]})
    v = pd.DataFrame([_row("a1", "sha256/threads=2", "agrees"), _row("b1", "sha256/threads=2", "lower")])
    assert across.contradictions(v).empty


def test_every_cause_names_claims_that_exist_and_a_witness_that_reads():
    ids = list(claims._table()["claim_id"])
    found = causes.load()
    assert found, "CAUSES.toml holds no cause"
    for c in found:
        for p in c.claims:
            assert any(c.explains(i) for i in ids), p
        assert c.decided_by and c.why and not any(ch.isdigit() for ch in c.decided_by)


def test_a_cause_with_a_field_it_does_not_know_or_a_witness_that_is_not_there_is_refused():
    with pytest.raises(ParameterError, match="unknown fields"):
        causes._parse('[[cause]]\nclaims = ["x"]\ndecided_by = "d"\nwhy = "w"\nsource = "s"\n')
    with pytest.raises(ParameterError, match="no witness 'nope'"):
        causes._parse('[[cause]]\nclaims = ["x"]\ndecided_by = "d"\nwhy = "w"\nwitness = "nope"\n')
    with pytest.raises(ParameterError, match="lacks"):
        causes._parse('[[cause]]\nclaims = ["x"]\n')


def test_the_free_threaded_witness_reads_each_single_thread_workload_paired_by_round():
    """On the reference: the free-threaded build's cost over its GIL twin, per workload, with the
    interval where the rounds allow it; computed here from the same samples by hand."""
    from gillab.judge import results

    ref = campaigns.reference_id()
    got = causes.ft_single_cost(ref)
    assert "primes" in got
    df = results.samples("primes", ref)
    df = df[(df["mode"] == "single") & df["condition"].isin(causes.FT_PAIR)]
    t = df.groupby(["condition", "config", "run_id", "repeat"])["seconds"].median().unstack(0).dropna()
    ratio = sorted((t["3.13.5t"] / t["3.13.5"]).tolist())
    median = ratio[len(ratio) // 2] if len(ratio) % 2 else (ratio[len(ratio) // 2 - 1] + ratio[len(ratio) // 2]) / 2
    assert causes.estimate_text(got["primes"]).startswith(f"{median:.2f}")
    assert math.isfinite(median)


def test_a_chapter_lists_the_rows_that_flip_between_kinds_of_cpu_it_measured_with_this_code(monkeypatch):
    """With every campaign on one kind of CPU nothing is judged and nothing listed; with one of
    this code's campaigns on a kind of its own, each row listed is definite on both kinds, on
    different sides."""
    from gillab.measure import campaigns

    home = across.cpu_group(campaigns.load(campaigns.reference_id()))
    here = [c for c in across.counted() if across.cpu_group(c) == home]     # whatever else this checkout holds
    monkeypatch.setattr(across, "counted", lambda: here)
    assert across.flips("primes").empty
    now = across.code_keys_now()["primes"]
    mine = [c for c in here if across._measured_with(c, "primes", now)]
    assert len(mine) >= 2, "the committed data hold two campaigns of primes measured with this code"
    apart = mine[-1].id
    real = across.cpu_group
    monkeypatch.setattr(across, "cpu_group", lambda c: "another CPU" if c.id == apart else real(c))
    got = across.flips("primes")
    for r in got.itertuples():
        assert r.outcome in across.DEFINITE and r.beside_outcome in across.DEFINITE and r.outcome != r.beside_outcome
        assert "another CPU" in (r.group, r.beside)


def test_the_two_thread_witness_reads_one_threads_time_over_twos_per_round():
    """Synthetic rounds where two threads take 0.6 of one thread's time: a speed-up of 1/0.6 in
    every round, for the GIL build only (a build without a GIL is not what the row is about)."""
    from gillab.judge import results

    rows = []
    for k in range(9):
        for cond, gil in (("3.13.5", True), ("3.13.5t", False)):
            for n, t in ((1, 1.0 + 0.01 * k), (2, 0.6 * (1.0 + 0.01 * k))):
                rows.append({"condition": cond, "threads": n, "config": "c", "run_id": "r", "repeat": k,
                             "seconds": t, "gil_enabled": gil})
    frame = pd.DataFrame(rows)
    import unittest.mock as mock

    with mock.patch.object(results, "samples", lambda exp, campaign: frame):
        got = causes.two_thread_speedup("any")
    assert list(got) == ["3.13.5"] and causes.estimate_text(got["3.13.5"]).startswith(f"{1 / 0.6:.2f} [")


def test_a_witness_is_summed_up_per_kind_of_cpu_one_campaign_in_full_several_as_a_range(monkeypatch):
    def est(ratio, lo, hi, n=9):
        return {"ratio": ratio, "ci_lo": lo, "ci_hi": hi, "n": n, "method": stats.PAIRED}

    read = {"a1": {"x": est(1.10, 1.00, 1.20)}, "a2": {"x": est(1.30, 1.20, 1.40), "y": est(math.nan, math.nan,
                                                                                           math.nan, 0)},
            "b1": {"x": est(0.90, 0.80, 1.00)}, "c1": {}}
    monkeypatch.setitem(causes.WITNESSES, "fake", lambda c: read[c])
    got = causes.by_group("fake", {"A": ["a1", "a2"], "B": ["b1"], "C": ["c1"]})
    assert got == {"A": "x 1.10 to 1.30 (medians of 2 campaigns)", "B": "x 0.90 [0.80, 1.00] (one campaign)"}
