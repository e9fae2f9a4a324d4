"""Steadiness on record (:mod:`gillab.judge.steadiness`): a whole run takes pace probes at its start,
between chapters every few minutes and at its end; one rule, reading the record alone, says whether
the sitting may become the reference; the method chapter shows it beside each run's pace."""
from __future__ import annotations

import html
import json
import os

import pytest

from gillab import reproduce
from gillab.judge import budget, speed, steadiness
from gillab.measure import campaigns, experiments
from gillab.present import timing
from gillab.present import sittings
from gillab.record import RunRecord


def probe(median, steal=0.0, since=None, when="between"):
    out = {"when": when, "build": "3.13.5", "runs": [median] * 3, "median_s": median, "loadavg": [0.5, 0.5, 0.5],
           "cpu_steal_share": steal}
    return out | ({} if since is None else {"cpu_steal_share_since": since})


def record(*probes, steal=0.01):
    return {"profile": "default", "started": "2026-12-01T00:00:00+00:00", "status": "complete",
            "loadavg_start": [0.5], "loadavg_end": [0.6], "cpu_steal_share": steal, "probes": list(probes),
            "speed_factor": 1.1, "speed": "3.13.5's one-thread countdown ran 1.10 x the time it took in campaign x",
            "experiments": []}


STEADY = record(probe(1.00, when="start"), probe(1.05, since=0.01), probe(1.10, since=0.02, when="end"))
DRIFTING = record(probe(1.00, when="start"), probe(1.20, since=0.01), probe(1.30, since=0.01, when="end"))
STOLEN = record(probe(1.00, when="start"), probe(1.02, since=0.08), probe(1.01, since=0.01, when="end"))


def test_the_rule_passes_a_steady_sitting():
    st = steadiness.of(STEADY)
    assert st.outcome == steadiness.STEADY and st.may_be_reference
    assert st.probes == 3 and st.spread == pytest.approx(1.10) and st.steal == pytest.approx(0.02)


def test_the_rule_refuses_a_sitting_whose_pace_drifted():
    st = steadiness.of(DRIFTING)
    assert st.outcome == steadiness.NOT_STEADY and not st.may_be_reference
    assert st.spread == pytest.approx(1.3) and "1.30x the fastest's time (at most 1.25x)" in st.why
    # just within the rule, it passes: the edge belongs to the steady side
    edge = record(probe(1.0, when="start"), probe(steadiness.MOST_PACE_SPREAD, since=0.0, when="end"))
    assert steadiness.of(edge).outcome == steadiness.STEADY


def test_the_rule_refuses_a_sitting_the_hypervisor_stole_from():
    st = steadiness.of(STOLEN)
    assert st.outcome == steadiness.NOT_STEADY and "8.0% of the CPU time was stolen" in st.why
    # a stretch stolen inside one probe, or over the whole run, counts as much as one between probes
    assert steadiness.of(record(probe(1.0, 0.06, when="start"), probe(1.0, since=0.0))).outcome == steadiness.NOT_STEADY
    assert steadiness.of(record(probe(1.0), probe(1.0, since=0.0), steal=0.051)).outcome == steadiness.NOT_STEADY


def test_a_record_without_probes_is_not_recorded_and_one_probe_is_too_few():
    old = {k: v for k, v in STEADY.items() if k != "probes"}
    assert steadiness.of(old).outcome == steadiness.NOT_RECORDED
    one = steadiness.of(record(probe(1.0, when="start")))
    assert one.outcome == steadiness.NOT_STEADY and "fewer than 2" in one.why
    broken = record(probe(1.0, when="start"), {"when": "end", "error": "none of 3.13.5,3.9.10 is built here"})
    assert steadiness.of(broken).outcome == steadiness.NOT_STEADY


def test_the_rule_names_no_cpu():
    import inspect

    text = inspect.getsource(steadiness).lower()
    assert not any(w in text for w in ("epyc", "xeon", "amd", "intel", "family", "cpu_model", "fingerprint"))


