"""Figures: seaborn on tidy samples, every point with its uncertainty and its raw samples.

Why it is long: the helpers every chapter draws with (the palette, intervals, weak bars, the
published lines, shared axes) and the figures that set campaigns side by side live together, so
that one build has one colour and one interval one look across the book."""
from __future__ import annotations

import contextlib
import io

import matplotlib.pyplot as plt
from matplotlib.ticker import NullLocator
import numpy as np
import pandas as pd
import seaborn as sns

PUBLISHED_STYLE = dict(color="black", marker="D", linestyle="--", linewidth=1.2, markersize=6,
                       zorder=5)


def setup() -> None:
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 100, "figure.autolayout": False})


@contextlib.contextmanager
def steady_jitter(seed: int = 0):
    """Draw with numpy's global generator seeded (seaborn's strip plots jitter their dots with it),
    so that a figure drawn again from the same samples is the same image; the generator's state
    is given back after."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


# One colour per build across the book, whatever else a figure shows: the builds most pages draw
# (today's pair and its GIL twin, the documents' own, the retired builds the older campaigns hold,
# Debian's) each in a colour of its own, the colour-blind palette's first; the version chart's
# releases in a ramp of their own, oldest lightest; anything else (a reader's own build, an
# observer, a tool) a colour of a further list, chosen by its name alone.
MAIN_BUILDS = ("3.13.5", "3.13.5t", "3.13.5t-gil", "3.9.2", "2.7.18", "3.11.2", "debian-3.14", "debian-3.15",
               "debian-3.13.5", "3.9.10", "nogil-3.9.10", "nogil-3.9.10-gil")
_CB = sns.color_palette("colorblind", 10)
# the builds a chapter about the GIL draws side by side (its document's own, today's trio, Debian's
# three) at least 25 apart in CIELAB (tests/test_palette.py): 3.9.2 in dark red, not the palette's
# vermilion (read as 3.13.5t's orange); Debian's 3.14 in olive, not light pink (read as 2.7.18's
# pink); Debian's 3.13.5 in sky blue beside our 3.13.5's blue
MAIN_COLOURS = (*_CB[:3], (0.6, 0.15, 0.1), _CB[4], _CB[5], (0.42, 0.43, 0.0), _CB[7], _CB[9], _CB[8],
                (0.13, 0.13, 0.13), _CB[6])
HISTORY_BUILDS = ("3.6.12", "bytedeco-3.7.9", "3.7.9", "3.8.7", "bytedeco-3.9.6", "3.10.0", "bytedeco-3.10.8",
                  "bytedeco-3.11.3", "pyenv-3.11.7")
HISTORY_COLOURS = tuple(sns.color_palette("flare", len(HISTORY_BUILDS)))
OTHER_COLOURS = tuple(sns.color_palette("tab20b", 20))


def colour_of(condition: str) -> tuple:
    """The one colour of ``condition`` in every figure of the book (:data:`MAIN_BUILDS`,
    :data:`HISTORY_BUILDS`, else by its name)."""
    import zlib

    c = str(condition)
    if c in MAIN_BUILDS:
        return MAIN_COLOURS[MAIN_BUILDS.index(c)]
    if c in HISTORY_BUILDS:
        return HISTORY_COLOURS[HISTORY_BUILDS.index(c)]
    return OTHER_COLOURS[zlib.crc32(c.encode()) % len(OTHER_COLOURS)]


def palette(conditions) -> dict:
    """Each condition's one colour (:func:`colour_of`): a build is drawn in the same colour in
    every figure of the book, whichever builds stand beside it."""
    return {c: colour_of(c) for c in sorted(conditions)}


def median_with_ci(ax, df: pd.DataFrame, x: str, y: str, hue: str, pal: dict, dodge: float = 0.25,
                   join: bool = True):
    """Raw samples as small dots, the median with its interval as a bar
    (:func:`gillab.stats.median_interval`: 95% once there are runs enough, the range before), per hue; ``join``
    draws lines between the x values (only where x is ordered, e.g. thread counts).  The CIs are
    :func:`gillab.stats.summarize`'s, the same as in the chapter's tables.  A bar that is not a
    95% interval (too few runs: the range of the runs) is dashed, and the axes say so once.  With
    one condition there is nothing to dodge."""
    from .. import stats

    hues = sorted(pal)
    if len(hues) < 2:
        dodge = 0
    levels = sorted(df[x].unique())
    # the dots in the order the bars are drawn in (seaborn orders strings as they first appear)
    sns.stripplot(data=df, x=x, y=y, hue=hue, palette=pal, dodge=dodge > 0, alpha=0.35, size=3.5,
                  jitter=0.12, ax=ax, legend=False, hue_order=hues, order=levels, native_scale=False)
    # each condition at the centre of its dodged column of dots (seaborn splits 0.8 of a category)
    n = len(hues)
    offsets = (np.arange(n) + 0.5) * 0.8 / n - 0.4 if dodge else np.zeros(n)
    for off, h in zip(offsets, hues):
        g = df[df[hue] == h]
        pos, med, lo, hi, weak = [], [], [], [], []
        for i, level in enumerate(levels):
            vals = g.loc[g[x] == level, y].dropna()
            if not len(vals):
                continue
            s = stats.summarize(vals)
            pos.append(i + off)
            med.append(s["median"])
            lo.append(s["median"] - s["ci_lo"])
            hi.append(s["ci_hi"] - s["median"])
            weak.append(not stats.conclusive(stats.MEDIAN, s["n"]))
        if pos:
            _, _, bars = ax.errorbar(pos, med, yerr=[lo, hi], fmt="o-" if join else "o", color=pal[h], capsize=3,
                                     elinewidth=1.5, markersize=6, label=h)
            mark_weak(ax, bars, weak)


WEAK_STYLE = (0, (2, 2))      # a bar that is the range of too few runs, not a 95% interval
WEAK_NOTE = "dashed bar: the range of fewer runs than a 95% interval needs"


def mark_weak(ax, bars, weak: list[bool]) -> None:
    """Dash the error bars (``errorbar``'s third return value) that are no 95% interval, and
    say once per axes what a dashed bar is."""
    if not any(weak) or not bars:
        return
    bars[0].set_linestyles([WEAK_STYLE if w else "solid" for w in weak])
    if not getattr(ax, "_gillab_weak_note", False):
        ax.text(0.01, 0.01, WEAK_NOTE, transform=ax.transAxes, fontsize=8.5, color="0.35", va="bottom", ha="left")
        ax._gillab_weak_note = True


LEVEL_MARKERS = ("o", "s", "^", "v", "P", "X")


def lines_per_level(s: pd.DataFrame, level: str, y: str, label, published, height: float = 3.5,
                    weak: str | None = None, hollow: str | None = None, hollow_label: str = "",
                    documented=None):
    """One panel per condition; in each, one line per value of ``level`` against the switch
    interval (log scale): our median with its interval (``y`` names the three columns: median, CI
    low, CI high), and the document's values as open diamonds, ``published(level_value) -> (x,
    y)``.  ``label(level_value)`` names a line.  ``weak`` names a column of ``s`` that is true
    where the bar is no 95% interval (too few runs): those bars are dashed; ``hollow`` one that is
    true where the point is drawn hollow (``hollow_label`` in the legend: a setting not in force).
    ``documented(rows)`` says of a panel's rows whether the document's values belong in it (none:
    every panel; e.g. not beside a build without a GIL, where the document measured none).
    Each level has a colour and a marker of its own (two neighbouring shades of one ramp read as one
    line).  Returns the figure, its axes, and per condition (axes, condition, its rows of ``s``)."""
    med, lo, hi = y
    conds = sorted(s["condition"].unique())
    levels = sorted(s[level].unique())
    colours = dict(zip(levels, sns.color_palette("dark", len(levels))))
    markers = {v: LEVEL_MARKERS[i % len(LEVEL_MARKERS)] for i, v in enumerate(levels)}
    fig, axes = plt.subplots(len(conds), 1, figsize=(8, height * len(conds)), sharex=True, sharey=True,
                             squeeze=False)
    panels = []
    for ax, cond in zip(axes[:, 0], conds):
        g = s[s["condition"] == cond]
        ours_only = documented is not None and not documented(g)
        for v in levels:
            h = g[g[level] == v].sort_values("switch_interval")
            _, _, bars = ax.errorbar(h["switch_interval"], h[med], yerr=[h[med] - h[lo], h[hi] - h[med]],
                                     fmt=f"{markers[v]}-", color=colours[v], capsize=3, label=label(v))
            if weak:
                mark_weak(ax, bars, list(h[weak].astype(bool)))
            if hollow and h[hollow].astype(bool).any():
                off = h[h[hollow].astype(bool)]
                ax.plot(off["switch_interval"], off[med], linestyle="none", marker=markers[v], markersize=7,
                        markerfacecolor="white", markeredgecolor=colours[v], zorder=3)
            if ours_only:
                continue
            px, py = published(v)
            ax.plot(px, py, linestyle="none", marker="D", markerfacecolor="none", markeredgecolor=colours[v],
                    markersize=7)
        ax.set_xscale("log")
        if hollow and g[hollow].astype(bool).any():
            ax.plot([], [], linestyle="none", marker="o", markerfacecolor="white", markeredgecolor="0.3",
                    label=hollow_label)
        panels.append((ax, cond, g))
    return fig, axes, panels


def samples_by_condition(ax, g: pd.DataFrame, y: str, pal: dict, size: float = 5) -> None:
    """Every sample of ``y`` as a dot, one column per condition (all conditions, even empty)."""
    conds = sorted(pal)
    sns.stripplot(data=g, x="condition", y=y, hue="condition", order=conds, hue_order=conds, palette=pal,
                  size=size, jitter=0.15, ax=ax, legend=False)
    ax.set_xlabel("")


def to_png(fig, dpi: int = 90) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)   # the figures lay themselves out (tight_layout)
    plt.close(fig)
    return buf.getvalue()


OUTCOME_COLOURS = {"agrees": "#1b7837", "higher": "#d95f02", "lower": "#7570b3", "inconclusive": "#999999",
                   "not in force here": "#b8a27a", "control failed": "#e7298a", "not testable here": "#cccccc",
                   "not measured": "#eeeeee"}


BAND_COLOUR = "#1b7837"     # the band is where an interval agrees: the colour of *agrees*, light


def claim_band(claim_id: str) -> tuple[float, float] | None:
    """What *agrees* means for a claim, in ours-over-published coordinates (claims.csv's comparison
    and band): *about* a value within a relative band b, (1 - b, 1 + b); *at least* the value,
    (1, inf); *at most*, (0, 1); None for a row without a comparison (not testable, or no claim of
    claims.csv).  An interval of ours / published agrees when it lies wholly inside."""
    from ..judge import claims

    try:
        c = claims.get(claim_id)
    except KeyError:
        return None
    if c["comparison"] == "about" and c["band"] == c["band"]:
        return tuple(sorted((1 - float(c["band"]), 1 + float(c["band"]))))
    return {"at least": (1.0, float("inf")), "at most": (0.0, 1.0)}.get(c["comparison"])


def claim_label(claim_id: str, shared: bool, limit: int = 44) -> str:
    """A claim's row label: its document's words, shortened (:func:`gillab.judge.tables.said`);
    where several rows share the words (a conclusion drawn at several points), shorter, with the
    point from the id (``si=0.01, cpu_threads=2``, else its last part); the id's tail where
    claims.csv has no words."""
    from ..judge.tables import said

    point = ", ".join(p for p in claim_id.split("/") if "=" in p) or claim_id.rsplit("/", 1)[-1]
    words = said(claim_id, max(limit - (len(point) + 3 if shared else 0), 22))
    if not words:
        return claim_id.split("/", 1)[-1][:limit]
    return f"{words} · {point}" if shared and point else words


GLANCE_EDGE = 4.0      # the verdicts figure's axis: from 1/4 to 4 times the document's value


def verdicts_figure(flat: pd.DataFrame):
    """Every claim at a glance: ours / published (log scale) with its interval, one row per claim
    named by its document's words, grouped by document under a heading row, one marker per build,
    coloured by outcome; behind each row, the claim's band (:func:`claim_band`: where an interval
    agrees), so that a reader sees why each outcome is what it is.  Drawn to be read at 675 px
    wide (7.5 in at 90 dpi, the page's figure), every text at least 8.5 pt.  Values that cannot
    be put on a log scale (a published 0, a negative statistic) are left out (the page counts
    them)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from ..judge.tables import said
    from ..measure.interpreters import display_order

    font = 8.5
    d = flat[(flat["ours_over_published"] > 0) & flat["ours_over_published"].notna()].copy()
    claims = (flat[["document", "claim_id"]].drop_duplicates().sort_values(["document"], kind="stable"))
    # one row per claim, a heading row above each document's
    ypos, heads, y = {}, {}, 0
    for doc, g in claims.groupby("document", sort=False):
        heads[doc] = y
        y += 1
        for cid in g["claim_id"]:
            ypos[cid] = y
            y += 1
    quotes = {cid: said(cid, 200) for cid in ypos}
    shared = {cid: sum(q == quotes[cid] for q in quotes.values()) > 1 and bool(quotes[cid]) for cid in ypos}
    conds = display_order([b for b in flat["build"].unique() if b != "-"])
    shapes = "osD^vPX*hpdH8"     # never < or >: an arrowhead is a value beyond the axis
    markers = {c: shapes[i % len(shapes)] for i, c in enumerate(conds)}      # more builds and pairs than shapes: reused
    offsets = {c: (i - (len(conds) - 1) / 2) * 0.7 / max(len(conds), 1) for i, c in enumerate(conds)}
    row_in, top_in, bottom_in = 0.2, 0.25, 0.75 + 0.2 * ((len(OUTCOME_COLOURS) + len(conds) + 2) // 3)
    height = row_in * y + top_in + bottom_in
    fig, ax = plt.subplots(figsize=(7.5, height))
    fig.subplots_adjust(left=0.5, right=0.98, top=1 - top_in / height, bottom=bottom_in / height)
    ends = [v for v in (list(d["ratio_low"]) + list(d["ratio_high"]) + list(d["ours_over_published"]))
            if v == v and v > 0 and np.isfinite(v)]
    bands = {cid: claim_band(cid) for cid in ypos}
    ends += [e for b in bands.values() if b for e in b if 0 < e < float("inf")]
    lo_x, hi_x = (min(ends) / 1.5, max(ends) * 1.5) if ends else (0.1, 10)
    # the axis stops at GLANCE_EDGE either way of the document's value, so that a band of 10% is
    # wide enough to see; a value beyond is drawn at the edge as an arrowhead, its number beside it
    lo_x, hi_x = max(lo_x, 1 / GLANCE_EDGE), min(hi_x, GLANCE_EDGE)
    edge_lo, edge_hi = lo_x * 1.12, hi_x / 1.12
    for cid, band in bands.items():
        if band:
            ax.fill_betweenx([ypos[cid] - 0.45, ypos[cid] + 0.45], max(band[0], lo_x), min(band[1], hi_x),
                             color=BAND_COLOUR, alpha=0.14, linewidth=0, zorder=0)
    outside: dict = {}
    for _, r in d.iterrows():
        yy = ypos[r["claim_id"]] + offsets.get(r["build"], 0)
        lo = r["ratio_low"] if r["ratio_low"] > 0 else r["ours_over_published"]
        hi = r["ratio_high"] if r["ratio_high"] > 0 else r["ours_over_published"]
        col = OUTCOME_COLOURS.get(r["outcome"], "black")
        x = r["ours_over_published"]
        ax.plot([min(max(lo, edge_lo), edge_hi), min(max(hi, edge_lo), edge_hi)], [yy, yy], color=col,
                linewidth=1.2, alpha=0.8)
        if lo_x <= x <= hi_x:
            ax.plot(x, yy, marker=markers.get(r["build"], "o"), color=col, markersize=4.5, linestyle="none")
        else:
            beyond = x > hi_x
            ax.plot(edge_hi if beyond else edge_lo, yy, marker=">" if beyond else "<", color=col, markersize=5.5,
                    linestyle="none")
            outside.setdefault((r["claim_id"], beyond), []).append((x, col))
    for (cid, beyond), xs in outside.items():      # one label a row and side: its builds' values
        ax.annotate(", ".join(f"{x:,.3g}" for x, _ in sorted(xs)), (edge_hi if beyond else edge_lo, ypos[cid]),
                    xytext=(-8 if beyond else 8, 0), textcoords="offset points", ha="right" if beyond else "left",
                    va="center", fontsize=font - 0.5, color=xs[0][1])
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlim(lo_x, hi_x)
    ticks = [t for t in (1 / 4, 1 / 2, 1, 2, 4) if lo_x <= t <= hi_x]
    ax.set_xticks(ticks, [f"1/{1 / t:g}" if t < 1 else f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_yticks([ypos[c] for c in claims["claim_id"]],
                  [claim_label(c, shared[c]) for c in claims["claim_id"]], fontsize=font)
    ax.tick_params(axis="x", labelsize=font)
    ax.set_ylim(y - 0.5, -0.5)
    for doc, hy in heads.items():
        if hy:
            ax.axhline(hy - 0.5, color="0.4", linewidth=0.8)
        ax.text(-0.01, hy, f"Document {doc}", transform=ax.get_yaxis_transform(), fontsize=font + 0.5,
                fontweight="bold", va="center", ha="right")
    ax.set_xlabel("ours / published with its interval (log scale)\n1: the document's value; "
                  "arrowhead: beyond the axis", fontsize=font)
    handles = [Patch(color=BAND_COLOUR, alpha=0.25, label="the band: agrees inside")]
    handles += [Line2D([], [], color=c, marker="s", linestyle="none", label=o) for o, c in OUTCOME_COLOURS.items()
                if o in set(d["outcome"])]
    handles += [Line2D([], [], color="0.3", marker=markers[c], linestyle="none", label=c) for c in conds]
    fig.legend(handles=handles, fontsize=font, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=3,
               frameon=False)
    return fig


PAIR_COLOURS = {"the same": "#029e73", "different": "#d55e00", "open": "#949494"}


# the ratio of two campaigns' values a panel of :func:`across_figure` shows; beyond, an arrowhead
ACROSS_RATIO_LIMIT = 8.0


def across_figure(table: list[dict], base: str, per_row: int = 3):
    """Every other campaign against ``base`` (the reference), judged claim x build by claim x build: the
    reference's ours / published (x, log, with its interval) against the other campaign's value
    over the reference's (y, log, from 1/8 to 8, the other campaign's interval over the
    reference's median): on the line at 1 the two measured the same, and a row that differs stands
    off it however far its claim's values lie from the document's.  Coloured by the two outcomes
    compared (:func:`gillab.judge.pairs.pair_outcome`: the same, different, open).  Each panel's
    title counts those measured with this checkout's code in both (:func:`gillab.judge.pairs.paired`,
    as :func:`gillab.judge.across.against` does); a hollow point was measured with other code
    (shown, not counted); a ratio beyond the axis is an arrowhead at its edge, counted in the
    title.  One panel per other campaign, ``per_row`` to a row, drawn to be read at the page's
    width (6.8 in at 100 dpi, every text at least 8.5 pt)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from ..judge import pairs

    font = 8.5
    lim = ACROSS_RATIO_LIMIT
    others = sorted({c for r in table for c in r["campaigns"]} - {base}) or [None]
    table = pairs.judged_rows(table)      # as the table beside it counts: a machine row is context
    ncols = min(per_row, len(others))
    nrows = -(-len(others) // ncols)
    width = 6.8
    panel = (width - 0.9) / ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, nrows * (panel + 0.55) + 1.0), squeeze=False,
                             sharex=True, sharey=True)
    drawn = []
    for ax, other in zip(axes.flat, others):
        left_out, words, apart, beyond = 0, [], 0, 0
        for a, b in pairs.paired(table, base, other, this_code=None):
            word = pairs.pair_outcome(a["outcome"], b["outcome"])
            counted = a["measured_with_this_code"] and b["measured_with_this_code"]
            apart += not counted
            xs = (a["ratio_low"], a["ours_over_published"], a["ratio_high"])
            if counted:
                words.append(word)
            if not (xs[1] > 0 and b["ours_over_published"] > 0):
                left_out += 1
                continue
            ys = tuple(v / xs[1] if v and v > 0 else float("nan")
                       for v in (b["ratio_low"], b["ours_over_published"], b["ratio_high"]))
            col = PAIR_COLOURS[word]
            y = min(max(ys[1], 1 / lim), lim)
            if y != ys[1]:
                beyond += 1
            ax.plot([x if x > 0 else xs[1] for x in (xs[0], xs[2])], [y] * 2, color=col, alpha=0.35, lw=0.8)
            if y == ys[1]:
                ax.plot([xs[1]] * 2, [min(max(v, 1 / lim), lim) if v == v else y for v in (ys[0], ys[2])],
                        color=col, alpha=0.35, lw=0.8)
            marker = "o" if y == ys[1] else ("^" if ys[1] > lim else "v")
            ax.plot(xs[1], y, marker, color=col, markersize=3.5 if counted else 4.5, alpha=0.85, label=word,
                    markeredgewidth=0.8, markerfacecolor=col if counted else "none")
            drawn.append(xs[1])
        c = pairs.pair_counts(pd.DataFrame({"compared": words}), "compared")
        name = str(other)
        if len(name) > 22 and "-" in name:      # a long campaign id on two lines, so titles never touch
            name = name[:name.rindex("-") + 1] + "\n" + name[name.rindex("-") + 1:]
        ax.set_title(f"{name}\n{c['the same']} same, {c['different']} different, {c['open']} open"
                     + (f"\n+{apart} of other code (hollow)" if apart else "")
                     + (f"\n({beyond} beyond {lim:g}x: arrowheads)" if beyond else "")
                     + (f"\n({left_out} not positive: left out)" if left_out else ""), fontsize=font)
        ax.tick_params(labelsize=font)
        ax.axhline(1.0, color="0.4", lw=0.8, linestyle="--", zorder=0)
    for ax in axes.flat[len(others):]:
        ax.set_visible(False)
    ax = axes.flat[0]
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1 / lim / 1.15, lim * 1.15)
    ticks = [2.0 ** k for k in range(-3, 4)]
    ax.set_yticks(ticks, [f"1/{1 / t:g}" if t < 1 else f"{t:g}" for t in ticks])
    ax.yaxis.set_minor_locator(NullLocator())
    if drawn:
        ax.set_xlim(min(drawn) / 2, max(drawn) * 2)
    for i, a in enumerate(axes.flat[:len(others)]):
        if i + ncols >= len(others):      # the lowest panel of its column shows its scale
            a.xaxis.set_tick_params(labelbottom=True)
    fig.supxlabel(f"the reference campaign {base}: ours / published", fontsize=font, y=0.8 / fig.get_size_inches()[1])
    fig.supylabel("the panel's campaign / the reference", fontsize=font)
    handles = [Line2D([], [], color=c, marker="o", linestyle="none", label=pairs.PAIR_WORDS[k])
               for k, c in PAIR_COLOURS.items()]
    handles.append(Line2D([], [], color="0.4", linestyle="--", label="the same value in both campaigns"))
    handles.append(Line2D([], [], color="0.3", marker="o", markerfacecolor="none", linestyle="none",
                          label="measured with other code: not counted"))
    fig.legend(handles=handles, loc="lower center", ncol=2, frameon=False, fontsize=font)
    fig.tight_layout(rect=(0, 0.95 / fig.get_size_inches()[1], 1, 1), h_pad=0.6, w_pad=0.4)
    return fig


def share_axes(*figs) -> bool:
    """Put figures of one chapter drawn from different campaigns on the same axes: each group of
    paired axes gets the union of their y ranges, and of their x ranges where the axes show the
    same categories or numbers (the same scale and tick labels).  False where the figures do not
    have the same panels (nothing is changed then)."""
    panels = [f.axes for f in figs]
    if len(figs) < 2 or len({len(p) for p in panels}) != 1:
        return False

    def union(group, get, put):
        lims = [get(ax) for ax in group]
        if any(lo > hi for lo, hi in lims):   # an inverted axis keeps its own range
            return
        lo, hi = min(lo for lo, _ in lims), max(hi for _, hi in lims)
        for ax in group:
            put(ax, lo, hi)

    for group in zip(*panels):
        if len({ax.get_yscale() for ax in group}) == 1:
            union(group, lambda a: a.get_ylim(), lambda a, lo, hi: a.set_ylim(lo, hi))
        labels = {tuple(t.get_text() for t in ax.get_xticklabels()) for ax in group}
        if len({ax.get_xscale() for ax in group}) == 1 and len(labels) == 1:
            union(group, lambda a: a.get_xlim(), lambda a, lo, hi: a.set_xlim(lo, hi))
    return True


# -- what a figure shows, as data and in words ---------------------------------------------------
def _label(artist) -> str:
    lab = str(artist.get_label() or "")
    return "" if lab.startswith("_") else lab


def _errorbar_rows(c) -> list[dict]:
    """One row per point of an error bar container: x, y and the ends of its vertical bar."""
    line, _, bars = c.lines
    x, y = (line.get_xdata(), line.get_ydata()) if line is not None else ([], [])
    lows, highs = [np.nan] * len(x), [np.nan] * len(x)
    for coll in bars or ():
        # a point whose bar has no length (its interval is not a number) has an empty segment
        ends = [(seg[0], seg[-1]) if len(seg) >= 2 else None for seg in coll.get_segments()]
        if len(ends) == len(x) and all(e is None or np.isclose(e[0][0], e[1][0]) for e in ends):   # vertical bars
            lows = [min(e[0][1], e[1][1]) if e else np.nan for e in ends]
            highs = [max(e[0][1], e[1][1]) if e else np.nan for e in ends]
    return [{"series": _label(c), "mark": "errorbar", "x": xi, "y": yi, "y_low": lo, "y_high": hi}
            for xi, yi, lo, hi in zip(x, y, lows, highs)]


def _panel_rows(ax) -> list[dict]:
    """What one axes draws: its error bars, bars, lines and scattered points."""
    from matplotlib.container import BarContainer, ErrorbarContainer

    rows, done = [], set()
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer):
            done.add(id(c.lines[0]))
            rows += _errorbar_rows(c)
        elif isinstance(c, BarContainer):
            rows += [{"series": _label(c), "mark": "bar", "x": p.get_x() + p.get_width() / 2, "y": p.get_height(),
                      "y_low": p.get_y(), "y_high": p.get_y() + p.get_height()} for p in c.patches]
    for line in ax.get_lines():
        if id(line) not in done:
            rows += [{"series": _label(line), "mark": "line", "x": xi, "y": yi}
                     for xi, yi in zip(np.atleast_1d(line.get_xdata()), np.atleast_1d(line.get_ydata()))]
    for coll in ax.collections:
        if type(coll).__name__ == "PathCollection" and len(coll.get_offsets()):
            rows += [{"series": _label(coll), "mark": "points", "x": xi, "y": yi} for xi, yi in np.asarray(coll.get_offsets())]
    return rows


def tidy(fig) -> pd.DataFrame:
    """Exactly what ``fig`` plots, one row per drawn point: the panel (its title), the series (its
    legend label), the mark (line, errorbar, points, bar), x (and the tick label at x, where the
    axis names its categories), y, and for an error bar or a bar its low and high ends.  Read back
    from the drawn artists, so it cannot drift from the figure."""
    out = []
    for i, ax in enumerate(fig.axes):
        ticks = {}
        for t, lab in zip(ax.get_xticks(), ax.get_xticklabels()):
            if lab.get_text():
                ticks[round(float(t), 9)] = lab.get_text()
        for r in _panel_rows(ax):
            try:
                x_label = ticks.get(round(float(r["x"]), 9), "")
            except (TypeError, ValueError):
                x_label = ""
            out.append({"panel": ax.get_title() or f"panel {i + 1}", **r, "x_label": x_label,
                        "x_axis": ax.get_xlabel(), "y_axis": ax.get_ylabel()})
    cols = ["panel", "series", "mark", "x", "x_label", "y", "y_low", "y_high", "x_axis", "y_axis"]
    return pd.DataFrame(out, columns=cols)


def describe(fig) -> str:
    """A figure in words, for its alt text: each panel's title, axes and series."""
    parts = []
    for ax in fig.axes:
        if not (ax.get_title() or ax.get_xlabel() or ax.get_ylabel()):
            continue
        labels = [t.get_text() for t in (ax.get_legend().get_texts() if ax.get_legend() else [])]
        bit = (ax.get_title() or "a panel") + f": {ax.get_ylabel() or 'values'} against {ax.get_xlabel() or 'categories'}"
        if labels:
            bit += " for " + ", ".join(labels[:8]) + (f" and {len(labels) - 8} more" if len(labels) > 8 else "")
        parts.append(bit)
    suptitle = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) else ""
    text = (suptitle + ". " if suptitle else "") + "; ".join(parts)
    text = " ".join(text.split())    # a label wrapped on the figure reads as one line
    return (text or "A figure") + ". Its points are in the CSV linked below it."
