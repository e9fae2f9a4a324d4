"""How the sha256 chapter reads its samples: its summary, claims, figures, explorer
and checked sentences (what it measures: :mod:`gillab.measure.experiments.sha256`)."""
from __future__ import annotations

from ..judge.analysis import ModuleAnalysis
from ..judge.prose import words as chapter_words
from . import over_threads


MiB = 1 << 20


SPEC = over_threads.Spec(
    experiment="sha256", table="pbts13_t2_sha256_threads", published_col="time_s_best_of_3",
    size=lambda g: float(g["messages"].iloc[0] * g["message_bytes"].iloc[0]), seed_size=8 * 134_217_728,
    size_words=lambda n: f"{n / MiB:,.0f} MiB hashed", explorer_title="Explore the SHA-256 samples",
    per_unit=lambda r: f"{r['work'] / MiB / r['median']:,.0f} MiB/s in one thread",
    printed=(("threads", "threads"), ("messages_per_thread", "messages per thread"),
             ("total_size_of_messages_per_thread_as_published", "total size per thread (as printed)"),
             ("time_s_best_of_3", "time in seconds (best of 3)"), ("python", "python")),
    speed=("MiB_per_s", lambda s: s["work"] / MiB / s["median"]))


def prose(df) -> list:
    """The chapter's sentences about why ours differ, each checked against ``df``: each T(2)/T(1) and
    one-thread time is the verdicts' (:func:`over_threads.claims`: the document's best of 3, over
    trials), a build against another the same per-trial ratios, paired by trial; a sentence holds
    only where its whole 95% interval says it.  A sentence in a word of the lexicon reads the
    word's line ("within" the best GIL build's: the same; "faster" than the document: a change),
    never a line of its own; "below 0.75" is the words' own number."""
    from .. import stats
    from ..judge import claims as published_claims, lexicon
    from ..judge.prose import at_most, gil_by_condition, interval, listed, ok_rows, settle, within

    said = chapter_words("sha256")     # the words cell of its text

    ok = ok_rows(df)
    rows = {r["claim_id"]: r for r in over_threads.claims(ok, SPEC)}
    r2 = rows.get("sha256/threads=2", {}).get("measured", {})
    if not r2:
        return []
    gil_on = gil_by_condition(df)
    out = [said.check(
        "gil-does-not-matter-for-hashing",
        settle(r2.values(), lambda lo, hi: hi < 0.75, lambda lo, hi: lo >= 0.75),
        listed(said["two-over-one-evidence"], r2.items()),
        why=said["why-hashing-runs-in-parallel"])]
    free = [c for c in r2 if not gil_on.get(c, True)]
    gil = [c for c in r2 if gil_on.get(c)]
    if free and gil:
        size = published_claims.trial_size("sha256/threads=2")

        def per_trial(c):
            """T(2)/T(1) of each of build ``c``'s trials (a best of 3 each), by trial."""
            g = ok[ok["condition"] == c]
            two, one = (stats.trials(over_threads._by_repeat(g[g["threads"] == k]), size) for k in (2, 1))
            return {j: two[j] / one[j] for j in two if j in one}
        best = min(gil, key=lambda c: r2[c]["median"])
        method = stats.PAIRED_TRIALS if size > 1 else stats.PAIRED
        against = {c: stats.paired_ratio(per_trial(c), per_trial(best), method) for c in free}
        parts = [said.fill("best-gil-build-evidence", build=best, ratio=interval(r2[best]))]
        if any(m["n"] for m in against.values()):
            parts.append(listed(said.fill("against-best-gil-build-evidence", best=best),
                                [(c, m) for c, m in against.items() if m["n"]]))
        parts += [said.fill("no-complete-trial", build=c, size=size) for c, m in against.items() if not m["n"]]
        same = lexicon.about("the same")       # "within 10%": the same, 1 +- 0.10
        out.append(said.check(
            "free-threaded-gains-nothing-more",
            within(against.values(), 1 - same, 1 + same),
            "; ".join(parts), band=f"{same:.0%}"))
    one = rows.get("sha256/threads=1")
    if one and one["measured"]:
        # "faster than the document's": a change, at most 0.9 of its time
        faster = one["published"] * lexicon.falls("a change")
        out.append(said.check(
            "one-thread-faster-than-the-document",
            at_most(one["measured"].values(), faster),
            listed(said.fill("one-thread-seconds-evidence", line=f"{faster:.2f}"), one["measured"].items()),
            why=said["why-this-cpu-hashes-faster"], published=f"{one['published']:g}"))
    return out


ANALYSIS = ModuleAnalysis(__name__, shared=over_threads, spec=SPEC)
