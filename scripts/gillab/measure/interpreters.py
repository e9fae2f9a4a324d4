"""Discover CPython builds and describe each measuring *condition* exactly.

A condition is an interpreter binary plus the environment it runs under.  The three core
conditions come from the provisioned pair (see :mod:`gillab.measure.provision`):

* ``3.13.5``      - the GIL build;
* ``3.13.5t``     - the free-threaded build (``--disable-gil``);
* ``3.13.5t-gil`` - the same free-threaded binary run with ``PYTHON_GIL=1``.

Builds the reader already has are discovered too (``python3.Nt``/``python3.N`` on PATH, pyenv
and uv installs, and an explicit list in ``interpreters.toml``); each free-threaded one also
gets a ``-gil`` twin.  A condition that is asked for but missing is reported as missing: it is
never replaced by another build.
"""
from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from . import provision
from ..paths import repo_root

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - 3.10
    tomllib = None

CORE_IDS = ("3.13.5", "3.13.5t", "3.13.5t-gil")
_NAME_RE = re.compile(r"^python3\.(\d+)(t?)$")


class ConditionError(ValueError):
    """A condition id that is unknown, or a selection that measures nothing."""


@dataclass(frozen=True)
class Condition:
    id: str
    executable: str
    origin: str                     # provisioned | PATH | pyenv | uv | config
    env: tuple = ()                 # extra environment, as (key, value) pairs
    note: str = ""

    @property
    def env_dict(self) -> dict[str, str]:
        return dict(self.env)

    @property
    def exists(self) -> bool:
        return os.access(self.executable, os.X_OK)


@dataclass
class Identity:
    """What a condition really is, asked of the interpreter itself in a fresh process."""

    condition: str
    executable: str
    realpath: str
    origin: str
    env: dict = field(default_factory=dict)
    available: bool = False
    error: str = ""
    version: str = ""
    version_short: str = ""
    implementation: str = ""
    py_gil_disabled: int | None = None
    nogil_fork: bool = False
    gil_enabled_at_runtime: bool | None = None
    switch_interval: float | None = None
    check_interval: int | None = None
    config_args: str = ""
    build: str = ""
    libpython: str = ""

    def key(self) -> str:
        """The interpreter part of a resume key: what the binary is (its bytes, and those of a
        shared libpython), what it says it is, and the environment it runs under.  A rebuilt
        interpreter or a changed environment gives another key, so its samples are measured
        anew rather than resumed."""
        import hashlib

        blob = {k: getattr(self, k) for k in ("version", "implementation", "py_gil_disabled", "nogil_fork",
                                              "gil_enabled_at_runtime", "config_args", "build")}
        if not blob["nogil_fork"]:   # recorded since the era builds; absent means False (keeps older keys)
            del blob["nogil_fork"]
        blob["env"] = sorted(self.env.items())
        blob["binary_sha256"] = file_sha256(self.realpath)
        blob["libpython_sha256"] = file_sha256(self.libpython) if self.libpython else None
        return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def kind(self) -> str:
        if not self.available:
            return "missing"
        if self.nogil_fork:
            return "nogil fork, GIL on" if self.gil_enabled_at_runtime else "nogil fork"
        if not self.py_gil_disabled:
            return "GIL build (old GIL)" if self.check_interval is not None else "GIL build"
        return "free-threaded, GIL on" if self.gil_enabled_at_runtime else "free-threaded"

    @property
    def gil_free_build(self) -> bool:
        """A build that can run without a GIL: --disable-gil, or the nogil fork."""
        return bool(self.py_gil_disabled) or self.nogil_fork

    def as_dict(self) -> dict:
        d = asdict(self)
        d["kind"] = self.kind
        return d


