"""Countdown over threads (document 000, first table).

``countdown(n)`` decrements ``n`` to zero; ``total`` decrements are split evenly over
``threads`` threads.  The result is the wall time from creating the threads to joining them.
"""
import sys

from _common import main, timed_threads


def countdown(n):
    while n > 0:
        n -= 1


def run(params):
    threads = int(params["threads"])
    total = int(params["total_decrements"])
    if threads <= 0:
        raise ValueError("threads must be >= 1")
    per_thread = total // threads
    seconds = timed_threads(countdown, [(per_thread,)] * threads)
    return {"seconds": seconds, "decrements_per_thread": per_thread}


if __name__ == "__main__":
    sys.exit(main(run))
