"""What each claim is about and the builds it speaks of: every row of claims.csv says both with a
reason, a build's family comes from what its samples recorded at run time, the headline counts
only mechanism claims on their own builds, and a ratio never divides a sample set by itself."""
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from gillab.measure import campaigns
from gillab.judge import claims, verdicts
from gillab.chapters import countdown as cd


def test_every_claim_says_what_it_is_about_and_which_builds_with_reasons():
    t = claims.table()
    for _, c in t.iterrows():
        cid = c["claim_id"]
        assert c["about"] in claims.ABOUT and (c["builds"] in claims.BUILDS or c["builds"].startswith(claims.IDS)), cid
        assert len(c["about_reason"]) > 10 and len(c["builds_reason"]) > 5, cid
        assert (c["about"] == "cores") == (c["cpus"] >= 1), cid           # a cores claim names its CPUs
        assert (c["about"] == "not testable") == (c["comparison"] == "not testable"), cid
    # an absolute number of an author's machine is never judged as a mechanism
    absolute = t[t["kind"] == "absolute"]
    assert set(absolute["about"]) <= {"machine", "mechanism", "not testable"}
    assert (absolute["about"] == "machine").sum() >= 30


@pytest.fixture
def reference_copy(tmp_path, monkeypatch):
    """A copy of data/reference the test may damage, read instead of the real one."""
    from gillab import paths

    from gillab.judge import lexicon, results

    dest = tmp_path / "reference"
    shutil.copytree(paths.reference_dir(), dest)
    for module in (claims, results):        # claims.csv and lexicon.csv are read through results.keyed
        monkeypatch.setattr(module, "reference_dir", lambda: dest)
    caches = (claims._table, claims._raw, lexicon.table)
    for cache in caches:
        cache.cache_clear()
    yield dest
    for cache in caches:
        cache.cache_clear()


@pytest.mark.parametrize("column, value, words", [
    ("about", "", "about '' is not one of"),
    ("builds", "GIL-ish", "builds 'GIL-ish' is not one of"),
    ("builds_reason", " ", "about and builds each need a reason"),
    ("cpus", "4", "a cores claim names the logical CPUs it needs"),
])
def test_a_claim_without_about_or_builds_is_refused(reference_copy, column, value, words):
    path = reference_copy / "claims.csv"
    t = pd.read_csv(path, dtype=str, keep_default_na=False)
    i = int(np.flatnonzero(t["claim_id"] == "countdown/threads=2")[0])
    t.loc[i, column] = value
    t.to_csv(path, index=False)
    with pytest.raises(ValueError) as err:
        claims.table()
    assert "countdown/threads=2" in str(err.value) and words in str(err.value)


@pytest.mark.parametrize("python, gil, family", [
    ("2.7.18", True, "old GIL"),
    ("3.1.5", "True", "old GIL"),
    ("3.9.10", True, "new GIL"),          # 3.9.10, and nogil-3.9.10 run with PYTHONGIL=1
    ("3.13.5", "1", "new GIL"),           # 3.13.5, and 3.13.5t run with PYTHON_GIL=1
    ("3.13.5", False, "no GIL"),
    ("3.9.10", "False", "no GIL"),        # the nogil fork
    ("3.13.5", None, "unknown"),
])
def test_a_builds_family_is_what_its_samples_recorded_at_run_time(python, gil, family):
    assert claims.family(python, gil) == family


