import hashlib
import json

import pytest

from gillab.measure import provision

DSC = """Format: 3.0 (quilt)
Source: python3.13
Version: 3.13.5-2
Checksums-Sha1:
 0000000000000000000000000000000000000000 10 python3.13_3.13.5.orig.tar.xz
Checksums-Sha256:
 {sha} {size} python3.13_3.13.5.orig.tar.xz
 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 5 python3.13_3.13.5-2.debian.tar.xz
Files:
 d41d8cd98f00b204e9800998ecf8427e 10 python3.13_3.13.5.orig.tar.xz
"""


def test_the_pair_differs_only_by_disable_gil():
    gil, ft = provision.build_specs()
    assert [f for f in ft.configure_flags if f != "--disable-gil"] == list(gil.configure_flags)
    assert "--disable-gil" in ft.configure_flags and "--disable-gil" not in gil.configure_flags
    assert gil.build_id == "3.13.5" and ft.build_id == "3.13.5t"
    assert ft.binary_name == "python3.13t"


def test_pgo_is_an_option_for_both():
    gil, ft = provision.build_specs(pgo=True)
    assert "--enable-optimizations" in gil.configure_flags and "--enable-optimizations" in ft.configure_flags
    assert "--enable-optimizations" not in provision.build_specs()[0].configure_flags


def test_cache_is_outside_the_repo_and_movable(monkeypatch, tmp_path):
    monkeypatch.setenv("GILLAB_CACHE", str(tmp_path / "c"))
    assert provision.cache_root() == tmp_path / "c"
    assert provision.build_specs()[1].executable() == tmp_path / "c" / "cpython" / "3.13.5t" / "bin" / "python3.13t"


def test_tarball_checked_against_dsc(tmp_path):
    tarball = tmp_path / "python3.13_3.13.5.orig.tar.xz"
    tarball.write_bytes(b"upstream source")
    sha = hashlib.sha256(b"upstream source").hexdigest()
    dsc = tmp_path / "python3.13_3.13.5-2.dsc"
    dsc.write_text(DSC.format(sha=sha, size=15))
    assert provision.verify_tarball(dsc, tarball) == sha
    tarball.write_bytes(b"tampered source")
    with pytest.raises(provision.ProvisionError, match="SHA-256 mismatch"):
        provision.verify_tarball(dsc, tarball)


def test_dsc_without_sha256_is_refused():
    with pytest.raises(provision.ProvisionError):
        provision.parse_dsc_sha256("Format: 3.0\nFiles:\n abc 1 x\n")


def test_a_build_without_marker_or_with_other_flags_is_rebuilt(tmp_path):
    spec = provision.build_specs()[1]
    ok, why = provision.build_is_valid(spec, None, root=tmp_path)
    assert not ok and "marker" in why
    prefix = spec.prefix(tmp_path)
    prefix.mkdir(parents=True)
    (prefix / provision.MARKER).write_text(json.dumps({"configure_flags": ["--something-else"]}))
    ok, why = provision.build_is_valid(spec, None, root=tmp_path)
    assert not ok and "other flags" in why
    (prefix / provision.MARKER).write_text(json.dumps({"configure_flags": list(spec.configure_flags),
                                                       "source_sha256": spec.src["sha256"]}))
    ok, why = provision.build_is_valid(spec, None, root=tmp_path)
    assert not ok and "missing" in why


def test_provisioned_builds_are_valid_and_skipped(builds, capsys):
    for spec in provision.build_specs():
        ok, why = provision.build_is_valid(spec, None)
        assert ok, why
        marker = provision.read_marker(spec)
        assert marker["source_tarball"] == "python3.13_3.13.5.orig.tar.xz"
        assert marker["Py_GIL_DISABLED"] == int(spec.disable_gil)
    # a second provision builds nothing: both are reported present and skipped
    provision.provision(install_deps=False)
    out = capsys.readouterr().out
    assert out.count("present and valid") == 2 and "building" not in out


def test_probe_reports_the_build(builds):
    gil, ft = provision.build_specs()
    assert provision.probe_build(gil.executable())["Py_GIL_DISABLED"] == 0
    info = provision.probe_build(ft.executable())
    assert info["Py_GIL_DISABLED"] == 1 and info["version_info"] == [3, 13, 5]


