"""Which builds a sweep measures at every point of its grid, and the smaller grid for the rest.

Two common parameters, neither of which changes what a sample *is* (so neither is part of the
configuration, and samples measured on either grid are the same samples):

- ``full_grid``: the builds measured at every point: ``all`` (the default), or condition ids and
  sets as in ``conditions``;
- ``small_grid``: the grid of every other build, written as narrower values of the experiment's
  grid parameters (``{switch_intervals = [0.005]}`` in profiles.toml, ``switch_intervals=0.005;
  cpu_threads=0,1`` on the command line).  It may only narrow the grid: each of its points must be
  a point of the full grid, and each parameter it names must choose points.

The ``default`` profile uses them where a chapter's grid times its builds does not fit the time
the whole report may take: the document's own GIL build and today's measure everything, the
other builds the points that tell them apart (see profiles.toml).

Three more choose how many runs each measured point gets (also not part of the configuration):

- ``rest_repeats``: the runs of every measured point (unset: ``repeats`` everywhere);
- ``claim_grid``: the points the claims read, as narrower values of the grid's parameters
  (written as ``small_grid`` is): they get all ``repeats`` runs, the other points
  ``rest_repeats``;
- ``claim_builds``: the builds that get all ``repeats`` at those points (``all``, or ids and sets).

A tier may name its own ``repeats`` (between ``rest_repeats`` and ``repeats``): its points are
measured with the claims' (before the figures' points, in a timed run short of time) but get only
that many runs.  ``default`` uses it for today's builds' one run where the then-and-now rows read
(3.14 and 3.15 beside 3.13.5): a row of one run is never judged, and is shown, not left unreached.

The ``seed`` profile uses them where the document's own sizes times the runs a verdict needs
(:func:`gillab.stats.runs_needed`) would not fit: the claims' points get the runs, the rest one.

A timed whole run short of time measures every chapter's claims first and the other points (the
figures' one run each) after them (:func:`claims_first`, :func:`gillab.reproduce.reproduce`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .protocol import Experiment, point_key
from .profiles import ParameterError, parse_small_grid


@dataclass(frozen=True)
class Grid:
    """The builds measured everywhere (``None``: all of them) and the point keys of the small grid
    (``None``: no small grid, every build everywhere)."""
    full: frozenset | None = None
    small: frozenset | None = None
    full_text: str = "all"
    small_values: tuple = ()
    rest_repeats: int | None = None   # runs of a point outside the claims' (None: every repeat)
    claim: frozenset | None = None    # point keys of the claim grid (None: every point)
    claim_builds: frozenset | None = None   # builds that get every repeat there (None: all)
    claim_values: tuple = ()
    claim_builds_text: str = "all"
    claim_tiers: tuple = ()           # per tier: (its point keys, its own builds or None, its runs or None)
    claims_only: bool = False         # the points no claim reads are left for a later run

    def _held(self, cid: str, pk: str) -> list:
        """The runs each claim tier that holds the point ``pk`` for ``cid`` gives it (None: every
        repeat), the tier's own builds where it names them, else ``claim_builds``'s; empty where no
        claim reads the point for this build."""
        if self.claim is None:
            return [None] if self._tier_for(cid, None) else []
        return [n for pts, b, n in self.claim_tiers if pk in pts and self._tier_for(cid, b)]

    def claimed(self, cid: str, pk: str) -> bool:
        """Whether ``cid`` is measured with the claims at the point ``pk``: a claim tier holds the
        point, for this build (the tier's own builds where it names them, else ``claim_builds``)."""
        return bool(self._held(cid, pk))

    def _tier_for(self, cid: str, builds) -> bool:
        """Whether a tier whose own builds are ``builds`` (None: ``claim_builds``'s) is for ``cid``."""
        if builds is not None:
            return cid in builds
        return self.claim_builds is None or cid in self.claim_builds

    def runs(self, cid: str, pk: str, held: list | None = None) -> int | None:
        """The runs ``cid`` gets at the point ``pk`` (None: every repeat): ``rest_repeats`` where no
        claim reads it, a tier's own runs where only tiers with their own hold it (the most of
        them).  ``held``: :meth:`_held`'s answer, where the caller has it."""
        if self.rest_repeats is None:
            return None
        held = self._held(cid, pk) if held is None else held
        if not held:
            return self.rest_repeats
        return None if None in held else max(held)

    def every_repeat_somewhere(self, cid: str) -> bool:
        """Whether ``cid`` gets every repeat at some point (a tier with runs of its own gives it
        fewer): a judged row on it can have the runs its interval needs."""
        if self.rest_repeats is None:
            return True
        if self.claim is None:
            return self._tier_for(cid, None)
        return any(self._tier_for(cid, b) and n is None for _, b, n in self.claim_tiers)

    def unclaimed(self, cid: str, pk: str) -> bool:
        """Whether ``rest_repeats`` sets the point ``pk`` apart for ``cid``: no claim reads it
        there, so it gets only ``rest_repeats`` runs (the figures')."""
        return self.rest_repeats is not None and not self.claimed(cid, pk)

    def reason(self, cid: str, point: dict, rep: int | None = None) -> str | None:
        """None where ``cid`` is measured at ``point`` (in repeat ``rep``, if given); else why not."""
        if not (self.small is None or self.full is None or cid in self.full or point_key(point) in self.small):
            return f"outside the small grid ({self.describe_small()}; full grid: {self.full_text})"
        if self.claims_only and self.unclaimed(cid, point_key(point)):
            return "a point no claim reads, left until every chapter's claims are measured"
        if rep is None or self.rest_repeats is None or rep < self.rest_repeats:
            return None
        held = self._held(cid, point_key(point))
        runs = self.runs(cid, point_key(point), held)
        if runs is None or rep < runs:
            return None
        if held:
            return f"beyond the {runs} run{'s' if runs != 1 else ''} its claim tier gives it"
        return (f"beyond the {self.rest_repeats} run{'s' if self.rest_repeats != 1 else ''} of a point no claim reads "
                f"(claim grid: {self.describe_claim()}; builds: {self.claim_builds_text})")

    def describe_claim(self) -> str:
        """The claims' points in words: each tier's values, tiers joined by 'or'."""
        return " or ".join(self.describe(t) for t in self.claim_values) or "every point"

    def describe_small(self) -> str:
        return self.describe(self.small_values)

    @staticmethod
    def describe(values) -> str:
        return "; ".join(f"{k}={v}" for k, v in values)


def small_values(exp: Experiment, p: dict, which: str = "small_grid") -> dict:
    """``small_grid`` parsed with the experiment's own parameter checks, and checked to narrow the
    grid (a ParameterError otherwise, before anything is measured)."""
    try:
        raw = parse_small_grid(p.get(which))
    except ValueError as exc:
        raise ParameterError(f"{exp.name}: parameter {which}={p.get(which)!r} is not valid: {exc}") from None
    return narrow(exp, p, raw, which)


def narrow(exp: Experiment, p: dict, raw: dict, which: str) -> dict:
    """One mapping of grid parameter to narrower values (``raw``, as written), each parsed with
    the experiment's own checks, and checked to choose points of the full grid."""
    values = {}
    full = [point_key(x) for x in exp.points(p)]
    for name, v in raw.items():
        if name not in exp.params:
            raise ParameterError(f"{exp.name}: {which} names {name!r}, which is not one of its parameters "
                                 f"({', '.join(sorted(exp.params))})")
        try:
            values[name] = exp.params[name].parse(v)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"{exp.name}: {which} {name}={v!r} is not valid: {exc} "
                                 f"({exp.params[name].help})") from None
        if values[name] != p[name] and [point_key(x) for x in exp.points({**p, name: values[name]})] == full:
            raise ParameterError(f"{exp.name}: {which} names {name!r}, which does not choose the points of the "
                                 f"grid (it sets what a sample is); {which} may only narrow the grid")
        if which == "claim_grid" and isinstance(values[name], list) and isinstance(p[name], list):
            # the profile's claims' points, on a grid the reader narrowed (-p threads=1,2): those of it
            kept = [v for v in values[name] if v in p[name]]
            if not kept:
                raise EmptyTier(f"{exp.name}: claim_grid's tier {raw} holds no point of the grid ({name}={p[name]})")
            values[name] = kept
    if values:
        small = [point_key(x) for x in exp.points({**p, **values})]
        outside = [k for k in small if k not in full]
        if outside:
            hint = ("; a grid narrowed on the command line or in a notebook's parameters needs a small_grid "
                    "within it, or none (an empty small_grid: every build at every point)"
                    if which == "small_grid" else "")
            raise ParameterError(f"{exp.name}: {which} must narrow the grid, but its point {outside[0]} is not "
                                 "a point of the full grid" + hint)
        if not small:
            raise ParameterError(f"{exp.name}: {which} leaves no point to measure")
    return values


