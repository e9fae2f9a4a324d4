"""How the b2_download chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.b2_download`).

Why it is long: the chapter reads two sweeps of one download sample, today's builds against the
document's claims and the releases 3.6-3.11 against its chart (the `history` profile), each with
its claims, figure, table and checked sentences; split in two, every reader of one sweep would
import the other's helpers."""
from __future__ import annotations

import math
import re

import pandas as pd

from ..measure import interpreters
from ..judge import results
from .. import stats
from ..judge.analysis import ModuleAnalysis, frame_cached
from ..judge.prose import words as chapter_words
from ..measure.experiments.b2_download import SCENARIOS
from ..judge.tables import estimate_over_runs, estimate_text


def published() -> pd.DataFrame:
    return results.reference("backblaze_b2cli_claims")


@frame_cached
def summary(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (cond, scen, t, w), g in df.groupby(["condition", "scenario", "threads", "writer"], sort=True):
        s = stats.summarize(g["MBps"], lower_is_better=False)
        has_cpu = "cpu_per_wall" in g and g["cpu_per_wall"].notna().any()
        rows.append({"condition": cond, "scenario": scen, "threads": int(t), "writer": w, **s,
                     "cpu_per_wall": float(g["cpu_per_wall"].median()) if has_cpu else math.nan})
    return pd.DataFrame(rows)


def _by_repeat(df: pd.DataFrame, cond: str, scen: str, threads: int, writer: str) -> pd.Series:
    """MB/s of one condition at one point, indexed by repeat (the interleaved round)."""
    g = df[(df["condition"] == cond) & (df["scenario"] == scen) & (df["threads"] == threads) & (df["writer"] == writer)]
    return g.groupby("repeat")["MBps"].median()


def _point_threads(claim_id: str) -> int:
    """The pool size a claim's reading runs: ``threads=N`` in its claims.csv point (the tool's 10)."""
    from ..judge import claims as published_claims

    m = re.search(r"(?:^|;)threads=(\d+)(?:;|$)", str(published_claims.get(claim_id)["point"]))
    if not m:
        raise ValueError(f"claims.csv, {claim_id}: the point names no threads=N")
    return int(m[1])


def claims(df: pd.DataFrame) -> list[dict]:
    """The document's claims on the tool's download, each read at the thread count its claims.csv
    point names (the tool's 10; the other thread counts are the figure's, never a claim's): nogil /
    GIL download speed for one file and for many, paired by repeat (the two builds measured back to
    back in each interleaved round), as the document's factors (context) and as their direction
    (at least 1); and the speed with a multiprocessing.Queue writer process over a queue.Queue
    writer thread at the same threads, as the document's -15% (context) and as its direction."""
    from ..judge import claims as published_claims
    from .doc002 import pair_label, pairs

    out = []
    conds = [c for c in df["condition"].unique() if c != "curl"]
    for scen, what in (("single", "one large file"), ("many", "many files")):
        for cid in (f"b2_download/nogil_speedup/{scen}", f"b2_download/nogil_faster/{scen}"):
            t = _point_threads(cid)
            measured = {}
            for gil, ft in pairs(conds):
                a, b = _by_repeat(df, ft, scen, t, "thread"), _by_repeat(df, gil, scen, t, "thread")
                r = stats.paired_ratio(a, b)
                if r["n"]:
                    measured[f"{pair_label((gil, ft))} ({t} threads)"] = published_claims.judged(
                        cid, r["ratio"], r, note=f"{ft} {a.median():,.0f} MB/s, {gil} {b.median():,.0f} MB/s (medians)")
            out.append({"experiment": "b2_download", "table": "backblaze_b2cli_claims", "claim_id": cid,
                        "claim": f"free-threaded / GIL download speed, {what}, at {t} threads",
                        "published": published_claims.value(cid), "unit": "ratio", "measured": measured,
                        "band": published_claims.band(cid),
                        "published_as": f"{published_claims.get(cid)['quote']} (B2 CLI)"})
    for cid in ("b2_download/mp_queue", "b2_download/mp_queue/slower"):
        t = _point_threads(cid)
        measured = {}
        for cond in sorted(conds):
            for scen in sorted(df["scenario"].unique()):
                r = stats.paired_ratio(_by_repeat(df, cond, scen, t, "process"), _by_repeat(df, cond, scen, t, "thread"))
                if r["n"]:
                    measured[f"{cond} ({scen}, {t} threads)"] = published_claims.judged(cid, r["ratio"], r, note="")
        out.append({"experiment": "b2_download", "table": "backblaze_b2cli_claims", "claim_id": cid,
                    "claim": f"speed with a multiprocessing.Queue writer process / with a queue.Queue writer thread, "
                             f"at {t} threads",
                    "published": published_claims.value(cid), "unit": "ratio", "measured": measured,
                    "band": published_claims.band(cid), "published_as": f"\"{published_claims.get(cid)['quote']}\""})
    return out + history_claims(df)


# -- document 004's version sweep (profile ``history``) ---------------------------------------------
HISTORY = "b2_download/history/"   # the claims the version sweep answers


HISTORY_THREADS = 10               # the B2 tool's default pool


def sweep_versions() -> list[str]:
    """The official releases of the document's chart, oldest first ("3.6" ... "3.11"), read from
    its reference table (``Python versions tested``)."""
    t = published()
    cell = str(t.loc[t["item"] == "Python versions tested", "value"].iloc[0])
    return [v.strip() for v in cell.split("+")[0].split(",") if v.strip()]


def history_builds(conds) -> list[str]:
    """Per release of the document's chart, the build of the ``history`` set (builds.toml) of that
    release among ``conds`` (the first the set names: one builder's), else a retired stock build of it
    (an earlier campaign's), in the chart's order; a release without one is left out."""
    history = [*interpreters.sets().get("history", []),
               *(r.build_id for r in interpreters.retired().values() if r.stock)]
    out = []
    for v in sweep_versions():
        ids = [c for c in history if c in set(conds) and (interpreters.version_of(c) + ".").startswith(v + ".")]
        out += ids[:1]
    return out


def _release_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".") if x.isdigit())


