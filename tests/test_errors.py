"""What a user meets before anything is measured: one line naming the cause and what to do, exit
code 2 (1 for an error nobody foresaw), no traceback unless asked for with --debug; and nothing
made or measured."""
from __future__ import annotations

import os
import subprocess

import pytest

from gillab import cli
from gillab.measure import interpreters, profiles, provision, sweep
from gillab.measure.profiles import ParameterError


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gillab: error: "), err
    assert "Traceback" not in err[0]
    return err[0]


def _read_only(folder):
    """Make ``folder`` unwritable even for root: a read-only tmpfs mounted on it (root), or its
    mode (anyone else). Returns how to undo it."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        folder.chmod(0o500)
        return lambda: folder.chmod(0o700)
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True,
                         text=True)
    if got.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs ({got.stderr.strip()})")
    return lambda: subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_data_folder_that_cannot_be_written_is_refused_before_anything_is_measured(builds, data_dir, capsys):
    undo = _read_only(data_dir)
    try:
        assert cli.main(["measure", "countdown", "-P", "smoke", "-p", "conditions=3.13.5"]) == 2
        line = one_line(capsys)
        assert f"the data folder {data_dir / 'results'} cannot be written" in line and "GILLAB_DATA" in line
        assert "nothing was measured" in line
        with pytest.raises(ParameterError, match="cannot be written"):
            sweep.check_writable(data_dir / "results")
    finally:
        undo()
    assert not (data_dir / "results").exists()


def test_a_malformed_profiles_toml_is_named_with_its_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "profiles.toml").write_text("[countdown.default]\nrepeats = 3\nthreads = 1, 2\n")
    monkeypatch.setattr(profiles, "repo_root", lambda: tmp_path)
    assert cli.main(["measure", "countdown", "--plan"]) == 2
    line = one_line(capsys)
    assert "profiles.toml is not valid TOML" in line and "line 3" in line
    with pytest.raises(ParameterError, match="profiles.toml is not valid TOML"):
        profiles.load_profiles()


def test_a_malformed_interpreters_list_is_named(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "interpreters.toml"
    bad.write_text("[interpreters]\nmine = /usr/bin/python3\n")           # a path without quotes
    monkeypatch.setattr(interpreters, "config_files", lambda: [bad])
    assert cli.main(["interpreters"]) == 2
    line = one_line(capsys)
    assert f"{bad} is not a readable interpreters list" in line and "fix or remove it" in line


def test_a_malformed_builds_toml_is_one_line(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "builds.toml"
    bad.write_text("[[build]]\nid = '3.13.5'\n")                          # lacks version, binary, source
    monkeypatch.setenv("GILLAB_BUILDS", str(bad))
    assert cli.main(["measure", "countdown", "--plan"]) == 2
    line = one_line(capsys)
    assert f"{bad}: build 3.13.5 lacks version, binary, source" in line
    with pytest.raises(provision.ProvisionError, match="lacks version"):
        provision.load_builds()


def test_an_error_nobody_foresaw_is_one_line_and_the_traceback_is_one_flag_away(monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("the campaigns index is inconsistent")

    monkeypatch.setattr(cli, "cmd_campaigns", broken)
    assert cli.main(["campaigns"]) == 1
    line = one_line(capsys)
    assert line == ("gillab: error: RuntimeError: the campaigns index is inconsistent (nothing more was done; "
                    "`gillab --debug campaigns ...` shows where)")
    with pytest.raises(RuntimeError, match="inconsistent"):
        cli.main(["--debug", "campaigns"])
    monkeypatch.setenv("GILLAB_DEBUG", "1")
    with pytest.raises(RuntimeError, match="inconsistent"):
        cli.main(["campaigns"])
