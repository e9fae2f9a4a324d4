"""What a switch interval achieved, read inside a workload (stdlib only; CPython 2.7 and 3.6+).

A thread that waits for the GIL sleeps in a timed wait of one switch interval, which Linux
stretches by the thread's timer slack (50 us unless something set it): :func:`set_timer_slack`
sets the calling thread's (``PR_SET_TIMERSLACK``; 1 ns is the smallest, 0 the thread's default),
and every thread it starts afterwards inherits it; :func:`timer_slack` reads what a thread has.

The hand-offs themselves are counted where the build keeps the count: CPython's new GIL (3.2+)
counts every change of holder in its ``switch_number``, beside its ``interval`` in one struct.
:func:`switch_counter` finds that struct in the interpreter's memory without a patch (it sets
three distinctive intervals and keeps the one word that follows all three, then restores the
interval) and returns a reader of the count: read before and after a stretch of work, the switch
interval as achieved, in hand-offs a second.  Where it is not found (2.7's old GIL, another
layout) there is no reader.  Find it before starting threads: it changes the interval meanwhile.
"""
import struct
import sys

PR_SET_TIMERSLACK = 29
PR_GET_TIMERSLACK = 30


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
    if sys.getswitchinterval() != asked:
        raise RuntimeError("the switch interval could not be restored after looking for the GIL's count")
    if at is None:          # not one word followed the three intervals: another layout, nothing counted
        return None
    counter = ctypes.c_ulong.from_address(at + SWITCH_NUMBER_AFTER_INTERVAL)
    return lambda: counter.value
