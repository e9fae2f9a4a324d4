"""Build CPython twice from Debian's ``python3.13`` source package: with and without the GIL.

The source comes from Debian trixie through ``apt-get source`` with a *private* apt
configuration (its own sources list, lists and cache directories under the gillab cache),
so the system's apt configuration is never touched.  The upstream tarball inside the
source package (``python3.13_3.13.5.orig.tar.xz``) is checked against the SHA-256 in the
``.dsc`` and built twice with identical configure flags, once adding ``--disable-gil``.
Debian's own patches are *not* applied: they adapt CPython to Debian's file layout and
would make a self-contained prefix install harder; both builds are plain upstream 3.13.5.

A build is skipped when its prefix holds a valid install made with the same flags from the
same tarball (``gillab-build.json`` plus a probe of the installed interpreter).

Stdlib only, so that it can run before the notebook environment exists.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SOURCE_PACKAGE = "python3.13"
SUITE = "trixie"
MIRROR = "http://deb.debian.org/debian"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
UPSTREAM_VERSION = "3.13.5"
BASE_CONFIGURE_FLAGS = ("--with-ensurepip=install",)
BUILD_DEPS = (
    "gcc", "make", "pkg-config", "xz-utils", "libssl-dev", "zlib1g-dev", "libbz2-dev",
    "liblzma-dev", "libsqlite3-dev", "libffi-dev",
)
MARKER = "gillab-build.json"


class ProvisionError(RuntimeError):
    """Provisioning cannot go on; the message says why and what to do."""


def cache_root() -> Path:
    """Where builds live: ``$GILLAB_CACHE``, else ``$XDG_CACHE_HOME/gillab``, else ``~/.cache/gillab``."""
    if os.environ.get("GILLAB_CACHE"):
        return Path(os.environ["GILLAB_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "gillab"


@dataclass(frozen=True)
class BuildSpec:
    """One build of the pair: its id, whether the GIL is disabled, and the configure flags."""

    build_id: str
    disable_gil: bool
    pgo: bool = False

    @property
    def configure_flags(self) -> tuple[str, ...]:
        flags = list(BASE_CONFIGURE_FLAGS)
        if self.pgo:
            flags.append("--enable-optimizations")
        if self.disable_gil:
            flags.append("--disable-gil")
        return tuple(flags)

    @property
    def binary_name(self) -> str:
        return "python3.13t" if self.disable_gil else "python3.13"

    def prefix(self, root: Path | None = None) -> Path:
        return (root or cache_root()) / "cpython" / self.build_id

    def executable(self, root: Path | None = None) -> Path:
        return self.prefix(root) / "bin" / self.binary_name


def build_specs(pgo: bool = False) -> tuple[BuildSpec, BuildSpec]:
    """The like-for-like pair: same source, same flags, one with ``--disable-gil``."""
    return (
        BuildSpec(UPSTREAM_VERSION, disable_gil=False, pgo=pgo),
        BuildSpec(UPSTREAM_VERSION + "t", disable_gil=True, pgo=pgo),
    )


def parse_dsc_sha256(dsc_text: str) -> dict[str, str]:
    """Map file name -> SHA-256 from the ``Checksums-Sha256`` field of a ``.dsc``."""
    sums: dict[str, str] = {}
    in_field = False
    for line in dsc_text.splitlines():
        if line.startswith("Checksums-Sha256:"):
            in_field = True
            continue
        if in_field:
            if not line.startswith(" "):
                break
            parts = line.split()
            if len(parts) == 3 and re.fullmatch(r"[0-9a-f]{64}", parts[0]):
                sums[parts[2]] = parts[0]
    if not sums:
        raise ProvisionError("the .dsc has no Checksums-Sha256 field")
    return sums


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_tarball(dsc: Path, tarball: Path) -> str:
    """Check ``tarball`` against the ``.dsc``; return its SHA-256 or raise."""
    expected = parse_dsc_sha256(dsc.read_text()).get(tarball.name)
    if expected is None:
        raise ProvisionError(f"{tarball.name} is not listed in {dsc.name}")
    actual = sha256_file(tarball)
    if actual != expected:
        raise ProvisionError(
            f"SHA-256 mismatch for {tarball.name}: .dsc says {expected}, file has {actual}")
    return actual


def read_marker(spec: BuildSpec, root: Path | None = None) -> dict | None:
    path = spec.prefix(root) / MARKER
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def probe_build(executable: Path) -> dict:
    """Run the installed interpreter and report what it is."""
    code = (
        "import json, sys, sysconfig, ssl, hashlib, bz2, lzma, zlib, sqlite3, ctypes;"
        "print(json.dumps({'version': sys.version, 'version_info': list(sys.version_info[:3]),"
        "'Py_GIL_DISABLED': sysconfig.get_config_var('Py_GIL_DISABLED'),"
        "'CONFIG_ARGS': sysconfig.get_config_var('CONFIG_ARGS')}))"
    )
    out = subprocess.run([str(executable), "-c", code], capture_output=True, text=True,
                         timeout=60, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    if out.returncode != 0:
        raise ProvisionError(f"{executable} does not run cleanly: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout)


def build_is_valid(spec: BuildSpec, tarball_sha256: str | None, root: Path | None = None) -> tuple[bool, str]:
    """Is the build in the cache complete and made from this source with these flags?"""
    marker = read_marker(spec, root)
    if marker is None:
        return False, "no build marker"
    if list(marker.get("configure_flags", [])) != list(spec.configure_flags):
        return False, f"built with other flags {marker.get('configure_flags')}"
    if tarball_sha256 and marker.get("source_sha256") != tarball_sha256:
        return False, "built from another source tarball"
    exe = spec.executable(root)
    if not exe.exists():
        return False, f"{exe} is missing"
    try:
        info = probe_build(exe)
    except (ProvisionError, OSError, subprocess.SubprocessError, ValueError) as exc:
        return False, str(exc)
    if info["version_info"] != [int(x) for x in UPSTREAM_VERSION.split(".")]:
        return False, f"reports version {info['version_info']}"
    if bool(info["Py_GIL_DISABLED"]) != spec.disable_gil:
        return False, f"Py_GIL_DISABLED={info['Py_GIL_DISABLED']} but expected {int(spec.disable_gil)}"
    return True, "valid"


@contextlib.contextmanager
def cache_lock(root: Path):
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".provision.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _log(msg: str) -> None:
    print(f"[provision] {msg}", flush=True)


def _run(cmd: list[str], cwd: Path | None = None, log: Path | None = None, env: dict | None = None) -> None:
    _log("$ " + " ".join(cmd))
    if log is None:
        proc = subprocess.run(cmd, cwd=cwd, env=env)
    else:
        with open(log, "ab") as fh:
            proc = subprocess.run(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, env=env)
    if proc.returncode != 0:
        where = f" (log: {log})" if log else ""
        raise ProvisionError(f"command failed with exit {proc.returncode}: {' '.join(cmd)}{where}")


def missing_build_deps() -> list[str]:
    missing = []
    for pkg in BUILD_DEPS:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
        if "install ok installed" not in out.stdout:
            missing.append(pkg)
    return missing


def install_build_deps() -> None:
    missing = missing_build_deps()
    if not missing:
        return
    if os.geteuid() != 0:
        raise ProvisionError("missing build dependencies (run as root, or install them): " + " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _run(["apt-get", "update", "-qq"], env=env)
    _run(["apt-get", "install", "-y", "-qq", *missing], env=env)


def apt_private_options(root: Path) -> list[str]:
    apt = root / "apt"
    for d in (apt / "lists" / "partial", apt / "cache" / "archives" / "partial"):
        d.mkdir(parents=True, exist_ok=True)
    sources = apt / "sources.list"
    sources.write_text(f"deb-src [signed-by={KEYRING}] {MIRROR} {SUITE} main\n")
    return [
        "-o", f"Dir::Etc::SourceList={sources}",
        "-o", "Dir::Etc::SourceParts=/dev/null",
        "-o", f"Dir::State::Lists={apt / 'lists'}",
        "-o", f"Dir::Cache={apt / 'cache'}",
    ]


def fetch_source(root: Path) -> tuple[Path, Path, str]:
    """Download the source package (once) and return (dsc, orig tarball, its verified SHA-256)."""
    src = root / "source"
    src.mkdir(parents=True, exist_ok=True)
    tarballs = sorted(src.glob(f"{SOURCE_PACKAGE}_{UPSTREAM_VERSION}.orig.tar.xz"))
    dscs = sorted(src.glob(f"{SOURCE_PACKAGE}_{UPSTREAM_VERSION}-*.dsc"))
    if not (tarballs and dscs):
        opts = apt_private_options(root)
        _run(["apt-get", *opts, "update", "-qq"])
        _run(["apt-get", *opts, "source", "--download-only", "-qq", SOURCE_PACKAGE], cwd=src)
        tarballs = sorted(src.glob(f"{SOURCE_PACKAGE}_{UPSTREAM_VERSION}.orig.tar.xz"))
        dscs = sorted(src.glob(f"{SOURCE_PACKAGE}_{UPSTREAM_VERSION}-*.dsc"))
        if not (tarballs and dscs):
            found = ", ".join(p.name for p in src.iterdir())
            raise ProvisionError(
                f"Debian {SUITE} no longer ships {SOURCE_PACKAGE} {UPSTREAM_VERSION} (found: {found})")
    dsc, tarball = dscs[-1], tarballs[-1]
    digest = verify_tarball(dsc, tarball)
    _log(f"source {tarball.name} sha256 {digest} (checked against {dsc.name})")
    return dsc, tarball, digest


def build_one(spec: BuildSpec, dsc: Path, tarball: Path, digest: str, root: Path, jobs: int) -> dict:
    build_dir = root / "build" / spec.build_id
    shutil.rmtree(build_dir, ignore_errors=True)
    build_dir.mkdir(parents=True)
    _run(["tar", "-xf", str(tarball), "-C", str(build_dir)])
    srcdir = next(p for p in build_dir.iterdir() if p.is_dir())
    prefix = spec.prefix(root)
    shutil.rmtree(prefix, ignore_errors=True)
    log = root / "build" / f"{spec.build_id}.log"
    log.unlink(missing_ok=True)
    t0 = time.monotonic()
    _log(f"building {spec.build_id} with {' '.join(spec.configure_flags)} (log: {log})")
    _run(["./configure", f"--prefix={prefix}", *spec.configure_flags], cwd=srcdir, log=log)
    _run(["make", f"-j{jobs}"], cwd=srcdir, log=log)
    _run(["make", "install"], cwd=srcdir, log=log)
    seconds = time.monotonic() - t0
    info = probe_build(spec.executable(root))
    marker = {
        "build_id": spec.build_id,
        "source_package": f"{SOURCE_PACKAGE} ({SUITE})",
        "dsc": dsc.name,
        "source_tarball": tarball.name,
        "source_sha256": digest,
        "debian_patches_applied": False,
        "configure_flags": list(spec.configure_flags),
        "make_jobs": jobs,
        "build_seconds": round(seconds, 1),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "sys_version": info["version"],
        "Py_GIL_DISABLED": info["Py_GIL_DISABLED"],
    }
    (prefix / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
    shutil.rmtree(build_dir, ignore_errors=True)
    _log(f"built {spec.build_id} in {seconds:.0f} s -> {spec.executable(root)}")
    return marker


def provision(pgo: bool = False, jobs: int | None = None, only: list[str] | None = None,
              root: Path | None = None, install_deps: bool = True) -> list[dict]:
    """Make sure both builds exist and are valid; build what is missing. Returns the markers."""
    root = root or cache_root()
    jobs = jobs or os.cpu_count() or 2
    specs = [s for s in build_specs(pgo) if not only or s.build_id in only]
    if only and len(specs) != len(only):
        known = ", ".join(s.build_id for s in build_specs(pgo))
        raise ProvisionError(f"unknown build id in {only}; known: {known}")
    with cache_lock(root):
        results = []
        todo = []
        for spec in specs:
            ok, why = build_is_valid(spec, None, root)
            if ok:
                _log(f"{spec.build_id}: present and valid at {spec.executable(root)}; skipping")
                results.append(read_marker(spec, root))
            else:
                _log(f"{spec.build_id}: needs a build ({why})")
                todo.append(spec)
        if todo:
            if install_deps:
                install_build_deps()
            dsc, tarball, digest = fetch_source(root)
            for spec in todo:
                results.append(build_one(spec, dsc, tarball, digest, root, jobs))
        return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gillab provision", description=__doc__.splitlines()[0])
    ap.add_argument("--pgo", action="store_true", help="configure with --enable-optimizations (much slower)")
    ap.add_argument("--jobs", type=int, default=None, help="make -j (default: all cores)")
    ap.add_argument("--only", action="append", help="build only this id (3.13.5 or 3.13.5t); repeatable")
    ap.add_argument("--no-deps", action="store_true", help="do not apt-get install build dependencies")
    args = ap.parse_args(argv)
    try:
        markers = provision(pgo=args.pgo, jobs=args.jobs, only=args.only, install_deps=not args.no_deps)
    except ProvisionError as exc:
        print(f"gillab provision: error: {exc}", file=sys.stderr)
        return 2
    for m in markers:
        print(f"{m['build_id']}: {m['sys_version'].splitlines()[0]} "
              f"(flags: {' '.join(m['configure_flags'])}; built in {m['build_seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
