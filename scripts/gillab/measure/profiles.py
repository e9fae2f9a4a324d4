"""Profiles (``smoke`` / ``default`` / ``seed``) and parameter checking.

Every parameter is checked *before* anything is measured: an unknown name, a wrong type or a
value out of range raises :class:`ParameterError` naming the parameter and what it accepts.
"""
from __future__ import annotations

import ast
import copy
import functools
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..paths import repo_root

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - 3.10
    import tomli as tomllib  # type: ignore

PROFILES = ("smoke", "default", "verdicts", "seed", "history")
# the parameters that say how much is measured, not what: the runs, the builds, the grids, a
# sample's time limit (none of them is part of an experiment's configuration id).  The
# ``verdicts`` profile is ``default``'s configuration with more runs: it may set only these, so
# its samples are default's plus more, in one configuration (a campaign measured with `default`
# and then with `verdicts` resumes the first and adds the rest)
RUN_SIZE = ("conditions", "repeats", "max_repeats", "ci_target", "timeout", "full_grid", "small_grid",
            "rest_repeats", "claim_grid", "claim_builds")
BUDGET_MINUTES = 40   # the whole `default` report on 2 cores (profiles.toml says how it is met)
VERDICTS_MINUTES = 60   # a `verdicts` run: default's plan, then rounds where intervals straddle a band


class ParameterError(ValueError):
    """A parameter that would make the measurement meaningless or impossible."""


# -- bounds: no parameter is unbounded ------------------------------------------------------------
MAX_REPEATS = 1000        # samples per point and build; the documents' best-of-3 is far below
MAX_TIMEOUT_S = 3600.0    # one sample; the slowest of the documents' runs is minutes
# parameters that start threads or processes, in any experiment: each value at most max_threads()
THREAD_PARAMS = ("threads", "cpu_threads", "cpu_processes", "process_writer_threads", "workers", "pool_procs",
                 "prefork_procs", "multi_threads")


# threads that only block (no CPU): the experiment checks its own, higher bound (20,000)
OWN_THREAD_BOUND = {("thread_memory", "threads")}


def max_threads() -> int:
    """The most threads (or processes) one sample may start here: 64 per logical CPU, at least 1024
    (document 002 starts 1,000 blocked threads; the CPU-bound experiments go up to 8)."""
    return max(1024, 64 * (os.cpu_count() or 1))


def _check_bounds(experiment: str, out: dict) -> None:
    for name in ("repeats", "max_repeats"):
        if (out.get(name) or 0) > MAX_REPEATS:
            raise ParameterError(f"{experiment}: {name}={out[name]} is more than {MAX_REPEATS} samples per point and "
                                 "build; a run that long is many runs: measure them one after another")
    from ..stats import ADAPTIVE_MAX

    if out.get("max_repeats") is not None and out["max_repeats"] > max(ADAPTIVE_MAX, out.get("repeats") or 0):
        raise ParameterError(f"{experiment}: max_repeats={out['max_repeats']} is more than {ADAPTIVE_MAX}: the "
                             "intervals hold whenever adaptive repeats stop only up to that many runs; for more, "
                             "ask for a fixed number (repeats alone)")
    if (out.get("timeout") or 0) > MAX_TIMEOUT_S:
        raise ParameterError(f"{experiment}: timeout={out['timeout']:g} s is more than {MAX_TIMEOUT_S:g} s for one "
                             "sample")
    cap = max_threads()
    for name in THREAD_PARAMS:
        if (experiment, name) in OWN_THREAD_BOUND:
            continue
        values = out.get(name)
        values = values if isinstance(values, (list, tuple)) else [values]
        big = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and v > cap]
        if big:
            raise ParameterError(f"{experiment}: {name}={big[0]} is more than {cap} threads or processes, the most "
                                 f"one sample may start on this machine of {os.cpu_count()} CPUs")


@dataclass(frozen=True)
class Param:
    name: str
    parse: Callable[[Any], Any]
    help: str
    optional: bool = False   # None is allowed (means "the interpreter's default")


def load_profiles() -> dict:
    """``profiles.toml``, parsed once for each text the file has held (an edit is read at the next
    call); every caller gets a copy of its own to change."""
    path = repo_root() / "profiles.toml"
    try:
        return copy.deepcopy(_parsed(path.read_bytes()))
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"{path.name} is not valid TOML ({exc}); fix it, or `git checkout {path.name}`") from None
    except OSError as exc:
        raise ParameterError(f"cannot read {path.name}: {exc.strerror or exc}") from None


@functools.lru_cache(maxsize=8)
def _parsed(text: bytes) -> dict:
    return tomllib.loads(text.decode())


