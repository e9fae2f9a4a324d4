"""The whole report's measuring time: `gillab reproduce` records every chapter's run, and the
method chapter reports the newest committed record of the `default` profile, which must be of
today's profile."""
from __future__ import annotations

import json
import re

import pytest

from gillab import reproduce
from gillab.record import RunRecord
from gillab.judge import budget as budget_mod
from gillab.judge import rounds, speed
from gillab.judge.plan import Plan
from gillab.measure import experiments
from gillab.present import timing
from gillab.present import decided as decided_view
from gillab.measure import campaigns
from gillab.measure.profiles import ParameterError
from gillab.measure.protocol import Experiment


def _record(camp_id):
    (path,) = campaigns.load(camp_id).dir.glob("reproduce-*.json")
    return json.loads(path.read_text())


def test_reproduce_records_each_chapter_and_the_whole_run(builds, data_dir, monkeypatch):
    monkeypatch.setattr(experiments, "names", lambda: ["st_loop"])
    path, failures = reproduce.reproduce("smoke", campaign="timed", render=False)
    rec = json.loads(path.read_text())
    assert failures == [] and rec["failures"] == []
    assert rec["status"] == "complete" and rec["profile"] == "smoke" and rec["campaign"] == "timed"
    (e,) = rec["experiments"]
    run_ids = {r["run_id"] for r in campaigns.load("timed").store("st_loop").rows()}
    assert e["experiment"] == "st_loop" and run_ids == {e["run_id"]} and e["failed"] == 0
    assert e["measured"] == len(campaigns.load("timed").store("st_loop").rows()) > 0
    assert 0 < e["seconds"] <= rec["seconds"]
    assert set(e["params"]) >= {"repeats", "conditions", "full_grid", "small_grid"}
    assert rec["loadavg_start"] and rec["finished"] >= rec["started"]


def test_a_failing_chapter_never_stops_the_others(builds, data_dir, monkeypatch):
    """One chapter cannot start (an unknown name, found by the checks before anything is made);
    another fails mid-run (its build's environment cannot be made); the third is measured, and the
    record lists both failures with their reasons."""
    from gillab.measure import sweep, venvs

    real = sweep.measure

    def measure(name, *a, **k):
        if name == "countdown":
            raise venvs.VenvError("cannot install requests for 3.13.5: no registry")
        return real(name, *a, **k)

    monkeypatch.setattr(sweep, "measure", measure)
    monkeypatch.setattr(experiments, "names", lambda: ["no_such_chapter", "countdown", "st_loop"])
    path, failures = reproduce.reproduce("smoke", campaign="partly", render=False)
    assert [f["experiment"] for f in failures] == ["no_such_chapter", "countdown"]
    assert "unknown experiment 'no_such_chapter'" in failures[0]["error"]
    assert failures[1]["error"] == "VenvError: cannot install requests for 3.13.5: no registry"
    rec = _record("partly")
    assert rec["status"] == "complete with failures" and rec["failures"] == failures
    assert [e["experiment"] for e in rec["experiments"]] == ["st_loop"]
    assert campaigns.load("partly").store("st_loop").rows()


def test_no_campaign_is_made_when_no_chapter_can_start(data_dir, monkeypatch):
    monkeypatch.setattr(experiments, "names", lambda: ["no_such_chapter", "nor_this_one"])
    with pytest.raises(ParameterError, match="no chapter can be measured: no_such_chapter: unknown experiment"):
        reproduce.reproduce("smoke", campaign="never", render=False)
    assert not (data_dir / "results" / "never").exists()


def test_an_interrupted_reproduce_keeps_its_record_and_what_it_measured(builds, data_dir, monkeypatch):
    # Ctrl-C during the second chapter stops the whole run: the first chapter's samples and the
    # record (saying where it stopped) stay
    from gillab.measure import sweep

    real = sweep.measure

    def measure(name, *a, **k):
        if name == "countdown":
            raise KeyboardInterrupt
        return real(name, *a, **k)

    monkeypatch.setattr(sweep, "measure", measure)
    monkeypatch.setattr(experiments, "names", lambda: ["st_loop", "countdown", "sha256"])
    with pytest.raises(KeyboardInterrupt):
        reproduce.reproduce("smoke", campaign="cut", render=False)
    rec = _record("cut")
    assert rec["status"] == "interrupted (KeyboardInterrupt)"
    assert [e["experiment"] for e in rec["experiments"]] == ["st_loop"]
    assert campaigns.load("cut").store("st_loop").rows()