_PROBE = r"""
import json, os, platform, sys, sysconfig
nogil = getattr(sys.flags, "nogil", None)          # Sam Gross's nogil fork (retired builds)
if hasattr(sys, "_is_gil_enabled"):
    gil = sys._is_gil_enabled()
elif nogil is not None:
    gil = not nogil
else:
    gil = True
lib = os.path.join(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("LDLIBRARY") or "")
print(json.dumps({
    "version": sys.version,
    "version_short": platform.python_version() + ("t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""),
    "implementation": platform.python_implementation().lower(),
    "py_gil_disabled": sysconfig.get_config_var("Py_GIL_DISABLED"),
    "nogil_fork": nogil is not None,
    "gil_enabled_at_runtime": gil,
    "switch_interval": sys.getswitchinterval() if hasattr(sys, "getswitchinterval") else None,
    "check_interval": sys.getcheckinterval() if sys.version_info < (3, 2) else None,
    "config_args": sysconfig.get_config_var("CONFIG_ARGS") or "",
    "build": " ".join(platform.python_build()) + " | " + platform.python_compiler(),
    "libpython": lib if (".so" in lib and os.path.isfile(lib)) else "",
}))
"""


@functools.lru_cache(maxsize=None)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    return provision.sha256_file(Path(path))


def file_sha256(path: str) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _sha256_cached(os.path.realpath(path), st.st_size, st.st_mtime_ns)


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """A minimal environment: nothing of the caller's PYTHON* variables leaks into a sample."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(extra or {})
    return env


def identify(cond: Condition) -> Identity:
    """What ``cond`` is, asked of its interpreter once per binary, origin and environment (a
    condition's id does not change the answer, so discovery's probe is not repeated)."""
    return replace(_identify(cond.executable, cond.origin, cond.env), condition=cond.id)


@functools.lru_cache(maxsize=None)
def _identify(executable: str, origin: str, env: tuple) -> Identity:
    cond = Condition("", executable, origin, env)
    ident = Identity(condition="", executable=cond.executable, origin=cond.origin,
                     realpath=os.path.realpath(cond.executable), env=cond.env_dict)
    if not cond.exists:
        ident.error = f"not found: {cond.executable}"
        return ident
    try:
        out = subprocess.run([cond.executable, "-s", "-c", _PROBE], capture_output=True, text=True,
                             timeout=30, env=clean_env(cond.env_dict))
    except (OSError, subprocess.SubprocessError) as exc:
        ident.error = f"does not run: {exc}"
        return ident
    if out.returncode != 0:
        ident.error = f"exit {out.returncode}: {out.stderr.strip()[-300:]}"
        return ident
    try:
        info = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        ident.error = f"unreadable probe output: {out.stdout[-300:]!r}"
        return ident
    for k, v in info.items():
        setattr(ident, k, v)
    ident.available = True
    return ident


identify.cache_clear = _identify.cache_clear   # tests and long-lived kernels start afresh with it


def _provisioned() -> list[Condition]:
    """Every build of builds.toml (present or not), with the GIL-on twin of each that has one;
    not the traced builds (``+trace``): they explain a measurement and are never measured
    (:func:`gillab.measure.trace_file.traced_condition`)."""
    out = []
    for spec in provision.all_specs():
        if spec.trace_of:
            continue
        exe = str(spec.executable())
        out.append(Condition(spec.build_id, exe, "provisioned", note=spec.doc))
        if spec.gil_twin:
            tid, var, val = spec.gil_twin
            out.append(Condition(tid, exe, "provisioned", env=((var, val),),
                                 note=f"the {spec.build_id} binary run with {var}={val}"))
    return out


def display_order(cids) -> list[str]:
    """Condition ids as the report lists them: the documents' eras first (builds of builds.toml
    by version, a fork and a GIL-on twin after the build they come from), then today's 3.13.5
    trio and today's releases as Debian builds them, then builds found on this machine."""
    def vkey(v: str) -> tuple:
        return tuple(int(x) for x in v.split(".") if x.isdigit())

    rank = {}
    for spec in provision.all_specs():
        group = 1.5 if spec.debian_binary else 1 if spec.build_id in CORE_IDS else 0   # Debian's after the trio
        rank[spec.build_id] = (group, vkey(spec.version), spec.nogil_fork, spec.disable_gil, 0)
        if spec.gil_twin:
            rank[spec.gil_twin[0]] = rank[spec.build_id][:4] + (1,)
    for r in provision.retired().values():      # earlier campaigns' builds, among the eras by version
        rank[r.build_id] = (0, vkey(r.version), not r.stock, False, int(r.twin))
    return sorted(cids, key=lambda c: (rank.get(c, (2,)), c))


