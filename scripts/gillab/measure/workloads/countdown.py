"""Countdown over threads (document 000, first table).

``countdown(n)`` decrements ``n`` to zero; ``total`` decrements are split evenly over
``threads`` threads.  The result is the wall time from creating the threads to joining them.

With ``timer_slack_ns`` the main thread sets its timer slack first (:mod:`_gil`: a waiting
thread's timed wait is stretched by it) and every thread it starts inherits it.  What each thread
had in force is read back inside the thread, and the voluntary context switches of the timed part
are counted: each hand-off of the GIL puts the thread that gave it up to sleep at least once, so
they bound the hand-offs the interval asked for from above.  Where the build keeps the GIL's own
count of hand-offs (:func:`_gil.switch_counter`) it is read before and after the timed part: the
switch interval as achieved, in hand-offs a second.

With ``paired`` (and more than one thread) the run is paired inside its process, A-B-B-A: half
the decrements in one thread (A), half over the threads (B), B again, A again.  ``seconds`` is the
two B segments' time (the whole ``total`` over the threads, as an unpaired run's) and
``one_thread_seconds`` the two A segments' (the whole ``total`` in one thread): the ratio of the two
is this process's own, so a machine whose pace differs from one process to the next (a one-thread
run sits on one CPU) moves both alike, and a pace that drifts inside the run is spread over both
by the A-B-B-A order.  Each segment's time is kept (``abba_a1_s``, ``abba_b1_s``, ``abba_b2_s``,
``abba_a2_s``); the hand-offs and context switches are counted over the B segments.
"""
import resource
import sys
import threading

from _common import main, timed_threads
from _gil import set_timer_slack, switch_counter, timer_slack


def countdown(n):
    while n > 0:
        n -= 1


def run(params):
    threads = int(params["threads"])
    total = int(params["total_decrements"])
    if threads <= 0:
        raise ValueError("threads must be >= 1")
    paired = bool(params.get("paired")) and threads > 1
    if paired and total < 2 * threads:
        raise ValueError("paired: total_decrements must give every thread of each half some work")
    if params.get("timer_slack_ns") is not None:
        set_timer_slack(params["timer_slack_ns"])
    per_thread = total // threads
    slacks = []
    lock = threading.Lock()

    def counted(n):
        got = timer_slack()       # before the work: what this thread waits with
        with lock:
            slacks.append(got)
        countdown(n)

    switches = switch_counter()
    counts = {"switches": 0, "vol": 0, "invol": 0}

    def many(n):
        """``n`` decrements over the threads, timed, its hand-offs and switches counted."""
        before = resource.getrusage(resource.RUSAGE_SELF)
        first = switches() if switches else None
        took = timed_threads(counted, [(n // threads,)] * threads)
        last = switches() if switches else None
        after = resource.getrusage(resource.RUSAGE_SELF)
        counts["switches"] += 0 if first is None else last - first
        counts["vol"] += after.ru_nvcsw - before.ru_nvcsw
        counts["invol"] += after.ru_nivcsw - before.ru_nivcsw
        return took

    if paired:
        half = total // 2
        a1 = timed_threads(counted, [(half,)])
        b1 = many(half)
        b2 = many(total - half)
        a2 = timed_threads(counted, [(total - half,)])
        seconds, one, segments = b1 + b2, a1 + a2, (a1, b1, b2, a2)
    else:
        seconds, one, segments = many(total), None, (None,) * 4
    known = [s for s in slacks if s is not None]
    return {"seconds": seconds, "decrements_per_thread": per_thread, "one_thread_seconds": one,
            "abba_a1_s": segments[0], "abba_b1_s": segments[1], "abba_b2_s": segments[2], "abba_a2_s": segments[3],
            "timer_slack_ns_asked": params.get("timer_slack_ns"),
            "timer_slack_ns_min": min(known) if known else None,
            "timer_slack_ns_max": max(known) if known else None,
            "gil_switches": counts["switches"] if switches else None,
            "ctx_voluntary_timed": counts["vol"],
            "ctx_involuntary_timed": counts["invol"]}


if __name__ == "__main__":
    sys.exit(main(run))
