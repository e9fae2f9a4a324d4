import math
import json
import subprocess
import sys

import pandas as pd
import pytest

from gillab.measure import sweep
from gillab.chapters import countdown as cd


def synthetic(times: dict[str, dict[int, list[float]]], total=100_000_000) -> pd.DataFrame:
    """Samples shaped like the store's, with times we choose, to check the analysis itself."""
    rows = []
    for cond, by_k in times.items():
        for k, values in by_k.items():
            for i, v in enumerate(values):
                rows.append({"condition": cond, "threads": k, "seconds": v, "total_decrements": total,
                             "repeat": i, "gil_enabled": cond == "gil"})
    return pd.DataFrame(rows)


def test_flat_times_agree_with_the_document_and_parallel_times_do_not():
    df = synthetic({c: {k: v * 7 for k, v in by_k.items()} for c, by_k in {     # each run 7 times: 7 trials of 3
        "gil": {1: [6.5, 6.52, 6.55], 2: [6.6, 6.57, 6.58], 4: [6.6, 6.59, 6.62], 8: [6.6, 6.58, 6.61]},
        "ft": {1: [8.0, 8.1, 8.05], 2: [4.0, 4.1, 4.05], 4: [4.1, 4.0, 4.05], 8: [4.2, 4.1, 4.15]},
    }.items()})
    rows = {r["claim_id"]: r for r in cd.ANALYSIS.claims(df)}
    assert set(rows) == ({f"countdown/threads={k}" for k in (1, 2, 4, 8)} | {"countdown/conclusion/nogil_single_thread"}
                         | {f"countdown/not_faster/threads={k}" for k in (2, 4, 8)})
    assert rows["countdown/conclusion/nogil_single_thread"]["measured"] == {}   # not testable: the retired fork
    assert rows["countdown/threads=2"]["published"] == pytest.approx(6.57 / 6.52)
    for k in (2, 4, 8):
        assert rows[f"countdown/threads={k}"]["measured"]["gil"]["verdict"] == "agrees"
        assert rows[f"countdown/threads={k}"]["measured"]["ft"]["verdict"] == "lower"
        # "not faster", at least 0.9 of the one-thread time: the GIL's flat times hold it, parallel ones do not
        assert rows[f"countdown/not_faster/threads={k}"]["measured"]["gil"]["verdict"] == "agrees"
        assert rows[f"countdown/not_faster/threads={k}"]["measured"]["ft"]["verdict"] == "lower"
    one = rows["countdown/threads=1"]["measured"]
    assert one["gil"]["verdict"] == "agrees" and one["ft"]["verdict"] == "higher"
    s = cd.ANALYSIS.summary(df).set_index(["condition", "threads"])
    # the chapter's speedup is the verdicts' T(2)/T(1) (best of 3: one trial, 4.0 / 8.0) inverted: one number
    assert rows["countdown/threads=2"]["measured"]["ft"]["median"] == pytest.approx(4.0 / 8.0)
    assert s.loc[("ft", 2), "speedup"] == pytest.approx(8.0 / 4.0)
    assert s.loc[("ft", 2), "time_ratio"] == pytest.approx(rows["countdown/threads=2"]["measured"]["ft"]["median"])
    assert s.loc[("ft", 1), "speedup"] == 1 and math.isnan(s.loc[("ft", 1), "speedup_ci_lo"])   # no interval on 1
    assert s.loc[("gil", 1), "best"] == 6.5


