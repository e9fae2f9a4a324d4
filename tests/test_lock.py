"""An environment that installs the same way next year: requirements/lock.txt pins every package
with its hashes, agrees with pyproject.toml's ranges, and is what `make venv` and environment.yml
install from."""
import re
import tomllib
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements" / "lock.txt"


def lock_entries(text: str) -> list[tuple[str, str, str, list[str]]]:
    """(name, version, marker, hashes) of every pinned line of a pip requirements file with hashes."""
    out = []
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = re.match(r"([A-Za-z0-9_.\-]+)==([^\s;\\]+)\s*(?:;\s*([^\\\n]+?))?\s*\\?\n", block + "\n")
        if m:
            out.append((canonicalize_name(m[1]), m[2], (m[3] or "").strip(), re.findall(r"--hash=sha256:([0-9a-f]{64})", block)))
    return out


def pins_here(entries) -> dict[str, str]:
    """The version each package gets on this interpreter and platform (the markers evaluated)."""
    return {name: version for name, version, marker, _ in entries if not marker or Marker(marker).evaluate()}


def project():
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def requirements_of(proj) -> list[Requirement]:
    reqs = [Requirement(r) for r in proj["dependencies"]]
    for extra in ("test", "live"):
        reqs += [Requirement(r) for r in proj["optional-dependencies"][extra]]
    return reqs


def disagreements(reqs: list[Requirement], pins: dict[str, str]) -> list[str]:
    bad = []
    for r in reqs:
        name = canonicalize_name(r.name)
        if r.marker is not None and not r.marker.evaluate():
            continue
        if name not in pins:
            bad.append(f"{r.name}: not in the lock")
        elif not r.specifier.contains(pins[name], prereleases=True):
            bad.append(f"{r.name}: locked {pins[name]}, pyproject.toml asks {r.specifier}")
    return bad


def test_every_locked_package_is_pinned_with_hashes():
    entries = lock_entries(LOCK.read_text())
    assert len(entries) > 50
    assert all(hashes for *_, hashes in entries), [e[0] for e in entries if not e[3]]
    assert "make lock" in LOCK.read_text().splitlines()[1]   # how to refresh it, in its header


def test_pyproject_and_the_lock_agree():
    """Every dependency of pyproject.toml (and its test and live extras) is pinned in the lock at a
    version its range allows, on the Python the lock covers."""
    pins = pins_here(lock_entries(LOCK.read_text()))
    assert disagreements(requirements_of(project()), pins) == []
    lowest = re.search(r"--python-version (\S+)", (REPO / "Makefile").read_text())[1]
    assert project()["requires-python"] == f">={lowest}"


def test_a_range_the_lock_does_not_meet_is_caught():
    """The check itself: a newer lower bound in pyproject.toml than the locked version, or a new
    dependency the lock lacks, is reported (so `make lock` must be run)."""
    pins = {"numpy": "2.4.6", "pandas": "3.1.1"}
    assert disagreements([Requirement("numpy>=3")], pins) == ["numpy: locked 2.4.6, pyproject.toml asks >=3"]
    assert disagreements([Requirement("polars>=1")], pins) == ["polars: not in the lock"]
    assert disagreements([Requirement("numpy>=1.26"), Requirement("pandas>=2.1")], pins) == []
    assert disagreements([Requirement("pywin32>=1; sys_platform == 'nowhere'")], pins) == []   # not for this platform


def test_make_venv_and_environment_yml_install_from_the_lock():
    make = (REPO / "Makefile").read_text()
    recipe = make[make.index("$(BIN)/gillab:"):make.index("touch $@", make.index("$(BIN)/gillab:"))]
    assert "requirements/lock.txt" in recipe.splitlines()[0]       # a changed lock reinstalls
    assert "--require-hashes -r requirements/lock.txt" in recipe
    assert "--no-deps" in recipe and "'.[test,live]'" not in recipe   # gillab adds nothing unpinned
    env = (REPO / "environment.yml").read_text()
    assert "- -r requirements/lock.txt" in env and "- --require-hashes" in env
    low = re.search(r"python>=([\d.]+)", env)[1]
    assert project()["requires-python"] == f">={low}"