TIER_BUILDS = "builds"   # a claim tier's own builds (ids and sets), beside its grid values
TIER_RUNS = "repeats"    # a claim tier's own runs (between rest_repeats and repeats)


def claim_tiers(exp: Experiment, p: dict) -> list[tuple[dict, str | None, int | None]]:
    """``claim_grid``'s tiers (:func:`gillab.measure.profiles.parse_claim_grid`), each checked as
    ``small_grid`` is, with the builds the tier alone is for (its ``builds`` key, None: those of
    ``claim_builds``) and its own runs (its ``repeats`` key, None: every repeat); the claims'
    points are their union."""
    from .profiles import parse_claim_grid

    raw = p.get("claim_grid")
    try:
        tiers = parse_claim_grid(raw)          # written, or already parsed (a list of mappings)
    except ValueError as exc:
        raise ParameterError(f"{exp.name}: parameter claim_grid={raw!r} is not valid: {exc}") from None
    out, empty = [], []
    for t in tiers:
        t = dict(t)
        b = t.pop(TIER_BUILDS, None)
        if isinstance(b, (list, tuple)):
            b = ",".join(map(str, b))
        runs = _tier_runs(exp, p, t.pop(TIER_RUNS, None))
        try:
            out.append((narrow(exp, p, t, "claim_grid"), None if b is None else str(b), runs))
        except EmptyTier as exc:
            empty.append(exc)
    if empty and not out:      # no tier holds a point: a claim grid of nothing is a mistake, not a plan
        raise ParameterError(str(empty[0]))
    return out


