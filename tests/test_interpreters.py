import os
import sys
from pathlib import Path

import pytest

from gillab.measure import interpreters


pytestmark = pytest.mark.usefixtures("fresh_identity_cache")


def test_core_conditions_have_exact_identities(builds):
    ids = {c: interpreters.identify(builds[c]) for c in interpreters.CORE_IDS}
    assert ids["3.13.5"].py_gil_disabled == 0 and ids["3.13.5"].gil_enabled_at_runtime is True
    assert ids["3.13.5t"].py_gil_disabled == 1 and ids["3.13.5t"].gil_enabled_at_runtime is False
    # same binary, GIL put back by the environment
    assert ids["3.13.5t-gil"].realpath == ids["3.13.5t"].realpath
    assert ids["3.13.5t-gil"].gil_enabled_at_runtime is True
    assert ids["3.13.5t-gil"].env == {"PYTHON_GIL": "1"}
    for ident in ids.values():
        assert ident.version.startswith("3.13.5")
    assert ids["3.13.5t"].kind == "free-threaded" and ids["3.13.5t-gil"].kind == "free-threaded, GIL on"


def test_missing_build_is_reported_not_replaced(monkeypatch, tmp_path):
    monkeypatch.setenv("GILLAB_CACHE", str(tmp_path / "empty-cache"))
    conds = interpreters.select("core")
    assert [c.id for c in conds] == list(interpreters.CORE_IDS)
    for c in conds:
        ident = interpreters.identify(c)
        assert not ident.available and ident.kind == "missing" and "not found" in ident.error
        assert str(tmp_path) in c.executable  # still the build asked for, nothing else
    assert interpreters.select("core", available_only=True) == []


def test_unknown_condition_is_an_error():
    with pytest.raises(interpreters.ConditionError, match="unknown condition.*no-such-python"):
        interpreters.select("3.13.5,no-such-python")


def test_a_found_free_threaded_build_is_named_from_what_it_reports_with_a_gil_twin(builds, tmp_path, monkeypatch):
    """With the provisioned cache elsewhere, the 3.13.5t binary found on PATH is a build of its
    own: named from its version (not its file name), listed once although it is reachable
    through a symlink and through a wrapper script, and given a GIL-on twin."""
    monkeypatch.setenv("GILLAB_CACHE", str(tmp_path / "empty-cache"))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3.99t").symlink_to(builds["3.13.5t"].executable)
    wrapper = tmp_path / "bin2"
    wrapper.mkdir()
    (wrapper / "python3.98t").write_text(f"#!/bin/sh\nexec {builds['3.13.5t'].executable} \"$@\"\n")
    (wrapper / "python3.98t").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{wrapper}{os.pathsep}{os.environ['PATH']}")
    conds = {c.id: c for c in interpreters.discover()}
    found = [cid for cid, c in conds.items() if c.origin == "PATH" and "3.13.5t" in cid]
    assert found == ["path-3.13.5t", "path-3.13.5t-gil"]
    assert not any("3.99" in cid or "3.98" in cid for cid in conds)
    assert conds["path-3.13.5t-gil"].env_dict == {"PYTHON_GIL": "1"}
    auto = [c.id for c in interpreters.select("auto")]
    assert auto[:3] == list(interpreters.CORE_IDS) and "path-3.13.5t" in auto


def test_a_wrapper_or_copy_of_a_provisioned_build_is_not_listed_again(builds, tmp_path, monkeypatch):
    wrapper = tmp_path / "bin"
    wrapper.mkdir()
    (wrapper / "python3.13").write_text(f"#!/bin/sh\nexec {builds['3.13.5'].executable} \"$@\"\n")
    (wrapper / "python3.13").chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper}{os.pathsep}{os.environ['PATH']}")
    conds = interpreters.discover()
    assert not [c for c in conds if str(wrapper) in c.executable]


def test_sets_select_the_documents_builds():
    sets = interpreters.sets()
    assert sets["era"] == ["2.7.18", "3.9.2"]
    assert [c.id for c in interpreters.select("doc000")] == sets["doc000"]
    ids = [c.id for c in interpreters.select("doc004,core")]
    assert ids[:2] == ["3.9.2", "3.13.5"] and len(ids) == len(set(ids))
    with pytest.raises(interpreters.ConditionError, match="3.9.10"):
        interpreters.select("3.9.10")            # a retired build is never measured


def test_interpreters_listed_in_a_config_file(tmp_path, monkeypatch):
    cfg = tmp_path / "interpreters.toml"
    cfg.write_text(f'[interpreters]\n"mine" = "{sys.executable}"\n')
    monkeypatch.setenv("GILLAB_INTERPRETERS", str(cfg))
    conds = {c.id: c for c in interpreters.discover()}
    assert "mine" in conds and conds["mine"].origin == "config"
    ident = interpreters.identify(conds["mine"])
    assert ident.available and ident.version.split()[0] == sys.version.split()[0]


def test_the_documents_eras_are_listed_before_todays_builds():
    ids = ["3.13.5t-gil", "pyenv-3.12.1", "3.13.5", "nogil-3.9.10-gil", "2.7.18", "3.9.10", "nogil-3.9.10", "3.13.5t"]
    assert interpreters.display_order(ids) == ["2.7.18", "3.9.10", "nogil-3.9.10", "nogil-3.9.10-gil",
                                               "3.13.5", "3.13.5t", "3.13.5t-gil", "pyenv-3.12.1"]


def test_the_builds_a_chapter_names_come_from_builds_toml():
    """Pairs, twins and roles are declared in builds.toml; the harness's own constants for the
    core builds agree with it (so no chapter needs a build id typed in)."""
    from gillab.measure import provision

    assert interpreters.pairs() == [("3.13.5", "3.13.5t")]
    assert interpreters.today_pair() == ("3.13.5", "3.13.5t") == provision.CORE_PAIR
    assert interpreters.twin_of("3.13.5t") == "3.13.5t-gil" and interpreters.twin_of("3.13.5") is None
    assert tuple(interpreters.sets()["core"]) == interpreters.CORE_IDS
    assert interpreters.role("old_gil") == "2.7.18" and interpreters.role("new_gil_then") == "3.9.2"
    with pytest.raises(KeyError, match=r"\[roles\] names no 'newest'"):
        interpreters.role("newest")


def test_a_pair_or_role_naming_an_unknown_build_is_refused(tmp_path, monkeypatch):
    from gillab.measure import provision

    text = (Path(__file__).resolve().parents[1] / "builds.toml").read_text()
    bad = tmp_path / "builds.toml"
    bad.write_text(text.replace('old_gil = "2.7.18"', 'old_gil = "2.7.17"'))
    monkeypatch.setenv("GILLAB_BUILDS", str(bad))
    with pytest.raises(provision.ProvisionError, match=r"\[roles\] names unknown builds \['2.7.17'\]"):
        interpreters.role("old_gil")