def _fake_build(spec, root, marker):
    """An installed 'interpreter' that answers the probe as ``spec`` would (a shell script), and
    its marker: enough for build_is_valid to get past every check but the source."""
    prefix = spec.prefix(root)
    exe = spec.executable(root)
    exe.parent.mkdir(parents=True)
    info = {"version": spec.version, "version_info": [int(x) for x in spec.version.split(".")],
            "Py_GIL_DISABLED": int(spec.disable_gil), "CONFIG_ARGS": "", "nogil_flag": 0 if spec.nogil_fork else None,
            "modules": {}}
    exe.write_text("#!/bin/sh\necho '" + json.dumps(info) + "'\n")
    exe.chmod(0o755)
    (prefix / provision.MARKER).write_text(json.dumps({"configure_flags": list(spec.configure_flags), **marker}))


def test_a_build_from_another_source_is_rebuilt(tmp_path):
    """A build whose marker records another source (the snapshot tarball an earlier builds.toml
    named, or none) is not the declared build: only the pinned Debian upstream tarball is."""
    spec = next(s for s in provision.all_specs() if s.build_id == "3.9.2")
    _fake_build(spec, tmp_path, {"source_sha256": spec.src["sha256"]})
    assert provision.build_is_valid(spec, None, root=tmp_path) == (True, "valid")
    marker = spec.prefix(tmp_path) / provision.MARKER
    for other in ({"source_sha256": "f" * 64}, {"source_sha256": "git:" + "0" * 40}, {}):
        marker.write_text(json.dumps({"configure_flags": list(spec.configure_flags), **other}))
        assert provision.build_is_valid(spec, None, root=tmp_path) == (False, "built from another source")


def _traced(build_id="3.9.2+trace"):
    return next(s for s in provision.all_specs() if s.build_id == build_id)


def test_a_declared_patch_is_checked_by_sha256_before_anything_is_built(tmp_path, monkeypatch):
    """A traced build's patch exists and matches its sha256; a changed or missing patch is refused
    with a clear error, before any build starts."""
    spec = _traced()
    assert spec.patches and provision.check_patches(spec)[0][0].is_file()
    (path, digest), = spec.patches
    monkeypatch.setattr(provision, "patches_dir", lambda: tmp_path)
    with pytest.raises(provision.ProvisionError, match="is missing"):
        provision.check_patches(spec)
    (tmp_path / path).write_text("--- a/x\n+++ b/x\n")
    with pytest.raises(provision.ProvisionError, match="was changed"):
        provision.check_patches(spec)


@pytest.mark.parametrize("build_id", ["2.7.18+trace", "3.9.2+trace", "3.13.5+trace"])
def test_each_trace_patch_applies_cleanly_to_its_debian_source(tmp_path, build_id):
    """The trace patches are made from the Debian sources builds.toml names
    (patches/gil-trace/make_patches.py): each applies with no offset and no fuzz."""
    import subprocess
    import tarfile

    spec = _traced(build_id)
    tarball = provision.cache_root() / "source" / spec.src["file"]
    if not tarball.is_file():
        pytest.skip(f"{spec.src['file']} is not in the gillab cache yet (gillab provision --set trace)")
    assert provision.sha256_file(tarball) == spec.src["sha256"]
    (patch, _), = provision.check_patches(spec)
    touched = {line[6:].strip() for line in patch.read_text().splitlines() if line.startswith("+++ b/")}
    with tarfile.open(tarball) as tf:
        members = [m for m in tf.getmembers() if m.name.split("/", 1)[-1] in touched]
        tf.extractall(tmp_path, members=members)
    src = next(p for p in tmp_path.iterdir() if p.is_dir())
    out = subprocess.run(["patch", "-p1", "--forward", "--batch", "-i", str(patch)], cwd=src, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "offset" not in out.stdout and "fuzz" not in out.stdout, out.stdout
    assert (src / "Python" / "gillab_gil_trace.h").is_file()


def test_a_build_made_with_other_patches_is_rebuilt(tmp_path):
    spec = _traced()
    prefix = spec.prefix(tmp_path)
    prefix.mkdir(parents=True)
    (prefix / provision.MARKER).write_text(json.dumps({"configure_flags": list(spec.configure_flags)}))
    ok, why = provision.build_is_valid(spec, None, root=tmp_path)
    assert not ok and "other patches" in why
    (prefix / provision.MARKER).write_text(json.dumps({"configure_flags": list(spec.configure_flags),
                                                       "patches": [list(p) for p in spec.patches],
                                                       "source_sha256": spec.src["sha256"]}))
    ok, why = provision.build_is_valid(spec, None, root=tmp_path)
    assert not ok and "missing" in why   # past the patches: only the binary is lacking
