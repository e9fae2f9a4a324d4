"""The documents' own interpreters: builds declared in builds.toml, provisioned from pinned
sources (checksums checked before anything is built), and their identities at run time."""
import json
import subprocess
import sys

import pytest

from gillab.measure import experiments
from gillab.measure import interpreters, provision, runner, sweep

from conftest import ERA  # noqa: E402


pytestmark = pytest.mark.usefixtures("fresh_identity_cache")


def toml_with(tmp_path, **source):
    body = ", ".join(f'{k} = "{v}"' for k, v in source.items())
    path = tmp_path / "builds.toml"
    path.write_text(f'[[build]]\nid = "x-1.0"\nversion = "1.0.0"\nbinary = "python1"\n'
                    f'configure = []\nsource = {{ {body} }}\n')
    return path


def test_every_build_is_declared_with_its_source():
    specs = {s.build_id: s for s in provision.all_specs()}
    assert {"3.13.5", "3.13.5t", *ERA, "3.6.12", "3.7.9", "3.8.7", "3.10.0", "3.11.2"} <= set(specs)
    for s in specs.values():
        assert ("debian" in s.src) != ("tarball" in s.src)
        if "tarball" in s.src:
            assert len(s.src["sha256"]) == 64 and len(s.src["commit"]) == 40
    assert specs["nogil-3.9.10"].gil_twin == ("nogil-3.9.10-gil", "PYTHONGIL", "1")
    assert [f for f in specs["3.13.5t"].configure_flags if f != "--disable-gil"] == \
        list(specs["3.13.5"].configure_flags)


def test_the_shared_source_tarballs_match_their_declared_sha256():
    checked = 0
    for spec in provision.all_specs():
        if "tarball" not in spec.src:
            continue
        path = next((d / spec.src["tarball"] for d in provision.source_dirs()
                     if (d / spec.src["tarball"]).is_file()), None)
        if path is None:
            continue
        assert provision.sha256_file(path) == spec.src["sha256"], path
        checked += 1
    if not checked:
        pytest.skip("no source tarballs here (../shared/sources or GILLAB_SOURCES)")


def test_a_wrong_sha256_stops_provisioning_before_building_and_names_the_file(tmp_path, monkeypatch):
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "Python-1.0.tar.xz").write_bytes(b"not the source")
    monkeypatch.setenv("GILLAB_BUILDS", str(toml_with(tmp_path, tarball="Python-1.0.tar.xz", sha256="0" * 64,
                                                      repository="file:///nowhere", commit="1" * 40)))
    monkeypatch.setenv("GILLAB_SOURCES", str(sources))
    monkeypatch.setenv("GILLAB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(provision.ProvisionError, match=r"SHA-256 mismatch for .*Python-1\.0\.tar\.xz"):
        provision.provision(only=["x-1.0"], install_deps=False)
    assert not (tmp_path / "cache" / "build").exists() and not (tmp_path / "cache" / "cpython").exists()
    out = subprocess.run([sys.executable, "-m", "gillab", "provision", "--only", "x-1.0", "--no-deps"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Python-1.0.tar.xz" in out.stderr and "Traceback" not in out.stderr


def test_a_missing_source_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("GILLAB_BUILDS", str(toml_with(tmp_path, tarball="Python-1.0.tar.xz", sha256="0" * 64,
                                                      repository=f"file://{tmp_path}/no-repo", commit="1" * 40)))
    monkeypatch.setenv("GILLAB_SOURCES", str(tmp_path / "nothing-here"))
    monkeypatch.setenv("GILLAB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(provision.ProvisionError, match=r"Python-1\.0\.tar\.xz.*nothing-here.*could not be fetched"):
        provision.provision(only=["x-1.0"], install_deps=False)
    assert not (tmp_path / "cache" / "cpython").exists()


def test_a_malformed_builds_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GILLAB_BUILDS", str(toml_with(tmp_path, tarball="a.tar.xz", sha256="abc")))
    with pytest.raises(provision.ProvisionError, match="sha256"):
        provision.all_specs()
    with pytest.raises(provision.ProvisionError, match="unknown set"):
        monkeypatch.delenv("GILLAB_BUILDS")
        provision.select_specs(sets=["no-such-set"])


def test_interpreters_json_lists_the_era_and_history_builds():
    out = subprocess.run([sys.executable, "-m", "gillab", "interpreters", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = {r["condition"]: r for r in json.loads(out.stdout)}
    for cid in (*ERA, "nogil-3.9.10-gil", *interpreters.sets()["history"]):
        r = rows[cid]
        assert r["declared_version"] and r["source"] and isinstance(r["available"], bool)
        assert r["gil_at_runtime"] in (("on", "off") if r["available"] else (None,))
    assert rows["nogil-3.9.10-gil"]["env"] == {"PYTHONGIL": "1"}


# -- the built era interpreters -----------------------------------------------------------------
def test_era_identities(era):
    ident = {c: interpreters.identify(era[c]) for c in (*ERA, "nogil-3.9.10-gil")}
    old = ident["2.7.18"]
    assert old.version.startswith("2.7.18") and old.check_interval == 100 and old.switch_interval is None
    assert old.kind == "GIL build (old GIL)" and old.gil_enabled_at_runtime is True
    new = ident["3.9.10"]
    assert new.version.startswith("3.9.10") and new.switch_interval == 0.005 and new.kind == "GIL build"
    nogil, twin = ident["nogil-3.9.10"], ident["nogil-3.9.10-gil"]
    assert nogil.nogil_fork and nogil.gil_enabled_at_runtime is False and nogil.kind == "nogil fork"
    assert twin.realpath == nogil.realpath and twin.gil_enabled_at_runtime is True
    assert nogil.key() != twin.key() != new.key()


def test_countdown_runs_under_every_era_build_and_records_its_switching(era):
    for cid in (*ERA, "nogil-3.9.10-gil"):
        s = runner.run(era[cid], "countdown", {"threads": 2, "total_decrements": 200_000}, timeout=120,
                       affinity=[0])
        assert s.result["seconds"] > 0 and s.result["decrements_per_thread"] == 100_000
        rt = s.runtime
        assert rt["affinity"] == [0], cid      # 2.7 is pinned by taskset and reads it from /proc
        if cid == "2.7.18":
            assert rt["check_interval"] == 100 and rt["switch_interval"] is None and rt["gil_enabled"]
        else:
            assert rt["switch_interval"] == 0.005 and rt["check_interval"] is None
        assert rt["gil_enabled"] is (cid != "nogil-3.9.10")
    with pytest.raises(runner.WorkloadError, match="old GIL"):
        runner.run(era["2.7.18"], "countdown", {"threads": 1, "total_decrements": 10}, switch_interval=0.001)


def test_a_sweep_takes_the_documents_builds_by_default(era, data_dir):
    p = experiments.get("countdown").resolve("smoke", {})
    assert p["conditions"].split(",") == ["doc000", "2.7.18", "auto"]
    assert experiments.get("sha256").resolve("smoke", {})["conditions"] == "doc000,auto"
    assert experiments.get("b2_download").resolve("smoke", {})["conditions"].startswith("doc004,auto")
    res = sweep.measure("countdown", "smoke", {"conditions": "2.7.18,nogil-3.9.10", "repeats": 1,
                                                     "threads": [1, 2], "total_decrements": 100_000},
                              progress=False)
    assert res.measured == 4 and res.failed == 0
