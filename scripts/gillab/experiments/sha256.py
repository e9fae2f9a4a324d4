"""SHA-256 over threads: document 000's second table (pbts13_t2).

hashlib releases the GIL while it hashes buffers larger than 2 KiB, so even the GIL build
can use both cores: the document's point that C code which releases the GIL scales.
"""
from __future__ import annotations

from ..profiles import Param, ParameterError, positive_int, positive_ints
from ..analysis import ModuleAnalysis
from ..experiment import Experiment
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


class Sha256(Experiment):
    name = "sha256"
    adaptive_metric = "seconds"
    notebook = "02_sha256.ipynb"
    workload = "sha256"
    title = "SHA-256 over threads"
    document = "000_7286df4c8fefdbad.txt (Python behind the scenes #13), SHA-256 table"
    params = {
        "threads": Param("threads", positive_ints, "thread counts to sweep, e.g. [1, 2, 4, 8]"),
        "messages": Param("messages", positive_int, "messages in all, split evenly over the threads"),
        "message_bytes": Param("message_bytes", positive_int, "size of the (one, reused) message in bytes"),
    }
    point_keys = ("threads",)

    def points(self, p):
        return [{"threads": t} for t in p["threads"]]

    def check(self, p):
        bad = [t for t in p["threads"] if p["messages"] % t]
        if bad:
            raise ParameterError(f"sha256: {p['messages']} messages cannot be split evenly over {bad} threads")
        if p["message_bytes"] > 1 << 31:
            raise ParameterError("sha256: message_bytes above 2 GiB would not fit comfortably in memory")


EXPERIMENT = Sha256()
ANALYSIS = ModuleAnalysis(__name__, shared=over_threads, spec=SPEC)