def chart_builds(conds) -> list[str]:
    """The chart as this report draws it: the document's releases (:func:`history_builds`), then
    each later release the ``history`` set names (3.13 to 3.15), the first build of each, in
    version order.  The claims read the document's releases only; the later ones extend the chart
    to today, each step over the release before it (a step where the builder changes says so:
    :func:`builder_of`)."""
    out = history_builds(conds)
    last = _release_key(sweep_versions()[-1])
    later: dict[str, str] = {}
    for c in interpreters.sets().get("history", []):
        if c in set(conds) and _release_key(release_of(c)) > last:
            later.setdefault(release_of(c), c)
    return out + [later[v] for v in sorted(later, key=_release_key)]


def builder_of(build: str) -> str:
    """Who built ``build``, and so with which flags: the JavaCPP Presets' interpreters (their year's
    compiler and flags), ours from Debian's source (``./configure``: no PGO, no LTO), Debian's
    binary packages (PGO and LTO), or another (retired, or found here)."""
    from ..measure import provision

    spec = next((sp for sp in provision.all_specs() if sp.build_id == build), None)
    if spec is None:
        return "retired" if build in interpreters.retired() else "found here"
    if "maven" in spec.src:
        return "JavaCPP Presets"
    if spec.debian_binary:
        return "Debian's binary (PGO, LTO)"
    return "ours (./configure)"


def release_of(build: str) -> str:
    """The chart's release a build is of (``bytedeco-3.10.8`` -> ``3.10``)."""
    return ".".join(interpreters.version_of(build).split(".")[:2])


def _history_rounds(df: pd.DataFrame, scen: str, builds: list[str]) -> pd.DataFrame:
    """MB/s per interleaved round (rows: repeat) and build (columns), at the tool's 10 threads with
    a writer thread; only the rounds that hold every build."""
    cols = {b: _by_repeat(df, b, scen, HISTORY_THREADS, "thread") for b in builds}
    return pd.DataFrame(cols).dropna()


