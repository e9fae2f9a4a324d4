"""One count per claim: a document's tally counts its claims once, on the document's own
interpreter (builds.toml ``[own]``), with today's builds of an older claim shown as "then and
now"; two sentences about one statistic at one point count once; a fact no build can change is
a control."""
from __future__ import annotations

import pandas as pd
import pytest

from gillab.judge import claims, verdicts
from gillab.measure import interpreters
from gillab.present import landing

NEW = {"3.9.2": "new GIL", "3.9.10": "new GIL", "3.13.5": "new GIL", "3.13.5t": "no GIL", "2.7.18": "old GIL"}


@pytest.mark.parametrize("claim_id, condition, role", [
    ("countdown/threads=2", "3.9.2", "judged"),             # document 000 on its own 3.9
    ("countdown/threads=2", "3.13.5", "then and now"),      # today's build of a 2021 claim
    ("countdown/threads=2", "3.9.10", "judged"),            # the retired 3.9 in the campaigns that hold it
    ("switch_interval/si=1e-06/threads=1", "3.13.5", "control"),    # a control is one on any build
    ("stall/stall-ctrl-c", "3.9.2", "control"),             # a fact no build can change
])
def test_a_claim_counts_on_the_documents_own_interpreter_only(claim_id, condition, role):
    assert claims.role(claim_id, condition, NEW, 2) == role


def test_a_stand_in_pair_counts_as_the_pair_and_neither_build_alone():
    assert "3.13.5 vs 3.13.5t" in interpreters.own("004") and "3.13.5" not in interpreters.own("004")
    assert claims.own_build("004", "3.13.5 vs 3.13.5t (10 threads)")
    assert claims.own_build("004", "3.13.5t vs 3.13.5")
    assert not claims.own_build("004", "3.13.5")
    assert claims.own_build("001", "3.9.2 vs 2.7.18") and not claims.own_build("001", "3.13.5 vs 2.7.18")
    assert claims.own_build("002", "3.13.5 vs 3.13.5t")          # 3.14 is served nowhere: 3.13 in its place


@pytest.mark.parametrize("outcomes, one", [
    (["agrees", "agrees"], "agrees"),
    (["agrees", "lower"], "lower"),
    (["higher", "higher", "lower"], "higher"),
    (["agrees", "inconclusive"], "inconclusive"),
    (["not in force here", "agrees"], "inconclusive"),
    (["not in force here"], "not in force here"),
])
def test_a_claims_rows_combine_into_one_outcome_contrary_where_any_is(outcomes, one):
    assert claims.combined(outcomes) == one


def _rows(*rows):
    return pd.DataFrame([{"document": d, "claim_id": c, "condition": k, "build": k, "family": NEW.get(k, "new GIL"),
                          "outcome": o, "why": "", "role": "judged"} for d, c, k, o in rows])


def test_the_tally_counts_a_claim_once_and_two_sentences_about_one_quantity_once():
    assert claims.quantity("countdown/not_faster/threads=2") == "countdown/threads=2"
    head = _rows(("000", "countdown/threads=2", "3.9.2", "lower"),
                 ("000", "countdown/not_faster/threads=2", "3.9.2", "agrees"),   # the same ratio: one quantity
                 ("000", "countdown/threads=4", "3.9.2", "agrees"),
                 ("000", "convoy/inline/more_cpu_processes", "3.9.2 (2 processes)", "agrees"),
                 ("000", "convoy/inline/more_cpu_processes", "3.9.2 (4 processes)", "agrees"))
    t = verdicts.claim_tally(head).set_index("quantity")
    assert len(t) == 3
    assert t.loc["countdown/threads=2", "outcome"] == "lower" and t.loc["countdown/threads=2", "rows"] == 2
    assert t.loc["convoy/inline/more_cpu_processes", "outcome"] == "agrees"
    flat = head.assign(ours_over_published=1.0)
    c = landing.counts(flat).set_index("family")
    assert c.loc["new GIL", "agrees"] == 2 and c.loc["new GIL", "higher or lower"] == 1


def test_today_builds_of_a_2021_claim_are_shown_and_never_counted():
    flat = verdicts.flat([{"experiment": "countdown", "claim_id": "countdown/threads=2", "claim": "x",
                           "published": 1.0, "unit": "ratio", "families": NEW, "cpus_here": 2,
                           "measured": {b: {"median": 1.0, "ci_lo": 0.99, "ci_hi": 1.01, "verdict": "agrees", "n": 9}
                                        for b in ("3.9.2", "3.13.5")}}])
    roles = dict(zip(flat["build"], flat["role"]))
    assert roles == {"3.9.2": "judged", "3.13.5": "then and now"}
    assert list(verdicts.headline(flat)["build"]) == ["3.9.2"]
