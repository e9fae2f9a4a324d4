import contextlib
import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gillab.measure import alone, interpreters, provision  # noqa: E402

# the suite's workers run side by side, so none of their samples has the machine to itself: a
# session's fixtures measure with no limit too (each test's is set by samples_alone_unless_checked)
os.environ[alone.LIMIT_ENV] = "inf"

REPO = Path(__file__).resolve().parents[1]

# pytest-xdist runs the suite on every core, a test module on one worker (``-n auto --dist
# loadfile``, pyproject.toml), the modules in the order collected (``--no-loadscope-reorder``).  What
# a test writes into the shared gillab cache is written by one worker at a time
# (:func:`writing_the_cache`).


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """The tests that read the session's built book first (tests/test_book.py: building it takes
    most of the suite's time on one core), so that one worker starts on it while the others share
    the rest; then the other modules marked slow (a notebook, a browser: half a minute or more a
    module), so that the suite ends on short modules and no worker waits for one long one; the
    others keep their order."""
    items.sort(key=lambda item: ("built_book" not in item.fixturenames, item.get_closest_marker("slow") is None))


@contextlib.contextmanager
def writing_the_cache(tmp_path_factory):
    """Hold the suite's lock on the shared gillab cache: a build's venv for flask_k6 and
    b2_download is made there with ``venv --clear`` (and b2_download's test files), so two
    workers making the same one at once would clear it under each other.  The lock file is in the
    folder every worker's temporary folder is in (the lock provisioning holds on a cache folder)."""
    with provision.cache_lock(tmp_path_factory.getbasetemp().parent):
        yield


def writes_the_cache(experiment: str) -> bool:
    """Whether measuring ``experiment`` may write into the shared cache (its measuring code makes
    a venv, :func:`gillab.measure.venvs.ensure`)."""
    from gillab.measure import experiments, venvs

    return venvs.ensure in getattr(experiments.get(experiment), "measuring_code", ())


@pytest.fixture
def cache_writer(tmp_path_factory):
    """The test writes into the shared cache (:func:`writing_the_cache`)."""
    with writing_the_cache(tmp_path_factory):
        yield


@pytest.fixture(autouse=True)
def samples_alone_unless_checked(request):
    """The suite runs its workers side by side on two CPUs, so every sample a test measures has
    another worker's load beside it: a test reads what a sample measured, not whether the machine
    was quiet, unless it is marked ``alone_rule`` (then :mod:`gillab.measure.alone`'s rule applies
    as it does in a reader's run).  The variable is set by hand, not through ``monkeypatch``: a test
    that asks for ``monkeypatch`` judges its verdicts apart (below), and every test would."""
    before = os.environ.get(alone.LIMIT_ENV)
    if request.node.get_closest_marker("alone_rule") is None:
        os.environ[alone.LIMIT_ENV] = "inf"
    else:
        os.environ.pop(alone.LIMIT_ENV, None)
    yield
    if before is None:
        os.environ.pop(alone.LIMIT_ENV, None)
    else:
        os.environ[alone.LIMIT_ENV] = before


@pytest.fixture(autouse=True)
def judged_apart_where_patched(request):
    """A process remembers the verdicts it judged under the bytes of the files they were judged
    from (``gillab.judge.verdicts._remembered``), not under the functions that judged them: a test
    that swaps one (``monkeypatch``, also through ``data_dir``) judges anew, and what it judged is
    forgotten after it."""
    if "monkeypatch" not in request.fixturenames:
        yield
        return
    from gillab.judge import verdicts

    with verdicts.judged_apart():
        yield


