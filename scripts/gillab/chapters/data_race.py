"""How the data_race chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.data_race`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..judge import results
from .. import stats
from ..judge.analysis import ModuleAnalysis, frame_cached
from ..judge.prose import words as chapter_words
from ..judge.tables import estimate_over_runs
from .echo import inline_row


def _label(df: pd.DataFrame) -> pd.Series:
    return df["switch_interval_runtime"].map(lambda x: f"{x:g} s")


@frame_cached
def summary(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (cond, si, n, t), g in df.groupby(["condition", "switch_interval_runtime", "iterations", "threads"], sort=True):
        s = stats.summarize(g["lost"])
        rows.append({"condition": cond, "switch_interval": si, "iterations": int(n), "threads": int(t),
                     "runs": s["n"], "runs_with_lost_updates": int((g["lost"] > 0).sum()),
                     "lost_median": s["median"], "lost_ci_lo": s["ci_lo"], "lost_ci_hi": s["ci_hi"],
                     "lost_max": float(g["lost"].max()), "expected": int(g["expected"].iloc[0]),
                     "lost_fraction_median": float(g["lost_fraction"].median())})
    return pd.DataFrame(rows)


_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000}


def _inline_value(inline: pd.DataFrame, scenario: str) -> float:
    """A value of the document's in-text numbers, in seconds, by the start of its scenario."""
    row = inline_row(inline, scenario)
    return float(row["value"]) / _PER_SECOND[row["unit"]]


def claims(df: pd.DataFrame) -> list[dict]:
    """The claim of claims.csv: the race itself (at least one run, at the document's interval and
    1000 increments per thread, loses updates).  The default switch interval is context (every
    sample reads it back; judging it compared a setting with itself), as is the smallest."""
    from ..judge import claims as published_claims

    conds = sorted(df["condition"].unique())
    out = []

    def row(claim_id, claim, measured, published_as):
        c = published_claims.get(claim_id)
        out.append({"experiment": "data_race", "table": "pbts13_t6_echo_inline_numbers", "claim_id": claim_id,
                    "claim": claim, "published": c["published"], "unit": c["unit"], "measured": measured,
                    "published_as": published_as, "band": published_claims.band(claim_id)})

    cid = "data_race/lost_updates"
    tiny = _at_claim(df)
    measured = {}
    for cond in conds:
        g = tiny[tiny["condition"] == cond]
        if len(g):
            lost_runs = int((g["lost"] > 0).sum())
            # the share of runs that lost updates, with its exact interval: many runs that lose
            # none put its upper end below the demonstration's line, a few that do put its lower
            # end above it
            lo, hi = stats.proportion_interval(lost_runs, len(g))
            r = {"ci_lo": lo, "ci_hi": hi, "n": int(len(g)), "method": stats.PROPORTION}
            measured[cond] = published_claims.judged(
                cid, lost_runs / len(g), r, best=lost_runs / len(g),
                note=f"lost updates in {lost_runs} of {len(g)} runs ({lost_runs / len(g):.0%}); "
                     f"lost per run {g['lost'].min():,.0f} to {g['lost'].max():,.0f}")
    row(cid, "f() (1000 x sum += 1) in several threads at the document's smallest interval: the share of runs that "
        "lose updates",
        measured, "a race is shown; no count published")
    return out


def _at_claim(df: pd.DataFrame) -> pd.DataFrame:
    """The samples the claim reads: the document's smallest interval, 1000 increments per thread."""
    inline = results.reference("pbts13_t6_echo_inline_numbers")
    tiny = df[np.isclose(df["switch_interval"].fillna(-1.0), _inline_value(inline, "data-race demo"))]
    return tiny[tiny["iterations"] == 1000]