def test_the_committed_timing_record_is_of_todays_default_profile():
    recs = timing.timing_records("default")
    assert recs, "no complete `default` record in data/timing/ (data/timing/README.md says how to record one)"
    assert timing.profile_drift(recs[-1]) == [], (
        "profiles.toml changed what `default` measures since the newest record in data/timing/: "
        "record the whole run again (data/timing/README.md)")


def test_the_method_chapter_reports_the_record_it_reads():
    rec = timing.timing_records("default")[-1]
    text = timing.reproduce_times("default")
    assert f"**{rec.seconds / 60:.1f} minutes**" in text
    # one row a chapter: its planned run and the rounds after it, summed
    assert text.count("\n| `") == len({e["experiment"] for e in rec.experiments})
    for name in {e["experiment"] for e in rec.experiments if e.get("phase") == "rounds"}:
        rounds = sum(e.get("phase") == "rounds" for e in rec.experiments if e["experiment"] == name)
        assert f"| `{name}` (+{rounds} round" in text
    assert "is the one this run measured" in text


def test_a_changed_profile_is_reported_as_drift(monkeypatch):
    rec = json.loads(json.dumps(timing.timing_records("default")[-1].as_dict()))
    convoy = next(e for e in rec["experiments"] if e["experiment"] == "convoy")
    convoy["params"]["full_grid"] = "all"
    gone = next(e["experiment"] for e in rec["experiments"] if e["experiment"] != "convoy")
    rec["experiments"] = [e for e in rec["experiments"] if e["experiment"] != gone]
    drift = timing.profile_drift(rec)
    assert sorted(drift) == sorted(["convoy: full_grid 'all' then, '3.9.2' now", f"{gone}: not in the record"])
    # a chapter the run's budget left out, or that the clock did not reach, is its plan, not drift
    for key in ("left_out", "not_reached"):
        assert timing.profile_drift(rec | {key: {**rec.get(key, {}), gone: []}}) == ["convoy: full_grid 'all' then, '3.9.2' now"]
    # a later round of a chapter adds repeats: the planned run is what is compared
    rounds = json.loads(json.dumps(convoy)) | {"phase": "rounds"}
    rounds["params"]["repeats"] = 99
    assert timing.profile_drift(rec | {"experiments": rec["experiments"] + [rounds]}) == drift


def test_a_profile_measured_in_sittings_is_timed_chapter_by_chapter(builds, data_dir, monkeypatch):
    """`gillab timing` sums the runs that stored samples of the profile's configuration, sitting by
    sitting, says how much of the sweep the campaign holds, and the method chapter's table reads it."""
    from gillab.measure import sweep

    monkeypatch.setattr(experiments, "names", lambda: ["countdown"])
    monkeypatch.setattr(timing, "timing_dir", lambda: data_dir / "timing")
    (data_dir / "timing").mkdir(parents=True)
    tier = {"conditions": "3.13.5,3.13.5t", "threads": [1, 2], "total_decrements": 20_000, "repeats": 3,
            "rest_repeats": 1, "claim_grid": "threads=1"}
    monkeypatch.setattr(experiments.get("countdown"), "resolve",
                        lambda profile, overrides=None, _r=experiments.get("countdown").resolve:
                        _r("smoke", {**tier, **(overrides or {})}))
    first = sweep.measure("countdown", "smoke", {"repeats": 2, "rest_repeats": 1}, campaign="sat", progress=False)
    rec = timing.chapter_times("smoke", "sat")
    (e,) = rec["experiments"]
    assert e["planned"] == 2 * (3 + 1) and e["stored"] == 2 * (2 + 1) and e["to_measure"] == 2
    assert [r["run_id"] for r in e["runs"]] == [first.run_id] and e["runs"][0]["measured"] == 6
    second = sweep.measure("countdown", "smoke", campaign="sat", progress=False)
    assert second.measured == 2
    path = timing.write_chapter_times("smoke", "sat")
    (e,) = json.loads(path.read_text())["experiments"]
    assert e["to_measure"] == 0 and [r["run_id"] for r in e["runs"]] == [first.run_id, second.run_id]
    assert e["seconds"] == pytest.approx(sum(r["seconds"] for r in e["runs"]), abs=0.2)
    text = timing.profile_minutes("smoke")
    assert "| `countdown` | - |" in text and "2 (smoke) | 8 of 8 |" in text and "1 of 1 chapters" in text