def _tier_runs(exp: Experiment, p: dict, raw) -> int | None:
    """A tier's own ``repeats``, checked: a whole number from ``rest_repeats`` to ``repeats``."""
    if raw is None:
        return None
    try:
        n = int(raw)
        if n != float(raw):
            raise ValueError
    except (TypeError, ValueError):
        raise ParameterError(f"{exp.name}: claim_grid's tier repeats={raw!r} is not a whole number of runs") from None
    rest = p.get("rest_repeats") or 0
    if not rest <= n <= p["repeats"]:
        raise ParameterError(f"{exp.name}: claim_grid's tier repeats={n} must lie between rest_repeats={rest} "
                             f"and repeats={p['repeats']}")
    return n


class EmptyTier(ParameterError):
    """A claim tier none of whose points is on the grid (the other tiers may still hold some)."""


def of(exp: Experiment, p: dict) -> Grid:
    """The grid of a resolved parameter set (``full_grid`` names builds through
    :func:`gillab.measure.interpreters.select`, so an unknown id is an error here)."""
    def builds(which: str) -> frozenset:
        return select_builds(exp, str(p.get(which)), which)

    tier = claim_tier(exp, p, builds)
    values = small_values(exp, p)
    text = str(p.get("full_grid") or "all")
    if not values or text.strip() == "all":
        return Grid(full_text=text, **tier)
    small = frozenset(point_key(x) for x in exp.points({**p, **values}))
    return Grid(full=builds("full_grid"), small=small, full_text=text, small_values=tuple(values.items()), **tier)


def select_builds(exp: Experiment, ids: str, what: str) -> frozenset:
    """The build ids ``ids`` names (ids and sets, :func:`gillab.measure.interpreters.select`); an unknown one
    is a ParameterError naming ``what`` named it."""
    from . import interpreters

    try:
        return frozenset(c.id for c in interpreters.select(ids))
    except interpreters.ConditionError as exc:
        raise ParameterError(f"{exp.name}: {what}: {exc}") from None


def claim_tier(exp: Experiment, p: dict, builds) -> dict:
    """``rest_repeats``, ``claim_grid`` and ``claim_builds`` checked (before anything is measured)
    and as the :class:`Grid` fields they set."""
    rest, tiers = p.get("rest_repeats"), claim_tiers(exp, p)
    text = str(p.get("claim_builds") or "all")
    if rest is None:
        if tiers or text.strip() != "all":
            raise ParameterError(f"{exp.name}: claim_grid and claim_builds choose where runs beyond rest_repeats go; "
                                 "without rest_repeats every point gets every repeat: set rest_repeats too")
        return {}
    if rest > p["repeats"]:
        raise ParameterError(f"{exp.name}: rest_repeats={rest} is more than repeats={p['repeats']}; rest_repeats is "
                             "the runs of a point no claim reads, repeats those of the claims' points")
    if p.get("max_repeats") is not None:
        raise ParameterError(f"{exp.name}: rest_repeats and max_repeats cannot be combined: give the claims' points "
                             "a fixed number of runs (repeats)")
    if not tiers and text.strip() == "all":
        raise ParameterError(f"{exp.name}: rest_repeats={rest} needs claim_grid or claim_builds: the points or "
                             "builds that get all repeats")
    per_tier = tuple((frozenset(point_key(x) for x in exp.points({**p, **t})),
                      None if b is None else select_builds(exp, b, "claim_grid's builds"), n) for t, b, n in tiers)
    return {"rest_repeats": rest,
            "claim": frozenset().union(*(pts for pts, _, _ in per_tier)) if tiers else None,
            "claim_tiers": per_tier,
            "claim_values": tuple(tuple(t.items()) + ((("builds", b),) if b is not None else ())
                                  + ((("repeats", n),) if n is not None else ()) for t, b, n in tiers),
            "claim_builds": None if text.strip() == "all" else builds("claim_builds"),
            "claim_builds_text": text}


def claims_first(g: Grid) -> Grid:
    """``g`` with the points no claim reads left out: where ``rest_repeats`` sets them apart, a
    run of this grid measures only the points its claims read (a chapter without claim tiers:
    every point); measuring ``g`` itself afterwards resumes those and adds the rest."""
    return replace(g, claims_only=True)
