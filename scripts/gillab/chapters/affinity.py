"""How the affinity chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.affinity`)."""
from __future__ import annotations

import math

import pandas as pd

from .. import stats
from ..judge.analysis import ModuleAnalysis, frame_cached
from ..judge.prose import words as chapter_words
from ..judge.tables import estimate_over_runs
from .echo import median_text, per_run
from ..measure.experiments.echo import request_cost
from ..measure.experiments.affinity import PLACEMENTS


run_values = per_run      # what the documents' conclusions (claims.csv) take the ratio of


def published() -> pd.DataFrame:
    from ..judge import results

    return results.reference("pbts13_t5_echo_rps_cpu_affinity")


def published_table() -> pd.DataFrame:
    p = published()
    return pd.DataFrame({"CPU-bound threads": p["cpu_bound_threads"], "RPS (as printed)": p["rps_as_published"],
                         "setup": p["affinity_setup"]})


@frame_cached
def summary(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (cond, client, n), g in df.groupby(["condition", "client", "cpu_threads"], sort=True):
        s = stats.summarize(per_run(g), lower_is_better=False)     # over runs, each run's median window
        per = g.drop_duplicates(["run_id", "repeat"])
        rows.append({"condition": cond, "client": client, "cpu_threads": int(n), "runs": s["n"], "windows": len(g),
                     "rps_median": s["median"], "rps_ci_lo": s["ci_lo"], "rps_ci_hi": s["ci_hi"],
                     "server_affinity": ";".join(sorted(set(per["server_affinity"].astype(str)))),
                     "handler_last_cpu": ";".join(sorted(set(per["handler_last_cpu"].astype(int).astype(str)))),
                     "client_affinity": ";".join(sorted(set(per["client_affinity"].astype(str)))),
                     "client_cpu_share": float(per["client_cpu_share"].median())})
    return pd.DataFrame(rows)


def _where(per: pd.DataFrame, role: str) -> str:
    """A role's CPU as the placement reads saw it (its most frequent CPU and the share of reads
    there, median over runs), or "not read" for samples stored before placements were recorded."""
    col, share = f"{role}_cpu", f"{role}_share"
    if col not in per or per[col].isna().all():
        return "not read"
    cpus = per[col].dropna().astype(int)
    return f"CPU {cpus.mode().iloc[0]} ({float(per[share].median()):.0%} of reads)"


def placement_table(df: pd.DataFrame) -> pd.DataFrame:
    """What a request costs by where the threads ran: per build, client placement and CPU threads,
    the median rate, the cost of a request against the same placement alone in switch intervals
    (5 ms: ``(1/RPS - 1/RPS alone) / interval``, each run against the median alone, the median over
    runs with its 95% interval), and where the handler, the CPU threads and the client ran."""
    rows = []
    for (cond, client), g in df.groupby(["condition", "client"], sort=True):
        alone = per_run(g[g["cpu_threads"] == 0])
        rps0 = float(alone.median()) if len(alone) else math.nan
        for n, h in g.groupby("cpu_threads"):
            runs = per_run(h)
            per = h.drop_duplicates(["run_id", "repeat"])
            given = pd.to_numeric(per["switch_interval"], errors="coerce").dropna() if "switch_interval" in per else []
            si = float(given.iloc[0]) if len(given) else 0.005     # the interpreter's default when none was set
            c = stats.summarize([request_cost(x, rps0, si) for x in runs] if n else [])
            rows.append({"build": cond, "client": client, "CPU threads": int(n), "runs": len(runs),
                         "median RPS": f"{float(runs.median()):,.0f}",
                         "a request costs (intervals, 95%)": "-" if not n else median_text(
                             c["median"], c["ci_lo"], c["ci_hi"], c["n"]),
                         "handler ran on": _where(per, "handler"), "CPU threads ran on": _where(per, "cpu_threads"),
                         "client ran on": _where(per, "client")})
    return pd.DataFrame(rows)


def claims(df: pd.DataFrame) -> list[dict]:
    from ..judge import claims as published_claims

    out = []
    conds = sorted(df["condition"].unique())
    for _, row in published().iterrows():
        n = int(row["cpu_bound_threads"])
        # the author's client shared the server's core: only that placement answers his table (the
        # other core is a finding of the chapter, and the October 7 update's conclusion)
        for client in [c for c in df["client"].unique() if c == "same"]:
            cid = f"affinity/cpu_threads={n}/client={client}"
            pub = published_claims.value(cid)
            measured = {}
            for cond in conds:
                g = df[(df["condition"] == cond) & (df["cpu_threads"] == n) & (df["client"] == client)]
                if len(g):
                    s = stats.summarize(per_run(g), lower_is_better=False)     # n: runs
                    measured[cond] = published_claims.judged(cid, s["median"], s, best=s["best"], note="")
            out.append({
                "experiment": "affinity", "table": "pbts13_t5_echo_rps_cpu_affinity",
                "claim_id": cid,
                "claim": f"echo RPS, server on one core, {n} CPU threads, client on the {client} core",
                "published": pub, "unit": "rps", "measured": measured, "band": published_claims.band(cid),
                "published_as": f"{row['rps_as_published']} (the author's client shared the server's core)",
            })
    return out


def _placement_off(per: pd.DataFrame, client: str) -> list[str]:
    """What the samples ``per`` (one per run) recorded where it is not the placement asked: the
    server on one CPU, the client on that CPU (``same``) or on another single one (``other``)."""
    placed = {(str(a), str(b)) for a, b in zip(per["server_affinity"], per["client_affinity"])}
    return sorted(f"server on {a}, client on {b}" for a, b in placed
                  if "," in a or "," in b or (a == b) != (client == "same"))


def settings_in_force(df: pd.DataFrame, rows: list[dict]) -> list[tuple[str, str]]:
    """The document's table is of a server whose threads all ran on one core, the client on the
    same core (the October update: or on the other): a row reading a point whose samples record
    another placement (the server or the client on more than one CPU, or where the other placement
    belongs: an affinity the OS refused or a cpuset narrowed) reads "not in force here" with what
    was recorded.  Returns the (claim, condition) pairs."""
    from ..judge import claims as published_claims

    if not {"server_affinity", "client_affinity"} <= set(df.columns):    # nothing recorded to read
        return []

    def reasons(claim_id, sels, cond):
        wrong = []
        for sel in sels:
            if {"cpu_threads", "client"} <= set(sel):
                n, client = int(sel["cpu_threads"]), sel["client"]
                g = df[(df["condition"] == cond) & (df["cpu_threads"] == n) & (df["client"] == client)]
                wrong += [f"{n} CPU threads, client {client}: {w}"
                          for w in _placement_off(g.drop_duplicates(["run_id", "repeat"]), client)]
        return ["the server on one core asked, its client on the same or the other; recorded: " + "; ".join(wrong)] \
            if wrong else []

    return published_claims.mark_not_in_force(rows, reasons)


def side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    s = summary(df)
    pub = published().set_index("cpu_bound_threads")["rps_numeric"]
    rows = []
    for n in sorted(set(s["cpu_threads"]) | set(pub.index)):
        line = {"CPU threads": n, "document (client on the same core)": f"{pub[n]:,.0f}" if n in pub.index else "-"}
        for (cond, client), g in s.groupby(["condition", "client"]):
            m = g[g["cpu_threads"] == n]
            r = m.iloc[0] if len(m) else None     # one run, or a few: said so, not a range as an interval
            line[f"{cond}, client {client}"] = estimate_over_runs(
                round(r["rps_median"]), round(r["rps_ci_lo"]), round(r["rps_ci_hi"]), r["runs"]) if r is not None else "-"
        rows.append(line)
    return pd.DataFrame(rows)


def findings(df: pd.DataFrame) -> str:
    s = summary(df)
    lines = []
    for cond, g in s.groupby("condition"):
        parts = []
        for client, h in g.groupby("client"):
            h = h.set_index("cpu_threads")
            parts.append(f"client on the {client} core: " + ", ".join(
                f"{n} threads {h.at[n, 'rps_median']:,.0f}" for n in h.index))
        lines.append(f"- **{cond}**: " + "; ".join(parts) + " (RPS, medians).")
    return "\n".join(lines)


def figure(df: pd.DataFrame):
    import matplotlib.pyplot as plt

    from ..present import plots

    s = summary(df)
    conds = sorted(s["condition"].unique())
    pal = plots.palette(conds)
    fig, ax = plt.subplots(figsize=(8, 4.4))
    pub = published()
    for cond in conds:
        for client, style in (("same", "-"), ("other", "--")):
            h = s[(s["condition"] == cond) & (s["client"] == client)].sort_values("cpu_threads")
            if not len(h):
                continue
            ax.errorbar(h["cpu_threads"], h["rps_median"], yerr=[h["rps_median"] - h["rps_ci_lo"],
                        h["rps_ci_hi"] - h["rps_median"]], fmt="o" + style, color=pal[cond], capsize=3,
                        label=f"{cond}, client on the {client} core")
    ax.plot(pub["cpu_bound_threads"], pub["rps_numeric"], label="document (client on the same core)",
            **plots.PUBLISHED_STYLE)
    ax.set_yscale("symlog", linthresh=1)
    ax.set_xscale("symlog", linthresh=1)
    ticks = sorted({int(n) for n in s["cpu_threads"].unique()} | {int(n) for n in pub["cpu_bound_threads"]})
    ax.set_xticks(ticks, [str(n) for n in ticks])      # the document's points too, where ours stop short
    ax.set_xlabel("CPU-bound threads in the server")
    ax.set_ylabel("requests / second (median, interval)")
    ax.set_title("Every server thread on one core; the client on the same core or the other", fontsize=10)
    ax.legend(fontsize=8.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def explorer(df: pd.DataFrame):
    import matplotlib.pyplot as plt

    from ..present import plots, widgets

    pal = plots.palette(df["condition"].unique())
    ns = sorted(df["cpu_threads"].unique())
    clients = [c for c in PLACEMENTS if c in set(df["client"])]
    pub = published().set_index("cpu_bound_threads")["rps_numeric"]
    ymax = float(df["rps"].max()) * 1.2

    def draw(client, n):
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        g = df[(df["client"] == client) & (df["cpu_threads"] == n)]
        plots.samples_by_condition(ax, g, "rps", pal)
        if n in pub.index:
            ax.axhline(pub[n], color="black", linestyle="--", label=f"document: {pub[n]:,.0f}")
            ax.legend(fontsize=8.5, loc="lower left")
        ax.set_yscale("symlog", linthresh=1)
        ax.set_ylim(0, ymax)
        ax.set_xlabel("")
        ax.set_ylabel("requests in each window")
        ax.set_title(f"client on the {client} core, {n} CPU threads: every window", fontsize=10)
        return fig

    return widgets.stack_explorer(draw, ("client", clients, [f"on the {c} core" for c in clients]),
                                  ("CPU threads", ns, [str(n) for n in ns]), title="Explore every counted window")


def prose(df: pd.DataFrame) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``: each ratio of two
    points is computed as the conclusions compute theirs (claims.csv ``affinity/conclusion/...``: each
    run's median window, paired by round, :func:`gillab.judge.claims.round_ratio`), and a sentence
    holds only where its whole 95% interval says it.  Their words are the chapter's text's
    (``notebooks/05_affinity.md``).  A sentence that says what a claim says reads the claim's line
    (claims.csv): "the author's update holds" is affinity/conclusion/same_core_only's; one in the
    documents' words reads the word's line (lexicon.csv): "fewer" and "faster" a change."""
    from ..judge import claims as published_claims
    from ..judge import lexicon
    from ..judge.prose import at_least, at_most, gil_by_condition, listed, ok_rows

    said = chapter_words("affinity")     # the words cell of its text

    ok = ok_rows(df)
    gil_on = gil_by_condition(df)
    conds = sorted(ok["condition"].unique())

    def runs(c, client, n):
        return per_run(ok[(ok["condition"] == c) & (ok["client"] == client) & (ok["cpu_threads"] == n)])

    def ratio(c, num, den):
        """(client, CPU threads) ``num`` over ``den`` for build ``c``: the ratio, its interval, and the
        two medians (RPS); None where either point was not measured."""
        a, b = runs(c, *num), runs(c, *den)
        if not len(a) or not len(b):
            return None
        return published_claims.round_ratio(a, b) | {"rps": (float(a.median()), float(b.median()))}

    def shown(label, m):
        return label, m, " " + said.fill("medians-beside", a=f"{m['rps'][0]:,.0f}", b=f"{m['rps'][1]:,.0f}")
    how = said["paired-ratio"]
    out = []
    gil = [c for c in conds if gil_on.get(c)]
    r = {c: m for c in gil if (m := ratio(c, ("same", 1), ("other", 1)))}
    if r:
        helps, _ = published_claims.line("affinity/conclusion/same_core_only")    # "helps": a change
        out.append(said.check(
            "authors-update-holds", at_least(r.values(), helps),
            listed(said.fill("same-core-over-other-evidence", how=how, line=f"{helps:g}"),
                   [shown(c, m) for c, m in r.items()]),
            why=said["why-the-other-core-brings-the-convoy"]))
    free = [c for c in conds if not gil_on.get(c, True)]
    top = int(ok["cpu_threads"].max())
    r = {c: {cl: m for cl in ("same", "other") if (m := ratio(c, (cl, top), (cl, 1)))} for c in free}
    r = {c: v for c, v in r.items() if v}
    fall, rise = lexicon.falls("a change"), lexicon.rises("a change")     # "fewer"; "faster"
    if r:
        out.append(said.check(
            "free-threaded-more-threads-fewer-requests",
            at_most([m for v in r.values() for m in v.values()], fall),
            listed(said.fill("threads-over-one-evidence", threads=top, how=how, fall=f"{fall:g}"),
                   [shown(said.fill("build-client-on-core", build=c, core=cl), m)
                    for c, v in r.items() for cl, m in v.items()]),
            threads=top))
    alone = {c: m for c in conds if (m := ratio(c, ("same", 0), ("other", 0)))}
    out.append(said.check(
        "alone-same-core-is-faster",
        at_least(alone.values(), rise) if alone else {"holds": False},
        listed(said.fill("alone-same-core-over-other-evidence", how=how, rise=f"{rise:g}"),
               [shown(c, m) for c, m in alone.items()])
        if alone else said.fill("alone-same-core-over-other-not-measured", how=how),
        why=said["why-one-core-hands-over-cheaply"]))
    return out


ANALYSIS = ModuleAnalysis(__name__, extras=('placement_table',))