def test_one_budget_wherever_the_report_states_it():
    """`default`'s budget is one constant (profiles.BUDGET_MINUTES), and every prose that states
    it says the same number."""
    import re

    from gillab import paths
    from gillab.measure.profiles import BUDGET_MINUTES

    said = re.compile(r"(?:at most|fit(?: the)?|fit the report's)\s+(\d+)\s+minutes")
    for name in ("README.md", "book/method.md", "notebooks/99_verdicts.md"):
        found = said.findall((paths.repo_root() / name).read_text())
        assert found and set(found) == {str(BUDGET_MINUTES)}, (name, found)


def test_the_planned_run_is_reported_with_what_it_decided_and_what_it_left():
    """The method chapter says what the newest planned `default` run decided on its own samples,
    counted as its campaign's verdicts count them, and names every row it left too few runs."""
    from gillab.judge import verdicts
    from gillab import stats

    rec = [r for r in timing.timing_records("default") if r.forecast][-1]
    flat = verdicts.flat(verdicts.verdicts(rec.campaign, profile="default"))
    judged = flat[(flat["role"] == "judged") & (flat["condition"] != "-")]
    text = decided_view.planned_run(flat)
    decided = int(judged["outcome"].isin(("agrees", "higher", "lower")).sum())
    assert f"decided **{decided} of the {len(judged)}**" in text
    total = next(line for line in text.splitlines() if line.startswith("| all |")).split("|")
    assert [c.strip() for c in total[2:5]] == [str(len(judged)), str(decided),
                                               str(int(judged["why"].map(stats.too_few_runs).sum()))]
    for r in judged[judged["why"].map(stats.too_few_runs)].itertuples():
        assert f"`{r.claim_id}` @ {r.condition}" in text


def test_rows_straddling_their_band_are_shown_with_the_runs_their_spread_would_need():
    """Every judged row left inconclusive with enough runs is counted once, as decided within the
    20 runs a point may get at its current spread or not; a row whose interval sits exactly on
    both sides of an edge is never projected to decide, one just short of it is."""
    import pandas as pd

    from gillab.judge import verdicts
    from gillab import stats

    flat = verdicts.flat(verdicts.verdicts(campaigns.reference_id(), profile="default"))
    judged = flat[(flat["role"] == "judged") & (flat["condition"] != "-")]
    open_ = judged[(judged["outcome"] == "inconclusive") & ~judged["why"].map(stats.too_few_runs)
                   & judged["estimand"].isin([*stats.ORDER, stats.RATIO])]
    text = decided_view.straddling(flat)
    counted = [line.split("|") for line in text.splitlines() if line.startswith("| `")]
    assert sum(int(c[2]) for c in counted) == len(open_)
    assert sum(int(c[3].split("(")[0]) + int(c[4]) for c in counted) == len(open_)
    from gillab.judge import claims

    paced = open_["why"].fillna("").str.startswith(claims.MACHINE_PACE)     # a control wider than its band
    assert sum(int(c[5]) for c in counted) == int(paced.sum())
    row = pd.Series({"claim_id": "countdown/threads=2", "estimand": stats.PAIRED_TRIALS, "n": 7, "published": 2.0,
                     "band": 0.1, "measured": 2.2, "ci_low": 1.9, "ci_high": 2.5})

    assert rounds.runs_to_decide(row) is None                       # centred on the band's edge: never
    near = row.copy()
    near[["measured", "ci_low", "ci_high"]] = [2.0, 1.85, 2.21]   # just over the edge at 7 trials
    assert rounds.runs_to_decide(near) is not None and rounds.runs_to_decide(near) >= 1


