"""How the flask_k6 chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.flask_k6`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..judge import results
from .. import stats
from ..judge.analysis import ModuleAnalysis, frame_cached
from ..judge.prose import words as chapter_words
from ..measure.experiments.flask_k6 import ENDPOINTS
from ..judge.tables import estimate_over_runs, stat_text


def published() -> pd.DataFrame:
    return results.reference("pyconjp2025_observations")


@frame_cached
def summary(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (cond, ep), g in df.groupby(["condition", "endpoint"], sort=True):
        s = stats.summarize(g["completed_in_window"], lower_is_better=False)
        rows.append({"condition": cond, "endpoint": ep, "runs": s["n"], "completed_in_window": s["median"],
                     "ci_lo": s["ci_lo"], "ci_hi": s["ci_hi"], "http_reqs": float(g["http_reqs"].median()),
                     "iterations": float(g["iterations"].median()), "failed": float(g["failed_requests"].median()),
                     "ok_in_window": float(g["ok_in_window"].median()), "p50_ms": float(g["p50_ms"].median()),
                     "p95_ms": float(g["p95_ms"].median()),
                     "gil_enabled": bool(g["gil_enabled"].fillna(False).astype(bool).all())})
    return pd.DataFrame(rows)


# the reading of "requests completed in 20 seconds" the verdict uses (claims.csv doc_statistic_words
# says why, from the document's words), and the other one, shown beside it
READINGS = (("completed_in_window", "requests completed within the k6 window"),
            ("http_reqs", "k6's http_reqs (also requests finished in its graceful stop)"))


def _by_repeat(df: pd.DataFrame, cond: str, col: str) -> pd.Series:
    g = df[df["condition"] == cond].drop_duplicates("repeat", keep="last")
    return g.set_index("repeat")[col]


def readings(df: pd.DataFrame) -> list[dict]:
    """Per endpoint and GIL / free-threaded pair, the ratio free-threaded / GIL by both readings
    of the document's count, each the median of per-repeat ratios (the two builds ran back to
    back in each repeat) with its interval."""
    from .doc002 import pair_label, pairs

    out = []
    for ep in ENDPOINTS:
        sel = df[df["endpoint"] == ep]
        for gil, ft in pairs(sel["condition"].unique()):
            for col, words in READINGS:
                if col not in sel.columns:
                    continue
                a, b = _by_repeat(sel, ft, col), _by_repeat(sel, gil, col)
                out.append({"endpoint": ep, "pair": pair_label((gil, ft)), "gil": gil, "free_threaded": ft,
                            "reading": words, "column": col, "used_for_verdict": col == READINGS[0][0],
                            "ft_median": float(a.median()), "gil_median": float(b.median()),
                            **stats.paired_ratio(a, b)})
    return out


def _all_failed(df: pd.DataFrame, endpoint: str, builds) -> str:
    """Where every request a build made to ``endpoint`` failed in every run (none answered 200),
    which builds and what k6 counted; '' where each build had requests answered."""
    if "ok_in_window" not in df.columns:
        return ""
    out = []
    for b in builds:
        g = df[(df["condition"] == b) & (df["endpoint"] == endpoint)]
        if len(g) and float(g["ok_in_window"].max()) == 0:
            out.append(f"{b} had no request answered 200 in {len(g)} run{'s' if len(g) != 1 else ''} "
                       f"({g['failed_requests'].median():.0f} failed a run)")
    return "; ".join(out)


def claims(df: pd.DataFrame) -> list[dict]:
    """Per row of the observations table and per GIL/free-threaded pair: the published ratio
    (free-threaded requests / GIL requests in 20 s) against ours, paired by repeat, on the
    reading claims.csv names (requests completed within the window); the row's note gives the
    other reading (k6's ``http_reqs``)."""
    from ..judge import claims as published_claims

    by = {(r["endpoint"], r["pair"], r["column"]): r for r in readings(df)}
    pub = published().set_index("File", drop=False)
    out = []
    for _, c in published_claims.of("flask_k6").iterrows():
        file = str(c["point"]).removeprefix("File=")
        ep = {"flask_app_io_bound": "io", "flask_app_cpu_bound": "cpu"}.get(file)
        if ep is None or file not in pub.index:
            continue
        row, cid = pub.loc[file], c["claim_id"]
        table_row = cid == f"flask_k6/{file}"         # the table's row, or a claim about the same reading
        published_ratio = published_claims.value(cid)
        measured = {}
        for endpoint in (ep, "io_fixed") if ep == "io" else (ep,):
            for (e, pair, col), r in by.items():
                if e != endpoint or col != READINGS[0][0] or not r["n"]:
                    continue
                other = by.get((e, pair, READINGS[1][0]))
                key = pair + ("" if endpoint == ep else f" ({endpoint})")
                failed = _all_failed(df, endpoint, (r["free_threaded"], r["gil"]))
                if failed:      # the document's requests did not run: a ratio of failures is no reading of it
                    measured[key] = published_claims.not_in_force(
                        published_claims.entry(r["ratio"], r), f"/{endpoint}: {failed}")
                    continue
                measured[key] = published_claims.judged(
                    cid, r["ratio"], r, statistic=published_claims.get(cid)["doc_statistic"],
                    note=f"/{endpoint}: {r['free_threaded']} {r['ft_median']:.0f}, {r['gil']} {r['gil_median']:.0f} "
                         "requests completed in the window"
                         + (f"; by k6's http_reqs {stat_text(other)}" if other else ""))
        out.append({"experiment": "flask_k6", "table": "pyconjp2025_observations" if table_row else "claims",
                    "claim_id": cid,
                    "claim": f"{row['File']}: free-threaded / GIL requests completed in the window",
                    "published": published_ratio, "unit": "ratio", "measured": measured, "band": published_claims.band(cid),
                    "published_as": (f"GIL {row['GIL Enabled (as published)']}, free-threaded "
                                     f"{row['Free Threaded (as published)']} (3.14 RC2, 15 VUs, 20 s)"
                                     if table_row else c["quote"])})
    return out


def side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    s = summary(df)
    rows = []
    for _, r in s.iterrows():
        rows.append({"condition": r["condition"], "endpoint": f"/{r['endpoint']}",
                     "completed in window: median [interval]": estimate_over_runs(
                         r["completed_in_window"], r["ci_lo"], r["ci_hi"], r["runs"]),
                     "ok (200) in window": f"{r['ok_in_window']:.0f}", "http_reqs": f"{r['http_reqs']:.0f}",
                     "iterations": f"{r['iterations']:.0f}", "failed": f"{r['failed']:.0f}",
                     "p50 ms": f"{r['p50_ms']:,.0f}", "p95 ms": f"{r['p95_ms']:,.0f}"})
    return pd.DataFrame(rows)


def published_table() -> pd.DataFrame:
    p = published()
    p = p[p["File"].str.startswith("flask")]
    return p[["File", "GIL Enabled (as published)", "Free Threaded (as published)"]]


def findings(df: pd.DataFrame) -> str:
    s = summary(df).set_index(["condition", "endpoint"])
    lines = []
    for (cond, ep), r in s.iterrows():
        lines.append(f"- **{cond}**, `/{ep}`: {r['completed_in_window']:.0f} requests completed in the window "
                     f"({r['ok_in_window']:.0f} answered 200), {r['http_reqs']:.0f} made in all, {r['failed']:.0f} "
                     f"failed; p50 {r['p50_ms']:,.0f} ms, p95 {r['p95_ms']:,.0f} ms.")
    both = pd.DataFrame(readings(df))
    if both.empty:
        return "\n".join(lines)
    lines.append("\nThe document counts \"requests completed in 20 seconds\". The verdicts read that as the "
                 "requests that completed inside the window (its words); k6's `http_reqs` also counts the "
                 "requests that finished in k6's graceful stop after it. Free-threaded / GIL by both readings "
                 "(median of per-repeat ratios [interval], n pairs):")
    for (ep, pair), g in both.groupby(["endpoint", "pair"], sort=False):
        parts = [f"{r.reading}{' (the verdict)' if r.used_for_verdict else ''}: {stat_text(r)}, n={r.n}"
                 for r in g.itertuples()]
        lines.append(f"- `/{ep}`, {pair}: " + "; ".join(parts) + ".")
    return "\n".join(lines)


def figure(df: pd.DataFrame):
    import matplotlib.pyplot as plt

    from ..present import plots

    s = summary(df)
    pal = plots.palette(s["condition"].unique())
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 7))
    conds, eps = sorted(pal), list(dict.fromkeys(s["endpoint"]))
    width = 0.8 / len(conds)
    for i, c in enumerate(conds):
        g = s[s["condition"] == c].set_index("endpoint").reindex(eps)
        x = np.arange(len(eps)) + (i - (len(conds) - 1) / 2) * width
        a1.bar(x, g["completed_in_window"], width, color=pal[c], label=c,
               yerr=[g["completed_in_window"] - g["ci_lo"], g["ci_hi"] - g["completed_in_window"]], capsize=3)
        a1.scatter(x, g["failed"], marker="x", color="black", zorder=5, label="failed requests" if i == 0 else None)
        a2.bar(x, g["p95_ms"] / 1000, width, color=pal[c], label=c)
    pub = published().set_index("File")
    for j, ep in enumerate(eps):
        key = {"cpu": "flask_app_cpu_bound", "io": "flask_app_io_bound", "io_fixed": "flask_app_io_bound"}[ep]
        for v, ls, who in ((pub.at[key, "gil_enabled_value"], "--", "the document's GIL build"),
                           (pub.at[key, "free_threaded_value"], ":", "the document's free-threaded build")):
            a1.plot([j - 0.45, j + 0.45], [v, v], color="black", linestyle=ls, linewidth=1,
                    label=who if j == 0 else None)
    a1.set_xticks(range(len(eps)), [f"/{e}" for e in eps])
    a1.set_ylabel("requests completed in the window")
    a1.set_title("Requests completed in the k6 window (bars: median, 95% interval; lines: the document's)",
                 fontsize=9)
    a1.legend(fontsize=8.5)
    a2.set_xticks(range(len(eps)), [f"/{e}" for e in eps])
    a2.set_ylabel("p95 latency (s)")
    a2.set_title("95th percentile latency", fontsize=9)
    fig.tight_layout()
    return fig