def test_a_whole_run_records_its_probes_at_start_between_chapters_and_end(builds, data_dir, monkeypatch):
    monkeypatch.setattr(experiments, "names", lambda: ["st_loop", "sha256"])
    monkeypatch.setattr(steadiness, "PROBE_EVERY_S", 0.0)        # a probe before every chapter
    path, failures = reproduce.reproduce("smoke", campaign="probed", render=False)
    rec = json.loads(path.read_text())
    assert failures == [] and rec["status"] == "complete"
    probes = rec["probes"]
    assert [p["when"] for p in probes] == ["start", "between", "between", "end"]
    assert len({p["build"] for p in probes}) == 1                # one build, probe after probe
    for p in probes:
        assert len(p["runs"]) == speed.PROBE_RUNS and p["median_s"] > 0 and p["loadavg"]
        assert p["profile"] == "smoke" and p["point"] == speed.PROBE_POINT and "cpu_times" not in p
        assert 0.0 <= p["cpu_steal_share"] <= 1.0
        if len(os.sched_getaffinity(0)) > 1:          # one thread pinned to each CPU, beside the pace
            assert all(len(v) == speed.PROBE_CPU_ROUNDS for v in p["cpu_runs"].values()) and p["cpu_gap"] >= 1.0
    assert "cpu_steal_share_since" not in probes[0]
    assert all(0.0 <= p["cpu_steal_share_since"] <= 1.0 for p in probes[1:])
    assert [p["after_s"] for p in probes] == sorted(p["after_s"] for p in probes)
    assert steadiness.of(rec).probes == 4 and steadiness.of(rec).outcome != steadiness.NOT_RECORDED
    # the probes are the run's, never a chapter's samples
    assert {r["run_id"] for r in campaigns.load("probed").store("st_loop").rows()} == {rec["experiments"][0]["run_id"]}


def test_a_probe_is_due_only_every_few_minutes(builds, data_dir, monkeypatch):
    monkeypatch.setattr(experiments, "names", lambda: ["st_loop", "sha256"])
    path, _ = reproduce.reproduce("smoke", campaign="quick", render=False)
    assert [p["when"] for p in json.loads(path.read_text())["probes"]] == ["start", "end"]
    assert steadiness.due(0.0, steadiness.PROBE_EVERY_S) and not steadiness.due(0.0, steadiness.PROBE_EVERY_S - 1)


def test_the_forecasts_pace_is_the_start_probe(builds, monkeypatch):
    """A timed run's pace is read from its first probe: no second probe at the start."""
    def no_probe(*a, **k):
        raise AssertionError("probed again")

    exp = experiments.get("countdown")
    t = budget.timing("countdown", exp.config_id(exp.resolve("default")))
    ref = t.per_point.get(("3.13.5", speed.point_key(speed.PROBE_POINT)))
    if not ref:
        pytest.skip("no committed time of 3.13.5's one-thread countdown to compare with")
    monkeypatch.setattr(speed, "pace_probe", no_probe)
    factor, words = speed.speed_factor(speed.probe_size("verdicts"), {"build": "3.13.5", "median_s": 2 * ref})
    assert factor == pytest.approx(2.0) and "ran 2.00 x the time" in words


def test_the_method_chapter_shows_each_campaigns_steadiness_beside_its_pace(data_dir, monkeypatch, tmp_path):
    monkeypatch.setattr(timing, "timing_dir", lambda: tmp_path / "timing")
    (tmp_path / "timing").mkdir()
    for cid, rec in (("calm", STEADY), ("drifted", DRIFTING), ("old", {k: v for k, v in STEADY.items()
                                                                          if k not in ("probes", "speed")})):
        c = campaigns.create(cid)
        (c.dir / "reproduce-2026-12-01T000000Z.json").write_text(json.dumps(rec | {"campaign": cid}))
    campaigns.create("traces-only")
    text = sittings.steadiness_table()
    row = {line.split(" | ")[0].strip("| `"): line for line in text.splitlines() if line.startswith("| `")}
    assert set(row) == {"calm", "drifted", "old", "traces-only"}
    assert "| 1.10x |" in row["calm"] and "| 3 (1.10x) | **steady**" in row["calm"]
    assert "| 3 (1.30x) | **not steady**: the slowest probe took 1.30x" in row["drifted"]
    assert row["old"].endswith("| not recorded | not recorded |") and "| 1.0% |" in row["old"]
    assert "no whole-run record" in row["traces-only"]
    assert steadiness.rule_words() in text