def test_the_efficiency_table_counts_the_references_judged_rows_and_minutes():
    """The method chapter's baseline for a plan of runs: per chapter the judged claims x builds, how
    many are decided, and the minutes the committed whole runs spent, summed as the records say."""
    from gillab.judge import verdicts

    text = decided_view.efficiency()
    flat = verdicts.flat(verdicts.verdicts(campaigns.reference_id(), profile="default"))
    judged = flat[(flat["role"] == "judged") & (flat["condition"] != "-")]
    decided = int(judged["outcome"].isin(("agrees", "higher", "lower")).sum())
    ref = campaigns.reference_id()
    # the reference's newest whole run of each profile it has one of (a sitting may run `verdicts` alone)
    runs = [rs[-1] for p in ("default", "verdicts")
            for rs in [[r for r in timing.timing_records(p) if r.campaign == ref]] if rs]
    assert runs
    minutes = sum(e["seconds"] for r in runs for e in r.experiments) / 60
    total = next(line for line in text.splitlines() if line.startswith("| all |")).split("|")
    assert [c.strip() for c in total[2:4]] == [str(len(judged)), str(decided)]
    assert float(total[6]) == pytest.approx(minutes, abs=0.05)
    for name in judged["experiment"].unique():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{name}` |")).split("|")
        assert int(row[2]) == int((judged["experiment"] == name).sum()), name


def test_a_run_its_clock_stopped_is_a_record_an_interrupted_one_is_not(tmp_path, monkeypatch):
    monkeypatch.setattr(timing, "timing_dir", lambda: tmp_path)
    base = {"profile": "default", "experiments": []}
    for name, extra in {"a": {"status": "complete", "started": "1"},
                        "b": {"status": "stopped on time", "budget_minutes": 30, "started": "2",
                              "not_reached": {"b2_download": []}},
                        "c": {"status": "stopped on time", "budget_minutes": None, "started": "3"},
                        "d": {"status": "interrupted (KeyboardInterrupt)", "budget_minutes": 30, "started": "4"},
                        "e": {"status": "running", "budget_minutes": 30, "started": "5"}}.items():
        (tmp_path / f"reproduce-{name}.json").write_text(json.dumps(base | extra))
    assert [r.file for r in timing.timing_records("default")] == ["reproduce-a.json", "reproduce-b.json"]


def test_rounds_after_the_plan_go_first_where_more_runs_would_decide_rows(monkeypatch):
    """Of two chapters with straddling rows and rounds of one cost, the one whose rows more runs are
    projected to decide gets its rounds first, though the other straddles more rows; once it has
    all the runs a point may get, the other is next."""
    from gillab.judge import budget

    opened = {"convoy": rounds.Open(rows=10, decidable=0, sequential=True),
              "fib_server": rounds.Open(rows=2, decidable=2, sequential=True)}
    monkeypatch.setattr(rounds, "straddling", lambda name, campaign: opened[name])
    monkeypatch.setattr(budget, "forecast_chapter", lambda name, *a, **k: budget.ChapterForecast(
        name, 5, 10.0, [], "test", k["overrides"]["repeats"]))
    order = []

    def run(name, overrides, phase):
        assert phase == "rounds"
        order.append((name, overrides["repeats"]))
        return object()
    record = RunRecord()
    plan = Plan("default", "any", False, 30.0, {})
    reproduce.more_rounds(plan, "any", ["convoy", "fib_server"], budget.Deadline(None), run, record)
    start = {n: experiments.get(n).resolve("default")["repeats"] for n in opened}
    fib = [(n, r) for n, r in order if n == "fib_server"]
    most = rounds.most_repeats("fib_server")
    assert order[:len(fib)] == fib == [("fib_server", r) for r in range(start["fib_server"] + 1, most + 1)]
    assert [n for n, _ in order[len(fib):]] == ["convoy"] * (rounds.most_repeats("convoy") - start["convoy"])
    assert record.rounds[0] == {"experiment": "fib_server", "repeats": start["fib_server"] + 1,
                                   "straddling_before": 2, "decidable_before": 2}


def test_a_run_short_of_time_measures_every_chapters_claims_before_any_figure(builds, data_dir, monkeypatch):
    """Where the planned runs do not all fit the minutes but every chapter's claims do, no chapter
    is left out: each chapter's claims are measured first, in turn, then each one's other points,
    and the record says so."""
    from gillab.judge import budget
    from gillab.measure import sweep

    names = ["st_loop", "sha256"]
    monkeypatch.setattr(experiments, "names", lambda: names)
    # 20 minutes each whole, 1 minute of claims each: 40 do not fit 30, 2 do
    monkeypatch.setattr(speed, "pace", lambda *a, **k: (1.0, "test"))   # the forecast's numbers as they are
    monkeypatch.setattr(budget, "forecast", lambda *a, **k: [
        budget.ChapterForecast(n, 3, 20 * 60.0, [f"{n}/row"], "test", 1, decided=[f"{n}/row"], figures=19 * 60.0)
        for n in names])
    calls, real = [], sweep.measure

    def measure(name, *a, **k):
        calls.append((name, k.get("claims_first", False)))
        return real(name, *a, **k)

    monkeypatch.setattr(sweep, "measure", measure)
    resolved, resolve = [], Experiment.resolve

    def counted(self, profile="default", overrides=None):
        resolved.append((self.name, profile, json.dumps(overrides or {}, sort_keys=True)))
        return resolve(self, profile, overrides)

    monkeypatch.setattr(Experiment, "resolve", counted)
    path, failures = reproduce.reproduce("smoke", campaign="short", render=False, minutes=30)
    monkeypatch.setattr(Experiment, "resolve", resolve)
    rec = json.loads(path.read_text())
    assert failures == [] and rec["claims_first"] and not rec["left_out"]
    # the plan resolved every chapter's parameters once (and at one run a point, for its forecast):
    # its checks, its forecast, the claims' runs and the figures' read them from the plan
    assert sorted(resolved) == sorted(set(resolved)) and {n for n, *_ in resolved} == {*names, "countdown"}
    order = sorted(names, key=lambda n: budget.by_yield(budget.forecast(), names).index(n))
    assert calls == [(n, True) for n in order] + [(n, False) for n in order]
    assert [(e["experiment"], e["phase"]) for e in rec["experiments"]] == (
        [(n, "plan") for n in order] + [(n, "figures") for n in order])
    assert "claims first" in timing._plan_words(rec)


class Steady(budget_mod.Deadline):
    """A run's clock that always has ``seconds`` left: what the plan decides, without racing time."""

    def __init__(self, seconds: float):
        super().__init__(None)
        self.seconds = seconds

    def left(self) -> float:
        return self.seconds


def _shrinking_plan(names, whole_minutes, decided):
    """A forecast per chapter: its claims' runs (``whole_minutes``) and one run a point (1 minute)."""
    def fc(n):
        c = budget_mod.ChapterForecast(n, 3, whole_minutes[n] * 60, [f"{n}/row{i}" for i in range(decided[n])], "test",
                                       7, decided=[f"{n}/row{i}" for i in range(decided[n])])
        c.fewest = budget_mod.ChapterForecast(n, 1, 60.0, [], "test", 1, short=list(c.judged))
        return c
    return lambda *a, **k: [fc(n) for n in names]


@pytest.mark.parametrize("how", ["forecast", "at the pace kept"])
def test_a_chapter_whose_claims_do_not_fit_is_measured_at_one_run_a_point(builds, data_dir, monkeypatch, how):
    """Not left out: the chapter deciding the fewest rows per minute is measured at one run a point,
    whether the forecast says so before measuring or the minutes left say so when its turn comes;
    the record and the method chapter name it, its judged rows left with too few runs."""
    from gillab.measure import sweep

    names = ["st_loop", "sha256"]
    monkeypatch.setattr(experiments, "names", lambda: names)
    if how == "forecast":       # 12 minutes: sha256's 9 fit, st_loop's 20 do not, its 1 at one run does
        plan, minutes = _shrinking_plan(names, {"st_loop": 20, "sha256": 9}, {"st_loop": 2, "sha256": 5}), 12
    else:                       # both fit the forecast's 30; the clock has 5 left when st_loop's turn (the first) comes
        plan, minutes = _shrinking_plan(names, {"st_loop": 8, "sha256": 4}, {"st_loop": 20, "sha256": 2}), 30
        monkeypatch.setattr(budget_mod.Deadline, "after", classmethod(lambda cls, m: Steady(5 * 60)))
    monkeypatch.setattr(budget_mod, "forecast", plan)
    monkeypatch.setattr(speed, "pace", lambda *a, **k: (1.0, "test"))   # the forecast's numbers as they are
    calls, real = [], sweep.measure

    def measure(name, profile, overrides=None, **k):
        calls.append((name, overrides))
        assert k["params"] == experiments.get(name).resolve(profile, overrides)   # the plan's, resolved
        return real(name, profile, overrides, **k)

    monkeypatch.setattr(sweep, "measure", measure)
    path, failures = reproduce.reproduce("smoke", campaign="shrunk", render=False, minutes=minutes)
    rec = json.loads(path.read_text())
    assert failures == [] and not rec["left_out"] and not rec.get("not_reached")
    rows = 2 if how == "forecast" else 20
    assert list(rec["fewest"]) == ["st_loop"] and len(rec["fewest"]["st_loop"]) == rows
    assert ("st_loop", budget_mod.FEWEST) in calls and ("sha256", None) in calls
    st_loop = next(e for e in rec["experiments"] if e["experiment"] == "st_loop")
    assert st_loop["params"]["repeats"] == budget_mod.FEWEST["repeats"]          # measured as the plan cut it
    words = timing._plan_words(rec)
    assert f"{rows} judged rows left with too few runs" in words
    if how == "forecast":       # chosen so: the forecast it chose is 9 + 1 minutes
        assert "forecast 10.0 minutes for the chapters it chose" in words
        assert "measured `st_loop` at one run a point, its figures" in words
    else:                       # chosen whole (8 + 4 minutes), then measured at one run when its turn came
        assert "forecast 12.0 minutes for the chapters it chose" in words
        assert "measured `st_loop` at one run a point when its turn came" in words
    assert timing.profile_drift(rec) == []


def test_figures_the_time_no_longer_reaches_are_named_in_the_record():
    from gillab.judge import budget

    class Spent:
        def left(self):
            return 0.0

    planned = {n: budget.ChapterForecast(n, 1, 60.0, [], "test", 1, figures=f) for n, f in (("a", 30.0), ("b", 0.0))}
    ran, rec = [], RunRecord(claims_first=True)
    reproduce.figures(["a", "b"], planned, Spent(), lambda *a: ran.append(a), rec)
    assert ran == [] and rec.figures_not_reached == ["a"]      # b had no figures to measure
    assert "did not reach those of `a`" in timing._plan_words(rec.as_dict())


def test_the_references_minutes_count_its_verdicts_runs_at_defaults_configuration():
    """The reference is measured with `verdicts` (default's configuration with more runs): the
    method chapter's minutes at `default`'s configuration count those runs and name the profile,
    never "0 minutes" over an empty table."""
    import re

    from gillab.present import timing

    text = timing.measuring_times("default")
    head = text.split("\n", 1)[0]
    minutes = float(re.search(r"\*\*(\d+) minutes\*\*", head).group(1))
    assert minutes > 0 and "`verdicts` profile" in head
    table = text.split("| chapter | document | runs | minutes |", 1)[1].split("\n\n", 1)[0]
    rows = [ln for ln in table.splitlines() if ln.startswith("| `")]
    assert len(rows) == 15
    assert abs(sum(float(r.rsplit("|", 2)[1]) for r in rows) - minutes) <= 1.0


