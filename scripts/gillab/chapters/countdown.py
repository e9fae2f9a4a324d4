"""How the countdown chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.countdown`)."""
from __future__ import annotations

from ..measure import interpreters
from ..judge.analysis import ModuleAnalysis
from ..judge.prose import words as chapter_words
from . import over_threads


SPEC = over_threads.Spec(
    experiment="countdown", table="pbts13_t1_countdown_threads", published_col="time_s_best_of_3",
    size=lambda g: float(g["total_decrements"].iloc[0]), seed_size=100_000_000,
    size_words=lambda n: f"{n:,.0f} decrements", explorer_title="Explore the countdown samples",
    per_unit=lambda r: f"{r['median'] / r['work'] * 1e9:.1f} ns per decrement in one thread",
    printed=(("threads", "threads"), ("decrements_per_thread_n", "decrements per thread"),
             ("time_s_best_of_3", "time in seconds (best of 3)"), ("machine", "machine"), ("python", "python")),
    speed=("ns_per_decrement", lambda s: s["median"] / s["work"] * 1e9))


def prose(df) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``."""
    import math

    from .. import stats
    from ..judge.prose import Check, gil_by_condition, ok_rows

    said = chapter_words("countdown")     # the words cell of its text

    ok = ok_rows(df)
    med = ok.groupby(["condition", "threads"])["seconds"].median()
    gil_on = gil_by_condition(df)
    conds = sorted(ok["condition"].unique())

    def ratio(c, k):
        try:
            return float(med[(c, k)] / med[(c, 1)])
        except KeyError:
            return float("nan")

    many = [k for k in sorted(ok["threads"].unique()) if k > 1]

    def measured(c):
        """The thread counts above one that build ``c`` was measured at beside one thread (a build
        on the small grid misses some)."""
        return [k for k in many if (c, k) in med.index] if (c, 1) in med.index else []

    out = []
    gil = [c for c in conds if gil_on.get(c)]
    if gil and many:
        def faster(c, k):
            """T(k)/T(1) and whether it shows a speed-up below 0.9: its whole 95% interval where the
            runs give one (a ratio of medians, 8 runs a side), else the ratio itself."""
            t = ok[ok["condition"] == c]
            rr = stats.ratio_of_medians(t.loc[t["threads"] == k, "seconds"], t.loc[t["threads"] == 1, "seconds"])
            hi = rr["ci_hi"] if math.isfinite(rr["ci_hi"]) else rr["ratio"]
            return rr, bool(hi < 0.9)

        r = {c: [(k, *faster(c, k)) for k in measured(c)] for c in gil}
        r = {c: v for c, v in r.items() if v}
        out.append(Check(
            "**The GIL builds** behave as the document says: more threads do not make the loop faster (no ratio "
            "T(k)/T(1) shown below 0.9: its whole 95% interval, where the runs give one)",
            not any(f for v in r.values() for _, _, f in v),
            "T(k)/T(1), median ratio [interval], at the thread counts each build was measured at: "
            + "; ".join(f"{c}: " + ", ".join(f"{k} threads {x['ratio']:.2f}"
                                             + (f" [{x['ci_lo']:.2f}, {x['ci_hi']:.2f}]" if math.isfinite(x["ci_hi"]) else "")
                                             for k, x, _ in v) for c, v in r.items()),
            said["only-thread-holding-gil"]))
    old = interpreters.role("old_gil")          # builds.toml [roles]: 2.7.18
    if old in conds and 2 in many:
        r2 = ratio(old, 2)
        out.append(Check(
            f"**The old GIL of {old}** makes two threads *slower* than one (the \"Dave Beazley effect\" that Pitrou's "
            "new GIL set out to end), by a fifth or more",
            r2 >= 1.2, f"{old}: T(2)/T(1) = {r2:.2f}"))
    free = [c for c in conds if not gil_on.get(c, True) and 2 in measured(c)]
    if free:
        # the largest T(k)/T(1) over the thread counts above two each build was measured at (none: only 2)
        more = {c: [ratio(c, k) for k in measured(c) if k > 2] for c in free}
        r = {c: (ratio(c, 2), max(more[c]) if more[c] else None) for c in free}
        out.append(Check(
            "**The builds without a GIL** run the threads in parallel up to the cores of this machine: two threads "
            "take at most three quarters of one thread's time, and more threads, where measured, gain little more",
            all(a <= 0.75 and (b is None or b <= 1.25 * a) for a, b in r.values()),
            "T(2)/T(1), and the largest T(k)/T(1) above two threads: "
            + "; ".join(f"{c} {a:.2f}, " + (f"{b:.2f}" if b is not None else "not measured above 2 threads")
                        for c, (a, b) in r.items())))
    today = interpreters.today_pair()           # builds.toml [pairs]: today's first, then the era's
    pairs = [(g, f) for g, f in [today] + [p for p in interpreters.pairs() if p != today] if g in conds and f in conds]
    if pairs:
        cost = {f"{f} / {g}": float(med[(f, 1)] / med[(g, 1)]) for g, f in pairs}
        out.append(Check(
            "The free-threaded 3.13 build pays a single-thread cost on this loop (one thread takes longer than "
            "under its GIL twin built from the same source)",
            cost.get(f"{today[1]} / {today[0]}", 0) > 1.0,
            "one-thread time ratios: " + "; ".join(f"{k} {v:.2f}" for k, v in cost.items()),
            said["biased-reference-counting-per"]))
    return out


ANALYSIS = ModuleAnalysis(__name__, shared=over_threads, spec=SPEC)