def test_a_free_threaded_build_that_turned_its_gil_on_is_a_gil_build():
    df = pd.DataFrame([
        {"condition": "3.13.5t-gil", "python": "3.13.5", "gil_enabled": True, "status": "ok"},
        {"condition": "3.13.5t", "python": "3.13.5", "gil_enabled": False, "status": "ok"},
        {"condition": "odd", "python": "3.13.5", "gil_enabled": False, "status": "ok"},
        {"condition": "odd", "python": "3.13.5", "gil_enabled": True, "status": "ok"},
        {"condition": "3.13.5t", "python": "3.13.5", "gil_enabled": True, "status": "failed"},   # not read
    ])
    fams = claims.families(df)
    assert fams == {"3.13.5t-gil": "new GIL", "3.13.5t": "no GIL", "odd": "mixed"}
    assert claims.family_of("3.13.5t-gil vs 3.13.5t (4 threads)", fams) == "new GIL vs no GIL"
    # its samples resolve to the new GIL, but a claim about the new GIL speaks of stock builds: the
    # twin carries the free-threaded build's costs, a finding beside the claim
    assert not claims.applies("countdown/threads=2", "3.13.5t-gil", fams)
    assert claims.applies("countdown/threads=2", "3.13.5", fams | {"3.13.5": "new GIL"})
    assert not claims.applies("countdown/threads=2", "3.13.5t", fams)
    assert not claims.applies("countdown/threads=2", "odd", fams)
    # the free-threaded build's cost is judged against a GIL build that does not carry it: the pair
    # of builds.toml, never the free-threaded binary with its GIL on against itself
    fams |= {"3.13.5": "new GIL"}
    assert claims.applies("primes/3_cpu_bound_single_thread", "3.13.5 vs 3.13.5t", fams)
    assert not claims.applies("primes/3_cpu_bound_single_thread", "3.13.5t-gil vs 3.13.5t", fams)
    assert not claims.applies("primes/3_cpu_bound_single_thread", "3.13.5t vs 3.13.5t-gil", fams)
    # a 3.9 document's "times don't change" speaks of the new GIL, not 2.7's old one
    assert not claims.applies("countdown/threads=2", "2.7.18", {"2.7.18": "old GIL"})


def _countdown(times: dict) -> pd.DataFrame:
    rows = []
    for cond, (python, gil, by_k) in times.items():
        for k, values in by_k.items():
            for i, v in enumerate(values * 7):     # each listed run seven times: 21 runs, 7 best-of-3 trials
                rows.append({"condition": cond, "threads": k, "seconds": v, "total_decrements": 100_000_000,
                             "repeat": i, "python": python, "gil_enabled": gil, "status": "ok"})
    return pd.DataFrame(rows)


def test_a_claim_about_gil_builds_is_not_counted_against_a_build_without_one():
    df = _countdown({
        "3.9.2": ("3.9.2", True, {1: [6.5, 6.52, 6.55], 2: [6.6, 6.57, 6.58]}),
        "3.13.5t": ("3.13.5", False, {1: [6.0, 6.1, 6.05], 2: [3.0, 3.1, 3.05]}),
    })
    rows = [r | {"families": claims.families(df), "cpus_here": 2} for r in cd.ANALYSIS.claims(df)]
    flat = verdicts.flat(rows)
    two = flat[flat["claim_id"] == "countdown/threads=2"].set_index("condition")
    assert two.at["3.13.5t", "outcome"] == "lower" and two.at["3.13.5t", "role"] == "other builds"
    assert two.at["3.9.2", "outcome"] == "agrees" and two.at["3.9.2", "role"] == "judged"
    one = flat[flat["claim_id"] == "countdown/threads=1"]
    assert set(one["role"]) == {"machine"}                  # the author's 6.52 s: context
    head = verdicts.headline(flat)
    assert set(zip(head["claim_id"], head["condition"])) >= {("countdown/threads=2", "3.9.2")}
    assert not ((head["condition"] == "3.13.5t") | (head["claim_id"] == "countdown/threads=1")).any()
    text = verdicts.counts_markdown(flat.assign(campaign="c"))
    # 2 threads read twice ("the times don't change", "not faster"): one quantity, one claim; 4 and 8
    # threads, each read twice: not measured, one claim each (the October 16 conclusion, of the
    # retired nogil fork, is not testable: not counted)
    assert ("3 claims on the document's own interpreter (3.9.2; one count a claim and build family, over 6 claim "
            "x build rows): 1 agrees, 2 not measured") in text


