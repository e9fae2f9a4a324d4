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
"""
from __future__ import annotations

from dataclasses import dataclass

from .experiment import Experiment, point_key
from .profiles import ParameterError, parse_small_grid


@dataclass(frozen=True)
class Grid:
    """The builds measured everywhere (``None``: all of them) and the point keys of the small grid
    (``None``: no small grid, every build everywhere)."""
    full: frozenset | None = None
    small: frozenset | None = None
    full_text: str = "all"
    small_values: tuple = ()

    def reason(self, cid: str, point: dict) -> str | None:
        """None where ``cid`` is measured at ``point``; else why not."""
        if self.small is None or self.full is None or cid in self.full:
            return None
        if point_key(point) in self.small:
            return None
        return f"outside the small grid ({self.describe_small()}; full grid: {self.full_text})"

    def describe_small(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.small_values)


def small_values(exp: Experiment, p: dict) -> dict:
    """``small_grid`` parsed with the experiment's own parameter checks, and checked to narrow the
    grid (a ParameterError otherwise, before anything is measured)."""
    try:
        raw = parse_small_grid(p.get("small_grid"))
    except ValueError as exc:
        raise ParameterError(f"{exp.name}: parameter small_grid={p.get('small_grid')!r} is not valid: {exc}") from None
    values = {}
    full = [point_key(x) for x in exp.points(p)]
    for name, v in raw.items():
        if name not in exp.params:
            raise ParameterError(f"{exp.name}: small_grid names {name!r}, which is not one of its parameters "
                                 f"({', '.join(sorted(exp.params))})")
        try:
            values[name] = exp.params[name].parse(v)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"{exp.name}: small_grid {name}={v!r} is not valid: {exc} "
                                 f"({exp.params[name].help})") from None
        if values[name] != p[name] and [point_key(x) for x in exp.points({**p, name: values[name]})] == full:
            raise ParameterError(f"{exp.name}: small_grid names {name!r}, which does not choose the points of the "
                                 "grid (it sets what a sample is); small_grid may only narrow the grid")
    if values:
        small = [point_key(x) for x in exp.points({**p, **values})]
        outside = [k for k in small if k not in full]
        if outside:
            raise ParameterError(f"{exp.name}: small_grid must narrow the grid, but its point {outside[0]} is not "
                                 "a point of the full grid")
        if not small:
            raise ParameterError(f"{exp.name}: small_grid leaves no point to measure")
    return values


def of(exp: Experiment, p: dict) -> Grid:
    """The grid of a resolved parameter set (``full_grid`` names builds through
    :func:`gillab.interpreters.select`, so an unknown id is an error here)."""
    from . import interpreters

    values = small_values(exp, p)
    text = str(p.get("full_grid") or "all")
    if not values or text.strip() == "all":
        return Grid(full_text=text)
    try:
        full = frozenset(c.id for c in interpreters.select(text))
    except interpreters.ConditionError as exc:
        raise ParameterError(f"{exp.name}: full_grid: {exc}") from None
    small = frozenset(point_key(x) for x in exp.points({**p, **values}))
    return Grid(full=full, small=small, full_text=text, small_values=tuple(values.items()))