def history_claims(df: pd.DataFrame) -> list[dict]:
    """The version sweep's three claims, per scenario, at the tool's 10 threads, each statistic
    computed within each interleaved round (all builds measured back to back) and its median taken
    over the rounds: 3.11 / 3.6 (only where both are measured: the row speaks of those two); the mean
    of the version-to-version ratios (how "+60MB/s per version on average" reads on another machine:
    see claims.csv); and 3.10's gain over 3.9 divided by the largest gain of any other step (at least
    1: 3.10 gained most).  A step over a release the samples lack (3.7 to 3.9: no registry serves 3.8)
    is read per release, its ratio to the power 1/k over k releases, and its label says so.  Empty
    where the samples hold no two releases of the chart."""
    from ..judge import claims as published_claims

    builds = history_builds(df["condition"].unique())
    if len(builds) < 2:
        return []
    first, last = builds[0], builds[-1]
    steps = list(zip(builds[:-1], builds[1:]))
    order = sweep_versions()
    spans = {b: order.index(release_of(b)) - order.index(release_of(a)) for a, b in steps}
    lacking = [v for v in order[order.index(release_of(first)):order.index(release_of(last)) + 1]
               if v not in {release_of(b) for b in builds}]
    lack = f"; {', '.join(lacking)} not measured: a step over it read per release" if lacking else ""
    rows = {cid: {} for cid in ("3.11_over_3.6", "60_mbps_per_version", "largest_gain_3.10")}
    for scen in [x for x in SCENARIOS if x in set(df["scenario"])]:
        r = _history_rounds(df, scen, builds)
        if not len(r):
            continue
        where = f"{scen}, {HISTORY_THREADS} threads"
        if (release_of(first), release_of(last)) == (order[0], order[-1]):
            end = stats.paired_ratio(r[last], r[first])
            rows["3.11_over_3.6"][f"{last} ({where}, over {first})"] = published_claims.judged(
                HISTORY + "3.11_over_3.6", end["ratio"], end,
                note=f"{last} {r[last].median():,.0f} MB/s, {first} {r[first].median():,.0f} MB/s (medians)")
        gains = pd.DataFrame({b: (r[b] / r[a]) ** (1 / spans[b]) for a, b in steps})
        per = sum(spans.values())
        mean = stats.paired_median((gains * pd.Series(spans)).sum(axis=1) / per)
        rows["60_mbps_per_version"][f"{last} ({where}, the mean of the {per} steps from {first}{lack})"] = \
            published_claims.judged(HISTORY + "60_mbps_per_version", mean["ratio"], mean,
                                    note="; ".join(f"{b} / {a} {gains[b].median():.2f}"
                                                   + (f" a release ({spans[b]} releases)" if spans[b] > 1 else "")
                                                   for a, b in steps))
        top = [b for b in gains.columns if release_of(b) == "3.10"]
        if top and len(gains.columns) > 1:
            label, entry = _largest_gain(gains, top[0])
            rows["largest_gain_3.10"][f"{top[0]} ({where}, {label}{lack})"] = entry
    out = []
    for short, measured in rows.items():
        cid = HISTORY + short
        c = published_claims.get(cid)
        out.append({"experiment": "b2_download", "table": "backblaze_b2cli_claims", "claim_id": cid,
                    "claim": c["statistic"], "published": published_claims.value(cid), "unit": c["unit"],
                    "measured": measured, "band": published_claims.band(cid), "published_as": c["quote"],
                    "note": c["band_reason"]})
    return out


