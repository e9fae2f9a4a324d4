"""The checked sentences of countdown, sha256, st_loop, file_io and primes read their lines once: a
sentence that says what a claim row says is checked at that row's line (claims.csv), one in a word
of the lexicon at the word's line (lexicon.csv), never at a number typed beside it.  Each test
doctors the reference samples so that a value sits between the former typed threshold and the
line read now, and the sentence follows the line."""
import math

import numpy as np
import pandas as pd
import pytest

from gillab import chapters
from gillab.judge import claims, lexicon, prose, results, verdicts
from gillab.measure import campaigns

from conftest import widest_gil_build


def _reference(name):
    """The reference campaign's samples of the default profile."""
    return results.samples(name, campaigns.reference_id(), verdicts.profile_config(name))


def _check(name, df, key):
    (c,) = [c for c in chapters.of(name).prose(df) if c.key == key]
    return c


def _steady(n, at):
    """``n`` run times about ``at``, a few parts in a thousand apart (tight intervals)."""
    return at * (1 + 0.001 * (np.arange(n) % 5))


def _scaled_by_repeat(df, rows, base, factor):
    """``df`` with the seconds of ``rows`` set to ``factor`` x the seconds of ``base`` in the same
    repeat (``base``: a boolean mask of one build's rows at one point); a run of ``rows`` that timed
    its own one-thread countdown (paired, A-B-B-A: claims.OWN_ONE) is set to ``factor`` x that
    time, which is what its ratio to one thread reads."""
    by = df[base].drop_duplicates("repeat", keep="last").set_index("repeat")["seconds"]
    out = df.copy()
    out.loc[rows, "seconds"] = out.loc[rows, "repeat"].map(by).to_numpy() * factor
    if claims.OWN_ONE in out:
        own = rows & out[claims.OWN_ONE].notna()
        out.loc[own, "seconds"] = out.loc[own, claims.OWN_ONE].astype(float) * factor
    return out


# -- countdown -------------------------------------------------------------------------------------
def _countdown_gil_ratios(factor):
    """Every GIL build's T(k)/T(1) made ``factor`` in every repeat."""
    df = _reference("countdown")
    gil = df["gil_enabled"].fillna(False).astype(bool)
    for c in df.loc[gil, "condition"].unique():
        mine = df["condition"] == c
        df = _scaled_by_repeat(df, mine & (df["threads"] > 1), mine & (df["threads"] == 1), factor)
    return df


def test_gil_builds_gain_nothing_reads_the_not_faster_rows_line(monkeypatch):
    """"More threads do not make the loop faster" is countdown/not_faster/threads=k: its line
    (no gain, 0.9) is read from the rows, so moving the rows' line moves the sentence (the former
    code held 0.9 typed and still held at T(k)/T(1) 0.92 against a line of 0.95)."""
    df = _countdown_gil_ratios(0.92)
    c = _check("countdown", df, "gil-builds-gain-nothing")
    assert prose.state(c) == "holds" and "at 0.9 or above" in c.text
    assert claims.line("countdown/not_faster/threads=2") == (lexicon.rises("no gain"), math.inf)

    real = claims.line
    monkeypatch.setattr(claims, "line", lambda cid, published=None: (0.95, math.inf)
                        if cid.startswith("countdown/not_faster/") else real(cid, published))
    c = _check("countdown", df, "gil-builds-gain-nothing")
    assert prose.state(c) == "not true" and "at 0.95 or above" in c.text


def test_a_gil_build_run_once_is_named_apart_not_printed_as_nan():
    """default's small grid runs some GIL builds once at a point: no trial of three runs, so no best
    of 3 and no T(k)/T(1).  The sentence about the GIL builds reads those with trials and names the
    others apart; it printed "nan (n = 0 ...)" for them and was marked "Not measured in this run"
    while seven builds' ratios held (issue 78's blind read)."""
    df = _countdown_gil_ratios(1.0)
    gil = df["gil_enabled"].fillna(False).astype(bool)
    once = sorted(df.loc[gil, "condition"].unique())[-1]
    mine = (df["condition"] == once) & (df["threads"] == 2)
    df = df[~mine | (df["repeat"] == df.loc[mine, "repeat"].min())]
    c = _check("countdown", df, "gil-builds-gain-nothing")
    assert prose.state(c) == "holds", c.evidence
    assert "nan" not in c.evidence
    assert f"not judged, run fewer than three times at the point (no best of 3 to set beside one thread's): " \
           f"{once}, 2 threads" in c.evidence