MODULE_TABLES = "PROFILES"   # what an experiment's module names the tables it declares
EXPERIMENTS_DIR = Path(__file__).resolve().parent / "experiments"


def declared(experiment: str) -> dict[str, dict]:
    """The profile tables ``experiment``'s module declares beside its class: its ``PROFILES``, a
    literal ``{profile: {parameter: value}}`` (what a ``[<experiment>.<profile>]`` table of
    ``profiles.toml`` would hold), read as data from ``gillab/measure/experiments/<experiment>.py``,
    never imported (outside the class, the code key never reads it: a profile's sizes choose
    samples, they do not shape one); {} where it declares none."""
    path = EXPERIMENTS_DIR / f"{experiment}.py"
    if not experiment.isidentifier() or not path.is_file():
        return {}
    st = path.stat()
    return {k: dict(v) for k, v in _declared(str(path), st.st_mtime_ns, st.st_size).items()}


@functools.lru_cache(maxsize=64)
def _declared(path: str, mtime_ns: int, size: int) -> dict[str, dict]:
    name = Path(path).name
    for node in ast.parse(Path(path).read_text()).body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(node, "target", None)
        if not (isinstance(target, ast.Name) and target.id == MODULE_TABLES) or node.value is None:
            continue
        try:
            out = ast.literal_eval(node.value)
        except ValueError:
            raise ParameterError(f"{name}: {MODULE_TABLES} is read as data, as profiles.toml is: write it as a literal "
                                 "{profile: {parameter: value}}") from None
        bad = [p for p, t in out.items() if p not in PROFILES or not isinstance(t, dict)] if isinstance(out, dict) else [out]
        if bad:
            raise ParameterError(f"{name}: {MODULE_TABLES} maps a profile ({', '.join(PROFILES)}) to its table of "
                                 f"parameters, not {bad[0]!r}")
        return out
    return {}


def tables(experiment: str) -> dict[str, dict]:
    """``experiment``'s profile tables: each ``[<experiment>.<profile>]`` of ``profiles.toml``, and
    for a profile it has no table of, the one the experiment's module declares (:func:`declared`),
    so a new chapter's sizes may live in its own module until they are tuned here."""
    return declared(experiment) | load_profiles().get(experiment, {})


def table_source(experiment: str, profile: str) -> str:
    """Where ``experiment``'s table of ``profile`` comes from, in words: ``profiles.toml`` or the
    experiment's module (:func:`tables`); '' where neither has it."""
    if profile in load_profiles().get(experiment, {}):
        return "profiles.toml"
    if profile in declared(experiment):
        return f"gillab/measure/experiments/{experiment}.py ({MODULE_TABLES})"
    return ""


def _lacks(experiment: str, profile: str) -> str:
    return (f"profiles.toml has no [{experiment}.{profile}] table, and gillab/measure/experiments/{experiment}.py "
            f"declares none in {MODULE_TABLES}")


def profile_values(experiment: str, profile: str) -> dict:
    if profile not in PROFILES:
        raise ParameterError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    table = tables(experiment)
    if profile not in table:
        raise ParameterError(_lacks(experiment, profile))
    if profile != "verdicts":
        return dict(table[profile])
    extra = dict(table[profile])
    bad = sorted(set(extra) - set(RUN_SIZE))
    if bad:
        raise ParameterError(f"{table_source(experiment, profile)} [{experiment}.verdicts] sets {', '.join(bad)}: the "
                             "verdicts profile is default's configuration with more runs, and may set only "
                             f"{', '.join(RUN_SIZE)}")
    if "default" not in table:
        raise ParameterError(f"{_lacks(experiment, 'default')} for [{experiment}.verdicts] to extend")
    base = dict(table["default"])
    if "repeats" in extra and "max_repeats" not in extra:
        base.pop("max_repeats", None)      # a number of repeats asked for is that number
    return base | extra


# -- parsers -----------------------------------------------------------------------------
def as_list(value) -> list:
    """A parameter's value as a list: a list or tuple as it is, a comma-separated string split, one value alone."""
    if isinstance(value, str):
        value = [v for v in value.replace(" ", "").split(",") if v]
    elif not isinstance(value, (list, tuple)):
        value = [value]
    return list(value)


def one_of(allowed, name: str = ""):
    """A parser for one value drawn from ``allowed`` (``name`` begins its error)."""
    def parse(value):
        if not isinstance(value, str) or value not in allowed:
            raise ValueError(f"{name + ' ' if name else ''}must be one of {', '.join(allowed)}, got {value!r}")
        return value
    return parse


