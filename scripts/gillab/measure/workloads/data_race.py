"""The data race of document 000: a global ``sum += 1`` in several threads.

Each of ``threads`` threads runs ``f()``, which adds 1 to a module-level ``sum``
``iterations`` times (the document's f() does it 1000 times).  Updates are lost when a thread
is interrupted (with the GIL) or runs in parallel (without it) between reading and writing
``sum``.  The result counts them: expected - final.
"""
import sys

from _common import main, timed_threads

sum = 0  # noqa: A001 - the document's name


def f(iterations):
    global sum
    for _ in range(iterations):
        sum += 1


def run(params):
    global sum
    threads, iterations = int(params["threads"]), int(params["iterations"])
    if threads <= 0 or iterations <= 0:
        raise ValueError("threads and iterations must be >= 1")
    sum = 0
    seconds = timed_threads(f, [(iterations,)] * threads)
    expected = threads * iterations
    return {"final": sum, "expected": expected, "lost": expected - sum,
            "lost_fraction": (expected - sum) / expected, "seconds": seconds}


if __name__ == "__main__":
    sys.exit(main(run))