def copy_reference(data_dir: Path, experiment: str = "countdown") -> str:
    """The committed reference campaign's samples of ``experiment``, as a clean clone has them,
    in a test's private data/ (with its REFERENCE file); returns the reference campaign's id."""
    import shutil

    src = REPO / "data" / "results"
    ref = (src / "REFERENCE").read_text().strip()
    dst = data_dir / "results"
    shutil.copytree(src / ref / experiment, dst / ref / experiment)
    shutil.copy2(src / ref / "campaign.json", dst / ref / "campaign.json")
    (dst / "REFERENCE").write_text(ref + "\n")
    return ref


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB file system of its own (tmpfs) at a folder of the test, unmounted after it.  Needs
    root (the project's machines and CI run as root); elsewhere the test is skipped, saying so."""
    import subprocess

    mnt = tmp_path / "small-disk"
    mnt.mkdir()
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if got.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({got.stderr.strip() or got.returncode}): needs root")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(folder: Path) -> int:
    """Fill ``folder``'s file system to the last byte (a file ``filler``); returns its size."""
    n = 0
    with open(folder / "filler", "wb", buffering=0) as f:
        for size in (1 << 16, 1 << 10, 1):
            while True:
                try:
                    n += f.write(b"x" * size)
                except OSError:
                    break
    return n


@pytest.fixture
def fresh_identity_cache():
    """Interpreters asked anew (the tests change PATH, caches and binaries under them)."""
    interpreters.identify.cache_clear()
    yield
    interpreters.identify.cache_clear()


SHORT_SOURCE = "intel-xeon-2c-20261130T202705Z"    # a committed contributed default run of today's code (the reference's boot)


def short_run(data_dir: Path, without: tuple[str, ...]) -> str:
    """A private data/ holding the committed reference whole and a contributed default run of
    today's configuration without the chapters ``without`` (a run whose plan left them out, as a
    slow machine's does); returns the run's campaign id."""
    import shutil

    src = REPO / "data" / "results"
    ref = (src / "REFERENCE").read_text().strip()
    dst = data_dir / "results"
    shutil.copytree(src / ref, dst / ref)
    shutil.copytree(src / SHORT_SOURCE, dst / SHORT_SOURCE, ignore=shutil.ignore_patterns(*without))
    (dst / "REFERENCE").write_text(ref + "\n")
    return SHORT_SOURCE


def widest_gil_build(df):
    """The GIL build a chapter's samples ``df`` hold the most of (the document's own build, where a
    registry serves it): the build a test doctors, read from the samples, never named."""
    return df[df["gil_enabled"].fillna(False).astype(bool)].groupby("condition").size().idxmax()


def runs_more_than_once(df):
    """``df`` without the builds it holds one repeat of (the plan runs 3.14 and 3.15 once beside
    3.13.5): one run has no interval, so a test that checks a line leaves them out."""
    return df[df.groupby("condition")["repeat"].transform("nunique") > 1].copy()


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """A private data/ for the test: nothing it measures lands in the repository."""
    d = tmp_path / "data"
    monkeypatch.setenv("GILLAB_DATA", str(d))
    monkeypatch.setenv("GILLAB_MACHINE", "test-machine")
    return d


def builds_present() -> bool:
    return all(spec.executable().exists() for spec in provision.build_specs())


@pytest.fixture(scope="session")
def builds():
    """The provisioned pair. Missing builds fail the test on CI (make test provisions them
    first) and skip it elsewhere, saying how to get them."""
    if not builds_present():
        msg = "provisioned CPython builds are missing: run `make interpreters` (gillab provision)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return {c.id: c for c in interpreters.discover() if c.id in interpreters.CORE_IDS}


ERA = ("2.7.18", "3.9.2")


def need_builds(ids, what: str, how: str) -> dict:
    """The builds ``ids`` (id -> spec). Missing ones fail the test on CI (`make test` provisions
    them) and skip it elsewhere, saying how to get them (``how``)."""
    specs = {s.build_id: s for s in provision.all_specs() if s.build_id in ids}
    missing = [b for b, s in specs.items() if not s.executable().exists()]
    if missing:
        msg = f"{what} missing: {missing}; run `{how}`"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return specs


@pytest.fixture(scope="session")
def era():
    """The era builds (:func:`need_builds`), as conditions."""
    need_builds(ERA, "era builds", "gillab provision --set era")
    return {c.id: c for c in interpreters.discover()}


def outputs(nb_path):
    """An executed notebook and the outputs of its code cells."""
    nb = json.loads(Path(nb_path).read_text())
    return nb, [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