def choices(allowed, name: str = ""):
    """A parser for a non-empty list drawn from ``allowed`` (``name`` begins its error)."""
    def parse(value):
        out = [str(v) for v in as_list(value)]
        bad = [v for v in out if v not in allowed]
        if not out or bad:
            raise ValueError(f"{name + ' ' if name else ''}must be among {', '.join(allowed)}, got {bad or out}")
        return out
    return parse


def positive_int(value) -> int:
    if isinstance(value, bool):
        raise ValueError("expected a whole number")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"expected a whole number, got {value}")
    n = int(str(value).replace("_", "")) if isinstance(value, str) else int(value)
    if n <= 0:
        raise ValueError(f"must be >= 1, got {n}")
    return n


def non_negative_int(value) -> int:
    """A whole number, 0 or more (``1_000`` and "1_000" read as 1000)."""
    n = int(str(value).replace("_", "")) if isinstance(value, str) else value
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"must be a whole number >= 0, got {value!r}")
    return n


def positive_ints(value) -> list[int]:
    items = as_list(value)
    if not items:
        raise ValueError("needs at least one value")
    out = [positive_int(v) for v in items]
    if len(set(out)) != len(out):
        raise ValueError(f"has repeated values {out}")
    return out


def positive_float(value) -> float:
    if isinstance(value, bool):
        raise ValueError("expected a number")
    x = float(value)
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"must be a number > 0, got {value}")
    return x


def flag(value) -> bool:
    """A yes or no: a TOML boolean, or true/false as a -p override writes it."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in ("true", "false"):
        return word == "true"
    raise ValueError(f"must be true or false, got {value!r}")


PAIRED = Param("paired", flag, "each run of more than one thread times its own one-thread countdown in the "
               "same process, A-B-B-A (half the work in one thread, half over the threads, twice): the "
               "chapter's ratios to one thread are then each run's own (false: one process a point, the "
               "document's way)")


def fraction(value) -> float:
    x = positive_float(value)
    if x >= 1:
        raise ValueError(f"must be a fraction between 0 and 1, got {value}")
    return x


def switch_interval(value) -> float:
    x = positive_float(value)
    if x < 1e-6:
        raise ValueError(f"must be >= 1e-6 s (CPython's resolution is one microsecond), got {value}")
    return x


# the timer slack a workload's threads wait with (gillab.measure.workloads._gil): a thread waiting
# for the GIL sleeps in a timed wait of one switch interval, which Linux stretches by it (50 us
# unless set); 1 ns is the smallest, 0 leaves the OS's own
OS_SLACK = 0
TIMER_SLACK = Param("timer_slack_ns", non_negative_int, "the timer slack every thread waits with, in ns "
                    "(1: the smallest; 0: the OS's own, left as it is)")


def slack_asked(ns: int) -> int | None:
    """What a workload is asked to set: None (leave the OS's own) for :data:`OS_SLACK`."""
    return None if ns == OS_SLACK else ns


def cpu_list(value) -> list[int]:
    import os

    items = [int(v) for v in as_list(value)]
    allowed = sorted(os.sched_getaffinity(0))
    bad = [c for c in items if c not in allowed]
    if not items or bad:
        raise ValueError(f"CPUs {bad or items} are not available; this machine offers {allowed}")
    return items


def text(value) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__}")
    return value


def condition_ids(value) -> str:
    """Condition ids and sets, as a comma-separated string (a list is joined)."""
    return value if isinstance(value, str) else ",".join(as_list(value))


def parse_claim_grid(value) -> list[dict]:
    """The claims' points as a list of tiers, each written as ``small_grid`` is; the points are
    their union (a list of mappings in profiles.toml, tiers joined by ``|`` on the command line:
    ``"switch_intervals=0.005; cpu_threads=0,1,2,4 | cpu_threads=1"``).  One tier alone may be
    given as a mapping."""
    if value is None or value == "" or value == {} or value == []:
        return []
    if isinstance(value, (list, tuple)):
        tiers = [parse_small_grid(v) for v in value]
    elif isinstance(value, str) and not value.strip().startswith("{") and "|" in value:
        tiers = [parse_small_grid(v) for v in value.split("|")]
    else:
        tiers = [parse_small_grid(value)]
    if any(not t for t in tiers):
        raise ValueError("has an empty tier; each tier names the grid values of the points the claims read")
    return tiers