def test_the_method_chapter_says_not_recorded_for_the_committed_runs_before_the_probe():
    text = sittings.steadiness_table()
    for c in campaigns.all_campaigns():
        assert f"| `{c.id}` |" in text
    recs = sittings.whole_run_records()
    unprobed = sum(1 for rs in recs.values() for r in rs if not r.probes) + sum(not rs for rs in recs.values())
    by_id = {c.id: c for c in campaigns.all_campaigns()}
    unprobed += sum(all(not r.get("probes") for r in runs) for cid, rs in recs.items() if cid in by_id
                    for runs in sittings.apart_runs(by_id[cid], rs))
    assert unprobed and sum(line.endswith("| not recorded |") for line in text.splitlines()) == unprobed


def test_the_method_chapter_includes_the_table_and_its_words_follow_the_rule():
    import inspect
    import re

    from gillab.paths import repo_root
    from gillab.present import book

    method = (repo_root() / "book" / "method.md").read_text()
    written = inspect.getsource(book.build_book)
    for name in re.findall(r"\{include\} generated/([\w.]+)", method):
        assert f'"{name}"' in written, f"book/method.md includes generated/{name}, which build_book never writes"
    assert "generated/steadiness.md" in method
    words = " ".join(method.split())
    numbers = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 10: "ten"}
    assert f"{numbers[speed.PROBE_RUNS]} one-thread countdown samples" in words
    assert f"once {numbers[int(steadiness.PROBE_EVERY_S // 60)]} minutes have passed" in words


def test_a_chapter_measured_on_its_own_records_its_probes(builds, data_dir, capsys, monkeypatch):
    """`gillab measure` outside a whole run probes at its start and end, into its run file; a run
    that resumes everything measures nothing and takes no probe."""
    from gillab import cli

    args = ["measure", "st_loop", "-P", "smoke", "-p", "conditions=3.13.5", "--campaign", "alone", "--new-campaign"]
    assert cli.main(args) == 0
    runs = campaigns.runs(campaigns.load("alone"))
    assert len(runs) == 1 and runs[0]["measured"] > 0
    probes = runs[0]["probes"]
    assert [p["when"] for p in probes] == ["start", "end"]
    assert all(len(p["runs"]) == speed.PROBE_RUNS and p["median_s"] > 0 for p in probes)
    assert 0.0 <= probes[1]["cpu_steal_share_since"] <= 1.0
    assert steadiness.of(runs[0]).probes == 2 and steadiness.of(runs[0]).outcome != steadiness.NOT_RECORDED
    # the probes are the run's, never the chapter's samples
    assert len(campaigns.load("alone").store("st_loop").rows()) == runs[0]["measured"] * 1
    assert cli.main(args[:-1]) == 0                       # everything resumed
    again = campaigns.runs(campaigns.load("alone"))[-1]
    assert again["measured"] == 0 and "probes" not in again
    # a long run probes between samples once one is due (here: before every sample but the first)
    monkeypatch.setattr(steadiness, "PROBE_EVERY_S", 0.0)
    assert cli.main(args[:-3] + ["--campaign", "often", "--new-campaign"]) == 0
    run = campaigns.runs(campaigns.load("often"))[0]
    assert [p["when"] for p in run["probes"]] == ["start"] + ["between"] * run["measured"] + ["end"]


