"""Countdown over threads (document 000, first table).

``countdown(n)`` decrements ``n`` to zero; ``total`` decrements are split evenly over
``threads`` threads.  The result is the wall time from creating the threads to joining them.

A thread that waits for the GIL sleeps in a timed wait of one switch interval, which Linux
stretches by the thread's timer slack (50 us unless something set it): with ``timer_slack_ns``
the main thread sets its slack first (``PR_SET_TIMERSLACK``; 1 is the smallest, 0 the thread's
default) and every thread it starts inherits it.  What each thread had in force is read back
inside the thread, and the voluntary context switches of the timed part are counted: each hand-off
of the GIL puts the thread that gave it up to sleep at least once, so they bound the hand-offs
the interval asked for from above.

The hand-offs themselves are counted where the build keeps the count: CPython's new GIL (3.2+)
counts every switch of holder in its ``switch_number``, beside its ``interval`` in one struct.
:func:`switch_counter` finds that struct in the interpreter's memory without a patch (it sets
three distinctive intervals and keeps the one word that follows all three, then restores the
interval) and reads the count before and after the timed part: the switch interval as achieved,
in hand-offs a second.  Where it is not found (2.7's old GIL, another layout) nothing is counted.
"""
import resource
import struct
import sys
import threading

from _common import main, timed_threads

PR_SET_TIMERSLACK = 29
PR_GET_TIMERSLACK = 30


def countdown(n):
    while n > 0:
        n -= 1


def _prctl():
    """libc's prctl, or None where there is none (not Linux)."""
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return None


PRCTL = _prctl()


def timer_slack():
    """The calling thread's timer slack in ns, or None where it cannot be read."""
    if PRCTL is None:
        return None
    got = PRCTL(PR_GET_TIMERSLACK, 0, 0, 0, 0)
    return got if got >= 0 else None


def set_timer_slack(ns):
    if PRCTL is None:
        raise ValueError("timer_slack_ns: this system has no prctl (PR_SET_TIMERSLACK is Linux's)")
    if PRCTL(PR_SET_TIMERSLACK, int(ns), 0, 0, 0) != 0:
        raise ValueError("timer_slack_ns: prctl(PR_SET_TIMERSLACK, %d) failed" % int(ns))


# struct _gil_runtime_state: unsigned long interval; last holder (a pointer); int locked (padded);
# unsigned long switch_number
SWITCH_NUMBER_AFTER_INTERVAL = 24
PROBE_INTERVALS_US = (1237, 4327, 2111)     # values no other word of the runtime holds all three of


def _mapping_end(addr):
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = [int(x, 16) for x in line.split()[0].split("-")]
            if lo <= addr < hi:
                return hi
    return None


def switch_counter():
    """A function returning the GIL's switch count now, or None where it cannot be found."""
    if not hasattr(sys, "setswitchinterval") or PRCTL is None or struct.calcsize("L") != 8:
        return None
    import ctypes
    try:
        base = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
        end = _mapping_end(base)
    except (ValueError, AttributeError, OSError):
        return None
    if end is None:
        return None
    size = min(end - base, 8 << 20) // 8 * 8
    asked = sys.getswitchinterval()
    stored = int(round(asked * 1e6))        # the word as the interpreter holds it (microseconds)
    words, at = None, None
    try:
        for us in PROBE_INTERVALS_US:
            sys.setswitchinterval(us / 1e6)
            data, needle = ctypes.string_at(base, size), struct.pack("L", us)
            hits, i = set(), data.find(needle)
            while i >= 0:
                if i % 8 == 0:
                    hits.add(i)
                i = data.find(needle, i + 1)
            words = hits if words is None else words & hits
        if words and len(words) == 1:
            at = base + words.pop()
            ctypes.c_ulong.from_address(at).value = stored      # the interval asked, to the microsecond
    finally:
        if at is None:      # setswitchinterval truncates: 0.09999999999999999 s would be 99,999 us
            for again in (asked, asked * (1 + 1e-12)):
                sys.setswitchinterval(again)
                if sys.getswitchinterval() == asked:
                    break
    if at is None or sys.getswitchinterval() != asked:
        raise RuntimeError("the switch interval could not be restored after looking for the GIL's count")
    counter = ctypes.c_ulong.from_address(at + SWITCH_NUMBER_AFTER_INTERVAL)
    return lambda: counter.value


def run(params):
    threads = int(params["threads"])
    total = int(params["total_decrements"])
    if threads <= 0:
        raise ValueError("threads must be >= 1")
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
    before = resource.getrusage(resource.RUSAGE_SELF)
    first = switches() if switches else None
    seconds = timed_threads(counted, [(per_thread,)] * threads)
    last = switches() if switches else None
    after = resource.getrusage(resource.RUSAGE_SELF)
    known = [s for s in slacks if s is not None]
    return {"seconds": seconds, "decrements_per_thread": per_thread,
            "timer_slack_ns_asked": params.get("timer_slack_ns"),
            "timer_slack_ns_min": min(known) if known else None,
            "timer_slack_ns_max": max(known) if known else None,
            "gil_switches": None if first is None else last - first,
            "ctx_voluntary_timed": after.ru_nvcsw - before.ru_nvcsw,
            "ctx_involuntary_timed": after.ru_nivcsw - before.ru_nivcsw}


if __name__ == "__main__":
    sys.exit(main(run))
