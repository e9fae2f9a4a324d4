import subprocess
import sys
from pathlib import Path

import pytest

from gillab.measure import experiments
from gillab.measure import sweep
from gillab.measure.profiles import OWN_THREAD_BOUND, ParameterError

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("overrides,match", [
    ({"threads": [0, 2]}, "threads.*must be >= 1"),
    ({"threads": [-1]}, "threads.*must be >= 1"),
    ({"threads": []}, "threads.*at least one"),
    ({"total_decrements": 0}, "total_decrements.*must be >= 1"),
    ({"repeats": 0}, "repeats.*must be >= 1"),
    ({"switch_interval": 0}, "switch_interval.*must be a number > 0"),
    ({"switch_interval": -0.005}, "switch_interval.*must be a number > 0"),
    ({"switch_interval": 1e-9}, "switch_interval.*>= 1e-6"),
    ({"affinity": [99]}, "CPUs .*99.* not available"),
    ({"thraeds": [1]}, "unknown parameter.*thraeds"),
    ({"threads": [1, 2], "total_decrements": 1}, "exceed total_decrements"),
])
def test_bad_parameters_are_refused_before_measuring(overrides, match, data_dir):
    with pytest.raises(ParameterError, match=match):
        sweep.measure("countdown", "smoke", overrides)
    assert not data_dir.exists()  # nothing written, nothing measured


def test_unknown_profile_and_experiment(data_dir):
    with pytest.raises(ParameterError, match="unknown profile 'fast'"):
        sweep.measure("countdown", "fast")
    with pytest.raises(ParameterError, match="unknown experiment 'nope'"):
        sweep.measure("nope", "smoke")


def test_unknown_condition_is_refused_before_measuring(data_dir):
    from gillab.measure.interpreters import ConditionError

    with pytest.raises(ConditionError, match="unknown condition"):
        sweep.measure("countdown", "smoke", {"conditions": "3.13.5,python9"})
    assert not data_dir.exists()