def _largest_gain(gains: pd.DataFrame, top: str) -> tuple[str, dict]:
    """Whether ``top``'s step (its speed over the release before, per round) is the largest: its
    step over each other step, per round, each with a median interval at 95% / (number of other
    steps) a side (Bonferroni: the intervals hold together with 95%).  *agrees* when every interval
    lies at or above 1, *lower* when one lies wholly below (that step gained more), *inconclusive*
    otherwise; the entry shows the comparison that decides (the closest, or the one below 1).
    Comparing with the largest other step of each round instead would count the noise of four
    steps against one, and call an even climb a loss."""
    from ..judge import claims as published_claims

    others = [b for b in gains.columns if b != top]
    side = stats.SIDE / len(others)
    per = {}
    for b in others:
        v = (gains[top] / gains[b]).dropna().astype(float).tolist()
        lo, hi = stats.median_interval(v, side) if stats.rank(len(v), side) else (math.nan, math.nan)
        per[b] = {"ratio": float(pd.Series(v).median()), "ci_lo": lo, "ci_hi": hi, "n": len(v), "method": stats.PAIRED}
    below = [b for b in others if per[b]["ci_hi"] < 1]
    if any(math.isnan(r["ci_lo"]) for r in per.values()):
        verdict, key = "inconclusive", min(others, key=lambda b: per[b]["ratio"])
    elif below:
        verdict, key = "lower", min(below, key=lambda b: per[b]["ratio"])
    else:
        key = min(others, key=lambda b: per[b]["ci_lo"])
        verdict = "agrees" if per[key]["ci_lo"] >= 1 else "inconclusive"
    r = per[key]
    e = published_claims.entry(r["ratio"], r, verdict=verdict, ratio_to_published=r["ratio"],
                               note=f"its step over each other step, median [interval at {1 - 2 * side:.2%}]: "
                                    + "; ".join(f"over {b}'s {per[b]['ratio']:.2f} [{per[b]['ci_lo']:.2f}, "
                                                f"{per[b]['ci_hi']:.2f}]" for b in others))
    return f"its step over {key}'s", e


