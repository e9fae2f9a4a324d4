"""Every campaign's sittings, for the method chapter's steadiness section: each whole run (its pace
beside the steadiness rule of :mod:`gillab.judge.steadiness`, from its :class:`gillab.record.RunRecord`),
the runs of chapters measured apart from a whole run read as stretches, the pace probes over time,
and the rule that says whether a sample was alone (:mod:`gillab.measure.alone`).  Read from the
records when the book builds.
"""
from __future__ import annotations

import functools

from ..judge import tables
from ..measure import experiments
from . import timing


def whole_run_records() -> dict[str, list]:
    """Per campaign (every one in ``data/results/``, oldest first), the records of its whole runs
    (``reproduce-*.json`` in its folder), oldest first; then those in ``data/timing/`` whose
    campaign is not in ``data/results/`` (each with its ``file``)."""
    from ..measure import campaigns

    out: dict[str, list[dict]] = {}
    seen = set()
    from ..record import load

    for c in campaigns.all_campaigns():
        recs = campaigns.whole_runs(c)
        out[c.id] = sorted(recs, key=lambda r: r.started)
        seen |= {r.file for r in recs}
    for f in sorted(timing.timing_dir().glob("reproduce-*.json")):
        if f.name not in seen:
            rec = load(f)
            out.setdefault(rec.campaign or "?", []).append(rec)
    return out


def _pace_cell(rec) -> str:
    """A whole run's pace against the times its forecast read, as its record says: every probe's
    where it holds that, and its first probe's where the plan read another."""
    speed = rec.speed or ""
    if rec.speed_factor is None or not speed:
        return "not recorded"
    if speed.startswith("no build"):
        return "not compared (no time to compare with)"
    if rec.pace is None or abs(rec.pace - rec.speed_factor) < 0.005:
        return f"{rec.speed_factor:.2f}x"
    return f"{rec.pace:.2f}x (first probe {rec.speed_factor:.2f}x)"


def _when(stamp) -> float:
    import datetime as dt

    try:
        return dt.datetime.fromisoformat(stamp).timestamp()
    except (TypeError, ValueError):
        return float("nan")


def _span(started: str | None, finished: str | None) -> tuple[float, float]:
    """A run's start and end (its start where it never finished), in seconds."""
    return _when(started), _when(finished or started)


# runs apart from a whole run further apart than this (one's end to the next one's start) are two stretches
STRETCH_GAP_S = 3600.0


def apart_runs(c, whole: list) -> list[list[dict]]:
    """The runs of ``c``'s chapters that measured something outside every whole run of it (a
    chapter measured again on its own, `gillab measure`/`run`, or a campaign measured chapter by
    chapter), in stretches: the runs between two whole runs (or before the first, after the last)
    with no more than :data:`STRETCH_GAP_S` between one and the next are one stretch of measuring,
    oldest first, and each has a steadiness too."""
    from ..measure import campaigns

    spans = [_span(r.started, r.finished) for r in whole]
    stretches: list[list[dict]] = []
    place = None
    for r in sorted(campaigns.runs(c), key=lambda r: r.get("started") or ""):
        t = _when(r.get("started"))
        if not r.get("measured") or any(a <= t <= b for a, b in spans):
            continue
        between = sum(a < t for a, _ in spans)
        if place != between or t - _span(stretches[-1][-1].get("started"), stretches[-1][-1].get("finished"))[1] > STRETCH_GAP_S:
            stretches.append([])
        place = between
        stretches[-1].append(r)
    return stretches


def apart_steadiness(runs: list[dict]):
    """The rule (:func:`gillab.judge.steadiness.of`) over the runs apart from a whole run, read as
    one stretch: their probes in order and the largest steal share of any; *not recorded* where
    one of them took no probe (a run before the probe existed)."""
    from ..judge import steadiness

    bare = sum(not r.get("probes") for r in runs)
    if bare:
        return steadiness.Steadiness(steadiness.NOT_RECORDED, 0, None, None,
                                     f"{bare} of the {len(runs)} runs took no pace probe")
    steals = [r["cpu_steal_share"] for r in runs if isinstance(r.get("cpu_steal_share"), (int, float))]
    return steadiness.of({"probes": [p for r in runs for p in r["probes"]],
                          "cpu_steal_share": max(steals) if steals else None})


