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
    """The chapter's sentences about why ours differ, each checked against ``df``: each T(k)/T(d)
    is the verdicts' (:func:`over_threads.time_ratio`: the document's best of 3, paired by trial),
    each one-thread ratio of two builds the conclusions' (a ratio of medians), and a sentence holds
    only where its whole 95% interval says it."""
    from ..judge import claims as published_claims
    from ..judge.prose import Check, gil_by_condition, interval, listed, ok_rows, settle, together

    said = chapter_words("countdown")     # the words cell of its text

    ok = ok_rows(df)
    gil_on = gil_by_condition(df)
    conds = sorted(ok["condition"].unique())
    size = published_claims.trial_size("countdown/threads=2")
    many = [k for k in sorted(ok["threads"].unique()) if k > 1]

    def measured(c):
        """The thread counts above one that build ``c`` was measured at beside one thread (a build
        on the small grid misses some)."""
        at = set(ok.loc[ok["condition"] == c, "threads"])
        return [k for k in many if k in at] if 1 in at else []

    def ratio(c, k, d=1):
        return over_threads.time_ratio(ok[ok["condition"] == c], k, d, size)

    how = "best of 3 each, median of the per-trial ratios [95% interval]"
    out = []
    gil = [c for c in conds if gil_on.get(c)]
    if gil and many:
        r = {c: [(k, ratio(c, k)) for k in measured(c)] for c in gil}
        r = {c: v for c, v in r.items() if v}
        out.append(Check(
            "**The GIL builds** behave as the document says: more threads do not make the loop faster (every ratio "
            "T(k)/T(1) at 0.9 or above: its whole 95% interval)",
            **settle([m for v in r.values() for _, m in v], lambda lo, hi: lo >= 0.9, lambda lo, hi: hi < 0.9),
            evidence=listed(f"T(k)/T(1), {how}, at the thread counts each build was measured at",
                            [(f"{c}, {k} threads", m) for c, v in r.items() for k, m in v]),
            why=said["only-thread-holding-gil"]))
    old = interpreters.role("old_gil")          # builds.toml [roles]: 2.7.18
    if old in conds and 2 in measured(old):
        m = ratio(old, 2)
        out.append(Check(
            f"**The old GIL of {old}** makes two threads *slower* than one (the \"Dave Beazley effect\" that Pitrou's "
            "new GIL set out to end), by a fifth or more",
            **settle([m], lambda lo, hi: lo >= 1.2, lambda lo, hi: hi < 1.2),
            evidence=f"{old}: T(2)/T(1) = {interval(m)} ({how})"))
    free = [c for c in conds if not gil_on.get(c, True) and 2 in measured(c)]
    if free:
        # two threads against one, and each thread count above two against two (none: only 2 measured)
        two = {c: ratio(c, 2) for c in free}
        more = {c: [(k, ratio(c, k, 2)) for k in measured(c) if k > 2] for c in free}
        out.append(Check(
            "**The builds without a GIL** run the threads in parallel up to the cores of this machine: two threads "
            "take at most three quarters of one thread's time, and more threads, where measured, gain little more",
            **together(settle(two.values(), lambda lo, hi: hi <= 0.75, lambda lo, hi: lo > 0.75),
                       settle([m for v in more.values() for _, m in v], lambda lo, hi: hi <= 1.25,
                              lambda lo, hi: lo > 1.25) if any(more.values()) else {"holds": True, "open": False}),
            evidence=listed(f"T(2)/T(1), and T(k)/T(2) above two threads, {how}",
                            [(f"{c}, T(2)/T(1)", two[c], "" if more[c] else ", not measured above 2 threads")
                             for c in free] + [(f"{c}, T({k})/T(2)", m) for c in free for k, m in more[c]])))
    today = interpreters.today_pair()           # builds.toml [pairs]: today's first, then the era's
    pairs = [(g, f) for g, f in [today] + [p for p in interpreters.pairs() if p != today] if g in conds and f in conds]
    if pairs:
        def one(c):
            return ok.loc[(ok["condition"] == c) & (ok["threads"] == 1), "seconds"].reset_index(drop=True)
        # as the conclusions compute a ratio of two builds' runs (claims.csv countdown/conclusion/...)
        cost = {(g, f): published_claims.round_ratio(one(f), one(g)) for g, f in pairs}
        out.append(Check(
            "The free-threaded 3.13 build pays a single-thread cost on this loop (one thread takes longer than "
            "under its GIL twin built from the same source)",
            **(settle([cost[today]], lambda lo, hi: lo > 1.0, lambda lo, hi: hi <= 1.0) if today in cost
               else {"holds": False, "open": False}),
            evidence=listed("one-thread time ratios, ratio of medians [95% interval]",
                            [(f"{f} / {g}", m) for (g, f), m in cost.items()]),
            why=said["biased-reference-counting-per"]))
    return out


ANALYSIS = ModuleAnalysis(__name__, shared=over_threads, spec=SPEC)