def explorer(df: pd.DataFrame):
    import matplotlib.pyplot as plt

    from ..present import plots, widgets

    s = summary(df)
    pal = plots.palette(s["condition"].unique())
    eps = list(dict.fromkeys(s["endpoint"]))
    metrics = [("completed_in_window", "completed in window"), ("http_reqs", "http_reqs (all made)"),
               ("failed", "failed requests"), ("p95_ms", "p95 latency, ms")]

    def draw(ep, metric):
        fig, ax = plt.subplots(figsize=(7, 3.2))
        g = s[s["endpoint"] == ep]
        ax.bar(g["condition"], g[metric], color=[pal[c] for c in g["condition"]])
        ax.set_ylabel(dict(metrics)[metric])
        ax.set_title(f"/{ep}: {dict(metrics)[metric]}", fontsize=10)
        ax.set_ylim(0, max(float(s[metric].max()) * 1.15, 1))
        return fig

    return widgets.stack_explorer(draw, ("endpoint", eps, [f"/{e}" for e in eps]),
                                  ("metric", [m for m, _ in metrics], [label for _, label in metrics]),
                                  title="Explore the k6 results")


def prose(df: pd.DataFrame) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``: each build against
    another is the verdicts' ratio (:func:`readings`: requests completed in the window, the median of
    per-repeat ratios), and a sentence holds only where its whole 95% interval says it: "completes
    more" at the documents' a change (lexicon.csv: at least 1.1), never a line of its own."""
    from ..judge import lexicon
    from ..judge.prose import at_least, listed, together

    from ..measure import interpreters

    said = chapter_words("flask_k6")     # the words cell of its text

    ok = df[df["status"] == "ok"]
    col = READINGS[0][0]
    out = []
    gil, free = interpreters.today_pair()       # builds.toml [pairs], today's: 3.13.5 and 3.13.5t
    twin = interpreters.twin_of(free)
    rise = lexicon.rises("a change")     # "completes more requests": at least 1.1 of the other's

    def more(sel, a, b):
        """Build ``a``'s requests completed in the window over build ``b``'s, paired by repeat."""
        return stats.paired_ratio(_by_repeat(sel, a, col), _by_repeat(sel, b, col))

    def shown(sel, m, a, b):
        return (said.fill("build-over-build", build=a, other=b), m,
                " " + said.fill("medians-of-both", build=f"{_by_repeat(sel, a, col).median():,.0f}",
                                other=f"{_by_repeat(sel, b, col).median():,.0f}"))
    for ep in ("io_fixed", "io"):
        sel = ok[ok["endpoint"] == ep]
        have = set(sel["condition"])
        if {gil, free, twin} <= have:
            ft, tw = more(sel, free, gil), more(sel, twin, gil)
            out.append(said.check(
                "free-threaded-binary-completes-more-gil-on-or-off",
                together(*(at_least([m], rise) for m in (ft, tw))),
                listed(said.fill("requests-ratio-evidence", line=f"{rise:g}"),
                       [shown(sel, ft, free, gil), shown(sel, tw, twin, gil)]),
                why="" if ep == "io" else said["why-the-build-not-the-gil"], endpoint=ep, gil=gil))
        elif {gil, free} <= have:
            ft = more(sel, free, gil)
            out.append(said.check(
                "free-threaded-completes-more-twin-not-measured",
                at_least([ft], rise),
                listed(said.fill("requests-ratio-evidence", line=f"{rise:g}"), [shown(sel, ft, free, gil)]),
                endpoint=ep, gil=gil, twin=twin))
    out += batches(ok, said)
    return out