def _still_read(c, runs: list[dict]) -> str:
    """Which chapters' samples of ``runs`` no page reads now, in words to append to a row ('' where
    every sample is read): a chapter measured again keeps its former samples in its file, read by
    nothing (:func:`gillab.judge.results.current_rows`), and samples of a configuration no profile
    resolves to today (:func:`_configs`) are read by no page either."""
    from ..judge import results

    ids, gone = {r.get("run_id") for r in runs}, []
    for exp in dict.fromkeys(r.get("experiment") for r in runs):
        df = c.store(exp).frame()
        if df.empty or "run_id" not in df.columns:
            continue
        stored = int(df["run_id"].isin(ids).sum())
        cur = results.current_rows(df, exp)
        read = int((cur["run_id"].isin(ids) & cur["config"].isin(_configs(exp))).sum())
        if stored and read < stored:
            gone.append(exp if not read else f"{1 - read / stored:.0%} of {exp}")
    if not gone:
        return ""
    return f"; not read now (measured again, or at sizes no profile asks for): {', '.join(gone)}"


@functools.lru_cache(maxsize=None)
def _configs(name: str) -> frozenset[str]:
    """The configuration ids the profiles of chapter ``name`` resolve to today: the samples of any
    other configuration (a chapter measured again at new sizes) no page reads."""
    from ..measure.profiles import PROFILES, ParameterError

    exp, out = experiments.get(name), set()
    for profile in PROFILES:
        try:
            out.add(exp.config_id(exp.resolve(profile)))
        except (ParameterError, KeyError):
            continue
    return frozenset(out)


def _inside(c, rec) -> list[dict]:
    """The chapters' runs of ``c`` that a whole run's record spans."""
    from ..measure import campaigns

    a, b = _span(rec.started, rec.finished)
    return [r for r in campaigns.runs(c) if a <= _when(r.get("started")) <= b]


def _probes_cell(st) -> str:
    """The steadiness table's probes cell: how many, the slowest over the fastest (and the widest gap
    between the CPUs' paces a probe saw, where the probes were pinned to each CPU)."""
    from ..judge import steadiness

    if st.outcome == steadiness.NOT_RECORDED:
        return "not recorded"
    gap = f"; CPUs {st.cpu_gap:.2f}x apart" if st.cpu_gap is not None else ""
    return f"{st.probes}" + (f" ({st.spread:.2f}x{gap})" if st.spread is not None else "")


def _apart_row(name: str, runs: list[dict], c=None) -> str:
    from ..judge import steadiness

    st = apart_steadiness(runs)
    names = list(dict.fromkeys(r.get("experiment", "?") for r in runs))
    chapters = ", ".join(names) if len(names) <= 4 else f"{len(names)} chapters"
    profiles = ", ".join(f"`{p}`" for p in dict.fromkeys(r.get("profile", "?") for r in runs))
    first, last = runs[0], runs[-1]
    span = " → ".join(((r.get(k) or "?")[:16].replace("T", " ")) for r, k in ((first, "started"), (last, "finished")))
    load = " → ".join(str((r.get(k) or ["?"])[0]) for r, k in ((first, "loadavg_start"), (last, "loadavg_end")))
    steals = [r["cpu_steal_share"] for r in runs if isinstance(r.get("cpu_steal_share"), (int, float))]
    stolen = f"{max(steals):.1%} (the most of its runs)" if steals else "not recorded"
    probes = _probes_cell(st)
    some = any(r.get("probes") for r in runs)
    verdict = (f"**{st.outcome}**: {st.why}" if st.outcome != steadiness.NOT_RECORDED else
               f"not recorded: {st.why}" if some else "not recorded")
    return (f"| {name} | {len(runs)} run{'s' if len(runs) != 1 else ''} apart from a whole run ({profiles}: "
            f"{chapters}), {span}{_still_read(c, runs) if c is not None else ''} | none (no forecast) | {load} "
            f"| {stolen} "
            f"| {probes} | {verdict} |")