def test_the_straddling_table_names_the_rows_it_cannot_project():
    """The method's table of rows straddling their band projects medians and ratios only; the rows
    whose statistic is a count of what was seen (data_race's) are named below it, so that its rows
    and those named add up to every straddling row."""
    from gillab.judge import verdicts

    flat = verdicts.reference_flat()
    every = verdicts.straddling(verdicts.judged(flat))
    text = decided_view.straddling(flat)
    counted = sum(int(line.split(" | ")[1]) for line in text.splitlines() if line.startswith("| `"))
    named = re.search(r"Not in the table: (\d+) row", text)
    assert counted + (int(named.group(1)) if named else 0) == len(every)


def test_the_verdicts_runs_minutes_name_its_budget_and_add_up():
    """The reference's `verdicts` run is given its minutes (never 'no budget': `verdicts` has one),
    and its documents' minutes and the rest (probes, forecast) add up to its total."""
    text = timing.reproduce_times("verdicts")
    total = float(re.search(r"measured for \*\*([\d.]+) minutes\*\*", text).group(1))
    parts = [float(x) for x in re.findall(r"document \d{3}: ([\d.]+)", text.split("minutes (the other")[0])]
    other = re.search(r"the other ([\d.]+) went to", text)
    assert "no budget" not in text and "minutes it was given" in text
    assert abs(sum(parts) + (float(other.group(1)) if other else 0.0) - total) <= 0.1 * (len(parts) + 1)