def test_smaller_profiles_are_scaled_and_say_so():
    df = synthetic({"gil": {1: [0.65, 0.66], 2: [0.66, 0.67]}}, total=10_000_000)
    one = next(r for r in cd.ANALYSIS.claims(df) if r["claim_id"] == "countdown/threads=1")["measured"]["gil"]
    # two runs are no complete best-of-3 trial: the median of the runs is shown, and judged inconclusive
    assert one["median"] == pytest.approx(6.55) and "scaled x10" in one["note"]
    assert one["verdict"] == "inconclusive" and one["n"] == 0 and "no complete trial of 3 runs (2 runs)" in one["note"]
    assert one["why_inconclusive"] == "n too small: 0 trials; a 95% interval needs 7"
    df = synthetic({"gil": {1: [0.65, 0.66, 0.64] * 3, 2: [0.66, 0.67, 0.65] * 3}}, total=10_000_000)
    one = next(r for r in cd.ANALYSIS.claims(df) if r["claim_id"] == "countdown/threads=1")["measured"]["gil"]
    assert one["median"] == pytest.approx(6.4) and one["n"] == 3    # three trials, each one's best 0.64 s


def test_cli_verdicts_json_from_stored_samples(builds, data_dir):
    sweep.measure("countdown", "smoke", {"conditions": "3.13.5,3.13.5t", "threads": [1, 2, 4, 8],
                                               "total_decrements": 400_000, "repeats": 2}, progress=False)
    out = subprocess.run([sys.executable, "-m", "gillab", "verdicts", "--json", "-P", "any"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)             # one flat row per claim and condition
    # the October 16 update's conclusion is of the nogil fork, which no registry serves, and
    # Gilectomy's overhead is not testable anywhere
    unmeasured = {r["claim_id"]: r["outcome"] for r in rows if r["condition"] == "-"}
    assert unmeasured == {"countdown/conclusion/nogil_single_thread": "not testable here",
                          "countdown/gilectomy_overhead": "not testable here"}
    rows = [r for r in rows if r["condition"] != "-"]
    assert len(rows) == 7 * 2 and len({r["campaign"] for r in rows}) == 1     # 4 cells, "not faster" at 3
    assert rows[0]["campaign"].startswith("test-machine-")
    keys = {"claim_id", "document", "experiment", "condition", "published", "unit", "band", "measured", "ci_low",
            "ci_high", "n", "outcome", "profile", "campaign"}
    for r in rows:
        assert keys <= set(r) and r["document"] == "000" and r["profile"] == "any"
        # 2 repeats are no complete trial of the document's best of 3: shown, never judged
        assert r["outcome"] == "inconclusive" and r["n"] == 0 and r["why"].startswith("n too small: 0 ")
        assert "trials; a 95% interval needs 7" in r["why"]
        assert r["ci_low"] is None and r["measured"] > 0
    assert {r["condition"] for r in rows} == {"3.13.5", "3.13.5t"} and len({r["claim_id"] for r in rows}) == 7
    nested = json.loads(subprocess.run([sys.executable, "-m", "gillab", "verdicts", "--nested", "-P", "any"],
                                       capture_output=True, text=True).stdout)
    nested = [r for r in nested if r["measured"]]
    assert len(nested) == 7 and all(set(r["measured"]) == {"3.13.5", "3.13.5t"} for r in nested)
    res = subprocess.run([sys.executable, "-m", "gillab", "results", "countdown", "--json", "-P", "any"],
                         capture_output=True, text=True)
    summary = json.loads(res.stdout)["summary"]
    assert len(summary) == 8 and all(row["n"] == 2 for row in summary)


def test_the_verdicts_at_a_glance_count_every_claim_of_the_reference():
    """The verdicts page's figure and counts, and the landing page's lines, from the committed
    reference campaign: every claim x build is counted once, per document and per build, and
    every document with verdicts has its line."""
    from gillab.measure import campaigns
    from gillab.present import plots
    from gillab.judge import verdicts

    ref = campaigns.reference_id()
    rows = verdicts.verdicts(campaign=ref)
    flat = verdicts.flat(rows)
    assert len(flat) == sum(max(len(r["measured"]), 1) for r in rows) > 0   # an unanswered claim: one line
    by_doc, by_build = verdicts.outcome_counts(flat, "document"), verdicts.outcome_counts(flat, "build")
    assert by_doc["total"].sum() == by_build["total"].sum() == len(flat)
    assert set(flat["outcome"]) <= set(verdicts.OUTCOMES)
    # an agreement is never a mere overlap: every agreeing interval lies wholly inside its band
    # (claims without a band are one-sided, "at least" / "at most", or qualitative, "loses updates")
    agrees = flat[(flat["outcome"] == "agrees") & flat["band"].notna()]
    for _, r in agrees.iterrows():
        lo, hi = sorted((r["published"] * (1 - r["band"]), r["published"] * (1 + r["band"])))
        assert lo <= r["ci_low"] and r["ci_high"] <= hi, (r["claim_id"], r["condition"])
    text = verdicts.counts_markdown(flat)
    head = verdicts.headline(flat)
    tally = verdicts.claim_tally(head)
    for doc, g in head.groupby("document"):
        n = int((tally["document"] == doc).sum())      # each claim once a build family, one quantity once
        assert f"{n} claim{'s' if n != 1 else ''} on the document's own interpreter" in text
        assert f"over {len(g)} claim x build rows" in text
    for role in verdicts.ROLES[1:]:       # what the headline leaves out is counted on its own line
        g = flat[flat["role"] == role]
        n = g["claim_id"].nunique()
        # the machine numbers: those on their own builds first, as the verdicts page's table holds them
        own = len(verdicts.machine_context(flat)) if role == "machine" else len(g)
        pairs = (f"{own} claim x build pairs on the builds the numbers were measured on" if own < len(g)
                 else f"{len(g)} claim x build pairs")
        assert not len(g) or f"{n} claim{'s' if n != 1 else ''} ({pairs}" in text, (role, text)
    plots.setup()
    fig = plots.verdicts_figure(head)
    assert len(fig.axes[0].get_yticks()) == head["claim_id"].nunique()


def test_then_and_now_pairs_each_era_build_with_todays_and_says_what_changed():
    from gillab.judge import verdicts

    def row(doc, claim, cond, outcome):
        return {"document": doc, "experiment": f"e{doc}", "claim_id": claim, "claim": claim,
                "condition": cond, "outcome": outcome}

    df = pd.DataFrame([
        row("000", "race", "3.9.2", "agrees"), row("000", "race", "3.13.5", "lower"),        # true then, not now
        row("000", "race2", "3.9.10", "agrees"), row("000", "race2", "3.13.5", "agrees"),    # a retired build in 3.9.2's part
        row("000", "race", "nogil-3.9.10", "agrees"), row("000", "race", "3.13.5t", "agrees"),  # the retired fork: no era
        row("000", "race", "3.13.5t-gil", "lower"),
        row("004", "b2", "3.13.5t (many, 10 threads)", "agrees"),                              # no era twin
        row("002", "st", "3.9.2", "agrees"), row("002", "st", "3.13.5", "lower"),              # not doc002's era
        row("001", "old", "2.7.18", "agrees"), row("001", "old", "3.13.5", "lower"),           # the old GIL
        row("004", "pair", "3.9.10 vs nogil-3.9.10 (single, 4 threads)", "lower"),              # the retired pair
        row("004", "pair", "3.13.5 vs 3.13.5t (single, 4 threads)", "lower"),
        row("004", "pair", "3.13.5t-gil vs 3.13.5t (single, 4 threads)", "lower"),              # no era pair
    ])
    t = verdicts.era_vs_today(df)
    got = {(r["claim_id"], r["era condition"], r["today condition"], r["compared"]) for _, r in t.iterrows()}
    assert got == {("race", "3.9.2", "3.13.5", "different"), ("race2", "3.9.10", "3.13.5", "the same"),
                   ("old", "2.7.18", "3.13.5", "different")}
    t = verdicts.era_vs_today(pd.DataFrame([row("000", "r", "3.9.2", "agrees"), row("000", "r", "3.13.5", "inconclusive")]))
    assert list(t["compared"]) == ["open"]        # agrees then, inconclusive now: not a change, nothing either way
    assert verdicts.era_vs_today(df.iloc[0:0]).empty


def test_a_seed_verdict_is_set_beside_the_default_verdict_of_the_same_claim_and_build():
    import pandas as pd

    from gillab.judge import verdicts

    def flat(rows):
        return pd.DataFrame([{"claim_id": c, "condition": k, "outcome": o, "experiment": "countdown"}
                             for c, k, o in rows])

    seed = flat([("countdown/threads=2", "3.9.10", "agrees"), ("countdown/threads=2", "3.13.5t", "lower"),
                 ("countdown/threads=4", "nogil-3.9.10", "inconclusive"), ("countdown/threads=8", "-", "not measured")])
    default = flat([("countdown/threads=2", "3.9.10", "inconclusive"), ("countdown/threads=2", "3.13.5t", "lower")])
    both = verdicts.profile_beside(seed, default)
    assert list(both["default outcome"]) == ["inconclusive", "lower", "not measured"]
    # a build default did not measure is new on seed, not a changed outcome
    assert list(both["changed"]) == [True, False, False] and list(both["only on seed"]) == [False, False, True]
    assert verdicts.profile_beside(seed.iloc[:0], default).empty


def test_a_bar_that_is_no_95_interval_is_dashed_and_the_figure_says_so():
    """Three runs give the range, not a 95% interval: that bar is dashed and the axes carry one
    note; seven runs give an interval: a solid bar.  The countdown figure's speedup bars follow
    the same rule (a ratio of medians needs 8 runs a side)."""
    import matplotlib.pyplot as plt

    from gillab.present import plots

    plots.setup()
    df = synthetic({"few": {1: [1.0, 1.1, 1.2]}, "enough": {1: [1.0, 1.1, 1.2, 1.05, 1.15, 1.1, 1.12]}})
    fig, ax = plt.subplots()
    plots.median_with_ci(ax, df, "threads", "seconds", "condition", {"enough": "C0", "few": "C1"})
    bars = {c.get_label(): c for c in ax.containers}
    dashed = {name: [ls[1] is not None for ls in b.lines[2][0].get_linestyles()] for name, b in bars.items()}
    assert dashed == {"enough": [False], "few": [True]}
    assert [t.get_text() for t in ax.texts] == [plots.WEAK_NOTE]
    plt.close(fig)
    fig = cd.ANALYSIS.figure(synthetic({"gil": {1: [6.5, 6.52, 6.55], 2: [6.6, 6.57, 6.58]}}))
    assert plots.WEAK_NOTE in [t.get_text() for a in fig.axes for t in a.texts]
    plt.close(fig)


def test_the_summary_groups_a_tables_points_and_marks_each_family():
    """The verdicts page's summary: one line per claim (a document's per-point claims together),
    one column per build family, a single claim x build with its interval, several counted."""
    import pandas as pd

    from gillab.judge import claims, verdicts

    rows = [("000", "countdown/threads=2", "new GIL", "3.9.10", "higher", 1.7, 1.6, 1.9),
            ("000", "countdown/threads=4", "new GIL", "3.9.10", "inconclusive", 2.0, 1.5, 2.5),
            ("000", "countdown/threads=4", "new GIL", "3.13.5", "agrees", 1.0, 0.95, 1.05),
            ("000", "data_race/lost_updates", "no GIL", "3.13.5t", "agrees", 2.0, 2.0, 2.0)]
    df = pd.DataFrame([{"document": d, "claim_id": c, "family": f, "condition": k, "outcome": o, "measured": m,
                        "ci_low": lo, "ci_high": hi, "published": 1.0} for d, c, f, k, o, m, lo, hi in rows])
    t = verdicts.summary_by_family(df).set_index("claim")
    assert list(t.index) == ["countdown/threads=… (2 points)", "data_race/lost_updates"]
    assert t.loc["countdown/threads=… (2 points)", "new GIL"] == "✓1 ↑1 ?1"
    assert t.loc["countdown/threads=… (2 points)", "published"] == "per point"
    assert t.loc["data_race/lost_updates", "no GIL"] == "✓ 2 [2, 2]" and t.loc["data_race/lost_updates", "new GIL"] == ""
    assert t.loc["countdown/threads=… (2 points)", "claim_ids"] == ["countdown/threads=2", "countdown/threads=4"]
    # one claim: its published value with the comparison and band claims.csv gives it, in words
    c = claims.get("data_race/lost_updates")
    assert t.loc["data_race/lost_updates", "published"].startswith(f"{c['comparison']} 1")


def test_an_outcome_that_changed_with_the_size_says_why_as_far_as_the_numbers_do():
    import pandas as pd

    from gillab.judge import verdicts

    nan = float("nan")
    cols = ["claim_id", "condition", "outcome", "measured", "ci_low", "ci_high", "why", "experiment"]

    def flat(rows):
        return pd.DataFrame([dict(zip(cols, r + ("countdown",))) for r in rows])

    seed = flat([("a", "3.9.10", "agrees", 1.0, 0.9, 1.1, ""),         # apart from default's interval
                 ("b", "3.9.10", "agrees", 1.0, 0.8, 1.2, ""),         # overlapping it
                 ("c", "3.9.10", "inconclusive", 1.0, nan, nan, "n too small: 3 runs"),
                 ("d", "3.9.10", "higher", 2.0, 1.9, 2.1, ""),
                 ("e", "3.9.10", "agrees", 1.0, 0.9, 1.1, ""),
                 ("f", "3.9.10", "agrees", 1.0, 0.9, 1.1, "")])
    default = flat([("a", "3.9.10", "lower", 0.5, 0.4, 0.6, ""),
                    ("b", "3.9.10", "lower", 0.75, 0.7, 0.85, ""),
                    ("c", "3.9.10", "agrees", 1.0, 0.9, 1.1, ""),
                    ("d", "3.9.10", "higher", 2.0, 1.8, 2.2, ""),
                    ("e", "3.9.10", "inconclusive", 1.0, nan, nan, "n too small: 2 runs")])
    both = verdicts.profile_beside(seed, default).set_index("claim_id")
    assert both.loc["a", "reason"] == "intervals apart"
    assert both.loc["b", "reason"] == "intervals overlap"
    assert both.loc["c", "reason"] == "too few runs on seed"
    assert both.loc["d", "reason"] == "" and not both.loc["d", "changed"]
    assert both.loc["e", "reason"] == "too few runs on default"
    assert both.loc["f", "only on seed"] and not both.loc["f", "changed"] and both.loc["f", "reason"] == ""
    assert both.loc["a", "default measured"] == 0.5


def test_the_size_differences_are_read_from_the_profiles():
    from gillab.judge import verdicts

    assert "total_decrements 5,000,000 -> 100,000,000" in verdicts.size_differences("countdown")
    assert verdicts.size_differences("file_io") == ""        # seed measures default's sizes


def test_no_seed_verdict_of_a_chapter_measured_whole_is_inconclusive_for_want_of_runs():
    """The committed seed record's campaign's chapters that hold every sample the profile asks for give
    each judged claim x build the runs its interval needs (the claim tier of profiles.toml)."""
    from gillab.present import timing
    from gillab.measure import campaigns
    from gillab.judge import verdicts

    rec = timing.chapter_times_record("seed")      # a reference that ran `seed`, or a former one
    assert rec is not None and rec["campaign"] in {c.id for c in campaigns.all_campaigns()}
    # a chapter whose profile asks for more since the record (a grid a new claim reads) is not whole
    whole = [e["experiment"] for e in rec["experiments"]
             if e["to_measure"] == 0 and timing.asks_as_recorded(e, "seed") and verdicts.size_differences(e["experiment"])]
    assert whole, "no seed chapter measured whole"
    judged = verdicts.headline(verdicts.flat(verdicts.verdicts(rec["campaign"], whole, profile="seed")))
    short = judged[judged["why"].astype(str).str.startswith("n too small")]
    assert len(judged) and short.empty, short[["claim_id", "condition", "n", "why"]].to_string()


def test_the_verdicts_figure_keeps_a_ten_percent_band_visible_and_marks_values_beyond():
    """The reference's ratios span 0.01 to 14,000: on a log axis over all of them a band of 10%
    would be a sliver. The axis stops at GLANCE_EDGE either way; each value beyond is an arrowhead
    at the edge with its number beside it, and every claim keeps its row."""
    import math

    from gillab.judge import verdicts
    from gillab.present import plots

    head = verdicts.headline(verdicts.reference_flat())
    plots.setup()
    fig = plots.verdicts_figure(head)
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    assert lo >= 1 / plots.GLANCE_EDGE - 1e-9 and hi <= plots.GLANCE_EDGE + 1e-9
    assert math.log(1.1 / 0.9) / math.log(hi / lo) > 0.05        # a band of +-10% is 5% of the axis or more
    drawn = head[head["ours_over_published"] > 0]          # a 0 cannot be drawn on a log scale: counted apart
    beyond = drawn[(drawn["ours_over_published"] > hi) | (drawn["ours_over_published"] < lo)]
    assert len(beyond)
    arrows = [line for line in ax.get_lines() if line.get_marker() in (">", "<")]
    assert len(arrows) == len(beyond)
    labels = " ".join(t.get_text() for t in ax.texts)
    for v in beyond["ours_over_published"]:
        assert f"{v:,.3g}" in labels
    assert len(ax.get_yticks()) == head["claim_id"].nunique()


def test_the_seed_table_and_the_method_agree_on_what_the_profile_now_asks():
    """A chapter the seed record calls complete but whose profile asks for more since (a grid a new
    claim reads) reads 'complete then ... the profile now asks for more' on the verdicts page, as
    the method chapter's table says; one the profile still asks for as recorded reads 'complete'."""
    from gillab.judge import verdicts
    from gillab.present import timing

    rec = timing.chapter_times_record("seed")
    assert rec is not None
    table = verdicts.sizes_by_chapter(pd.DataFrame(), rec).set_index("chapter")["seed as recorded"]
    method = timing.profile_minutes("seed")
    for e in rec["experiments"]:
        name = e["experiment"]
        if e["to_measure"] or not verdicts.size_differences(name):
            continue
        line = next(x for x in method.splitlines() if x.startswith(f"| `{name}` |"))
        if verdicts.asks_as_recorded(e, "seed"):
            assert table[name].startswith("complete:") and "asks for more" not in line, name
        else:
            assert table[name].startswith("complete then:") and "asks for more" in line, name
    assert any(table.str.startswith(("complete then:", "complete:")))
    # a record whose asked runs differ from what the profile asks now reads "complete then"
    import copy

    done = next(e for e in rec["experiments"] if not e["to_measure"] and verdicts.size_differences(e["experiment"])
                and verdicts.asks_as_recorded(e, "seed"))
    older = copy.deepcopy(rec)
    e = next(x for x in older["experiments"] if x["experiment"] == done["experiment"])
    e["params"] = {**e["params"], "repeats": int(e["params"].get("repeats") or 1) + 1}
    assert not verdicts.asks_as_recorded(e, "seed")
    then = verdicts.sizes_by_chapter(pd.DataFrame(), older).set_index("chapter")["seed as recorded"]
    assert then[done["experiment"]].startswith("complete then:") and "asks for more" in then[done["experiment"]]


def test_a_chapter_to_be_measured_again_reads_yesterdays_default_only_for_todays_default(monkeypatch):
    """A chapter of the reference declared to be measured again is read at the configuration the
    reference measured it at, for today's `default` (and `verdicts`) only: asked for another
    profile's configuration (the documents' sizes, the version sweep), the reference's default
    samples are not those, and none are read in their place (the b2_download page's version sweep
    stopped on the default samples it was handed)."""
    from gillab.judge import results, verdicts
    from gillab.measure import campaigns

    ref = campaigns.reference_id()
    monkeypatch.setattr(campaigns, "declared", lambda: [campaigns.Declared("stall", ref, "0" * 16, "a test")])
    default = results.samples("stall", ref, verdicts.profile_config("stall", "default"))
    assert len(default) and set(default["profile"]) <= {"default", "verdicts"}
    for profile in ("seed", "smoke"):
        asked = verdicts.profile_config("stall", profile)
        try:
            got = results.samples("stall", ref, asked)
        except results.NoData:
            continue
        assert set(got["config"]) == {asked}, profile


def test_a_campaign_that_measured_no_claims_builds_summarises_and_compares_to_nothing(monkeypatch):
    """A reader's run narrowed to GIL builds (`-p conditions=3.13.5,debian` for a chapter of
    free-threaded / GIL pairs) leaves every verdict row of it unmeasured (condition "-"): the
    verdicts page's summary has no line (and the column the page groups by), and the machines
    table leaves that campaign out instead of turning its flags into objects (where ~True is -2)."""
    from types import SimpleNamespace

    import pandas as pd

    from gillab.judge import across, verdicts

    row = {"document": "002", "claim_id": "st_loop/1_single_threaded.py", "family": "GIL vs no GIL",
           "experiment": "st_loop", "role": "judged", "published": 1.17}
    unmeasured = pd.DataFrame([row | {"condition": "-", "outcome": "not measured", "code_keys": []}])
    out = verdicts.summary_by_family(unmeasured)
    assert out.empty and "doc" in out.columns and out.groupby("doc").ngroups == 0
    now = across.code_keys_now()["st_loop"]
    measured = pd.DataFrame([row | {"condition": "3.13.5 vs 3.13.5t", "outcome": "agrees", "code_keys": [now]}])
    frames = {"narrowed": unmeasured, "other": measured}
    monkeypatch.setattr(verdicts, "verdicts", lambda cid, *a, **k: cid)      # a campaign's id stands for its rows
    monkeypatch.setattr(verdicts, "flat", lambda cid: frames[cid].copy())
    cs = [SimpleNamespace(id=c, role="contributed", fingerprint="f") for c in frames]
    v = across.campaign_verdicts(cs, "default")
    assert len(v) == 1 and v["this_code"].dtype == bool and across.apart(v).empty


def test_a_documents_stand_in_is_named_where_its_tally_is_counted(tmp_path, monkeypatch):
    """Document 003 assumes "Python 3.3 or newer" and names no release: its tally's 3.9.2 is a
    stand-in, and the counts say so rather than call it the document's own interpreter alone
    (issue 78's blind read); builds.toml refuses words for a document [own] does not list."""
    from gillab.judge import verdicts
    from gillab.measure import provision

    text = verdicts.counts_markdown(verdicts.flat(verdicts.campaign_verdicts()[1]))
    line = next(ln for ln in text.splitlines() if "Document 003" in ln)
    assert "a stand-in: the article assumes Python 3.3 or newer" in line
    assert provision.own_words("000") == "" and "Document 000" in text
    bad = tmp_path / "builds.toml"
    bad.write_text(provision.builds_file().read_text().replace('[own_words]\n', '[own_words]\n"009" = "none"\n'))
    monkeypatch.setenv("GILLAB_BUILDS", str(bad))
    with pytest.raises(provision.ProvisionError, match=r"\[own_words\] speaks of documents \[own\] does not list"):
        provision.own_words("003")
