"""How the stall chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.stall`)."""
from __future__ import annotations

import pandas as pd

from ..judge.analysis import ModuleAnalysis, frame_cached
from ..judge.prose import words as chapter_words
from . import doc003


def published() -> pd.DataFrame:
    return doc003.published("stall")


def published_table() -> pd.DataFrame:
    return doc003.inline_table("stall")


def per_run(df: pd.DataFrame) -> pd.DataFrame:
    """One row per run; the SIGINT runs get ``interrupt_wait``: (time from the signal to the
    KeyboardInterrupt) / (time the 'in' still had to run), the latter from the same repeat's run
    without a signal; the signal's time is when it was sent where the run recorded it, else the
    delay asked."""
    d = df.copy()
    d["signal"] = d["signal"].astype(str).str.lower().eq("true")
    # the same round of the same sweep: frames holding several sweeps (or configurations) repeat
    # a (condition, n, repeat), and a run is paired with its own round's plain run only
    keys = ["condition", "n", "repeat", *(["config", "run_id"] if {"config", "run_id"} <= set(d.columns) else [])]
    plain = d[~d["signal"]].drop_duplicates(keys, keep="last").set_index(keys)["in_s"]
    rows = []
    for _, r in d.iterrows():
        row = {"condition": r["condition"], "n": int(r["n"]), "repeat": r["repeat"], "signal": bool(r["signal"]),
               "in_s": r["in_s"], "longest_gap_s": r["longest_gap_s"], "beats_during": r["beats_during"],
               "point": "sigint" if r["signal"] else "no signal"}
        if r["signal"]:
            full = plain.get(tuple(r[k] for k in keys))
            after = float(r["sigint_after_s"])
            if pd.notna(r.get("sigint_sent_s", float("nan"))):   # when it was sent, where the run recorded it
                after = float(r["sigint_sent_s"])
            if pd.notna(r.get("interrupt_s")) and full is not None and full > after:
                row["interrupt_wait"] = (float(r["interrupt_s"]) - after) / (full - after)
            row["interrupt_s"] = r.get("interrupt_s")
        else:
            row["silent_fraction"] = r["silent_fraction"]
        rows.append(row)
    return pd.DataFrame(rows)


@frame_cached
def summary(df: pd.DataFrame) -> pd.DataFrame:
    runs = per_run(df)
    big = runs[runs["n"] == runs["n"].max()]
    return doc003.summarize_runs(big, ["condition", "point"], ("silent_fraction", "interrupt_wait", "in_s",
                                                               "longest_gap_s"))


def claims(df: pd.DataFrame) -> list[dict]:
    return doc003.claims(summary(df), "stall")


def side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    return doc003.side_by_side(summary(df), "stall")


def figure(df: pd.DataFrame):
    """Per size: how long the 'in' took and the longest heartbeat gap inside it (every run);
    on the diagonal the heartbeat was silent for all of it."""
    import matplotlib.pyplot as plt

    from ..present import plots

    runs = per_run(df)
    plain = runs[~runs["signal"]]
    pal = plots.palette(df["condition"].unique())
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for c, g in plain.groupby("condition"):
        ax.scatter(g["in_s"], g["longest_gap_s"], color=pal[c], label=c, s=25, alpha=0.8)
    top = float(plain["in_s"].max()) * 1.1 if len(plain) else 1
    ax.plot([0, top], [0, top], color="0.5", linestyle="--", linewidth=1, label="silent throughout")
    hb = float(df["heartbeat_s"].iloc[0]) if "heartbeat_s" in df else None
    if hb:
        ax.axhline(hb, color="0.7", linestyle=":", linewidth=1, label=f"heartbeat period {hb:g} s")
    ax.set_xlabel("time of 'spam' in range(n), s")
    ax.set_ylabel("longest heartbeat gap inside it, s")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.legend(fontsize=8.5)
    ax.set_title("The 'in' against the longest heartbeat gap inside it (every run)", fontsize=10)
    fig.tight_layout()
    return fig