def test_no_available_condition_is_a_clear_error(data_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("GILLAB_CACHE", str(tmp_path / "no-builds"))
    from gillab.measure import interpreters

    interpreters.identify.cache_clear()
    try:
        with pytest.raises(ParameterError, match="none of the requested conditions is available.*gillab provision"):
            sweep.measure("countdown", "smoke", {"conditions": "core"})
    finally:
        interpreters.identify.cache_clear()
    assert not data_dir.exists()


def test_profiles_follow_the_document_in_seed():
    p = experiments.get("countdown").resolve("seed")
    assert p["threads"] == [1, 2, 4, 8] and p["total_decrements"] == 100_000_000
    # the document's best of 3: whole trials of 3 runs, 7 of them where the claims read
    assert p["repeats"] == 21 and p["rest_repeats"] % 3 == 0


def test_cli_reports_bad_input_plainly(data_dir):
    out = subprocess.run([sys.executable, "-m", "gillab", "measure", "countdown", "-P", "smoke",
                          "-p", "switch_interval=0"], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.startswith("gillab: error:") and "switch_interval" in out.stderr
    assert "Traceback" not in out.stderr
    assert not data_dir.exists()


@pytest.mark.parametrize("profile", ["smoke", "default", "verdicts", "seed"])
def test_every_experiment_resolves_every_profile(profile):
    """profiles.toml holds a complete, valid table for every experiment and profile."""
    from gillab.measure.experiments import get, names

    from gillab.measure import grid

    for name in names():
        exp = get(name)
        p = exp.resolve(profile)
        assert p["repeats"] >= 1 and exp.points(p), name
        grid.of(exp, p)   # full_grid, small_grid and the claim tier checked


def test_the_verdicts_profile_is_defaults_configuration_with_more_runs():
    """Every experiment's verdicts table changes only how much is measured: the same
    configuration id as default (so its samples add to default's in one campaign), at least
    default's repeats, and exactly that many (no adaptive rounds)."""
    from gillab.measure.experiments import get, names

    for name in names():
        exp = get(name)
        d, v = exp.resolve("default"), exp.resolve("verdicts")
        assert exp.config_id(d) == exp.config_id(v), name
        assert v["repeats"] >= max(d["repeats"], d["max_repeats"] or 0) and v["max_repeats"] is None, name


def test_a_verdicts_table_that_changes_what_is_measured_is_refused(monkeypatch):
    from gillab.measure import profiles
    from gillab.measure.experiments import get

    real = profiles.load_profiles()
    bad = {**real, "countdown": {**real["countdown"], "verdicts": {"repeats": 21, "total_decrements": 10**6}}}
    monkeypatch.setattr(profiles, "load_profiles", lambda: bad)
    with pytest.raises(ParameterError, match=r"\[countdown.verdicts\] sets total_decrements: the verdicts profile is "
                                             "default's configuration with more runs"):
        get("countdown").resolve("verdicts")


def test_no_experiment_declares_tables_profiles_toml_already_holds():
    """Today every chapter's tables are in profiles.toml: none falls back to its module (a new
    chapter may, until its sizes are tuned there), so the method sections say profiles.toml."""
    from gillab.measure import profiles
    from gillab.measure.experiments import names

    for name in names():
        assert profiles.declared(name) == {}, name
        assert {profiles.table_source(name, p) for p in ("smoke", "default", "verdicts", "seed")} == {"profiles.toml"}


def test_a_profile_table_profiles_toml_lacks_falls_back_to_the_experiments_own(tmp_path, monkeypatch):
    """A profile with no [<name>.<profile>] table in profiles.toml takes the one the experiment's
    module declares beside its class (PROFILES, read as data, never imported); a table in
    profiles.toml wins; the verdicts profile extends default's wherever each comes from; neither
    place: refused, naming both; a PROFILES that is not data: refused."""
    from gillab.measure import profiles
    from gillab.measure.experiments import get

    real = profiles.load_profiles()
    monkeypatch.setattr(profiles, "load_profiles",
                        lambda: {**real, "countdown": {"seed": real["countdown"]["seed"]}})
    monkeypatch.setattr(profiles, "EXPERIMENTS_DIR", tmp_path)
    module = tmp_path / "countdown.py"
    module.write_text('"""A module that declares its tables."""\nimport os\n\nPROFILES = {\n'
                      '    "smoke": {"threads": [1, 3], "total_decrements": 30_000, "repeats": 1, "timeout": 60,\n'
                      '              "paired": False},\n'
                      '    "default": {"threads": [1, 2], "total_decrements": 40_000, "repeats": 7, "timeout": 60,\n'
                      '                "paired": True},\n'
                      '    "verdicts": {"repeats": 9},\n'
                      '    "seed": {"threads": [1], "total_decrements": 1, "repeats": 1, "timeout": 1},\n}\n')
    exp = get("countdown")
    assert exp.resolve("smoke")["threads"] == [1, 3] and exp.resolve("smoke")["total_decrements"] == 30_000
    v = exp.resolve("verdicts")
    assert v["repeats"] == 9 and v["total_decrements"] == 40_000
    assert exp.resolve("seed")["total_decrements"] == 100_000_000          # profiles.toml's table wins
    assert profiles.table_source("countdown", "smoke") == "gillab/measure/experiments/countdown.py (PROFILES)"
    assert profiles.table_source("countdown", "seed") == "profiles.toml"
    module.write_text('PROFILES = {"smoke": {"threads": [1, 2]}}\n')
    with pytest.raises(ParameterError, match=r"profiles.toml has no \[countdown.default\] table, and "
                                             r"gillab/measure/experiments/countdown.py declares none in PROFILES"):
        exp.resolve("default")
    module.write_text('PROFILES = {"smoke": dict(threads=[1, 2])}\n')
    with pytest.raises(ParameterError, match="PROFILES is read as data, as profiles.toml is"):
        exp.resolve("smoke")
    module.write_text('PROFILES = {"fast": {"threads": [1, 2]}}\n')
    with pytest.raises(ParameterError, match="PROFILES maps a profile .* to its table of parameters, not 'fast'"):
        exp.resolve("smoke")


def test_the_verdicts_profile_gives_every_judged_claim_the_runs_its_interval_needs():
    """On the reference campaign's verdict rows, each judged claim's estimand (and the
    document's statistic: a best of 3 is trials of 3 runs) needs some runs per point and build;
    the verdicts profile's repeats give them all (each repeat is one run of every point)."""
    from gillab.measure import campaigns
    from gillab.judge import claims, verdicts
    from gillab import stats
    from gillab.measure.experiments import get

    flat = verdicts.flat(verdicts.verdicts(campaigns.reference_id(), profile="default"))
    judged = flat[(flat["role"].isin(["judged", "then and now"])) & (flat["condition"] != "-") & (flat["estimand"] != "")]
    # a build the plan runs once at a point (a tier's own one run, grid.py: 3.14 and 3.15 beside
    # 3.13.5) reads one run's fallback (a ratio of medians) and is shown, never judged
    judged = judged[judged["n"] > 1]
    assert len(judged) > 100          # the documents' own interpreters' and today's: both are measured to be read
    for (name, estimand, cid), _ in judged.groupby(["experiment", "estimand", "claim_id"]):
        need = stats.runs_needed(estimand)
        if need is None:                 # no interval at all (ccbench's range over tasks): runs cannot help
            continue
        need *= claims.trial_size(cid) if cid in claims.table().index else 1
        assert get(name).resolve("verdicts")["repeats"] >= need, (name, estimand, cid, need)


def test_seed_profiles_follow_the_documents():
    from gillab.measure.experiments import get

    assert get("sha256").resolve("seed")["message_bytes"] == 134_217_728
    conv = get("convoy").resolve("seed")
    assert conv["switch_intervals"] == [0.1, 0.01, 0.005, 0.001, 0.0001, 0.00001, 0.000001]
    assert conv["cpu_threads"] == [0, 1, 2, 4] and conv["window_s"] == 1.0
    assert get("primes").resolve("seed")["upper"] == 2_000_000
    flask = get("flask_k6").resolve("seed")
    assert (flask["vus"], flask["duration_s"], flask["cpu_n"], flask["io_bytes"]) == (15, 20, 10**7, 130_000_000)
    fio = get("file_io").resolve("seed")
    assert (fio["file_mb"], fio["chunk_kb"], fio["single_ops"], fio["multi_ops"], fio["threads"]) == (24, 64, 8, 12, 6)
    assert get("st_loop").resolve("seed")["number"] == 100
    assert get("data_race").resolve("seed")["iterations"] == [1000]


def test_papermill_reads_every_notebook_parameter():
    """papermill's own parser must see every name of each parameters cell (a comment it cannot
    parse makes it warn and treat a passed value as unknown)."""
    import ast

    from papermill.translators import PythonTranslator

    from gillab.present import notebooks
    from gillab.present.execute import notebook_files
    from gillab.paths import notebooks_dir

    for name in notebook_files().values():
        nb = notebooks.read(notebooks_dir() / name)
        (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        declared = [t.id for node in ast.parse(cell.source).body
                    for t in ([node.target] if isinstance(node, ast.AnnAssign) else node.targets)]
        assert [p.name for p in PythonTranslator.inspect(cell)] == declared, name
        assert "campaign" in declared and "machine" not in declared, name


# -- bounds: every parameter has a cap, every sweep a size and an estimate -------------------------
@pytest.mark.parametrize("overrides,match", [
    ({"repeats": 1_000_000_000}, r"repeats=1000000000 is more than 1000 samples per point and build"),
    ({"repeats": 3, "max_repeats": 5000}, r"max_repeats=5000 is more than 1000"),
    ({"timeout": 86400}, r"timeout=86400 s is more than 3600 s for one sample"),
    ({"threads": [1, 10_000]}, r"threads=10000 is more than \d+ threads or processes, the most one sample may start"),
])
def test_a_parameter_past_its_cap_is_refused_at_once(overrides, match, data_dir):
    with pytest.raises(ParameterError, match=match):
        sweep.plan("countdown", "smoke", overrides)
    with pytest.raises(ParameterError, match=match):
        sweep.measure("countdown", "smoke", overrides)
    assert not data_dir.exists()


def _thread_param(name):
    params = experiments.get(name).params
    return "threads" if "threads" in params else "cpu_threads" if "cpu_threads" in params else None


@pytest.mark.parametrize("name", [n for n in experiments.names() if _thread_param(n)
                                  and (n, _thread_param(n)) not in OWN_THREAD_BOUND])   # thread_memory: 20,000
def test_every_thread_count_is_capped_by_the_machine(name, data_dir):
    from gillab.measure.profiles import max_threads

    exp = experiments.get(name)
    param = _thread_param(name)
    as_list = isinstance(exp.resolve("smoke", {})[param], list)
    too_many = [max_threads() + 1] if as_list else max_threads() + 1
    with pytest.raises(ParameterError, match=f"{param}={max_threads() + 1} is more than {max_threads()} threads"):
        exp.resolve("smoke", {param: too_many})


def test_a_sweep_too_big_to_hold_is_refused_before_its_list_is_made(builds, data_dir):
    threads = list(range(1, 60))   # 59 points
    with pytest.raises(ParameterError, match=r"\d[\d,]* samples \(1000 repeats x 59 points x \d+ builds\) is more than "
                                             r"the 100,000 one sweep may hold"):
        sweep.plan("countdown", "smoke", {"repeats": 1000, "threads": threads, "total_decrements": 10**6,
                                          "conditions": "all"})


def test_a_data_folder_of_its_own_is_estimated_from_the_checkouts_reference(builds, data_dir, monkeypatch):
    """GILLAB_DATA pointing at an empty folder has no sample to go by: the estimate then comes
    from the checkout's committed reference, so a sweep of hours is still refused before it starts
    (it was measured, with no estimate at all)."""
    ref = (REPO / "data" / "results" / "REFERENCE").read_text().strip()
    per, where = sweep.seconds_per_sample(experiments.get("countdown"))
    assert where == f"{ref} (the checkout's committed reference)" and per > 0
    monkeypatch.setattr(sweep, "MAX_PLAN_HOURS", 0.01)
    with pytest.raises(ParameterError, match=r"more than the 0.01 hours one sweep may take unless asked for"):
        sweep.measure("countdown", "default", {"conditions": "3.13.5", "threads": [1], "repeats": 300, "small_grid": ""})
    assert not (data_dir / "results").exists() or not any((data_dir / "results").iterdir())   # nothing made


def test_a_sweep_estimated_past_the_limit_is_refused_unless_allowed(builds, data_dir, monkeypatch):
    """The estimate is the chapter's median sample time in the reference campaign times the
    samples to measure (read at other configurations, in proportion to the work a planned sample
    does: the reference's countdowns of 100,000,000 decrements do not lengthen one of 5,000,000);
    the limit is lowered here so that a plain countdown sweep passes it."""
    from conftest import copy_reference

    ref = copy_reference(data_dir)
    monkeypatch.setattr(sweep, "MAX_PLAN_HOURS", 0.01)
    over = {"conditions": "3.13.5", "threads": [1], "repeats": 300, "small_grid": ""}
    plan = sweep.plan("countdown", "default", over)
    per, where = sweep.seconds_per_sample(experiments.get("countdown"), None, 5_000_000)
    assert where == f"{ref} (other configurations, in proportion to each sample's work beyond what it waits out)"
    assert plan.estimate_s == pytest.approx(per * len(plan.todo)) and plan.estimate_s > 36
    unscaled, _ = sweep.seconds_per_sample(experiments.get("countdown"))
    assert per < unscaled     # the seed's long runs are in the plain median
    assert plan.estimate_basis.startswith(f"{per:.2g} s per sample, the median in campaign {ref}")
    with pytest.raises(ParameterError, match=r"about 0 hours \(300 samples at .* more than the 0.01 hours one sweep may "
                                             r"take unless asked for: add --allow-long"):
        sweep.measure("countdown", "default", over)
    assert sorted(p.name for p in (data_dir / "results").iterdir()) == sorted(["REFERENCE", ref])   # nothing made
    out = subprocess.run([sys.executable, "-m", "gillab", "measure", "countdown", "--plan", "-p", "conditions=3.13.5",
                          "-p", "threads=[1]", "-p", "repeats=300", "-p", "small_grid="],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and f" to measure ({per:.2g} s per sample, the median in campaign {where})" in out.stdout


def test_a_list_on_the_command_line_reaches_a_notebook_as_the_list_it_is():
    """``-p cpu_threads=0,2`` is the list [0, 2] wherever it goes: papermill writes the parameters
    cell from it, and a tuple would be written as another type than the notebook declares."""
    from papermill.translators import translate_parameters

    from gillab import cli

    got = cli._parse_kv(["cpu_threads=0,2", "switch_intervals=0.005", "placements=os", "conditions=3.9.2,3.13.5"])
    assert got == {"cpu_threads": [0, 2], "switch_intervals": 0.005, "placements": "os", "conditions": "3.9.2,3.13.5"}
    cell = translate_parameters("python", "python", got, "")
    assert "cpu_threads = [0, 2]" in cell
    namespace = {}
    exec(cell, namespace)
    assert experiments.get("convoy").params["cpu_threads"].parse(namespace["cpu_threads"]) == [0, 2]