def parse_small_grid(value) -> dict:
    """A mapping of parameter name to raw value, from a mapping, a JSON object, or
    ``"name=value; name=value"`` (values as on the command line: ``cpu_threads=0,1``)."""
    if value is None or value == "" or value == {}:
        return {}
    if isinstance(value, dict):
        return dict(value)
    if not isinstance(value, str):
        raise ValueError(f"expected a mapping or 'name=value; name=value', got {type(value).__name__}")
    text = value.strip()
    if text.startswith("{"):
        try:
            out = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"is not a JSON object: {exc}") from None
        if not isinstance(out, dict):
            raise ValueError("must be a JSON object")
        return out
    out = {}
    for part in (s.strip() for s in text.split(";")):
        if not part:
            continue
        name, eq, raw = part.partition("=")
        if not eq or not name.strip():
            raise ValueError(f"{part!r} is not name=value")
        out[name.strip()] = raw.strip()
    return out


COMMON = {
    "conditions": Param("conditions", condition_ids,
                        "core | auto | all | comma-separated condition ids"),
    "repeats": Param("repeats", positive_int, "samples per point and condition (the least, with max_repeats)"),
    "max_repeats": Param("max_repeats", positive_int,
                         "adaptive repeats: a point without a 95% interval yet, or one wider than ci_target, gets "
                         "more, up to this many (at most 20); None means exactly repeats (also when only repeats "
                         "is given)", optional=True),
    "ci_target": Param("ci_target", fraction,
                       "adaptive repeats stop when the 95% interval of each median is within this fraction of it"),
    "timeout": Param("timeout", positive_float, "seconds one sample may take"),
    "switch_interval": Param("switch_interval", switch_interval,
                             "sys.setswitchinterval() in seconds (at least 1e-6), None keeps the 5 ms default",
                             optional=True),
    "affinity": Param("affinity", cpu_list, "CPUs the workload may run on, e.g. 0 or 0,1", optional=True),
    "full_grid": Param("full_grid", condition_ids,
                       "builds measured at every point (all, or ids and sets); the others on small_grid"),
    "small_grid": Param("small_grid", parse_small_grid,
                        "narrower grid values for the builds outside full_grid, as name:value pairs "
                        "(switch_intervals 0.005), None for every build at every point", optional=True),
    "rest_repeats": Param("rest_repeats", positive_int,
                          "runs of a point no claim reads (with claim_grid / claim_builds); None: repeats everywhere",
                          optional=True),
    "claim_grid": Param("claim_grid", parse_claim_grid,
                        "the points the claims read, as narrower grid values (like small_grid), or the union of "
                        "several such tiers (a list in profiles.toml, tiers joined by | on the command line): they "
                        "get every repeat (a tier's own repeats where it sets them, its builds where it names "
                        "them), the others rest_repeats", optional=True),
    "claim_builds": Param("claim_builds", condition_ids,
                          "the builds that get every repeat at claim_grid (all, or ids and sets)"),
}
COMMON_DEFAULTS = {"conditions": "auto", "switch_interval": None, "affinity": None, "full_grid": "all", "small_grid": None,
                   "max_repeats": None, "ci_target": 0.05, "rest_repeats": None, "claim_grid": None,
                   "claim_builds": "all"}


def resolve(experiment: str, specific: dict[str, Param], profile: str, overrides: dict | None) -> dict:
    """Profile values + overrides, every one checked; unknown names are an error."""
    schema = {**COMMON, **specific}
    values = {**COMMON_DEFAULTS, **profile_values(experiment, profile)}
    overrides = {k: v for k, v in (overrides or {}).items()}
    unknown = sorted(set(overrides) - set(schema))
    unknown_profile = sorted(set(values) - set(schema))
    if unknown or unknown_profile:
        raise ParameterError(
            f"unknown parameter(s) for {experiment}: {', '.join(unknown or unknown_profile)}; "
            f"known: {', '.join(sorted(schema))}")
    values.update({k: v for k, v in overrides.items()})
    if "repeats" in overrides and "max_repeats" not in overrides:
        values["max_repeats"] = None   # a number of repeats asked for is that number: no adaptive rounds
    out = {}
    for name, param in schema.items():
        if name not in values:
            raise ParameterError(f"{experiment}: parameter {name!r} has no value in profile {profile!r}")
        v = values[name]
        if v is None or v == "" and param.optional:
            if not param.optional:
                raise ParameterError(f"{experiment}: parameter {name!r} needs a value ({param.help})")
            out[name] = None
            continue
        try:
            out[name] = param.parse(v)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"{experiment}: parameter {name}={v!r} is not valid: {exc} ({param.help})") from None
    _check_bounds(experiment, out)
    if out.get("max_repeats") is not None and out["max_repeats"] < out["repeats"]:
        raise ParameterError(f"{experiment}: max_repeats={out['max_repeats']} is below repeats={out['repeats']}; "
                             "max_repeats is the most samples a point may get, repeats the least")
    return out
