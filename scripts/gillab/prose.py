"""Sentences about results that the data must bear out.

A chapter's prose about its own results is a list of :class:`Check`: the sentence, whether the
data shown bear it out, and the evidence (numbers computed from the same data).  A sentence the
data still bear out is printed with its evidence; one they no longer bear out (a reader's rerun
on another machine, or new reference data) is struck through and marked "no longer true on this
run", with the evidence.  The test suite runs every chapter's checks on the committed reference
data and fails if any of them is false there.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    text: str          # the sentence, Markdown
    holds: bool        # whether the data bear it out
    evidence: str      # the numbers behind it, computed from the data
    why: str = ""      # what explains it (not a measurement: the mechanism, the setup)


NOT_TRUE = "No longer true on this run"


def ok_rows(df):
    """The samples that measured something (a synthetic frame without a status: all of them)."""
    return df[df["status"] == "ok"] if "status" in df else df


def gil_by_condition(df) -> dict:
    """condition -> whether its GIL was on at run time in every sample (as each sample recorded)."""
    return ok_rows(df).groupby("condition")["gil_enabled"].apply(
        lambda v: bool(v.fillna(False).astype(bool).all())).to_dict()


def measured(pairs: dict) -> dict:
    """The entries of ``pairs`` (key -> values) whose every value was measured, not NaN: where a
    profile's small grid leaves a build out at a point, a sentence about "every build" reads the
    builds measured there."""
    import math

    return {k: v for k, v in pairs.items() if not any(map(math.isnan, v))}


def markdown(checks: list[Check]) -> str:
    """One bullet per check: the sentence and its evidence, or struck through and marked."""
    if not checks:
        return ""
    lines = []
    for c in checks:
        tail = f" {c.why}" if c.why else ""
        if c.holds:
            lines.append(f"- {c.text} ({c.evidence}).{tail}")
        else:
            lines.append(f"- ~~{c.text}~~ **{NOT_TRUE}:** {c.evidence}.")
    return "\n".join(lines)


def cores_of(df, experiment: str) -> int | None:
    """The number of CPUs of the machine that measured ``df`` (its runs' machine record), not of
    the machine reading it."""
    from . import results

    try:
        counts = {r["machine"].get("cpu_count") for r in results.runs(experiment, df.attrs.get("campaign"))}
    except Exception:   # no run files (a synthetic frame): unknown
        return None
    counts.discard(None)
    return counts.pop() if len(counts) == 1 else None