def _run(exp, started, finished, run_id, probes=None, measured=3, steal=0.0):
    return {"run_id": run_id, "experiment": exp, "profile": "verdicts", "started": started, "finished": finished,
            "loadavg_start": [0.4], "loadavg_end": [0.5], "cpu_steal_share": steal, "measured": measured,
            "status": "complete"} | ({"probes": probes} if probes is not None else {})


def test_the_method_chapter_reads_runs_apart_from_a_whole_run_as_stretches(data_dir, monkeypatch, tmp_path):
    """A chapter measured again after the whole run (or before it) is a stretch of the sitting with
    its own steadiness: probed and steady, probed and drifting, or not recorded; a run inside the
    whole run is the whole run's; a run hours after the one before it starts another stretch."""
    monkeypatch.setattr(timing, "timing_dir", lambda: tmp_path / "timing")
    (tmp_path / "timing").mkdir()
    c = campaigns.create("sitting")
    whole = STEADY | {"campaign": "sitting", "started": "2026-12-01T10:00:00+00:00",
                      "finished": "2026-12-01T11:00:00+00:00"}
    (c.dir / "reproduce-2026-12-01T100000Z.json").write_text(json.dumps(whole))
    runs = [_run("ccbench", "2026-12-01T09:00:00+00:00", "2026-12-01T09:10:00+00:00", "a"),         # before
            _run("ccbench", "2026-12-01T10:05:00+00:00", "2026-12-01T10:20:00+00:00", "b"),         # inside
            _run("stall", "2026-12-01T12:00:00+00:00", "2026-12-01T12:05:00+00:00", "c",
                 probes=[probe(1.0, when="start"), probe(1.1, since=0.0, when="end")]),
            _run("ccbench", "2026-12-01T12:10:00+00:00", "2026-12-01T12:30:00+00:00", "d",
                 probes=[probe(1.05, when="start"), probe(1.4, since=0.0, when="end")]),
            _run("countdown", "2026-12-01T12:40:00+00:00", "2026-12-01T12:41:00+00:00", "e", measured=0),
            # more than an hour after the stretch's last run: a stretch of its own
            _run("flask_k6", "2026-12-01T20:00:00+00:00", "2026-12-01T20:08:00+00:00", "f",
                 probes=[probe(1.0, when="start"), probe(1.02, since=0.0, when="end")])]
    for r in runs:
        store = c.store(r["experiment"])
        store.runs_dir.mkdir(parents=True, exist_ok=True)
        (store.runs_dir / f"{r['run_id']}.json").write_text(json.dumps(r))
    stretches = sittings.apart_runs(c, [RunRecord.of(whole)])
    assert [[r["run_id"] for r in s] for s in stretches] == [["a"], ["c", "d"], ["f"]]   # "e" measured nothing
    rows = [line for line in sittings.steadiness_table().splitlines() if line.startswith("| `sitting`")]
    assert len(rows) == 4 and "| **steady**" in rows[0]
    assert "1 run apart from a whole run (`verdicts`: flask_k6), 2026-12-01 20:00" in rows[3]
    assert "| 2 (1.02x) | **steady**" in rows[3]
    assert "1 run apart from a whole run (`verdicts`: ccbench), 2026-12-01 09:00 → 2026-12-01 09:10" in rows[1]
    assert rows[1].endswith("| not recorded | not recorded |")
    # read as one stretch: the slowest probe over the fastest across both runs
    assert "2 runs apart from a whole run (`verdicts`: stall, ccbench)" in rows[2]
    assert "| 4 (1.40x) | **not steady**: the slowest probe took 1.40x" in rows[2]
    assert "| none (no forecast) |" in rows[2] and "(the most of its runs)" in rows[2]
    # the sitting's whole run says which chapters' samples a later run replaced (here: none stored)
    assert "not read now" not in rows[0]
    # one run of a stretch without probes leaves the whole stretch not recorded, saying so
    st = sittings.apart_steadiness([runs[0], runs[2]])
    assert st.outcome == steadiness.NOT_RECORDED and st.why == "1 of the 2 runs took no pace probe"


