"""What changed in the verdicts between one reference campaign and the next.

``data/results/REFERENCES.toml`` lists the campaigns ``data/results/REFERENCE`` has named, oldest
first, each with the day it became the reference and why (in words).  For each step from one to
the next, every judged claim x build (:func:`gillab.judge.verdicts.judged`: mechanism claims on the builds
they speak of) is judged on each campaign's own samples with this checkout's claims, bands and
statistics, and the two outcomes are set side by side: the same code reads both, so what changed
is the data.  A row is

* **the same**: one definite outcome in both (agrees, higher or lower);
* **different**: definite in both, on different sides: one of the two machines (or sittings) is
  wrong about it, or the effect moved between them;
* **open**: definite in neither, or in one only, and then **decided** (inconclusive or not
  measured before, definite now) or **no longer decided** (the reverse);
* **new** / **gone**: judged in one of the two only (a chapter, build or point one did not measure).
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass

import pandas as pd

from ..paths import results_dir
from . import across
from .across import DEFINITE

HISTORY_FILE = "REFERENCES.toml"
KINDS = ("the same", "different", "decided", "no longer decided", "open", "new", "gone")
KEY = ["experiment", "claim_id", "condition"]


class BadHistory(ValueError):
    """REFERENCES.toml that cannot be read as the reference campaigns' history."""


@dataclass(frozen=True)
class Reference:
    campaign: str
    since: str
    why: str


def history(path=None) -> list[Reference]:
    """The reference campaigns, oldest first (``data/results/REFERENCES.toml``)."""
    path = path or results_dir() / HISTORY_FILE
    if not path.is_file():
        raise BadHistory(f"{path.name}: the data folder has no such file")
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BadHistory(f"{path.name}: {exc}") from exc
    out = []
    for i, e in enumerate(data.get("reference", [])):
        missing = {"campaign", "since", "why"} - set(e)
        if missing:
            raise BadHistory(f"{path.name}: reference {i + 1} lacks {', '.join(sorted(missing))}")
        out.append(Reference(str(e["campaign"]), str(e["since"]), " ".join(str(e["why"]).split())))
    if [r.since for r in out] != sorted(r.since for r in out):
        raise BadHistory(f"{path.name}: the references are not in the order of their days")
    return out


COLUMNS = [*KEY, "outcome", "measured", "ci_low", "ci_high", "this_code"]


def judged_rows(campaign: str) -> pd.DataFrame:
    """The judged claims x builds of ``campaign`` on its own samples of `default`'s configuration:
    outcome, value and interval, and whether the samples were measured with this checkout's
    measuring code (:mod:`gillab.measure.codekey`), one row each."""
    from . import verdicts

    j = verdicts.judged(verdicts.flat(verdicts.verdicts(campaign, profile="default")))
    if j.empty:
        return pd.DataFrame(columns=COLUMNS)
    j = j.assign(this_code=across.measured_with_this_code(j))
    return j[COLUMNS].drop_duplicates(KEY).reset_index(drop=True)


def kind(before: str | float, after: str | float) -> str:
    """One row's change from ``before`` to ``after`` (outcomes, NaN where the row was not judged)."""
    if not isinstance(before, str):
        return "new"
    if not isinstance(after, str):
        return "gone"
    a, b = before in DEFINITE, after in DEFINITE
    if a and b:
        return "the same" if before == after else "different"
    return "decided" if b else "no longer decided" if a else "open"