def _countdown_free(two_over_one, four_over_two):
    """Each build without a GIL: T(2)/T(1) made ``two_over_one`` and a T(4) added at
    ``four_over_two`` x T(2), in every repeat."""
    df = _reference("countdown")
    free = ~df["gil_enabled"].fillna(False).astype(bool)
    added = []
    for c in df.loc[free, "condition"].unique():
        mine = df["condition"] == c
        df = _scaled_by_repeat(df, mine & (df["threads"] == 2), mine & (df["threads"] == 1), two_over_one)
        four = df[(df["condition"] == c) & (df["threads"] == 2)].copy()
        four["threads"], four["seconds"] = 4, four["seconds"] * four_over_two
        added.append(four)
    out = pd.concat([df, *added], ignore_index=True)
    out.attrs = dict(df.attrs)
    return out


@pytest.mark.parametrize("four_over_two, state", [(1.0, "holds"), (0.95, "holds"), (0.8, "not true")])
def test_more_free_threads_gain_little_more_at_no_gains_line(four_over_two, state):
    """"More threads gain little more" is the lexicon's no gain: T(k)/T(2) at least 0.9.  Four
    threads a fifth faster than two on two cores contradict it (the former code checked only
    T(k)/T(2) <= 1.25 and held)."""
    c = _check("countdown", _countdown_free(0.5, four_over_two), "free-threaded-runs-in-parallel")
    assert prose.state(c) == state, c.evidence
    assert f"at {lexicon.rises('no gain'):g} or above" in c.text


def _countdown_one_thread_cost(factor):
    """3.13.5t's one-thread times ``factor`` x 3.13.5's, both steady."""
    df = _reference("countdown")
    out = df.copy()
    for c, at in (("3.13.5", 1.0), ("3.13.5t", factor)):
        rows = (out["condition"] == c) & (out["threads"] == 1)
        out.loc[rows, "seconds"] = _steady(int(rows.sum()), at)
    return out


@pytest.mark.parametrize("factor, state", [(1.05, "not true"), (1.2, "holds")])
def test_the_countdown_one_thread_cost_is_a_change(factor, state):
    """"Pays a single-thread cost (one thread takes longer)" is the lexicon's a change: at least
    1.1.  A free-threaded build 5% slower is no cost in those words (the former code held at > 1.0)."""
    c = _check("countdown", _countdown_one_thread_cost(factor), "free-threaded-pays-one-thread-cost")
    assert prose.state(c) == state, c.evidence
    assert f"at least {lexicon.rises('a change'):g}" in c.evidence


# -- sha256 ----------------------------------------------------------------------------------------
def _sha256_free_like_best_gil(factor):
    """The reference's GIL build with the most runs, alone, beside one build without a GIL,
    3.13.5t, whose runs are that build's with its two-thread times ``factor`` x: its T(2)/T(1) is
    ``factor`` x the best (the only) GIL build's in every trial."""
    df = _reference("sha256")
    kept = df[df["condition"] == widest_gil_build(df)]
    free = kept[kept["threads"].isin([1, 2])].copy()
    free["condition"], free["gil_enabled"], free["py_gil_disabled"] = "3.13.5t", False, True
    free.loc[free["threads"] == 2, "seconds"] *= factor
    out = pd.concat([kept, free], ignore_index=True)
    out.attrs = dict(df.attrs)
    return out


def test_free_threaded_gains_nothing_more_reads_the_sames_band(monkeypatch):
    """"Within 10% of the best GIL build's" is the lexicon's the same: its band is read from
    lexicon.csv and printed (the former code typed 0.9 and 1.1)."""
    df = _sha256_free_like_best_gil(1.07)
    c = _check("sha256", df, "free-threaded-gains-nothing-more")
    assert prose.state(c) == "holds" and "within 10%" in c.text, c.evidence
    assert _check("sha256", _sha256_free_like_best_gil(1.15), "free-threaded-gains-nothing-more").holds is False
    monkeypatch.setattr(lexicon, "about", lambda phrase: 0.05 if phrase == "the same" else math.nan)
    c = _check("sha256", df, "free-threaded-gains-nothing-more")
    assert prose.state(c) == "not true" and "within 5%" in c.text