def test_the_references_stretches_say_which_samples_no_page_reads(monkeypatch):
    """On the reference of 2026-11-27 (a campaign kept after it), ccbench's plan before the whole
    run and the whole run's ccbench and stall samples were measured again (stall at new sizes): the
    rows say so, and the stretch of the re-measures, whose samples the pages read, does not; the
    whole run's flask_k6 samples, at the document's sizes, are `seed`'s configuration, still read."""
    ref = "amd-epyc-2c-20261127-sitting4"
    monkeypatch.setattr(campaigns, "reference_id", lambda: ref)
    rows = [line for line in sittings.steadiness_table().splitlines() if line.startswith(f"| `{ref}` |")]
    whole = [r for r in rows if "apart from a whole run" not in r]
    apart = [r for r in rows if "apart from a whole run" in r]
    assert whole and apart
    assert any("not read now" in r and "ccbench" in r.split("not read now")[1].split("|")[0] for r in whole)
    last = [r for r in apart if "stall" in r.split("|")[2]]
    assert last and all("not read now" not in r for r in last)
    # flask_k6 measured again at half sizes the next night: its own stretch, probed and steady
    (flask,) = [r for r in apart if "flask_k6" in r.split("|")[2]]
    assert "1 run apart" in flask and "| **steady**" in flask and "not read now" not in flask


def test_a_run_is_alone_when_every_sample_kept_aside_was_measured_again():
    """Alone by :mod:`gillab.measure.alone`'s samples: none kept aside, or each measured again alone;
    a record written before samples were checked cannot say; and the first screen says which,
    with what it means, in one line."""
    from gillab.present import landing

    v2 = STEADY | {"version": 2}
    chapter = {"experiment": "sha256", "measured": 40, "failed": 0, "seconds": 60.0, "phase": "plan"}
    assert steadiness.alone_of(v2 | {"experiments": [chapter | {"not_alone": 0}]}).outcome == steadiness.ALONE
    again = steadiness.alone_of(v2 | {"experiments": [chapter | {"not_alone": 3, "measured_again": 3}]})
    assert again.outcome == steadiness.ALONE and again.kept_aside == 3 and "each measured again alone" in again.why
    left = steadiness.alone_of(v2 | {"experiments": [chapter | {"not_alone": 5, "measured_again": 2},
                                                     chapter | {"phase": "rounds", "not_alone": 1}]})
    assert (left.outcome, left.kept_aside, left.left, left.chapters) == (steadiness.NOT_ALONE, 6, 4, {"sha256": 6})
    assert steadiness.alone_of(STEADY).outcome == steadiness.NOT_RECORDED     # version 1
    assert landing.quiet_words(v2 | {"experiments": [chapter]}).startswith("**Steady and alone.**")
    for rec in (v2 | {"experiments": [chapter | {"not_alone": 5, "measured_again": 2}]}, DRIFTING | {"version": 2},
                STEADY):
        words = landing.quiet_words(rec)
        assert words.startswith("**Provisional: measure again on a quiet machine.**"), words


def test_later_probes_are_read_against_the_first_plans_yardstick(monkeypatch):
    """The first probe's pace is read against the forecast's times; every later one against the same
    time, never against the run's own samples (once the run has measured the countdown, the forecast
    would read those): the median of the probes so far, a probe beside foreign load left out."""
    asked = []

    def against(size, probe=None):
        asked.append(probe)
        return probe["median_s"] / 0.25, "read against 0.25 s"

    monkeypatch.setattr(speed, "speed_factor", against)
    first = {"build": "3.13.5", "median_s": 0.30, "alone": True}
    factor, _ = speed.pace([first], speed.probe_size("default"))
    ref = speed.probe_reference(first, factor)
    assert factor == pytest.approx(1.2) and ref == pytest.approx(0.25) and len(asked) == 1
    later = [first, {"build": "3.13.5", "median_s": 0.20, "alone": True},
             {"build": "3.13.5", "median_s": 0.22, "alone": True}, {"build": "3.13.5", "median_s": 0.90, "alone": False}]
    factor, words = speed.pace(later, speed.probe_size("default"), ref)
    assert factor == pytest.approx(0.22 / 0.25) and "the median of 3 probes' medians" in words
    assert len(asked) == 1                                     # the yardstick was not read again
    assert speed.probe_reference({"build": "3.13.5"}, 1.0) is None