def steadiness_table(campaign: str | None = None) -> str:
    """Each campaign's whole runs, their pace beside their steadiness (:mod:`gillab.judge.steadiness`):
    the pace their forecast measured, the load average from start to end, the share of CPU time
    stolen over the run, the pace probes (how many, the slowest over the fastest) and what the
    rule says; a record written before the probe says *not recorded*, and a campaign without a
    whole-run record says so (for the method chapter; computed when the book builds).  The rows of
    the reference and of ``campaign`` (the reader's) are shown, every other campaign's folded under
    a line that counts them."""
    from ..judge import steadiness
    from ..measure import campaigns

    committed = {c.id for c in campaigns.all_campaigns()}
    head = ["| campaign | whole run | pace (x the time its forecast read) | load average, start → end "
            "| CPU stolen over the run | pace probes (slowest / fastest; CPUs apart) | steadiness |",
            "|---|---|---|---|---|---|---|"]
    shown, others = [], []
    by_id = {c.id: c for c in campaigns.all_campaigns()}
    ref = campaigns.reference_id()      # which samples no page reads: said of the reference's runs (reading
    for cid, recs in whole_run_records().items():   # every campaign's samples would slow the book down)
        rows = shown if cid in (ref, campaign) else others
        name = f"`{cid}`" + ("" if cid in committed else " (not in `data/results/`)")
        apart = apart_runs(by_id[cid], recs) if cid in by_id else []
        if not recs:
            rows.append(f"| {name} | no whole-run record in its folder | not recorded | not recorded | not recorded "
                        "| not recorded | not recorded |")
        for r in recs:
            st = steadiness.of(r)
            load = " → ".join(str((getattr(r, k) or ["?"])[0]) for k in ("loadavg_start", "loadavg_end"))
            steal = r.cpu_steal_share
            probes = _probes_cell(st)
            verdict = st.outcome if st.outcome == steadiness.NOT_RECORDED else f"**{st.outcome}**: {st.why}"
            later = _still_read(by_id[cid], _inside(by_id[cid], r)) if cid == ref else ""
            rows.append(f"| {name} | `{r.profile}`, {(r.started or '?')[:16].replace('T', ' ')}{later} "
                        f"| {_pace_cell(r)} | {load} | {'not recorded' if steal is None else f'{steal:.1%}'} "
                        f"| {probes} | {verdict} |")
        rows += [_apart_row(name, runs, by_id[cid] if cid == ref else None) for runs in apart]
    return ("Every campaign's whole runs (`gillab reproduce`), their pace beside their steadiness, from the "
            "records in each campaign's folder (and `data/timing/`): " + steadiness.rule_words() + " "
            "(`gillab.judge.steadiness`, fixed before any sitting was read against it; it names no CPU). A record "
            "written before the probe existed holds no probes: its steadiness is *not recorded*, whatever its load "
            "and steal were. Chapters measured on their own outside a whole run (`gillab measure` or `run`: a "
            "chapter measured again, or a campaign measured chapter by chapter) take the same probes (the runs before the "
            "probe existed took none), and their runs between two whole runs (or before the first, after the last), "
            f"none more than {STRETCH_GAP_S / 3600:g} hour after the one before, are read as one stretch, on a row "
            "of their own: it has no forecast, so no pace against one (*none*), and "
            "its steal is the most any of its runs lost. The reference's rows say which of their chapters' samples "
            "no page reads now (the chapter was measured again, or at sizes no profile asks for since): their "
            "steadiness no longer bears on a result.\n\n" + "\n".join(head + shown) + "\n"
            + ("\n" + tables.details_md(f"Every other campaign's runs: {len(others)} rows",
                                        "\n".join(head + others)) if others else ""))


def controls_table(controls: dict) -> str:
    """What each campaign's controls say of its pace from run to run, for the method chapter:
    ``controls`` maps a campaign (the reference, the reader's) to its
    :func:`gillab.judge.steadiness.controls_of`.  The probes read the pace every five minutes; the
    controls read it at the grain every verdict reads, a run against a run of identical work."""
    head = ["| campaign | control x build rows with runs enough | inside their band | wider than their band "
            "(identical runs spread more than it allows) | outside it |", "|---|---|---|---|---|"]
    body, listed = [], []
    for cid, c in controls.items():
        inside = c.judged - len(c.wide) - len(c.failed)
        body.append(f"| `{cid}` | {c.judged} | {inside} | {len(c.wide)} | {len(c.failed)} |")
        if c.wide or c.failed:
            listed.append(tables.details_md(
                f"{cid}: the controls wider than their band or outside it, with their 95% intervals",
                "\n".join(f"- {w} (wider)" for w in c.wide) + "\n" + "\n".join(f"- {f} (outside)" for f in c.failed)))
    if not body:
        return ""
    return ("A control compares runs of identical work (one thread against one thread at another switch interval, "
            "an echo server alone at two intervals), so only the machine's pace from run to run can move it. Where its "
            "95% interval (runs enough for one) is wider than its whole band, runs of identical work spread more than "
            "the band allows: the rows it guards carry the same spread, the machine's and not the GIL's, and each open "
            "one says so (\"identical runs spread wider than the band\"); where it lies outside its band, the rows "
            "it guards read \"control failed\". A pace probe every five minutes cannot see a CPU that slows down for "
            "a few seconds at a time; the controls can. From the campaigns' samples, when the book builds:\n\n"
            + "\n".join(head + body) + "\n" + "".join("\n" + d for d in listed))


