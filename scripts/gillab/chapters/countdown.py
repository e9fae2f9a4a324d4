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
    only where its whole 95% interval says it.  A sentence that says what a claim says reads the
    claim's line ("more threads are not faster": countdown/not_faster/threads=k, "no gain"); one in a
    word of the lexicon reads the word's line ("gain little more": no gain, "a cost": a change), never
    a line of its own; "by a fifth" and "three quarters" are the words' own numbers."""
    from ..judge import claims as published_claims, lexicon
    from ..judge.prose import method_n, at_least, gil_by_condition, interval, listed, ok_rows, settle, together

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

    def not_faster(k):
        """The line of "k threads are not faster than one": the claim's row at k threads
        (countdown/not_faster/threads=k), or, at a count it has no row for, its word's ("no gain")."""
        try:
            low, _ = published_claims.line(f"countdown/not_faster/threads={k}")
        except KeyError:
            low = lexicon.rises("no gain")
        return low

    how = said["best-of-3-ratio"]
    out = []
    gil = [c for c in conds if gil_on.get(c)]
    if gil and many:
        r = {c: [(k, ratio(c, k)) for k in measured(c)] for c in gil}
        # a build measured once at a point (one run elsewhere, default's small grid) has no trial
        # of three runs: no best of 3, so no ratio; it is named apart, not printed as nan
        once = [said.fill("build-at-threads", build=c, threads=k) for c, v in r.items() for k, m in v
                if not method_n(m)[1]]
        r = {c: [(k, m) for k, m in v if method_n(m)[1]] for c, v in r.items()}
        r = {c: v for c, v in r.items() if v}
        at = sorted({k for v in r.values() for k, _ in v})
        line = {k: not_faster(k) for k in at}
        out.append(said.check(
            "gil-builds-gain-nothing",
            together(*(at_least([m for v in r.values() for j, m in v if j == k], line[k]) for k in at))
            if at else {"holds": False, "open": False},
            listed(said.fill("gil-builds-gain-nothing-evidence", how=how),
                   [(said.fill("build-at-threads", build=c, threads=k), m) for c, v in r.items() for k, m in v])
            + (said.fill("no-complete-trial", points="; ".join(once)) if once else ""),
            why=said["why-threads-gain-nothing"],
            line=" or ".join(f"{x:g}" for x in sorted(set(line.values())))))
    old = interpreters.role("old_gil")          # builds.toml [roles]: 2.7.18
    if old in conds and 2 in measured(old):
        m = ratio(old, 2)
        out.append(said.check(
            "old-gil-two-threads-slower", settle([m], lambda lo, hi: lo >= 1.2, lambda lo, hi: hi < 1.2),
            said.fill("old-gil-two-threads-slower-evidence", old=old, ratio=interval(m), how=how), old=old))
    free = [c for c in conds if not gil_on.get(c, True) and 2 in measured(c)]
    if free:
        # two threads against one, and each thread count above two against two (none: only 2 measured)
        two = {c: ratio(c, 2) for c in free}
        more = {c: [(k, ratio(c, k, 2)) for k in measured(c) if k > 2] for c in free}
        little = lexicon.rises("no gain")     # "gain little more": T(k)/T(2) at least no gain's 0.9
        out.append(said.check(
            "free-threaded-runs-in-parallel",
            together(settle(two.values(), lambda lo, hi: hi <= 0.75, lambda lo, hi: lo > 0.75),
                     at_least([m for v in more.values() for _, m in v], little)
                     if any(more.values()) else {"holds": True, "open": False}),
            listed(said.fill("free-threaded-runs-in-parallel-evidence", how=how),
                   [(said.fill("build-two-against-one", build=c), two[c],
                     "" if more[c] else said["not-measured-above-two"]) for c in free]
                   + [(said.fill("build-k-against-two", build=c, threads=k), m) for c in free for k, m in more[c]]),
            line=f"{little:g}"))
    today = interpreters.today_pair()           # builds.toml [pairs]: today's first, then the era's
    pairs = [(g, f) for g, f in [today] + [p for p in interpreters.pairs() if p != today] if g in conds and f in conds]
    if pairs:
        def one(c):
            return ok.loc[(ok["condition"] == c) & (ok["threads"] == 1), "seconds"].reset_index(drop=True)
        # as the conclusions compute a ratio of two builds' runs (claims.csv countdown/conclusion/...)
        cost = {(g, f): published_claims.round_ratio(one(f), one(g)) for g, f in pairs}
        longer = lexicon.rises("a change")     # "a cost", "takes longer": a change, at least 1.1
        out.append(said.check(
            "free-threaded-pays-one-thread-cost",
            at_least([cost[today]], longer) if today in cost else {"holds": False, "open": False},
            listed(said.fill("one-thread-cost-evidence", line=f"{longer:g}"),
                   [(said.fill("free-over-gil", free=f, gil=g), m) for (g, f), m in cost.items()]),
            why=said["why-free-threading-costs"]))
    return out


# the sentences the book's first screen shows, by their words' keys (notebooks/01_countdown.md)
HEADLINE = ("old-gil-two-threads-slower", "free-threaded-runs-in-parallel")

ANALYSIS = ModuleAnalysis(__name__, shared=over_threads, spec=SPEC)