def sets() -> dict[str, list[str]]:
    """Named groups of condition ids (builds.toml [sets]): core, era, history, doc000, ..."""
    return provision.load_builds()[1]


def today_of() -> dict[str, str]:
    """builds.toml ``[today]``: for each of the documents' own builds, the build of today that
    the report sets beside it (3.9.2 -> 3.13.5, 2.7.18 -> 3.13.5, ...)."""
    return provision.load_builds()[2]


def pairs() -> list[tuple[str, str]]:
    """builds.toml ``[pairs]``: (GIL build, free-threaded build of the same source), the era's
    first: (3.13.5, 3.13.5t)."""
    return list(provision.load_roles()[0].items())


def own(document: str) -> list[str]:
    """builds.toml ``[own]``: the builds document ``document`` (000 ... 004) is judged on, whose
    rows its tally counts; a pair ``A vs B`` counts as that pair only.  Its claims on any other
    build (today's, for an older document) are "then and now": shown, never in its tally."""
    return provision.load_own().get(document, [])


def today_pair() -> tuple[str, str]:
    """Today's pair: the one of :func:`pairs` whose GIL build is a build of today (``[today]``)."""
    today = set(today_of().values())
    (pair,) = [p for p in pairs() if p[0] in today]
    return pair


def twin_of(build: str) -> str | None:
    """The GIL-on twin of a free-threaded build (builds.toml ``gil_twin``), or None."""
    for spec in provision.all_specs():
        if spec.build_id == build and spec.gil_twin:
            return spec.gil_twin[0]
    return None


def role(name: str, present=None) -> str:
    """The build that builds.toml ``[roles]`` names for ``name`` (``old_gil``: 2.7.18, ...).  Given the
    conditions a campaign holds (``present``), the build that plays the part there: the role's build,
    else a retired build it replaced (builds.toml ``[[retired]]`` ``replaced_by``) that the campaign
    holds, else the role's build all the same."""
    roles = provision.load_roles()[1]
    if name not in roles:
        raise KeyError(f"builds.toml [roles] names no {name!r} build (it has: {', '.join(sorted(roles))})")
    build = roles[name]
    if present is None:
        return build
    held = set(present)
    return next((b for b in stands_for(build) if b in held), build)


def stands_for(build: str) -> list[str]:
    """``build`` and the retired builds it replaced (builds.toml ``[[retired]]``), newest first: the
    builds whose samples may play its part in a campaign measured before it was provisioned."""
    return [build, *sorted((r.build_id for r in provision.retired().values() if r.replaced_by == build),
                           reverse=True)]


def version_of(build: str) -> str:
    """The CPython version of a build id: builds.toml's (a retired build's too), else the first
    ``X.Y.Z`` in the id (a build found on this machine is named from the version it reports)."""
    for spec in provision.all_specs():
        if build in (spec.build_id, *(spec.gil_twin[:1])):
            return spec.version
    r = provision.retired().get(build)
    if r is not None:
        return r.version
    m = re.search(r"\d+\.\d+\.\d+", build)
    return m[0] if m else ""


def now_of(build: str) -> str:
    """The build of builds.toml that plays ``build``'s part now: itself, or for a retired build the
    one that replaced it (``replaced_by``; a retired build without one is itself)."""
    r = provision.retired().get(build)
    return r.replaced_by if r is not None and r.replaced_by else build


def retired() -> dict:
    """builds.toml ``[[retired]]``: the builds earlier campaigns measured and nothing builds now."""
    return provision.retired()


def _is_shim_dir(d: Path) -> bool:
    return d.name == "shims" or ".pyenv/shims" in str(d)


