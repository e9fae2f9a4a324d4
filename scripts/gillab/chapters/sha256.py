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
    """The chapter's sentences about why ours differ, each checked against ``df``."""
    from ..judge.prose import Check, gil_by_condition, ok_rows

    said = chapter_words("sha256")     # the words cell of its text

    ok = ok_rows(df)
    med = ok.groupby(["condition", "threads"])["seconds"].median().unstack()
    if 1 not in med.columns or 2 not in med.columns:
        return []
    r2 = (med[2] / med[1]).dropna()
    gil_on = gil_by_condition(df)
    out = [Check(
        "**Here the GIL does not matter**: every build, with or without a GIL, hashes two messages at once "
        "(T(2)/T(1) below 0.75)",
        bool(len(r2)) and bool((r2 < 0.75).all()),
        "T(2)/T(1): " + "; ".join(f"{c} {v:.2f}" for c, v in r2.items()),
        said["hashing-runs-c-openssl"])]
    free = [c for c in r2.index if not gil_on.get(c, True)]
    gil = [c for c in r2.index if gil_on.get(c)]
    if free and gil:
        best_gil = float(r2[gil].min())
        out.append(Check(
            "A build without a GIL gains nothing more: its T(2)/T(1) is within 10% of the best GIL build's",
            all(abs(float(r2[c]) / best_gil - 1) <= 0.10 for c in free),
            f"best GIL build {best_gil:.2f}; " + "; ".join(f"{c} {float(r2[c]):.2f}" for c in free)))
    one = {r["claim_id"]: r for r in over_threads.claims(df, SPEC)}.get("sha256/threads=1")
    if one and one["measured"]:
        got = {c: m["median"] for c, m in one["measured"].items()}
        out.append(Check(
            f"Absolute speed is OpenSSL's on this CPU: every build hashes the document's 1 GiB in one thread faster "
            f"than the document's {one['published']:g} s",
            all(v < one["published"] for v in got.values()),
            "seconds for the document's size, median: " + "; ".join(f"{c} {v:.2f}" for c, v in got.items()),
            said["cpu-has-sha-extensions"]))
    return out


ANALYSIS = ModuleAnalysis(__name__, shared=over_threads, spec=SPEC)
