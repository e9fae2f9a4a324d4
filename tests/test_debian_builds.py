"""Today's releases as Debian builds them: CPython 3.14 and 3.15 from Debian's unstable suite and
trixie's own 3.13.5, each a binary package unpacked with every package it needs (its suite's C
library and loader too) into a private root, never installed, and run from there."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from gillab.measure import interpreters, provision

from conftest import need_builds

DEBIAN = ("debian-3.13.5", "debian-3.14", "debian-3.15")

_WHAT = """
import ctypes, json, multiprocessing as mp, os, sys, sysconfig
libc = ctypes.CDLL(None)
libc.gnu_get_libc_version.restype = ctypes.c_char_p
def square(x):
    return x * x
if __name__ == "__main__":
    with mp.get_context("spawn").Pool(2) as pool:       # a new interpreter from sys.executable
        squares = pool.map(square, [1, 2, 3])
    print(json.dumps({"version": list(sys.version_info[:3]), "prefix": sys.prefix,
                      "glibc": libc.gnu_get_libc_version().decode(), "squares": squares,
                      "gil": getattr(sys, "_is_gil_enabled", lambda: True)(),
                      "ssl": __import__("ssl").OPENSSL_VERSION}))
"""


def test_a_debian_binary_is_declared_as_its_package_and_suite_only(tmp_path, monkeypatch):
    """A Debian binary package names its package and suite; configure flags or patches are refused
    (Debian built it), and so is a source table that mixes kinds."""
    path = tmp_path / "builds.toml"
    base = '[[build]]\nid = "d-3.14"\nversion = "3.14"\nbinary = "python3.14"\n'
    monkeypatch.setenv("GILLAB_BUILDS", str(path))
    path.write_text(base + 'source = { deb = "python3.14", suite = "sid" }\n')
    (spec,) = provision.all_specs()
    assert spec.debian_binary and spec.prebuilt and spec.executable().parts[-3:] == ("usr", "bin", "python3.14")
    assert spec.version_matches([3, 14, 10]) and not spec.version_matches([3, 15, 2])
    for extra in ('configure = ["--x"]\n', 'patches = [{file = "a.patch", sha256 = "' + "0" * 64 + '"}]\n'):
        path.write_text(base + extra + 'source = { deb = "python3.14", suite = "sid" }\n')
        with pytest.raises(provision.ProvisionError, match="no configure flags and no patches"):
            provision.all_specs()
    path.write_text(base + 'source = { deb = "python3.14", suite = "sid", sha256 = "' + "0" * 64 + '" }\n')
    with pytest.raises(provision.ProvisionError, match="Debian binary package"):
        provision.all_specs()


@pytest.mark.parametrize("build_id", DEBIAN)
def test_each_runs_from_its_private_root_with_its_suites_c_library(build_id, tmp_path):
    """The interpreter runs from the root it was unpacked into: its prefix there, its suite's C
    library (not the system's), a new interpreter from ``sys.executable`` works (spawn), the GIL is
    on; its record names every package with its sha256 and the package version."""
    spec = need_builds([build_id], "Debian's builds", "make interpreters")[build_id]
    script = tmp_path / "what.py"         # a file: spawned interpreters import its functions from it
    script.write_text(_WHAT)
    out = subprocess.run([str(spec.executable()), str(script)], capture_output=True, text=True, timeout=120,
                         env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert spec.version_matches(got["version"]) and got["gil"] is True and got["squares"] == [1, 4, 9]
    assert got["prefix"] == str(spec.prefix() / "usr")
    assert got["glibc"] != os.confstr("CS_GNU_LIBC_VERSION").split()[-1]      # the suite's, not Debian 12's
    marker = provision.read_marker(spec)
    assert marker["package_version"].startswith(".".join(map(str, got["version"])))
    assert any(p["file"].startswith(spec.src["deb"] + "_") for p in marker["packages"])
    assert any(p["file"].startswith("libc6_") for p in marker["packages"])
    assert all(len(p["sha256"]) == 64 for p in marker["packages"])
    assert provision.build_is_valid(spec, None) == (True, "valid")


def test_the_interpreters_table_names_each_debian_builds_origin_and_flags():
    from gillab.present import builds_view

    table = builds_view.builds_table()
    for build_id in DEBIAN:
        line = next(line for line in table.splitlines() if line.startswith(f"| `{build_id}`"))
        assert "binary package" in line and "(Debian's)" in line and "private root" in line
    rows = {r["condition"]: r for r in interpreters.describe()}
    assert "Debian's binary package" in rows["debian-3.14"]["source"]


def test_a_package_the_suite_does_not_serve_stops_before_anything_is_unpacked(tmp_path, monkeypatch):
    """A package Debian does not serve (here a made-up release) stops provisioning with an error
    that names it; nothing is unpacked, and no other build is touched."""
    path = tmp_path / "builds.toml"
    path.write_text('[[build]]\nid = "d-3.99"\nversion = "3.99"\nbinary = "python3.99"\n'
                    'source = { deb = "python3.99", suite = "sid" }\n')
    monkeypatch.setenv("GILLAB_BUILDS", str(path))
    monkeypatch.setenv("GILLAB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(provision.ProvisionError, match="sid serves no installable python3.99"):
        provision.provision(only=["d-3.99"], install_deps=False)
    assert not (tmp_path / "cache" / "cpython").exists()


def test_the_interpreters_table_folds_the_traced_and_the_retired_builds():
    from gillab.measure import provision
    from gillab.present import builds_view

    table = builds_view.builds_table()
    shown, *folds = table.split("<details")
    assert len(folds) == 2
    def ids(part):
        return {line.split("`")[1] for line in part.splitlines() if line.startswith("| `")}
    specs = provision.all_specs()
    assert ids(shown) == {s.build_id for s in specs if not s.trace_of}
    assert ids(folds[0]) == {s.build_id for s in specs if s.trace_of}
    assert ids(folds[1]) == set(provision.retired())
    assert f": {len(ids(folds[0]))}</summary>" in folds[0]


@pytest.mark.parametrize("build_id", DEBIAN)
def test_a_venv_of_each_installs_pip_from_its_own_roots_wheel(build_id, tmp_path):
    """Document 004's download runs its client from a venv of each build: Debian ships ensurepip in
    the release's venv package, which reads pip's wheel from a build-time folder of the system's
    (Debian 12 has none for these releases): 90 samples of 3.14 and 3.15 once failed on it. The venv
    package is unpacked with the build and that one setting points into the root; a venv made from
    the build has pip, from the root's wheel, and nothing outside the root was needed."""
    spec = need_builds([build_id], "Debian's builds", "make interpreters")[build_id]
    marker = provision.read_marker(spec)
    assert marker["venv_package"] == spec.src["venv"]
    assert marker["wheel_pkg_dir"].startswith(str(spec.prefix()))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    subprocess.run([str(spec.executable()), "-m", "venv", str(tmp_path / "v")], check=True, env=env, timeout=300)
    pip = subprocess.run([str(tmp_path / "v" / "bin" / "python"), "-m", "pip", "--version"], capture_output=True,
                         text=True, env=env, timeout=120, check=True).stdout
    assert pip.startswith("pip ") and str(tmp_path / "v") in pip


def _fake_root(tmp_path, wheel=True, entry=True):
    spec = next(s for s in provision.all_specs() if s.build_id == "debian-3.14")
    lib = tmp_path / "usr" / "lib" / "python3.14"
    lib.mkdir(parents=True)
    cfg = "'CONFIG_ARGS': \"'--with-wheel-pkg-dir=/usr/share/python-wheels/'\",\n"
    (lib / "_sysconfigdata__x86_64-linux-gnu.py").write_text(
        "build_time_vars = {\n" + cfg + ("    " + provision.WHEEL_DIR_ENTRY + ",\n" if entry else "") + "}\n")
    wheels = tmp_path / "usr" / "share" / "python-wheels"
    wheels.mkdir(parents=True)
    if wheel:
        (wheels / "pip-26.2.2-py3-none-any.whl").write_bytes(b"")
    return spec, lib / "_sysconfigdata__x86_64-linux-gnu.py", cfg


def test_only_the_wheel_folder_setting_is_pointed_into_the_root(tmp_path):
    spec, data, cfg = _fake_root(tmp_path)
    assert provision.point_wheels_at_root(spec, tmp_path) == tmp_path / "usr" / "share" / "python-wheels"
    text = data.read_text()
    assert f"'WHEEL_PKG_DIR': '{tmp_path}/usr/share/python-wheels/'" in text
    assert cfg in text                      # the builder's configure arguments as Debian recorded them


@pytest.mark.parametrize("wheel, entry, why", [(False, True, "brought no pip wheel"),
                                               (True, False, "Debian changed how ensurepip finds its wheels")])
def test_a_root_without_the_wheel_or_the_setting_is_refused(tmp_path, wheel, entry, why):
    spec, _, _ = _fake_root(tmp_path, wheel=wheel, entry=entry)
    with pytest.raises(provision.ProvisionError, match=why):
        provision.point_wheels_at_root(spec, tmp_path)


def test_a_build_unpacked_without_its_venv_package_is_unpacked_again(tmp_path, monkeypatch):
    spec = next(s for s in provision.all_specs() if s.build_id == "debian-3.14")
    marker = {"configure_flags": [], "patches": [], "source": spec.source_name}
    monkeypatch.setattr(provision, "read_marker", lambda s, root=None: marker)
    ok, why = provision.build_is_valid(spec, None, tmp_path)
    assert not ok and why.startswith("unpacked without python3.14-venv")