def _scan_bin(directory: Path) -> list[Path]:
    """The Python executables in ``directory``, by name (names matched first: a bin folder holds
    thousands of other programs, and this runs at every discovery)."""
    try:
        names = sorted(name for name in os.listdir(directory) if _NAME_RE.match(name))
    except OSError:
        return []
    return [p for p in (directory / name for name in names) if os.access(p, os.X_OK) and p.is_file()]


def config_files() -> list[Path]:
    paths = []
    if os.environ.get("GILLAB_INTERPRETERS"):
        paths.append(Path(os.environ["GILLAB_INTERPRETERS"]))
    paths.append(repo_root() / "interpreters.toml")
    paths.append(Path.home() / ".config" / "gillab" / "interpreters.toml")
    return paths


def _from_config() -> list[tuple[str, Path, str]]:
    """``[interpreters]`` tables mapping an id to a path, in the config files that exist."""
    out = []
    for path in config_files():
        if not path.is_file() or tomllib is None:
            continue
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, ValueError) as exc:   # TOMLDecodeError is a ValueError
            raise ConditionError(f"{path} is not a readable interpreters list ({exc}); fix or remove it") from None
        for cid, exe in (data.get("interpreters") or {}).items():
            out.append((str(cid), Path(exe).expanduser(), "config"))
    return out


def _signature(ident: "Identity") -> tuple:
    """What makes two binaries the same build: what they say they are (sys.version holds the
    build's date and time), their flags and configure arguments."""
    return (ident.version, ident.build, ident.config_args, ident.py_gil_disabled, ident.nogil_fork)


def discover(extra_paths: list[str] | None = None) -> list[Condition]:
    """Every condition this machine offers: the builds of builds.toml first (present or not),
    then those listed in interpreters.toml (under the ids given there), then those found on
    PATH, in pyenv and in uv.  A found build is named from what it reports (origin and
    ``platform.python_version()``, plus ``t`` when free-threaded), never from its file name, and a
    wrapper or copy of a build already listed (same ``sys.version``, build and flags) is listed
    once."""
    conds = _provisioned()
    seen = {os.path.realpath(c.executable) for c in conds}
    signatures = {_signature(identify(c)) for c in conds if not c.env and identify(c).available}
    ids = {c.id for c in conds}
    found: list[tuple[str | None, Path, str]] = list(_from_config())
    for d in (extra_paths or os.environ.get("PATH", "").split(os.pathsep)):
        if d and not _is_shim_dir(Path(d)):
            for p in _scan_bin(Path(d)):
                found.append((None, p, "PATH"))
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    for vdir in sorted((pyenv_root / "versions").glob("*")):
        for p in _scan_bin(vdir / "bin")[-1:]:
            found.append((None, p, "pyenv"))
    uv_root = Path(os.environ.get("UV_PYTHON_INSTALL_DIR", Path.home() / ".local/share/uv/python"))
    for vdir in sorted(uv_root.glob("cpython-*")):
        for p in _scan_bin(vdir / "bin")[-1:]:
            found.append((None, p, "uv"))
    for cid, path, origin in found:
        real = os.path.realpath(path)
        if real in seen or (cid is not None and cid in ids):
            continue
        seen.add(real)
        ident = identify(Condition(cid or "?", str(path), origin))
        if cid is None:            # found, not declared: named and deduplicated by what it reports
            if not ident.available or _signature(ident) in signatures:
                continue
            base = f"{origin.lower()}-{ident.version_short}"
            cid, n = base, 1
            while cid in ids:
                n += 1
                cid = f"{base}-{n}"
        signatures.add(_signature(ident))
        ids.add(cid)
        cond = Condition(cid, str(path), origin)
        conds.append(cond)
        if ident.gil_free_build:
            var = "PYTHONGIL" if ident.nogil_fork else "PYTHON_GIL"
            conds.append(Condition(cid + "-gil", str(path), origin, env=((var, "1"),),
                                   note=f"{cid} run with {var}=1"))
            ids.add(cid + "-gil")
    return conds