def test_a_cores_claim_is_judged_only_on_a_machine_with_the_cpus(monkeypatch):
    fams = {"3.9.10": "new GIL"}
    c = claims.get("convoy/conclusion/halving")          # at least two CPUs
    assert c["cpus"] == 2 and not c["cpus_exact"]
    assert claims.role("convoy/conclusion/halving", "3.9.10", fams, 1) == "needs cores"
    assert claims.role("convoy/conclusion/halving", "3.9.10", fams, 16) == "judged"
    assert claims.role("convoy/conclusion/halving", "3.9.10", fams, None) == "needs cores"
    # exactly two (cpus "=2"): a sentence whose premise is a machine of two cores, judged there only
    real = claims.get
    exact = dict(real("convoy/conclusion/halving"), cpus=2, cpus_exact=True)
    monkeypatch.setattr(claims, "get", lambda cid: exact if cid == "exactly-two" else real(cid))
    assert claims.role("exactly-two", "3.9.10", fams, 2) == "judged"
    for cpus in (1, 4, None):
        assert claims.role("exactly-two", "3.9.10", fams, cpus) == "needs cores"
    # "only two physical cores": whether threads past two help was found to be the machine's
    # (two threads' speed-up over one: data/results/CAUSES.toml), on any machine
    assert claims.role("sha256/beyond_cores/threads=4", "3.9.10", fams, 2) == "machine"
    # the author's hyper-threaded gain past two threads is context, on any machine
    assert claims.role("sha256/threads=4", "3.9.10", fams, 16) == "machine"


def test_the_headline_holds_no_machine_number_and_no_build_outside_a_claims_family():
    """On the committed reference campaign: the landing page's counts are the mechanism (and
    cores) claims on their own builds only, and every other row is accounted for."""
    flat = verdicts.flat(verdicts.verdicts(campaigns.reference_id()))
    head = verdicts.headline(flat)
    assert len(head) and len(flat) == sum((flat["role"] == r).sum() for r in verdicts.ROLES)
    t = claims.table()
    about = t.loc[head["claim_id"], "about"]
    assert set(about) <= {"mechanism", "cores"}
    measured = head[head["condition"] != "-"]
    assert measured["own builds"].all()
    for _, r in measured.iterrows():
        fam = r["family"].split(" vs ")
        want = t.at[r["claim_id"], "builds"]
        if want == "GIL":
            assert fam[0] in ("old GIL", "new GIL") and len(fam) == 1, (r["claim_id"], r["condition"])
        elif want in ("old GIL", "new GIL", "no GIL"):
            assert fam == [want], (r["claim_id"], r["condition"])
        elif want == "GIL vs no GIL":
            assert fam[1] == "no GIL" and fam[0] != "no GIL", (r["claim_id"], r["condition"])
    text = verdicts.counts_markdown(flat)
    assert sum(int(n) for n in re.findall(r"one count a claim and build family, over (\d+) claim x build", text)) \
        == len(head)


def test_every_conclusions_numerator_and_denominator_are_disjoint():
    """A conclusion is a ratio of two points of the samples: its selectors differ in a column both
    name, so no sample is on both sides (a set divided by itself gives 1.0 whatever was measured)."""
    t = claims.table()
    ids = [c for e in set(t["experiment"]) for c in claims.conclusion_ids(e)
           if claims.get(c)["comparison"] != "not testable"]      # no point to read
    assert len(ids) >= 8
    for cid in ids:
        num, den = claims.selectors(cid)
        assert any(k in den and den[k] != v for k, v in num.items()), cid


def test_no_ratio_claim_on_the_reference_divides_a_sample_set_by_itself():
    """The sign of a ratio by construction: exactly 1 with an interval of width 0.  None of the
    reference's ratio verdicts has it (the one-thread switch interval at 5 ms had it)."""
    flat = verdicts.flat(verdicts.verdicts(campaigns.reference_id()))
    t = claims.table()
    two_sets = t[(t["kind"] == "ratio") & t["statistic"].str.contains(" / ")]["claim_id"]   # not a fraction
    ratios = flat[(flat["condition"] != "-") & flat["claim_id"].isin(two_sets)]
    assert len(ratios) > 100
    same = ratios[(ratios["measured"] == 1.0) & (ratios["ci_low"] == ratios["ci_high"])]
    assert same.empty, same[["claim_id", "condition"]].to_string()