@frame_cached
def history_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per build and scenario at the tool's 10 threads, writer thread: MB/s (median, interval) and,
    for each release of the chart, its speed over the release before it, paired by round."""
    rows = []
    builds = chart_builds(df["condition"].unique())
    ok = df[df["condition"] != "curl"]
    for scen in [x for x in SCENARIOS if x in set(ok["scenario"])]:
        r = _history_rounds(df, scen, builds) if builds else pd.DataFrame()
        prev = {b: a for a, b in zip(builds[:-1], builds[1:])}
        for cond in interpreters.display_order(set(ok.loc[ok["scenario"] == scen, "condition"])):
            g = ok[(ok["condition"] == cond) & (ok["scenario"] == scen) & (ok["threads"] == HISTORY_THREADS)
                   & (ok["writer"] == "thread")]
            if not len(g):
                continue
            s = stats.summarize(g["MBps"], lower_is_better=False)
            step = stats.paired_ratio(r[cond], r[prev[cond]]) if cond in prev and len(r) else None
            rows.append({"scenario": scen, "condition": cond, "n": s["n"], "median": s["median"], "ci_lo": s["ci_lo"],
                         "ci_hi": s["ci_hi"], "over": prev.get(cond, ""),
                         "step": step["ratio"] if step else math.nan,
                         "step_lo": step["ci_lo"] if step else math.nan, "step_hi": step["ci_hi"] if step else math.nan,
                         "cpu_per_wall": float(g["cpu_per_wall"].median())})
    return pd.DataFrame(rows)


def history_table(df: pd.DataFrame) -> pd.DataFrame:
    s = history_summary(df)
    if s.empty:
        return s
    return pd.DataFrame({
        "scenario": s["scenario"], "build": s["condition"],
        "MB/s: median [interval]": [estimate_over_runs(m, lo, hi, n)
                                    for m, lo, hi, n in zip(s["median"], s["ci_lo"], s["ci_hi"], s["n"])],
        "built by": s["condition"].map(builder_of),
        "over the release before: median [interval]": [
            "-" if not o else f"{x:.2f} [{lo:.2f}, {hi:.2f}] over {o}"
            + ("" if builder_of(o) == builder_of(c) else " (another builder: its flags change too)")
            for c, o, x, lo, hi in zip(s["condition"], s["over"], s["step"], s["step_lo"], s["step_hi"])],
        "CPU s / wall s": s["cpu_per_wall"].map(lambda v: f"{v:.2f}"), "runs": s["n"]})


def history_figure(df: pd.DataFrame):
    """Document 004's chart as measured here, extended to today (:func:`chart_builds`): MB/s per
    release at 10 threads (median and interval), a free-threaded build beside the release of its
    source, the other builds after the chart, each builder named where it changes; below, each
    release's speed over the one before it (paired by round; 1 = no gain)."""
    import matplotlib.pyplot as plt

    s = history_summary(df)
    if s.empty:
        return None
    builds = chart_builds(s["condition"].unique())
    twin = dict(interpreters.pairs())            # builds.toml [pairs]: a release -> its free-threaded build
    order = []
    for b in builds:                             # each release, its build without the GIL beside it
        order += [b] + ([twin[b]] if twin.get(b) in set(s["condition"]) else [])
    order += [c for c in interpreters.display_order(set(s["condition"])) if c not in order]
    x = {c: i for i, c in enumerate(order)}
    scens = [v for v in SCENARIOS if v in set(s["scenario"])]
    fig, axes = plt.subplots(2, len(scens), figsize=(8, 6.8), squeeze=False,      # the page's width
                             gridspec_kw={"height_ratios": [3, 2]}, sharex=True)
    for j, scen in enumerate(scens):
        g = s[s["scenario"] == scen].set_index("condition")
        ax, bx = axes[0, j], axes[1, j]
        for cond, row in g.iterrows():
            chart = cond in builds
            ax.errorbar([x[cond]], [row["median"]], yerr=[[row["median"] - row["ci_lo"]], [row["ci_hi"] - row["median"]]],
                        fmt="o" if chart else "D", mfc=None if chart else "none", capsize=3,
                        color="tab:blue" if chart else "tab:orange")
        line = g.loc[[b for b in builds if b in g.index]]
        ax.plot([x[b] for b in line.index], line["median"], color="tab:blue", alpha=0.5,
                label="the chart's releases (median, 95% interval)")
        others = ", ".join(c for c in order if c not in builds)
        ax.plot([], [], "D", mfc="none", color="tab:orange", label=f"other builds ({others})")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.25)      # room at the top for the builders' names
        # where the builder (and with it the flags) changes along the chart, a line; each builder's
        # name over its releases
        groups: list[list[str]] = []
        for k, b in enumerate(builds):
            if k and builder_of(b) == builder_of(builds[k - 1]):
                groups[-1].append(b)
            else:
                if k:
                    ax.axvline(x[b] - 0.5, color="grey", ls=":", lw=0.9)
                groups.append([b])
        for i, grp in enumerate(groups):         # neighbours' names at two heights: none covers the next
            ax.text(sum(x[b] for b in grp) / len(grp), 0.97 - 0.07 * (i % 2), builder_of(grp[0]),
                    transform=ax.get_xaxis_transform(),
                    fontsize=8.5, color="dimgrey", ha="center", va="top")
        ax.set_ylabel("MB/s, 10 threads")
        files = "one file" if scen == "single" else "many files"
        ax.set_title(f"{files}: verified downloads\nfrom nginx on 127.0.0.1", fontsize=10)
        st = g[g["over"] != ""]
        bx.errorbar([x[c] for c in st.index], st["step"], yerr=[st["step"] - st["step_lo"], st["step_hi"] - st["step"]],
                    fmt="s", capsize=3, color="tab:green")
        bx.axhline(1.0, color="black", lw=0.8)
        bx.set_ylabel("speed over the\nrelease before")
        bx.set_xticks(range(len(order)), order, rotation=45, ha="right", rotation_mode="anchor", fontsize=8.5)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8.5, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))       # the legend below the panels: it covers no point
    return fig


def side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    s = summary(df)
    ceiling = s[s["condition"] == "curl"].set_index("scenario")["median"]
    out = s.assign(**{"MB/s: median [interval]": s.apply(
                          lambda r: estimate_text(r["median"], r["ci_lo"], r["ci_hi"], r["coverage"], r["n"],
                                                  stats.MEDIAN), axis=1),
                      "of the curl ceiling": s.apply(lambda r: f"{r['median'] / ceiling[r['scenario']]:.0%}"
                                                     if r["scenario"] in ceiling.index else "-", axis=1),
                      "CPU s / wall s": s["cpu_per_wall"].map(lambda v: "-" if math.isnan(v) else f"{v:.2f}")})
    return out[["scenario", "writer", "threads", "condition", "MB/s: median [interval]", "of the curl ceiling",
                "CPU s / wall s"]].sort_values(["scenario", "writer", "threads", "condition"])