def compare(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Every row judged in either campaign, with both outcomes and :func:`kind`."""
    both = before.merge(after, on=KEY, how="outer", suffixes=("_before", "_after"))
    both["change"] = [kind(b, a) for b, a in zip(both["outcome_before"], both["outcome_after"])]
    return both.sort_values(KEY).reset_index(drop=True)


def _order(names) -> list[str]:
    from ..measure import experiments

    known = experiments.names()
    return sorted(set(names), key=lambda n: (known.index(n) if n in known else len(known), n))


def _code(flags: pd.Series) -> str:
    """Which measuring code a chapter's rows in one campaign were measured with: this checkout's,
    other (an earlier version of the chapter's measuring code), or '-' where it judged none."""
    flags = flags.dropna()
    if flags.empty:
        return "-"
    return "this" if flags.astype(bool).all() else "other" if not flags.astype(bool).any() else "both"


def table(cmp: pd.DataFrame) -> list[str]:
    """Per chapter, how many rows of each kind and the sum; and which measuring code each
    campaign's samples of the chapter were measured with (the same code reads both: a chapter
    measured with other code before changed by its code as well as its data)."""
    head = ["chapter", *KINDS, "code before", "code after"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    counts = cmp.groupby(["experiment", "change"]).size().unstack(fill_value=0).reindex(columns=KINDS, fill_value=0)
    for name in _order(counts.index):
        g = cmp[cmp["experiment"] == name]
        rows.append(f"| `{name}` | " + " | ".join(str(int(counts.loc[name, k])) for k in KINDS)
                    + f" | {_code(g['this_code_before'])} | {_code(g['this_code_after'])} |")
    rows.append("| all | " + " | ".join(str(int(counts[k].sum())) for k in KINDS) + " | | |")
    return rows


def _cell(r, side: str) -> str:
    from .tables import estimate_text, fmt

    m, lo, hi = r[f"measured_{side}"], r[f"ci_low_{side}"], r[f"ci_high_{side}"]
    if pd.isna(lo) or pd.isna(hi):
        return f"{r[f'outcome_{side}']}: {fmt(m)}"
    return f"{r[f'outcome_{side}']}: {estimate_text(m, lo, hi, r.get(f'coverage_{side}'))}"


def different(cmp: pd.DataFrame) -> list[str]:
    """The rows definite in both on different sides, each with both values and intervals."""
    f = cmp[cmp["change"] == "different"]
    if f.empty:
        return []
    rows = ["| claim | build | before | after |", "|---|---|---|---|"]
    rows += [f"| `{r['claim_id']}` | {r['condition']} | {_cell(r, 'before')} | {_cell(r, 'after')} |"
             for _, r in f.iterrows()]
    return rows


def step(before: Reference, after: Reference, rows=judged_rows) -> str:
    """One step of the history: why the reference changed, what kind of machine each measured on,
    and the rows by kind of change, per chapter; the different rows listed."""
    from ..measure import campaigns

    loaded, missing = [], []
    for r in (before, after):
        try:
            loaded.append(campaigns.load(r.campaign))
        except campaigns.NoCampaign:
            missing.append(r.campaign)
    if missing:
        return (f"## `{after.campaign}`, the reference from {after.since}\n\nIt replaced `{before.campaign}`. "
                f"{after.why}\n\nNothing is compared here: this data folder does not hold "
                + " or ".join(f"`{m}`" for m in missing) + ".\n")
    a, b = loaded
    cmp = compare(rows(before.campaign), rows(after.campaign))
    n = cmp["change"].value_counts()
    both = int(n.get("the same", 0) + n.get("different", 0))
    machine = ("the same kind of machine" if a.fingerprint and a.fingerprint == b.fingerprint
               else f"another kind of machine (`{a.fingerprint}` before, `{b.fingerprint}` after)")
    lines = [f"## `{after.campaign}`, the reference from {after.since}", "",
             f"It replaced `{before.campaign}` (the reference from {before.since}). {after.why}", "",
             f"Both were measured on {machine}. Of the {len(cmp)} claims x builds judged in either, "
             f"{both} {'is' if both == 1 else 'are'} definite in both: {int(n.get('the same', 0))} the same, "
             f"**{int(n.get('different', 0))} different**; of the open ones, {int(n.get('decided', 0))} decided by the "
             f"new reference, {int(n.get('no longer decided', 0))} no longer decided.", "", *table(cmp), ""]
    if n.get("different", 0):
        lines += ["The rows that are different, each campaign's outcome, value and 95% interval:", "", *different(cmp),
                  ""]
    return "\n".join(lines)


def markdown(refs: list[Reference] | None = None, rows=judged_rows) -> str:
    """The appendix's text: every step of the history, newest first."""
    try:
        refs = history() if refs is None else refs
    except BadHistory as exc:
        return f"The history of the reference campaigns cannot be read here ({exc}).\n"
    if len(refs) < 2:
        return "One reference campaign so far: nothing has changed yet.\n"
    cache: dict[str, pd.DataFrame] = {}

    def cached(cid: str) -> pd.DataFrame:
        if cid not in cache:
            cache[cid] = rows(cid)
        return cache[cid]

    return "\n".join(step(refs[i - 1], refs[i], cached) for i in range(len(refs) - 1, 0, -1))