def host_condition(conds: list[Condition]) -> Condition:
    """The interpreter running the harness (its base, outside any venv), as discovered, or as
    a condition of its own when discovery did not list it."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    real = os.path.realpath(base)
    for c in conds:
        if os.path.realpath(c.executable) == real and not c.env:
            return c
    return Condition(f"host-{'.'.join(map(str, sys.version_info[:3]))}", base, "host")


def _auto(conds: list[Condition], by_id: dict) -> list[Condition]:
    chosen = [by_id[i] for i in CORE_IDS]
    extra = [c for c in conds if c.origin != "provisioned"]   # the era builds come by set, not by auto
    ft_minors = set()
    for c in extra:
        ident = identify(c)
        if ident.available and ident.gil_free_build:
            chosen.append(c)
            ft_minors.add(ident.version_short.rsplit(".", 1)[0])
    for c in extra:
        ident = identify(c)
        if ident.available and not ident.gil_free_build and c not in chosen \
                and ident.version_short.rsplit(".", 1)[0] in ft_minors:
            chosen.append(c)
    return chosen


def select(spec: str | list[str] | None = "auto", available_only: bool = False) -> list[Condition]:
    """Resolve a ``conditions`` parameter to conditions.

    A comma-separated list (or a list) of ids, sets and keywords: ``core``, the three
    provisioned 3.13.5 conditions; a set of builds.toml (``era``, ``history``, ``doc000``, ...);
    ``auto`` (default), core plus every free-threaded build found and the GIL builds of the same
    minor versions; ``host``, the interpreter running the harness; ``all``, everything
    discovered.  Unknown ids raise :class:`ConditionError`; missing builds stay in
    the list, so that the caller reports them as not measured.
    """
    conds = discover()
    by_id = {c.id: c for c in conds}
    tokens = [t.strip() for t in ((spec or "auto").split(",") if isinstance(spec, str) else spec) if t.strip()]
    if not tokens:
        raise ConditionError("no condition given")
    named = sets()
    unknown = [t for t in tokens if t not in by_id and t not in named and t not in ("core", "auto", "all", "host")]
    if unknown:
        raise ConditionError(
            f"unknown condition(s) {', '.join(unknown)}; known: {', '.join(by_id)} "
            f"(or the sets {', '.join(named)}, or auto, host, all)")
    chosen: list[Condition] = []
    for t in tokens:
        picked = {"core": lambda: [by_id[i] for i in CORE_IDS], "auto": lambda: _auto(conds, by_id),
                  "all": lambda: conds, "host": lambda: [host_condition(conds)]}.get(
                      t, lambda: [by_id[i] for i in named[t]] if t in named else [by_id[t]])()
        chosen += [c for c in picked if c not in chosen]
    if available_only:
        chosen = [c for c in chosen if identify(c).available]
    return chosen


def describe(conds: list[Condition] | None = None) -> list[dict]:
    """Every condition with its identity; a provisioned one also with the build it comes from
    (builds.toml: declared version, source, configure flags) and its build record."""
    out = []
    for c in (conds or discover()):
        row = identify(c).as_dict() | {"note": c.note}
        spec = provision.spec_for_executable(c.executable) if c.origin == "provisioned" else None
        if spec is not None:
            rec = provision.read_marker(spec) or {}
            row |= {"build_id": spec.build_id, "declared_version": spec.version, "source": spec.source_name,
                    "source_sha256": spec.src.get("sha256") or rec.get("source_sha256"),
                    "source_dsc": rec.get("dsc"), "configure_flags": list(spec.configure_flags),
                    "build_seconds": rec.get("build_seconds"), "modules": rec.get("modules")}
        row["gil_at_runtime"] = (None if not row["available"] else "on" if row["gil_enabled_at_runtime"] else "off")
        out.append(row)
    return out


if __name__ == "__main__":  # pragma: no cover
    json.dump(describe(), sys.stdout, indent=2)