@pytest.mark.parametrize("share, state", [(0.95, "not true"), (0.8, "holds")])
def test_faster_than_the_document_is_a_change(share, state):
    """"Faster than the document's 3.3 s" is a change: at most 0.9 of it, 2.97 s.  One-thread times
    of 0.95 of it (about 3.1 s) are not faster in those words (the former code held below 3.3 s);
    0.8 of it is.  Each build's runs are set steady at the time that reads ``share`` of the
    document's at its size (the row scales a smaller profile's time to the document's size)."""
    from gillab.chapters import over_threads, sha256

    df = _reference("sha256")
    df = df[df["gil_enabled"].fillna(False).astype(bool)].copy()     # every build with whole trials
    row = {r["claim_id"]: r for r in over_threads.claims(prose.ok_rows(df), sha256.SPEC)}["sha256/threads=1"]
    theirs = claims.value("sha256/threads=1")
    for c, m in row["measured"].items():
        one = (df["condition"] == c) & (df["threads"] == 1)
        at = df.loc[one, "seconds"].min() * share * theirs / m["median"]
        df.loc[one, "seconds"] = _steady(int(one.sum()), at)
    c = _check("sha256", df, "one-thread-faster-than-the-document")
    assert prose.state(c) == state, c.evidence
    line = theirs * lexicon.falls("a change")
    assert f"at most {line:.2f} s" in c.evidence


def test_hashing_in_parallel_says_the_number_it_checks():
    """The sentence checked at T(2)/T(1) below 0.75 says so, and no longer says "the GIL does not
    matter" (the same, in the lexicon's words) for a speed-up."""
    c = _check("sha256", _reference("sha256"), "gil-does-not-matter-for-hashing")
    assert "below 0.75" in c.text and "does not matter" not in c.text


# -- st_loop ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("factor, state", [(1.05, "not true"), (1.15, "holds")])
def test_the_st_loop_cost_is_checked_at_ft_slowers_line(factor, state):
    """"Pays a single-thread cost" restates st_loop/ft_slower ("worse performance", at least 1.1):
    5% slower is not that (the former code held above 1.0)."""
    df = _reference("st_loop")
    free = df["condition"] == "3.13.5t"
    fake = _scaled_by_repeat(df, free, df["condition"] == "3.13.5", factor)
    c = _check("st_loop", fake, "free-threaded-pays-one-thread-cost")
    assert prose.state(c) == state, c.evidence
    assert f"at least {claims.line('st_loop/ft_slower')[0]:g}" in c.evidence


# -- file_io ---------------------------------------------------------------------------------------
def _file_io(factor):
    """3.13.5 against 3.13.5t only, 3.13.5t's times ``factor`` x 3.13.5's in each mode and repeat."""
    df = _reference("file_io")
    df = df[df["condition"] != "3.13.5t-gil"].copy()
    gil = df[df["condition"] == "3.13.5"].groupby(["mode", "repeat"])["seconds"].median()
    free = df["condition"] == "3.13.5t"
    keys = pd.MultiIndex.from_frame(df.loc[free, ["mode", "repeat"]])
    df.loc[free, "seconds"] = gil.reindex(keys).to_numpy() * factor
    return df


@pytest.mark.parametrize("factor, state", [(1.15, "not true"), (1.05, "holds")])
def test_the_builds_differ_little_at_the_rows_line(factor, state):
    """"The builds differ little, as the document found" restates its rows' ~2.9/~2.9 s and
    ~2.4/~2.4 s: 1 +- 10% (claims.line).  A free-threaded build 15% slower differs more (the former
    code held up to 1.25)."""
    c = _check("file_io", _file_io(factor), "builds-differ-little")
    assert prose.state(c) == state, c.evidence
    low, high = claims.line("file_io/2_io_bound_single_thread")
    assert f"between {low:.2f} and {high:.2f}" in c.text


# -- primes ----------------------------------------------------------------------------------------
def _primes(speedup, gil):
    """The GIL builds' (``gil``) or the others' pool ``speedup`` x faster than one thread, steady."""
    df = _reference("primes")
    out = df.copy()
    on = out["gil_enabled"].fillna(False).astype(bool)
    for c in out.loc[on == gil, "condition"].unique():
        one = (out["condition"] == c) & (out["mode"] == "single")
        pool = (out["condition"] == c) & (out["mode"] == "threads")
        out.loc[one, "seconds"] = _steady(int(one.sum()), 2.0)
        out.loc[pool, "seconds"] = _steady(int(pool.sum()), 2.0 / speedup)
    return out


@pytest.mark.parametrize("speedup, state", [(1.08, "holds"), (1.0, "holds"), (1.2, "not true")])
def test_the_gil_pool_reads_gil_threads_no_gains_line(speedup, state):
    """"With the GIL the pool takes as long as one thread, as the document found" restates
    primes/conclusion/gil_threads_no_gain (~2.7 s each: a time ratio 1 +- 10%), printed as a
    speedup from 0.91 to 1.11.  A speedup of 1.08 is within it (the former code denied it above
    1.05)."""
    c = _check("primes", _primes(speedup, gil=True), "gil-pool-no-faster")
    assert prose.state(c) == state, c.evidence
    low, high = claims.line("primes/conclusion/gil_threads_no_gain")
    assert f"between {1 / high:.2f} and {1 / low:.2f}" in c.text


