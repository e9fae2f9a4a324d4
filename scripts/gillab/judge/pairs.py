"""Two campaigns' outcomes for one claim x build, compared: the one vocabulary (*the same*,
*different*, *open*) of every page that sets campaigns side by side (the first screen, the verdicts
page, the machines page).  Nothing here reads data: :mod:`gillab.judge.verdicts`,
:mod:`gillab.judge.tables` and :mod:`gillab.judge.across` all count with it.
"""
from __future__ import annotations

import pandas as pd

DEFINITE = ("agrees", "higher", "lower")

# Two campaigns' outcomes for one claim x build, compared (:func:`pair_outcome`): the one
# vocabulary of every page that sets campaigns side by side.
SAME, DIFFERENT, OPEN = "the same", "different", "open"
NOT_BOTH = "not judged in both"
JUDGED = (*DEFINITE, "inconclusive")        # an outcome of a judgement (not "not measured", "not testable here")
PAIR_OUTCOMES = (SAME, DIFFERENT, OPEN)
PAIR_WORDS = {SAME: "the same (one definite outcome in both)",
              DIFFERENT: "different (definite in both, on different sides)",
              OPEN: "open (inconclusive in one or both)"}


def outcomes_compared(outcomes) -> str:
    """Several campaigns' outcomes for one claim x build, compared: *the same* where every one
    is definite (agrees, higher, lower: :data:`DEFINITE`) and they are equal; *different* where
    two are definite and not equal (whatever the others are: two campaigns contradict each
    other); *open* where one or more is inconclusive and no two definite ones differ;
    :data:`NOT_BOTH` where fewer than two campaigns judged it (an outcome other than
    :data:`JUDGED`, e.g. "not measured", is no judgement and is left out)."""
    judged = [o for o in outcomes if o in JUDGED]
    if len(judged) < 2:
        return NOT_BOTH
    definite = {o for o in judged if o in DEFINITE}
    if len(definite) > 1:
        return DIFFERENT
    if len(definite) == 1 and all(o in DEFINITE for o in judged):
        return SAME
    return OPEN


def pair_outcome(a: str, b: str) -> str:
    """Two campaigns' outcomes for one claim x build: "the same" (both definite, equal),
    "different" (both definite, not equal), "open" (inconclusive in one or both), or
    "not judged in both" (one of them has no judgement: not counted)."""
    return outcomes_compared([a, b])


def pair_counts(pairs, a: str | None = None, b: str | None = None) -> dict[str, int]:
    """Pairs of outcomes counted: ``{"both": n, "the same": n, "different": n, "open": n}``, where
    *both* is the pairs judged in both (the sum of the other three); a pair not judged in both is
    not counted.  ``pairs``: (a, b) tuples, or a frame whose columns ``a`` and ``b`` hold the two
    outcomes; a frame with a column of :func:`pair_outcome`'s words is counted with ``a`` naming
    it and ``b`` None."""
    if isinstance(pairs, pd.DataFrame):
        words = list(pairs[a]) if b is None else [pair_outcome(x, y) for x, y in zip(pairs[a], pairs[b])]
    else:
        words = [pair_outcome(x, y) for x, y in pairs]
    out = {k: sum(1 for w in words if w == k) for k in PAIR_OUTCOMES}
    return {"both": sum(out.values()), **out}


def beside(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Two campaigns' flat verdict rows (:func:`gillab.judge.verdicts.flat`, e.g. their headlines,
    :func:`gillab.judge.verdicts.headline`) claim x condition by claim x condition, for the rows
    both hold: ``claim_id``, ``condition``, the outcomes ``a`` and ``b``, and ``compared``
    (:func:`pair_outcome`); count it with ``pair_counts(frame, "compared")``."""
    keys = ["claim_id", "condition"]

    def outcomes(flat: pd.DataFrame, name: str) -> pd.DataFrame:
        if flat.empty:
            return pd.DataFrame(columns=[*keys, name])
        f = flat[flat["condition"] != "-"].drop_duplicates(keys)
        return f[[*keys, "outcome"]].rename(columns={"outcome": name})
    out = outcomes(a, "a").merge(outcomes(b, "b"), on=keys, how="inner")
    out["compared"] = [pair_outcome(p, q) for p, q in zip(out["a"], out["b"])]
    return out


def counts_sentence(c: dict[str, int], what: str = "claims x builds", where: str = "in both",
                    some: str = "one or both") -> str:
    """:func:`pair_counts` in words: 'of **60** claims x builds judged in both, **50** the same,
    **2** different, **8** open (inconclusive in one or both)' (Markdown)."""
    return (f"of **{c['both']}** {what} judged {where}, **{c[SAME]}** the same, **{c[DIFFERENT]}** different, "
            f"**{c[OPEN]}** open (inconclusive in {some})")


def judged_rows(table: list[dict]) -> list[dict]:
    """The rows of :func:`gillab.judge.across.rows` whose claim is judged (its ``role`` in
    claims.csv: a mechanism on the builds it speaks of), not a machine row or another build's
    finding: what every count of campaigns side by side reads."""
    return [r for r in table if r.get("claim_role", "judged") == "judged"]


def paired(table: list[dict], base: str, other: str, this_code: bool | None = True) -> list[tuple[dict, dict]]:
    """The claim x condition rows of :func:`gillab.judge.across.rows` judged in both ``base`` and ``other``: (base's
    entry, other's entry) per row.  ``this_code``: True, only rows both measured with this
    checkout's measuring code (what every count reads); False, only the others (one of the two
    measured with other code: shown, not counted); None, all."""
    out = []
    for r in table:
        a, b = r["campaigns"].get(base), r["campaigns"].get(other)
        if not (a and b) or pair_outcome(a["outcome"], b["outcome"]) == NOT_BOTH:
            continue
        ours = a["measured_with_this_code"] and b["measured_with_this_code"]
        if this_code is None or ours == this_code:
            out.append((a, b))
    return out