def test_the_one_thread_switch_interval_rows_divide_by_the_rounds_mean():
    """One thread at each interval / the mean one-thread time over the intervals its round
    measured (the document's own denominator is the mean of its one-thread column): the 5 ms cell
    is part of the mean, never a claim of its own; a slower interval reads as its factor over the
    mean, not as 1."""
    from gillab.chapters import switch_interval as si

    factor = {0.1: 1.0, 0.005: 1.0, 0.0001: 1.3}
    rows = [{"condition": "b", "switch_interval": x, "threads": 1, "seconds": 2.0 * f * (1 + 0.001 * i),
             "run_id": "r", "repeat": i, "python": "3.9.10", "gil_enabled": True, "status": "ok"}
            for x, f in factor.items() for i in range(8)]     # 8 rounds: a paired 95% interval
    out = {r["claim_id"]: r for r in si.ANALYSIS.claims(pd.DataFrame(rows))}
    assert "switch_interval/si=0.005/threads=1" not in out
    mean = sum(factor.values()) / len(factor)
    assert out["switch_interval/si=0.1/threads=1"]["measured"]["b"]["median"] == pytest.approx(1.0 / mean, rel=1e-3)
    assert out["switch_interval/si=0.0001/threads=1"]["measured"]["b"]["median"] == pytest.approx(1.3 / mean, rel=1e-3)
    assert out["switch_interval/si=0.0001/threads=1"]["measured"]["b"]["verdict"] == "higher"
    # the document's own number: its cell over the mean of its one-thread column, and for several
    # threads its cell over the same interval's one-thread cell, as the statistic divides
    t4 = claims._raw("pbts13_t4_countdown_vs_switch_interval")
    time = {(r["switch_interval_s"], r["threads"]): float(r["time_s"]) for _, r in t4.iterrows()}
    mean1 = sum(v for (s, k), v in time.items() if k == "1") / 7
    assert claims.get("switch_interval/si=0.1/threads=1")["own_value"] == pytest.approx(time["0.1", "1"] / mean1)
    assert claims.get("switch_interval/si=0.001/threads=4")["own_value"] == pytest.approx(
        time["0.001", "4"] / time["0.001", "1"])
    assert claims.value("switch_interval/si=0.001/threads=4") == 1.0


def test_no_ratio_in_any_verdict_takes_a_sample_on_both_sides(monkeypatch):
    """Every ratio the verdicts compute on the reference campaign, spied on at the statistics
    functions: numerator and denominator are never the same values, and where both are samples of
    one frame (its row labels) they share no row.  (The removed one-thread cell at 5 ms took the
    same rows on both sides.)"""
    from gillab import stats

    calls = []
    for name in ("ratio_of_medians", "paired_ratio"):
        real = getattr(stats, name)

        def spy(num, den, *args, _real=real, _name=name, **kwargs):
            calls.append((_name, num, den))
            return _real(num, den, *args, **kwargs)
        monkeypatch.setattr(stats, name, spy)
    verdicts.verdicts(campaigns.reference_id(), profile=None)     # every sample stored, whatever its profile
    assert len(calls) > 150          # the spy saw the verdicts' ratios (196 on the reference)
    checked = 0
    for name, num, den in calls:
        assert num is not den, name
        if isinstance(num, pd.Series) and isinstance(den, pd.Series) and len(num) and len(den):
            if num.index.nlevels == 1 and num.index.name is None and den.index.name is None \
                    and num.index.dtype.kind == "i" and den.index.dtype.kind == "i":
                assert not set(num.index) & set(den.index), (name, sorted(set(num.index) & set(den.index))[:5])
                checked += 1
            elif list(num.index.names) == list(claims.ROUND) == list(den.index.names):
                # two points' runs paired by the round that measured both: the rounds are shared by
                # design, the runs never (two points of one round are two samples)
                assert not num.equals(den), name
                checked += 1
    assert checked > 50          # most ratios take rows of one frame or rounds of one sweep: checked