def test_the_method_chapter_shows_the_readers_and_the_references_runs_and_folds_the_others():
    """Every campaign's runs are in the table, but only the reference's and the reader's are
    shown: the rest are folded under a line that counts their rows (the method page stays
    under the height a reader scrolls)."""
    ref = campaigns.reference_id()
    mine = "intel-xeon-2c-20261129T010057Z"
    text = sittings.steadiness_table(campaign=mine)
    shown, folded = text.split("<details", 1)
    def rows(part):
        return [line for line in part.splitlines() if line.startswith("| `")]
    assert {r.split(" | ")[0].strip("| `") for r in rows(shown)} == {ref, mine}
    others = rows(folded)
    assert others and html.escape(f"Every other campaign's runs: {len(others)} rows") in folded.split("</summary>")[0]
    assert not {ref, mine} & {r.split(" | ")[0].strip("| `") for r in others}
    assert folded.rstrip().endswith("</details>")


def test_the_first_screen_says_when_the_runs_controls_spread_wider_than_their_band():
    """A run steady by its probes and alone, whose controls spread wider than their band, is not
    called steady from run to run: the first screen says what its controls read and that the rows
    they guard stay open for the machine's pace; controls that held change nothing."""
    from gillab.present import landing

    rec = STEADY | {"version": 2, "experiments": [{"experiment": "sha256", "measured": 40, "failed": 0,
                                                   "seconds": 60.0, "phase": "plan", "not_alone": 0}]}
    held = steadiness.Controls(steadiness.HELD, 6, [], [], "6 control x build rows with runs enough: each inside "
                                                           "its band")
    assert landing.quiet_words(rec, held) == landing.quiet_words(rec)
    assert landing.quiet_words(rec, held).startswith("**Steady and alone.**")
    wide = steadiness.Controls(steadiness.WIDE, 6, ["switch_interval/si=0.01/threads=1 on 3.9.2 [0.8, 1.06]"], [],
                               "6 control x build rows with runs enough: 1 wider than their band")
    words = landing.quiet_words(rec, wide)
    assert words.startswith("**Steady by its probes, not from run to run.**"), words
    assert "1 wider than their band" in words and "the machine's pace from run to run, not the GIL" in words
    drifting = landing.quiet_words(DRIFTING | {"version": 2}, wide)
    assert drifting.startswith("**Provisional: measure again on a quiet machine.**")
    assert "1 wider than their band" in drifting


def test_the_method_chapter_draws_one_thread_runs_of_identical_work_over_their_points_median(tmp_path):
    """Each one-thread countdown over the median of its point's runs (one chapter, build, interval
    and size): every point's median reads 1, and the caption's share outside the band of "the same"
    is the figure's data's; a campaign without such runs draws nothing."""
    import pandas as pd

    from gillab.judge import lexicon

    ref = campaigns.reference_id()
    spread = sittings.one_thread_spread(ref)
    assert len(spread) and set(spread["chapter"]) <= set(sittings.IDENTICAL)
    assert spread["relative"].gt(0).all()
    same = lexicon.about("the same")
    share = float(((spread["relative"] < 1 - same) | (spread["relative"] > 1 + same)).mean())
    md = sittings.spread_figure(tmp_path, {"the reference": ref})
    assert (tmp_path / "spread.png").stat().st_size > 0
    assert f"the reference {share:.0%} of {len(spread)}" in md and "generated/spread.png" in md
    chart = [c.id for c in campaigns.all_campaigns() if not {"countdown", "switch_interval"} & set(c.experiments())]
    if chart:
        assert sittings.one_thread_spread(chart[0]).empty
        assert sittings.spread_figure(tmp_path, {"a run": chart[0]}) == ""
    # every point's own median reads 1
    from gillab.judge import results
    from gillab.chapters import switch_interval

    df = switch_interval.judged_samples(results.samples("switch_interval", ref))
    one = df[pd.to_numeric(df["threads"]) == 1]
    keys = ["condition", "switch_interval", "total_decrements"]
    rel = one["seconds"] / one.groupby(keys)["seconds"].transform("median")
    assert rel.groupby([one[k] for k in keys]).median().round(9).eq(1).all()
    assert sorted(spread[spread["chapter"] == "switch_interval"]["relative"].round(9)) == sorted(rel.round(9))
    from gillab.paths import repo_root

    assert "{include} generated/spread.md" in (repo_root() / "book" / "method.md").read_text()