@frame_cached
def settings_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per build, interval asked and threads: what the interval achieved while the threads raced
    (the GIL's hand-offs in a run, median and range over runs, where the build keeps the count),
    the timer slack its threads had, and whether the interval was in force
    (:mod:`gillab.judge.slack`; the default interval is always), as the page shows it."""
    from ..judge import slack
    from ..judge.tables import settings_view
    from ..judge.prose import gil_by_condition

    if df.empty:
        return pd.DataFrame()
    gil_on = gil_by_condition(df) if "gil_enabled" in df.columns else {}
    rows = []
    for (cond, si, n, t), g in df.groupby(["condition", "switch_interval", "iterations", "threads"], sort=True,
                                          dropna=False):
        sw = pd.to_numeric(g["gil_switches"], errors="coerce").dropna() if "gil_switches" in g.columns else pd.Series()
        why = slack.stretched(g, float(si)) if gil_on.get(cond, True) and not pd.isna(si) else None
        rows.append({"condition": cond, "switch interval": "default" if pd.isna(si) else f"{si:g} s",
                     "iterations": int(n), "threads": int(t), "runs": len(g),
                     "hand-offs in a run": (f"{sw.median():,.0f} ({sw.min():,.0f} to {sw.max():,.0f})" if len(sw)
                                            else "not counted"),
                     "slack in force (ns)": slack.in_force_ns(g),
                     "runs with a lost update": int((g["lost"] > 0).sum()),
                     "in force": why is None, "why": why or ""})
    return settings_view(pd.DataFrame(rows))


def settings_in_force(df: pd.DataFrame, rows: list[dict]) -> list[tuple[str, str]]:
    """The claim, on a build with a GIL whose threads raced with a timer slack longer than the
    document's 1 us interval (:mod:`gillab.judge.slack`), reads "not in force here" with the
    slack they had: every wait for the GIL then ends about the slack late, and the race the
    document sets up with its interval is not the one run.  Returns the (claim, condition) pairs."""
    from ..judge import claims as published_claims
    from ..judge import slack
    from ..judge.prose import gil_by_condition

    if df.empty:
        return []
    gil_on = gil_by_condition(df) if "gil_enabled" in df.columns else {}
    tiny = _at_claim(df)

    def reasons(claim_id, _sels, cond):
        g = tiny[tiny["condition"] == cond]
        if claim_id != "data_race/lost_updates" or not gil_on.get(cond, True) or g.empty:
            return []
        why = slack.stretched(g, float(g["switch_interval"].iloc[0]))
        return [why] if why else []

    return published_claims.mark_not_in_force(rows, reasons)


def prose(df: pd.DataFrame) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``; their words are
    the chapter's text's (``notebooks/06_data_race.md``)."""
    from ..judge.prose import gil_by_condition, ok_rows

    said = chapter_words("data_race")     # the words cell of its text

    ok = ok_rows(df)
    gil_on = gil_by_condition(df)

    def tallied(conds, every):
        """Whether every build of ``conds`` lost updates (``every``) or none did, and the evidence:
        per build, the runs that lost updates, per loop size (the document's f() is 1,000
        iterations) and switch interval, where a build's runs differ by grid."""
        parts, lost_any = [], {}
        for c in conds:
            g = ok[ok["condition"] == c]
            lost_any[c] = int((g["lost"] > 0).sum())
            where = [said.fill("iterations-at-default-interval-lost", iterations=f"{int(it):,}",
                               lost=int((x["lost"] > 0).sum()), runs=len(x)) if pd.isna(si) else
                     said.fill("iterations-at-interval-lost", iterations=f"{int(it):,}", interval=f"{si:g}",
                               lost=int((x["lost"] > 0).sum()), runs=len(x))
                     for (it, si), x in g.groupby(["iterations", "switch_interval"], dropna=False)]
            parts.append(said.fill("build-runs-lost-updates", build=c, lost=lost_any[c], runs=len(g),
                                   where="; ".join(where)))
        holds = all(lost_any.values()) if every else not any(lost_any.values())
        return {"holds": holds}, "; ".join(parts)

    conds = sorted(ok["condition"].unique())
    out = []
    if builds := [c for c in conds if gil_on.get(c) and c.startswith("3.13")]:
        out.append(said.check("gil-3-13-loses-no-update", *tallied(builds, every=False),
                              why=said["why-3-10-and-later-never-switch-mid-update"]))
    if builds := [c for c in conds if gil_on.get(c) and c.startswith("3.9")]:
        out.append(said.check("gil-3-9-loses-updates", *tallied(builds, every=True),
                              why=said["why-3-9-can-switch-mid-update"]))
    if builds := [c for c in conds if not gil_on.get(c, True)]:
        out.append(said.check("free-threaded-loses-updates", *tallied(builds, every=True),
                              why=said["why-threads-without-a-gil-race"]))
    if builds := [c for c in conds if gil_on.get(c) and c.endswith("-gil")]:
        out.append(said.check("gil-back-on-loses-no-update", *tallied(builds, every=False)))
    return out


def side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    s = summary(df)
    out = s.assign(**{"switch interval": s["switch_interval"].map(lambda x: f"{x:g} s")})
    out["lost updates: median [interval], max"] = out.apply(
        lambda r: estimate_over_runs(r.lost_median, r.lost_ci_lo, r.lost_ci_hi, r.runs)
        + (f", max {r.lost_max:,.0f}" if r.runs > 1 else ""), axis=1)
    out["runs with a lost update"] = out.apply(lambda r: f"{r.runs_with_lost_updates} of {r.runs}", axis=1)
    return out[["condition", "switch interval", "iterations", "threads", "expected",
                "lost updates: median [interval], max", "runs with a lost update"]]


def findings(df: pd.DataFrame) -> str:
    s = summary(df)
    lines = []
    for cond, g in s.groupby("condition"):
        total = int(g["runs"].sum())
        with_lost = int(g["runs_with_lost_updates"].sum())
        worst = g.sort_values("lost_fraction_median").iloc[-1]
        lines.append(f"- **{cond}**: lost updates in {with_lost} of {total} runs; the worst point "
                     f"({int(worst.threads)} threads x {int(worst.iterations):,}, interval {worst.switch_interval:g} s) "
                     + (f"lost a median of {worst.lost_fraction_median:.1%} of its increments over {int(worst.runs)} runs."
                        if worst.runs > 1 else f"lost {worst.lost_fraction_median:.1%} of its increments in its one run."))
    return "\n".join(lines)


def figure(df: pd.DataFrame):
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..present import plots

    d = df.assign(interval=_label(df), lost_pct=df["lost_fraction"] * 100)
    its = sorted(d["iterations"].unique())
    pal = plots.palette(d["condition"].unique())
    fig, axes = plt.subplots(len(its), 1, figsize=(8, 3.6 * len(its)), squeeze=False)
    for ax, n in zip(axes[:, 0], its):
        g = d[d["iterations"] == n]
        sns.stripplot(data=g, x="threads", y="lost_pct", hue="condition", hue_order=sorted(pal), palette=pal,
                      dodge=True, ax=ax, size=4, jitter=0.2, alpha=0.7)
        ax.set_ylabel("lost updates, % of increments")
        ax.set_title(f"{n:,} increments per thread: every run (both intervals)", fontsize=10)
        ax.legend(fontsize=8.5, title="condition", title_fontsize=8.5)
    fig.tight_layout()
    return fig


def explorer(df: pd.DataFrame):
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..present import plots, widgets

    d = df.assign(interval=_label(df), lost_pct=df["lost_fraction"] * 100)
    pal = plots.palette(d["condition"].unique())
    conds = sorted(pal)
    its = sorted(d["iterations"].unique())
    intervals = sorted(d["interval"].unique())
    ymax = max(float(d["lost_pct"].max()) * 1.1, 1.0)

    def draw(interval, n):
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        g = d[(d["interval"] == interval) & (d["iterations"] == n)]
        sns.stripplot(data=g, x="threads", y="lost_pct", hue="condition", hue_order=conds, palette=pal,
                      dodge=True, ax=ax, size=5, jitter=0.2)
        ax.set_ylim(-0.02 * ymax, ymax)
        ax.set_ylabel("lost updates, %")
        ax.set_title(f"interval {interval}, {n:,} increments per thread: every run", fontsize=10)
        ax.legend(fontsize=8.5)
        return fig

    return widgets.stack_explorer(draw, ("switch interval", intervals, intervals),
                                  ("increments per thread", its, [f"{n:,}" for n in its]),
                                  title="Explore every run")


def published_table() -> pd.DataFrame:
    """The document's in-text numbers about the data race (three lines of pbts13_t6)."""
    inline = results.reference("pbts13_t6_echo_inline_numbers")
    return inline[inline["scenario"].str.contains("switch interval|data-race")].drop(columns=["source"])


# the sentences the book's first screen shows, by their words' keys (notebooks/06_data_race.md)
HEADLINE = ("gil-3-9-loses-updates", "gil-3-13-loses-no-update", "free-threaded-loses-updates")

ANALYSIS = ModuleAnalysis(__name__, extras=('settings_table',))