def findings(df: pd.DataFrame) -> str:
    runs = per_run(df)
    n = runs["n"].max()
    lines = []
    for cond, g in runs[runs["n"] == n].groupby("condition", sort=True):
        p, s = g[~g["signal"]], g[g["signal"]]
        parts = [f"`'spam' in range({n:,})` takes {p['in_s'].median():.2f} s and the heartbeat's longest gap is "
                 f"{p['longest_gap_s'].median():.2f} s ({p['beats_during'].median():.0f} beats inside it)"]
        if "interrupt_wait" in s and s["interrupt_wait"].notna().any():
            parts.append(f"a SIGINT waits {s['interrupt_wait'].median():.0%} of the time the 'in' had left")
        lines.append(f"- **{cond}**: " + "; ".join(parts) + ".")
    return "\n".join(lines)


def prose(df: pd.DataFrame) -> list:
    """The chapter's sentences about what the free-threaded builds change, each checked against
    ``df``: each share is the claims' (:func:`summary`: at the largest size, the median over runs
    with its interval over runs), and a sentence holds only where its whole 95% interval says it.
    Their words are the chapter's text's (``notebooks/14_stall.md``); a sentence that says what a
    claim says reads the claim's line (claims.csv): "silent for the whole scan" is stall-silent's
    "completely", "Ctrl-C waits for the scan" stall-ctrl-c's line half-way, never a line of its own."""
    from .. import stats
    from ..judge import claims
    from ..judge.prose import at_least, gil_by_condition, listed, settle

    said = chapter_words("stall")     # the words cell of its text

    s = summary(df)
    if not len(s):
        return []
    gil_on = gil_by_condition(df)

    def got(point, st):
        """Per build: ``st`` at ``point``, the median over runs with its interval and n."""
        g = s[(s["point"] == point) & (s["statistic"] == st)]
        return {r.condition: {"median": r.median, "ci_lo": r.ci_lo, "ci_hi": r.ci_hi, "n": int(r.runs),
                              "method": stats.MEDIAN} for r in g.itertuples()}
    how = said["median-over-runs"]
    whole, late = claims.value("stall/stall-silent"), claims.value("stall/stall-ctrl-c")
    silent = got("no signal", "silent_fraction")
    out = []
    with_gil = {c: m for c, m in silent.items() if gil_on.get(c)}
    without = {c: m for c, m in silent.items() if gil_on.get(c) is False}
    if with_gil:
        out.append(said.check(
            "gil-heartbeat-silent-for-the-scan",
            at_least(with_gil.values(), whole),
            listed(said.fill("silent-share-evidence", how=how, line=f"{whole:.0%}"), with_gil.items(), ".0%")))
    if without:
        out.append(said.check(
            "free-threaded-heartbeat-runs",
            settle(without.values(), lambda lo, hi: hi < whole, lambda lo, hi: lo >= whole),
            listed(said.fill("silent-share-evidence", how=how, line=f"{whole:.0%}"), without.items(), ".0%")))
    wait = got("sigint", "interrupt_wait")
    if wait:
        out.append(said.check(
            "ctrl-c-waits-for-the-scan",
            at_least(wait.values(), late),
            listed(said.fill("sigint-wait-evidence", how=how, line=f"{late:.0%}"), wait.items(), ".0%"),
            why=said["why-a-signal-waits-for-the-scan"]))
    return out


def explorer(df: pd.DataFrame):
    """Kernel-free: the heartbeat gap or the time of the 'in', slide over the sizes."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..present import plots, widgets

    runs = per_run(df)
    plain = runs[~runs["signal"]]
    pal = plots.palette(df["condition"].unique())
    ns = sorted(plain["n"].unique()) or [0]
    views = ["longest_gap_s", "in_s"]
    labels = ["longest heartbeat gap (s)", "time of the 'in' (s)"]

    def draw(view, n):
        fig, ax = plt.subplots(figsize=(7, 3.2))
        g = plain[plain["n"] == n]
        if len(g):
            sns.stripplot(data=g, x="condition", y=view, hue="condition", palette=pal, ax=ax, size=6, legend=False)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(labels[views.index(view)])
        ax.set_xlabel("")
        ax.set_title(f"'spam' in range({n:,}): every run", fontsize=10)
        return fig

    return widgets.stack_explorer(draw, ("view", views, labels), ("n", ns, [f"{n:,}" for n in ns]),
                                  title="Explore the stall")


# the sentences the book's first screen shows, by their words' keys (notebooks/14_stall.md)
HEADLINE = ("free-threaded-heartbeat-runs",)

ANALYSIS = ModuleAnalysis(__name__)