IDENTICAL = ("countdown", "switch_interval")   # chapters whose one-thread runs repeat identical work


def one_thread_spread(campaign: str):
    """Every one-thread countdown of ``campaign`` (the countdown and switch-interval chapters' runs
    the verdicts read), each over the median of its point's runs: identical work (one chapter, build,
    switch interval and size), so that any spread is the machine's pace from run to run.  A frame
    of ``chapter`` and ``relative``; empty where the campaign holds none."""
    import pandas as pd

    from .. import chapters
    from ..judge import results

    parts = []
    for name in IDENTICAL:
        try:
            df = chapters.of(name).conclusion_samples(results.samples(name, campaign))
        except results.NoData:
            continue
        one = df[pd.to_numeric(df["threads"], errors="coerce") == 1]
        keys = [k for k in ("condition", "switch_interval", "total_decrements") if k in one.columns]
        if one.empty:
            continue
        rel = one["seconds"] / one.groupby(keys, dropna=False)["seconds"].transform("median")
        parts.append(pd.DataFrame({"chapter": name, "relative": rel.astype(float)}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["chapter", "relative"])


def spread_figure(gen, shown: dict) -> str:
    """The one-thread runs of identical work of each campaign in ``shown`` (label -> campaign: the
    reference, the reader's run), each over its point's median (:func:`one_thread_spread`), as
    dots with the band of "the same" shaded, and the share of runs outside it; written as
    ``spread.png`` into ``gen``.  Returns the Markdown that shows it ('' where none holds any)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    import seaborn as sns

    from ..judge import lexicon
    from . import plots

    same = lexicon.about("the same")
    frames = {label: one_thread_spread(cid).assign(run=f"{label}\n{cid}") for label, cid in shown.items()}
    frames = {label: f for label, f in frames.items() if len(f)}
    if not frames:
        return ""
    df = pd.concat(frames.values(), ignore_index=True)
    outside = {label: float(((f["relative"] < 1 - same) | (f["relative"] > 1 + same)).mean())
               for label, f in frames.items()}
    plots.setup()
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    ax.axhspan(1 - same, 1 + same, color="0.9", zorder=0, label=f"the same: within {same:.0%} of the median")
    sns.stripplot(data=df, x="run", y="relative", hue="chapter", hue_order=list(IDENTICAL), dodge=True, size=3,
                  jitter=0.25, alpha=0.7, ax=ax, palette=["#0072b2", "#d55e00"])
    for i, (r, share) in enumerate(outside.items()):
        ax.text(i, 1.02, f"{share:.0%} outside", transform=ax.get_xaxis_transform(), ha="center", fontsize=9)
    ax.set_yscale("log")            # a run twice as slow and one twice as fast, equally far
    ticks = [t for t in (0.5, 0.7, 1.0, 1.5, 2.0, 3.0) if df["relative"].min() / 1.1 <= t
             <= df["relative"].max() * 1.1]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("")
    ax.set_ylabel("run time / its point's median")
    ax.legend(fontsize=8.5, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3, frameon=False)
    fig.tight_layout()
    fig.savefig(gen / "spread.png", dpi=100)
    plt.close(fig)
    said = "; ".join(f"{label} {share:.0%} of {len(frames[label])}" for label, share in outside.items())
    return "\n".join([
        "```{figure} generated/spread.png",
        f":alt: One-thread countdowns of identical work, each over its point's median; outside {same:.0%} of it: "
        f"{said}.",
        ":width: 90%",
        "",
        "One-thread countdowns of identical work (one chapter, build, switch interval and size), each over the "
        f"median of its point's runs. Runs outside {same:.0%} of their median: {said}. A dot outside the grey "
        "band is a run that took more or less time than its identical neighbours: the machine's pace from run to "
        "run, which every ratio read from these runs carries; a median holds where such runs are few and scattered "
        "(the controls above say whether it did).",
        "```", ""])


def alone_rule() -> str:
    """The rule that says whether a sample was measured alone (:mod:`gillab.measure.alone`), in words
    from its constants, for the method chapter."""
    from ..judge import lexicon
    from ..measure import alone

    same = lexicon.about("the same")
    return (f"**The rule:** {alone.words()}. {alone.MOST_FOREIGN_CPUS:g} of a CPU is {alone.MOST_FOREIGN_CPUS / 2:.0%} "
            f"of a 2-core machine: beside a CPU-bound sample that uses both CPUs, it can shift the sample by about "
            f"{alone.MOST_FOREIGN_CPUS / 2:.0%}, under the band of \"the same\" (within {same:.0%}).\n")


def probes_figure(gen, shown: str | None = None) -> str:
    """The pace probes over time of each campaign's newest whole run that took at least two: each
    probe's median over the run's fastest probe, against the minutes since the run started, with
    the steadiness rule's limit (:data:`gillab.judge.steadiness.MOST_PACE_SPREAD`); a probe whose
    samples were not alone is drawn hollow.  The reference's run, the run the book shows
    (``shown``) and the widest-spread run are drawn in colours of their own and named; every other
    run thin and grey, unnamed (more campaigns than a palette has colours: a repeated colour
    read as one run).  Written as ``probes.png`` into ``gen``; returns the Markdown that shows it
    ('' where no run has two probes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..judge import steadiness
    from . import plots

    runs = {}
    for cid, recs in whole_run_records().items():
        probed = [r for r in recs if len(steadiness.medians(r)) >= 2]
        if probed:
            runs[cid] = probed[-1]
    if not runs:
        return ""
    from ..measure.campaigns import reference_id

    plots.setup()
    worst = max(runs, key=lambda c: max(steadiness.medians(runs[c])) / min(steadiness.medians(runs[c])))
    named = {worst: ("the widest spread", "#d55e00"), reference_id(): ("the reference", "black")}
    if shown:
        named[shown] = ("your run" + (", the widest spread" if shown == worst else ""), "#0072b2")
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    others = False
    for cid, rec in sorted(runs.items(), key=lambda kv: kv[0] in named):     # the named ones drawn last, on top
        got = [p for p in rec.probes if p.get("median_s")]
        fastest = min(p["median_s"] for p in got)
        x = [p.get("after_s", 0.0) / 60 for p in got]
        y = [p["median_s"] / fastest for p in got]
        if cid in named:
            who, colour = named[cid]
            line, = ax.plot(x, y, marker="o", color=colour, linewidth=1.8, label=f"{who}: {cid}", zorder=2)
        else:
            line, = ax.plot(x, y, marker=".", color="0.75", linewidth=0.8, zorder=1,
                            label=None if others else "other campaigns' runs")
            others = True
        quiet = [p.get("alone", True) for p in got]
        ax.scatter([a for a, q in zip(x, quiet) if not q], [b for b, q in zip(y, quiet) if not q],
                   s=60, facecolors="white", edgecolors=line.get_color(), zorder=3)
    ax.axhline(steadiness.MOST_PACE_SPREAD, color="0.4", linestyle="--", linewidth=1)
    ax.text(1.0, steadiness.MOST_PACE_SPREAD, f"the rule's limit: {steadiness.MOST_PACE_SPREAD:g}x the fastest ",
            va="bottom", ha="right", fontsize=8.5, color="0.3", transform=ax.get_yaxis_transform(),
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1, "alpha": 0.8}, zorder=4)
    ax.set_xlabel("minutes since the run started")
    ax.set_ylabel("probe median / the run's fastest")
    fig.legend(fontsize=8.5, loc="upper center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.84))          # the legend above the axes, clear of the lines
    fig.savefig(gen / "probes.png", dpi=100)
    plt.close(fig)
    spread = max(steadiness.medians(runs[worst])) / min(steadiness.medians(runs[worst]))
    return "\n".join([
        "```{figure} generated/probes.png",
        f":alt: The pace probes of {len(runs)} campaigns' newest whole runs over the minutes of each run, as the "
        f"probe's median over the run's fastest; the widest spread is {worst}'s, {spread:.2f}x.",
        ":width: 90%",
        "",
        f"The pace probes over time: the newest whole run of each of {len(runs)} campaigns that took two or more, each "
        "probe's median over its run's fastest (a hollow mark: a probe whose samples were not alone). A run whose "
        f"line crosses the dashed limit is not steady by the rule; the widest spread here is `{worst}`'s, "
        f"{spread:.2f}x.",
        "```", ""])