def test_a_whole_runs_resumed_samples_are_its_plans_and_one_run_has_no_width():
    """The later rounds of a chapter count its planned samples as resumed again: the sentence
    counts its plan's only (the reference's verdicts run resumed ccbench's 297, not 13,014); and a
    row on one run, which has no interval, gives the table no interval width."""
    import pandas as pd

    rec = next(r for r in timing.timing_records("verdicts") if r.campaign == "amd-epyc-2c-20261127-sitting4")
    plan = sum(int(e.get("resumed") or 0) for e in rec.experiments if e.get("phase", "plan") == "plan")
    every = sum(int(e.get("resumed") or 0) for e in rec.experiments)
    assert plan < every
    text = timing.reproduce_times("verdicts")
    if timing.timing_records("verdicts")[-1] == rec:
        assert f"already held {plan:,} of its samples" in text
    one = pd.DataFrame({"band": [0.1], "published": [2.0], "ci_low": [2.2], "ci_high": [2.2], "coverage": [0.0]})
    assert decided_view._width_over_band(one) == "-"
    two = one.assign(ci_low=[1.9], ci_high=[2.1], coverage=[0.95])
    assert decided_view._width_over_band(pd.concat([one, two])) == "0.50 (1)"


def test_a_chapter_cut_on_a_slow_first_probe_gets_its_runs_back_when_later_probes_are_fast(builds, data_dir,
                                                                                         monkeypatch):
    """The first probe runs at 1.6x the forecast's times (a machine just out of its builds), every
    probe after it at 0.8x: the first plan cuts the chapter that decides the fewest rows per minute
    to one run a point, and at its turn the plan, redone at the pace of every probe so far, gives it
    its planned runs back; the record says so, pace by pace."""
    from gillab.judge import steadiness
    from gillab.measure import sweep

    names = ["sha256", "st_loop"]
    monkeypatch.setattr(experiments, "names", lambda: names)
    # at 1.6x: sha256's 4 minutes take 6.4 and st_loop's 8 take 12.8, over 12; at 0.8x both fit
    monkeypatch.setattr(budget_mod, "forecast", _shrinking_plan(names, {"sha256": 4, "st_loop": 8},
                                                                {"sha256": 9, "st_loop": 2}))
    taken = []

    def probe(profile, build=None):     # its median in units of the forecast's time at that point
        m = 1.6 if not taken else 0.8
        taken.append(m)
        return {"build": "3.13.5", "runs": [m] * 3, "median_s": m, "alone": True, "cpu_steal_share": 0.0,
                "cpu_times": {}, "loadavg": [0.1]}

    monkeypatch.setattr(speed, "speed_factor", lambda profile, probe=None: (probe["median_s"], "test"))
    monkeypatch.setattr(speed, "pace_probe", probe)
    monkeypatch.setattr(steadiness, "PROBE_EVERY_S", 0.0)         # a probe before every chapter
    calls, real = [], sweep.measure

    def measure(name, profile, overrides=None, **k):
        calls.append((name, overrides))
        return real(name, profile, overrides, **k)

    monkeypatch.setattr(sweep, "measure", measure)
    path, failures = reproduce.reproduce("smoke", campaign="restored", render=False, minutes=12)
    rec = json.loads(path.read_text())
    assert failures == [] and rec["speed_factor"] == pytest.approx(1.6)
    assert calls[:2] == [("sha256", None), ("st_loop", None)]          # whole, not at one run a point
    assert rec["restored"] == ["st_loop"] and "st_loop" not in rec["fewest"] and not rec["fewest_late"]
    assert [(x["before"], x["factor"], x["probes"]) for x in rec["paces"]] == [
        ("sha256", pytest.approx(1.2), 2), ("st_loop", pytest.approx(0.8), 3)]
    assert "gave `st_loop` its planned runs back" in timing._plan_words(rec)