@pytest.mark.parametrize("speedup, state", [(1.15, "holds"), (2.15, "holds"), (1.05, "not true"), (2.4, "not true")])
def test_the_free_threaded_pool_is_faster_and_bounded_by_the_cores(speedup, state):
    """"Faster" is a change (a speedup of at least 1.1) and "bounded by the 2 cores" is 2 within the
    same's band (at most 2.2): 1.15 and 2.15 hold (the former code, at 1.2 and 2.1, struck both)."""
    c = _check("primes", _primes(speedup, gil=False), "free-threaded-pool-bounded-by-cores")
    assert prose.state(c) == state, c.evidence
    cores = prose.cores_of(_reference("primes"), "primes")
    assert f"at least {lexicon.rises('a change'):g}, at most {cores * (1 + lexicon.about('the same')):g}" in c.text


# -- switch_interval ---------------------------------------------------------------------------------
def test_four_threads_costing_more_than_eight_is_a_finding_only_where_the_runs_show_it():
    """At 1 µs, four GIL threads took 5-6x the time of eight on the Intel runs and 2x on the AMD ones
    (issue 78's blind read: "85x at four threads, 12x at eight, undiscussed"): a finding the chapter
    prints with its numbers where the paired interval shows it, and leaves out where it does not."""
    cid = "amd-epyc-2c-20261129T172429Z"          # a committed run of this code
    df = results.samples("switch_interval", cid, verdicts.profile_config("switch_interval"))
    c = [c for c in chapters.of("switch_interval").prose(df) if c.key == "middle-threads-cost-most"]
    assert len(c) == 1 and prose.state(c[0]) == "holds"
    assert "4 threads with the GIL take longer than 8" in c[0].text and "kernel's share" in c[0].evidence
    assert "{" not in c[0].why and "Why 4 threads suffer more than 8" in c[0].why
    smallest = float(df["switch_interval"].min())
    at = np.isclose(df["switch_interval"].astype(float), smallest)
    flat = df.copy()
    for cond in df.loc[df["gil_enabled"].fillna(False).astype(bool), "condition"].unique():
        mine = at & (df["condition"] == cond)
        flat = _scaled_by_repeat(flat, mine & (df["threads"] == 4), mine & (df["threads"] == 8), 1.0)
    assert not [c for c in chapters.of("switch_interval").prose(flat) if c.key == "middle-threads-cost-most"]


def test_a_sentence_on_an_interval_not_in_force_is_left_open_not_struck():
    """"8 threads at the smallest interval cost far less than the document's 12.7x" was struck on
    runs whose rows read *not in force here* (888 hand-offs a second asked at 1 µs: an interval of
    1.1 ms); the verdicts do not judge there, nor may the chapter's sentence (issue 78's blind read)."""
    cid = "amd-epyc-2c-20261129T172429Z"
    df = results.samples("switch_interval", cid, verdicts.profile_config("switch_interval"))
    (c,) = [c for c in chapters.of("switch_interval").prose(df) if c.key == "gil-threads-cost-more-but-far-less"]
    assert prose.state(c) == "not shown"
    assert "was not in force for 3.13.5, 3.9.2" in c.evidence
    text = prose.markdown([c])
    assert "more runs at it cannot settle the sentence" in text and prose.WHY_NOT_SHOWN not in text


def test_the_switch_interval_page_sets_the_countdown_chapters_own_ratio_beside_its_tables():
    """The switch interval page printed 'countdown chapter, same ratio 0.96 [0.761, 1.27]' (a ratio of
    medians) where the countdown chapter prints 1.02 [0.873, 1.30] (its best of 3, paired by trial)
    for the same samples (issue 78's second blind read): one number per quantity."""
    from gillab.chapters import over_threads, switch_interval
    from gillab.judge.tables import stat_text

    cid = "intel-xeon-2c-20261130T054947Z"
    si = results.samples("switch_interval", cid, verdicts.profile_config("switch_interval"))
    cd = results.samples("countdown", cid, verdicts.profile_config("countdown"))
    t = switch_interval.two_tables(si, cd).set_index("threads")
    g = cd[cd["condition"] == "3.13.5"]
    want = stat_text(over_threads.time_ratio(g, 2, 1, claims.trial_size("countdown/threads=2")))
    assert t.loc[2, "3.13.5: countdown chapter, same ratio"] == want