def test_make_sitting_measures_the_reference_in_the_order_the_sitting_asks():
    """`make sitting` (read with `make -n`: nothing runs) builds every set it needs, then measures
    `verdicts` into a new campaign first and every later step into that campaign (none starts
    another): the version chart, the traces and their overhead at 20 rounds; `make sitting-seed`
    adds the documents' own sizes to it, starting no campaign either."""
    import shutil
    import subprocess

    from gillab.paths import repo_root

    if shutil.which("make") is None:
        pytest.skip("make is not installed")

    def steps(target: str) -> list[str]:
        out = subprocess.run(["make", "-n", "--no-print-directory", target], cwd=repo_root(), capture_output=True,
                             text=True, check=True).stdout
        got = [ln.split("gillab", 1)[1].strip() for ln in out.splitlines() if "/gillab " in ln]
        return got[next(i for i, s in enumerate(got) if s.startswith("provision")):]   # after the venv's own

    sitting, seed = steps("sitting"), steps("sitting-seed")
    assert sitting[0] == "provision --set core --set era --set debian --set history --set trace"
    assert sitting[1] == seed[-2] == "steady"               # a machine not steady stops it before it measures
    assert sitting[2:] == ["reproduce --profile verdicts --new-campaign --no-book",
                           "measure b2_download --profile history", "trace record", "trace overhead --rounds 20",
                           "trace witness --rounds 20"]
    assert seed[-1] == "reproduce --profile seed --no-book"
    assert sum("--new-campaign" in s for s in sitting + seed) == 1


def _fake_probes(monkeypatch, medians, alone=None):
    """``speed.pace_probe`` answering ``medians`` in turn (every probe alone, unless ``alone`` says),
    and counting how many were asked for."""
    asked = []

    def pace_probe(size, build=None):
        i = len(asked)
        asked.append(build)
        m = medians[i]
        return {"build": "3.13.5", "runs": [m] * 3, "median_s": m, "loadavg": [0.5] * 3, "cpu_steal_share": 0.0,
                "foreign_cpus": 0.0, "alone": True if alone is None else alone[i], "cpu_times": {}}

    monkeypatch.setattr(speed, "pace_probe", pace_probe)
    return asked


def test_gillab_steady_says_before_a_sitting_whether_the_machine_is_steady_and_alone(monkeypatch, capsys):
    """`gillab steady` takes its probes and reads them by the rule: exit 0 steady and alone, 1 where
    the pace drifted or a probe had company, 2 (before any probe) for a count the rule cannot read."""
    from gillab import cli

    asked = _fake_probes(monkeypatch, [0.30, 0.31, 0.32])
    assert cli.main(["steady", "--probes", "3", "--every", "0"]) == 0
    out, err = capsys.readouterr()
    assert len(asked) == 3 and err.count("[gillab] probe ") == 3
    assert out.startswith("[gillab] steady and alone: 3 probes within 1.07x")
    _fake_probes(monkeypatch, [0.19, 0.28, 0.21])                 # this morning's machine: 1.47x
    assert cli.main(["steady", "--probes", "3", "--every", "0"]) == 1
    assert "not steady and alone: the slowest probe took 1.47x the fastest's time" in capsys.readouterr().out
    _fake_probes(monkeypatch, [0.30, 0.30], alone=[True, False])
    assert cli.main(["steady", "--probes", "2", "--every", "0"]) == 1
    assert "1 probe(s) measured beside other processes' load" in capsys.readouterr().out
    asked = _fake_probes(monkeypatch, [0.30])
    assert cli.main(["steady", "--probes", "1"]) == 2 and not asked
    assert "gillab: error: --probes 1: the rule reads at least 2" in capsys.readouterr().err


