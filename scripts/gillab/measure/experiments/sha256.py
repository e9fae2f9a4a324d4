"""SHA-256 over threads: document 000's second table (pbts13_t2).

hashlib releases the GIL while it hashes buffers larger than 2 KiB, so even the GIL build
can use both cores: the document's point that C code which releases the GIL scales."""
from __future__ import annotations

from ..profiles import Param, ParameterError, positive_int, positive_ints
from ..protocol import Experiment


class Sha256(Experiment):
    name = "sha256"
    adaptive_metric = "seconds"
    notebook = "02_sha256.md"
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


def work(p: dict, point: dict) -> float:
    """The bytes a run hashes (the forecast's measure of a size)."""
    return float(p["messages"]) * float(p["message_bytes"])


EXPERIMENT = Sha256()