def findings(df: pd.DataFrame) -> str:
    s = summary(df)
    lines = []
    for scen in SCENARIOS:
        g = s[(s["scenario"] == scen) & (s["writer"].isin(["thread", "curl"]))]
        if not len(g):
            continue
        parts = []
        for cond, h in g.groupby("condition"):
            b = h.loc[h["median"].idxmax()]
            parts.append(f"{cond} {b['median']:,.0f} MB/s at {int(b['threads'])} threads")
        lines.append(f"- **{scen}**: best of each: " + "; ".join(parts) + ".")
    ok = df[df["condition"] != "curl"]
    if "streams_per_file" in ok.columns and len(ok):
        per = ok.groupby(["scenario", "threads"])["streams_per_file"].max()
        one = sorted({sc for (sc, t), n in per.items() if t > 1 and n < 2})
        lines.append("- **Which path each case takes**: streams per file at the largest pool, "
                     + "; ".join(f"{sc} {int(per[sc].iloc[-1])}" for sc in sorted(set(per.index.get_level_values(0))))
                     + (f". In *{', '.join(one)}* each file is smaller than two minimum parts and is fetched in one "
                        "stream, as b2sdk's `SimpleDownloader` did (which wrote in the calling thread; here the writer "
                        "thread stays), so only the files run in parallel there" if one else "") + ".")
    return "\n".join(lines)


