"""Which samples a sweep measures, and which stored ones it resumes (:mod:`gillab.measure.sweep`).

A stored sample is resumed only where its *resume key* matches (the same configuration, the same
interpreter identity and the same measuring code, :mod:`gillab.measure.codekey`); a point that does
not apply to a build, or lies outside the build's grid, is left out with its reason; and where a
profile lets repeats grow, the points whose interval is still wide get another repeat
(:func:`wide_points`).
"""
from __future__ import annotations

import math

from . import codekey
from . import grid as grid_mod
from .protocol import Experiment, point_key

NOT_YET = "not measured yet in this campaign"
FAILED_BEFORE = "stored as failed: measured again"
CODE_CHANGED = "workload or harness code changed since it was measured"
INTERPRETER_CHANGED = "interpreter changed since it was measured (rebuilt, other binary or environment)"
NO_KEY = "stored without a resume key (older harness)"


def why_not_resumable(row: dict | None, ident_key: str, ckey: str, experiment: str = "") -> str | None:
    """None when a stored row can be resumed; else the reason it cannot.  A stored code key of
    the older kind counts as ``ckey`` where it stands for the same code (:func:`codekey.canonical`)."""
    if row is None:
        return NOT_YET
    stored_i, stored_c = row.get("identity_key") or "", row.get("code_key") or ""
    if not stored_i and not stored_c:
        return NO_KEY
    if stored_i != ident_key:
        return INTERPRETER_CHANGED
    if codekey.canonical(experiment, stored_c) != ckey:
        return CODE_CHANGED
    return None


def left_out(exp: Experiment, point: dict, cid: str, ident, grid: grid_mod.Grid, rep: int | None = None) -> str | None:
    """Why ``point`` is not measured under build ``cid`` (in repeat ``rep``, if given): it does not
    apply to the build (``Experiment.applies``), the build is measured on the small grid only, or
    the repeat is beyond ``rest_repeats`` at a point no claim reads; else None."""
    return exp.applies(point, ident) or grid.reason(cid, point, rep)


def plan_samples(exp: Experiment, p: dict, cids: list[str], rows: dict, failed: set, keys: dict,
                 ckey: str, idents: dict, reps=None, points=None, grid=None) -> tuple[list, int, dict, list]:
    """Every (repeat, point, condition) to measure, and why; a point that does not apply to a
    build (``Experiment.applies``), or lies outside the small grid of a build not in ``full_grid``,
    is left out, counted under its reason in ``reasons`` with the prefix "not applicable: " (and
    never in ``todo``).  ``reps`` and ``points`` default to the fixed repeats (``range(repeats)``)
    and every point; ``grid`` to the one ``p`` describes."""
    grid = grid_mod.of(exp, p) if grid is None else grid
    todo, resumable, reasons, details = [], 0, {}, []
    for rep in (range(p["repeats"]) if reps is None else reps):
        for point in (exp.points(p) if points is None else points):
            for cid in cids:
                na = left_out(exp, point, cid, idents[cid], grid, rep)
                if na:
                    why = f"not applicable: {na}"
                    reasons[why] = reasons.get(why, 0) + 1
                    continue
                k = (cid, point_key(point), rep)
                why = why_not_resumable(rows.get(k), keys.get(cid, ""), ckey, exp.name)
                if why == NOT_YET and k in failed:
                    why = FAILED_BEFORE
                if why is None:
                    resumable += 1
                    continue
                todo.append((rep, point, cid))
                reasons[why] = reasons.get(why, 0) + 1
                details.append({"condition": cid, "point": point_key(point), "repeat": rep, "reason": why})
    return todo, resumable, reasons, details


def adaptive_rounds(p: dict) -> range:
    """The repeats beyond ``repeats`` that a point may get (empty without ``max_repeats``)."""
    return range(p["repeats"], max(p["max_repeats"] or 0, p["repeats"]))


def wide_points(exp: Experiment, p: dict, cids: list[str], rows: dict, keys: dict, ckey: str,
                idents: dict, upto: int, grid=None) -> list[tuple[dict, str]]:
    """The points that need another repeat, each with why: a condition whose interval of the
    median of ``exp.adaptive_metric`` (over its resumable samples of repeats ``0 .. upto-1``) is
    not yet a 95% interval (fewer runs than :func:`gillab.stats.runs_needed`) or is wider than
    ``ci_target`` times the median on either side.  Every condition of such a point gets the
    repeat, so that repeats stay paired.  ``tests/test_coverage.py`` simulates this rule."""
    from .. import stats

    grid = grid_mod.of(exp, p) if grid is None else grid
    out = []
    for point in exp.points(p):
        pk, why = point_key(point), ""
        for cid in cids:
            if left_out(exp, point, cid, idents[cid], grid):
                continue
            vals = []
            for rep in range(upto):
                row = rows.get((cid, pk, rep))
                if row is not None and why_not_resumable(row, keys.get(cid, ""), ckey, exp.name) is None:
                    try:
                        vals.append(float(row[exp.adaptive_metric]))
                    except (KeyError, TypeError, ValueError):
                        pass
            vals = [v for v in vals if math.isfinite(v)]
            why = stats.wide(vals, p["ci_target"])
            if why:
                why = f"{cid}: {why}"
                break
        if why:
            out.append((point, why))
    return out