def test_a_probe_times_one_thread_pinned_to_each_cpu_and_keeps_the_gap(builds, monkeypatch):
    """On two CPUs the probe times the same one-thread sample pinned to each, in the order 0, 1, 1,
    0 (a drift over the probe falls on both alike), and keeps each CPU's median and the gap between
    the slowest and the fastest; the pace it reports stays the unpinned samples' median."""
    from types import SimpleNamespace

    exp = experiments.get("countdown")
    pinned, paces = [], {None: 0.25, 0: 0.20, 1: 0.30}

    def run_sample(p, point, cond):
        cpu = p["affinity"][0] if p.get("affinity") else None
        pinned.append(cpu)
        return SimpleNamespace(wall_s=paces[cpu])

    monkeypatch.setattr(exp, "run_sample", run_sample)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    got = speed.pace_probe(speed.probe_size("smoke"))
    assert "error" not in got, got.get("error")
    assert [c for c in pinned if c is not None] == [0, 1, 1, 0]
    assert pinned[:1 + speed.PROBE_RUNS] == [None] * (1 + speed.PROBE_RUNS)     # warm-up, then the pace
    assert got["median_s"] == 0.25 and got["cpu_runs"] == {"0": [0.2, 0.2], "1": [0.3, 0.3]}
    assert got["cpu_median_s"] == {"0": 0.2, "1": 0.3} and got["cpu_gap"] == pytest.approx(1.5)
    # on one CPU there is no gap to keep
    pinned.clear()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    one = speed.pace_probe(speed.probe_size("smoke"))
    assert pinned == [None] * (1 + speed.PROBE_RUNS) and "cpu_gap" not in one


def test_the_cpus_gap_is_recorded_beside_the_rule_and_shown_never_ruled(monkeypatch, capsys):
    """A sitting whose probes saw its CPUs at different paces keeps the widest gap beside its
    steadiness (the rule, fixed before the gap was recorded, does not read it); `gillab steady`
    prints each probe's CPUs and the widest gap, and the steadiness table's probes cell shows it."""
    from gillab import cli

    apart = record(probe(1.00, when="start") | {"cpu_gap": 1.08}, probe(1.05, since=0.01) | {"cpu_gap": 1.52},
                   probe(1.10, since=0.02, when="end"))
    st = steadiness.of(apart)
    assert st.outcome == steadiness.STEADY and st.cpu_gap == pytest.approx(1.52)
    assert steadiness.of(STEADY).cpu_gap is None               # probes taken before they were pinned
    assert "1.52x" not in st.why and sittings._probes_cell(st) == "3 (1.10x; CPUs 1.52x apart)"
    assert sittings._probes_cell(steadiness.of(STEADY)) == "3 (1.10x)"

    def pace_probe(size, build=None):
        return {"build": "3.13.5", "runs": [0.3] * 3, "median_s": 0.3, "loadavg": [0.5] * 3, "cpu_steal_share": 0.0,
                "foreign_cpus": 0.0, "alone": True, "cpu_times": {}, "cpu_median_s": {"0": 0.2, "1": 0.3},
                "cpu_gap": 1.5}

    monkeypatch.setattr(speed, "pace_probe", pace_probe)
    assert cli.main(["steady", "--probes", "2", "--every", "0"]) == 0       # steady: the gap is no fault
    out, err = capsys.readouterr()
    assert err.count("pinned: CPU 0 0.2000 s, CPU 1 0.3000 s (1.50x apart)") == 2
    assert "the CPUs' paces stood at most 1.50x apart" in out