BATCH_WINDOWS = 3       # windows of one build a sentence about its counts reads, at the least


def batches(ok: pd.DataFrame, said) -> list:
    """Whether a GIL build's ``/cpu`` windows counted whole batches of the virtual users: requests
    that take turns with the GIL end together, so where every window of a build (at least
    :data:`BATCH_WINDOWS`, one size and load) counted a whole number of them, the count says how
    many batches fit in the window, not a rate, and a window a little longer or shorter moves it
    by a whole batch.  A computed sentence, one per GIL build and size measured so, shown only
    where every window's count is a multiple of the virtual users (a count is what it is: where
    they are not, the counts are a rate's and nothing is said)."""
    from ..judge.prose import gil_by_condition

    out = []
    cpu = ok[ok["endpoint"] == "cpu"]
    on = {c for c, gil in gil_by_condition(cpu).items() if gil}     # as each sample recorded its GIL
    for (cond, vus, window), g in cpu.groupby(["condition", "vus", "duration_s"], sort=True):
        counts = sorted(int(c) for c in pd.to_numeric(g[READINGS[0][0]], errors="coerce").dropna())
        if cond not in on or len(counts) < BATCH_WINDOWS:
            continue
        if not all(c > 0 and c % int(vus) == 0 for c in counts):
            continue
        out.append(said.check(
            "gil-counts-whole-batches", {"holds": True, "open": False},
            said.fill("batch-evidence", counts=", ".join(map(str, counts)), n=len(counts),
                      window=f"{float(window):g}"),
            why=said["why-requests-end-together"], build=cond, vus=int(vus)))
    return out


ANALYSIS = ModuleAnalysis(__name__)
