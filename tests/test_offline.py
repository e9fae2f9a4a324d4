"""A machine with many cores, no package registry and no notebook stack measures and exports.

The harness runs here under a Python whose import system refuses the notebook stack (Jupyter,
matplotlib, seaborn, ...): every experiment's module loads, a real sweep is measured and stored,
and the campaign is exported, as on such a machine. A measuring package that is missing is
named in one line, before anything is measured.
"""
import json
import re
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

from gillab import cli
from gillab.measure import experiments
from gillab.measure import offline

REPO = Path(__file__).resolve().parents[1]

# Run the command line with some top-level packages made unimportable, as if never installed.
BLOCKED_RUN = """
import sys
BLOCKED = set(sys.argv[1].split(","))
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Refuse())
from gillab.cli import main
sys.exit(main(sys.argv[2:]))
"""


def without(blocked, *args, timeout=600):
    return subprocess.run([sys.executable, "-c", BLOCKED_RUN, ",".join(blocked), *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_every_experiment_loads_without_the_notebook_stack():
    names = ",".join(experiments.names())
    code = (BLOCKED_RUN.replace("from gillab.cli import main\nsys.exit(main(sys.argv[2:]))\n", "")
            + "from gillab.measure import experiments, sweep, exchange, provision, campaigns\n"
            + "for n in sys.argv[2].split(','):\n    experiments.get(n); sweep.code_key(experiments.get(n))\n"
            + "print(sorted(m for m in sys.modules if m.split('.')[0] in BLOCKED))\n")
    out = subprocess.run([sys.executable, "-c", code, ",".join(cli.NOTEBOOK_PACKAGES), names],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "[]"


def test_measure_and_export_run_without_the_notebook_stack(builds, data_dir, tmp_path):
    args = ["measure", "countdown", "-P", "smoke", "-p", "conditions=3.13.5,3.13.5t", "-p", "threads=[1,2]",
            "-p", "total_decrements=20000", "-p", "repeats=1"]
    done = without(cli.NOTEBOOK_PACKAGES, *args)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["measured"] == 4 and summary["failed"] == 0 and summary["status"] == "complete"
    samples = data_dir / "results" / summary["campaign"] / "countdown" / "samples.csv"
    assert len(samples.read_text().splitlines()) == 1 + 4
    archive = tmp_path / "c.tar.gz"
    done = without(cli.NOTEBOOK_PACKAGES, "export", "-o", str(archive))
    assert done.returncode == 0, done.stderr[-3000:]
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert f"{summary['campaign']}/countdown/samples.csv" in names
    # and the book, which needs the stack, says so in one line instead of a traceback
    done = without(cli.NOTEBOOK_PACKAGES, "book")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "needs the notebook stack" in done.stderr, done.stderr


def test_a_missing_measuring_package_is_named_in_one_line_and_nothing_is_measured(data_dir):
    for pkg in offline.measuring_requirements():
        name = re.split(r"[<>=!~ ;\[]", pkg)[0]
        done = without([name], "measure", "countdown", "-P", "smoke")
        assert done.returncode == 2, (name, done.stderr[-2000:])
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"package {name}," in done.stderr and "requirements/measure.txt" in done.stderr
        assert not (data_dir / "results").exists() or not any((data_dir / "results").iterdir())


def test_measuring_requirements_are_the_projects_own():
    """requirements/measure.txt (what a machine without the notebook stack installs) names each
    package with the same specifier as pyproject.toml, and only packages the CLI's messages call
    measuring packages."""
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    deps = {d.split("#")[0].strip() for d in deps}
    reqs = offline.measuring_requirements()
    assert reqs and set(reqs) <= deps
    assert [re.split(r"[<>=!~ ;\[]", r)[0] for r in reqs] == list(cli.MEASURING_PACKAGES)


def test_wheelhouse_plan_fetches_each_venv_with_the_pip_of_its_own_build(builds):
    """Every interpreter an experiment makes a venv from gets its wheels from its own pip (the
    ABI tags a build made from the same source has on the other machine), once per binary."""
    plan = offline.plan("default")
    who, exe, reqs = plan[0]
    assert who == "harness" and exe == sys.executable
    assert set(offline.measuring_requirements()) <= set(reqs) and "k6" in reqs
    exes = [exe for _, exe, _ in plan[1:]]
    assert len(exes) == len(set(exes)) and builds["3.13.5"].executable in exes
    flask = offline.venv_requirements()["flask_k6"]
    (row,) = [r for r in plan[1:] if r[1] == builds["3.13.5t"].executable]
    assert "3.13.5t (flask_k6)" in row[0] and set(flask) <= set(row[2])