def figure(df: pd.DataFrame):
    import matplotlib.pyplot as plt

    from ..present import plots

    s = summary(df)
    scens = [x for x in SCENARIOS if x in set(s["scenario"])]
    pal = plots.palette([c for c in s["condition"].unique() if c != "curl"])
    fig, axes = plt.subplots(len(scens), 1, figsize=(8, 3.8 * len(scens)), squeeze=False)
    for ax, scen in zip(axes[:, 0], scens):
        g = s[(s["scenario"] == scen) & (s["writer"] == "thread")]
        for cond, h in g.groupby("condition"):
            h = h.sort_values("threads")
            ax.errorbar(h["threads"], h["median"], yerr=[h["median"] - h["ci_lo"], h["ci_hi"] - h["median"]],
                        fmt="o-", capsize=3, color=pal[cond], label=f"{cond}, writer thread")
        pr = s[(s["scenario"] == scen) & (s["writer"] == "process")]
        for cond, h in pr.groupby("condition"):
            ax.errorbar(h["threads"] * 1.06, h["median"], yerr=[h["median"] - h["ci_lo"], h["ci_hi"] - h["median"]],
                        fmt="s", mfc="none", capsize=3, color=pal[cond], label=f"{cond}, writer process")
        c = s[(s["scenario"] == scen) & (s["condition"] == "curl")]
        if len(c):
            ax.axhline(float(c["median"].iloc[0]), color="black", linestyle="--",
                       label=f"curl ceiling, {int(c['threads'].iloc[0])} in parallel")
        ax.set_xscale("log", base=2)
        ticks = sorted({int(t) for t in g["threads"].unique()} | {int(t) for t in pr["threads"].unique()})
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.set_xlim(min(ticks) / 1.5, max(ticks) * 1.5)     # a single count (default's 10) keeps its neighbourhood
        ax.set_ylim(bottom=0)
        ax.set_xlabel("threads (download pool; a writer process's squares sit just right of their count)")
        ax.set_ylabel("MB/s (median, interval)")
        ax.set_title(f"{scen} file{'s' if scen == 'many' else ''}: verified downloads from nginx on 127.0.0.1", fontsize=10)
        ax.legend(fontsize=8.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def explorer(df: pd.DataFrame):
    import matplotlib.pyplot as plt

    from ..present import plots, widgets

    s = summary(df)
    scens = [x for x in SCENARIOS if x in set(s["scenario"])]
    threads = sorted(s[s["writer"] == "thread"]["threads"].unique())
    pal = plots.palette([c for c in s["condition"].unique() if c != "curl"])
    d = df[df["condition"] != "curl"]
    ymax = float(df["MBps"].max()) * 1.1

    def draw(scen, t):
        fig, ax = plt.subplots(figsize=(7.5, 3.4))
        g = d[(d["scenario"] == scen) & (d["threads"] == t) & (d["writer"] == "thread")]
        plots.samples_by_condition(ax, g, "MBps", pal)
        c = s[(s["scenario"] == scen) & (s["condition"] == "curl")]
        if len(c):
            ax.axhline(float(c["median"].iloc[0]), color="black", linestyle="--", label="curl ceiling")
            ax.legend(fontsize=8.5, loc="lower right")
        ax.set_ylim(0, ymax)
        ax.set_ylabel("MB/s, every download")
        ax.set_title(f"{scen}, {t} threads, writer thread: every sample", fontsize=10)
        return fig

    return widgets.stack_explorer(draw, ("scenario", scens, scens), ("threads", threads, [str(t) for t in threads]),
                                  title="Explore every download")


# the claims another profile's samples answer: the version sweep's, judged on `history`'s
# configuration wherever a verdict is asked of `default`'s (gillab.judge.verdicts.verdicts)
CLAIMS_FROM_PROFILE = {"history": HISTORY}


def _worded(measured: dict, labels) -> list[tuple[str, dict]]:
    """The entries of a claim's ``measured`` (keyed by the verdicts' labels, :func:`claims`) under
    the words' labels, in :func:`claims`' order: ``labels`` is (the verdicts' label, the words'),
    one for every entry (one left without words is an error, never dropped from the evidence)."""
    out = [(words, measured[label]) for label, words in labels if label in measured]
    if len(out) != len(measured):
        raise ValueError(f"b2_download: no words label for {sorted(set(measured) - {label for label, _ in labels})}")
    return out


def prose(df: pd.DataFrame) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``: each ratio is the
    verdicts' (:func:`claims`: paired by repeat), the CPU per second of two builds compared round by
    round, and a sentence holds only where its whole 95% interval says it: "more" at the documents'
    a change (lexicon.csv), "slower ..., as the document found" at the line of the claim it restates
    (b2_download/mp_queue/slower, claims.csv), "reaches 3x" at its own number."""
    from ..judge import claims as published_claims
    from ..judge import lexicon
    from ..judge.prose import at_least, at_most, listed, settle
    from .doc002 import pair_label, pairs as gil_free_pairs

    said = chapter_words("b2_download")     # the words cell of its text

    rows = {r["claim_id"]: r for r in claims(df)}
    conds = [c for c in df["condition"].unique() if c != "curl"]     # as claims() reads them
    out = []
    many = rows.get("b2_download/nogil_speedup/many", {}).get("measured", {})
    if many:
        theirs = rows['b2_download/nogil_speedup/many']['published']
        t = _point_threads("b2_download/nogil_speedup/many")
        got = _worded(many, [(f"{pair_label((gil, ft))} ({t} threads)",
                              said.fill("pair-at-threads", gil=gil, free=ft, threads=t))
                             for gil, ft in gil_free_pairs(conds)])
        out.append(said.check(
            "nothing-near-the-documents-speed-up",
            settle(many.values(), lambda lo, hi: hi < 3, lambda lo, hi: lo >= 3),
            listed(said["many-files-speed-up-evidence"], sorted(got, key=lambda kv: -kv[1]["median"]), ".2f", "x"),
            why=said["why-loopback-gains-little"], theirs=f"{theirs:g}"))
    ok = df[(df["status"] == "ok") & (df["condition"] != "curl")] if "status" in df else df[df["condition"] != "curl"]
    have = set(ok["condition"])
    pairs = [(g, f) for g, f in interpreters.pairs() if g in have and f in have]   # builds.toml [pairs]
    if pairs and "cpu_per_wall" in ok:
        point = ["scenario", "threads", "writer", "repeat"]

        def cpu(g, f):
            """Build ``f``'s CPU seconds per wall second over build ``g``'s: each point's ratio within a
            round (the two measured back to back), the median over a round's points, then over rounds."""
            a, b = (ok[ok["condition"] == c].groupby(point)["cpu_per_wall"].median() for c in (f, g))
            both = (a / b).dropna()
            return stats.paired_median(both.groupby(level="repeat").median() if len(both) else [])
        more = {(g, f): cpu(g, f) for g, f in pairs}
        med = ok.groupby("condition")["cpu_per_wall"].median()
        rise = lexicon.rises("a change")     # "more CPU": at least 1.1 of the GIL twin's
        out.append(said.check(
            "free-threaded-uses-more-cpu",
            at_least(more.values(), rise),
            listed(said.fill("cpu-per-second-evidence", line=f"{rise:g}"),
                   [(said.fill("free-over-gil", free=f, gil=g), m,
                     " " + said.fill("medians-of-both", free=f"{med[f]:.2f}", gil=f"{med[g]:.2f}"))
                    for (g, f), m in more.items()])))
    slower = "b2_download/mp_queue/slower"      # the claim the sentence restates: "degraded", a change
    mp = rows.get(slower, {}).get("measured", {})
    if mp:
        t = _point_threads(slower)
        _, line = published_claims.line(slower)
        got = _worded(mp, [(f"{cond} ({scen}, {t} threads)", said.fill("build-in-case", build=cond, case=scen, threads=t))
                           for cond in sorted(conds) for scen in sorted(df["scenario"].unique())])
        out.append(said.check(
            "writer-process-slower-than-thread",
            at_most(mp.values(), line),
            listed(said.fill("process-over-thread-evidence", line=f"{line:g}"), got),
            why=said["why-a-writer-process-costs"]))
    return out


def history_prose(df: pd.DataFrame) -> list:
    """The version sweep's sentences, each checked against its samples: the streams counted as
    observed, curl against the fastest build on its whole 95% interval (paired by repeat), "faster" at
    the documents' a change (lexicon.csv)."""
    from ..judge import lexicon
    from ..judge.prose import at_least, listed

    said = chapter_words("b2_download")     # the words cell of its text

    out = []
    ok = df[df["condition"] != "curl"]
    streams = ok.groupby("scenario")["streams_per_file"].agg(["min", "max"])
    if len(streams):
        out.append(said.check(
            "both-cases-took-the-parallel-path", {"holds": bool((streams["min"] >= 2).all()), "open": False},
            said.fill("streams-per-file-evidence", cases="; ".join(
                said.fill("streams-of-a-case", case=sc, fewest=int(r["min"])) if r["max"] == r["min"] else
                said.fill("streams-of-a-case-range", case=sc, fewest=int(r["min"]), most=int(r["max"]))
                for sc, r in streams.iterrows()))))
    s = history_summary(df)
    curl = {sc: _by_repeat(df, "curl", sc, HISTORY_THREADS, "curl") for sc in set(s["scenario"])} if len(s) else {}
    curl = {sc: v for sc, v in curl.items() if len(v)}
    if len(s) and curl:
        # curl over the fastest build, each round's two measured back to back
        top = s.loc[s.groupby("scenario")["median"].idxmax()]
        faster = {r["scenario"]: (r["condition"], stats.paired_ratio(
            curl.get(r["scenario"], pd.Series(dtype=float)),
            _by_repeat(df, r["condition"], r["scenario"], HISTORY_THREADS, "thread"))) for _, r in top.iterrows()}
        rise = lexicon.rises("a change")     # "faster": at least 1.1 of the fastest build's speed
        out.append(said.check(
            "server-does-not-limit-any-build",
            at_least([m for _, m in faster.values()], rise),
            listed(said.fill("curl-over-fastest-build-evidence", line=f"{rise:g}"), [
                (said.fill("curl-over-build-in-case", case=sc, build=c), m,
                 " " + said.fill("curl-and-build-medians", curl=f"{curl[sc].median() if sc in curl else math.nan:,.0f}",
                                 build=f"{s.loc[(s['scenario'] == sc) & (s['condition'] == c), 'median'].iloc[0]:,.0f}"))
                for sc, (c, m) in faster.items()])))
    return out


# the sentences the book's first screen shows, by their words' keys (notebooks/15_b2_download.md)
HEADLINE = ("nothing-near-the-documents-speed-up",)

ANALYSIS = ModuleAnalysis(__name__, extras=("history_figure", "history_table", "history_prose"))
