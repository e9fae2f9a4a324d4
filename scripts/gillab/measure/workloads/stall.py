"""Document 003's uninterruptible instruction: ``'spam' in range(n)`` beside a heartbeat thread.

A daemon thread notes the time every ``heartbeat_s`` seconds (the document's thread prints
"Hello" every 5 s).  The main thread then evaluates ``'spam' in nums`` with ``nums =
range(n)``: in Python 3 a ``range`` answers ``in`` arithmetically only for ints, so for a str
it compares every element, in one C loop, without returning to the interpreter's loop.  The
result: how long the ``in`` took and the longest gap between heartbeats while it ran (with a
GIL the heartbeat thread cannot run until the ``in`` ends).

With ``sigint_after_s`` a child process sends SIGINT to this process that many seconds into
the ``in`` (what Ctrl-C does); the result then holds when the KeyboardInterrupt arrived, after
the signal, and whether the ``in`` had finished first.  The child waits for the main thread's
word that the ``in`` starts (a byte on a pipe, written just after the ``in``'s clock starts), never
for a moment computed before: a main thread the OS runs late would otherwise take the signal before
its ``in``; and the signal is sent at least ``sigint_after_s`` after the ``in``'s clock started.
Stdlib only; CPython 3.x.
"""
import os
import signal
import subprocess
import sys
import threading
import time

from _common import main

# waits for the byte the main thread writes as its ``in`` starts, then sends SIGINT the given
# seconds later and prints when it sent it (CLOCK_MONOTONIC, shared by every process)
KILLER = ("import os, signal, sys, time\n"
          "os.read(0, 1)\n"
          "at = time.monotonic() + float(sys.argv[2])\n"
          "while time.monotonic() < at: time.sleep(min(0.001, max(at - time.monotonic(), 0)))\n"
          "sent = time.monotonic()\n"
          "os.kill(int(sys.argv[1]), signal.SIGINT)\n"
          "sys.stdout.write(repr(sent))\n")


def run(p):
    n, beat = int(p["n"]), float(p["heartbeat_s"])
    sigint_after = p.get("sigint_after_s")
    beats = []
    clock = time.monotonic

    def heartbeat():
        while True:
            beats.append(clock())
            time.sleep(beat)

    t = threading.Thread(target=heartbeat)
    t.daemon = True
    t.start()
    nums = range(n)
    start_at = clock() + max(beat * 3, 0.5)      # a few beats before, to see their normal spacing
    killer = None
    if sigint_after is not None:
        killer = subprocess.Popen([sys.executable, "-s", "-B", "-c", KILLER, str(os.getpid()), repr(float(sigint_after))],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    while clock() < start_at:
        time.sleep(0.005)
    interrupted_at = None
    finished = None
    try:
        t0 = clock()        # before the word: the child's seconds count from after t0, never before
        if killer is not None:
            os.write(killer.stdin.fileno(), b"g")
        found = 'spam' in nums
        finished = clock()
        # a signal that came after the end is raised here, at the next check of the loop
        if killer is not None:
            killer.wait()
            deadline = clock() + 5
            while clock() < deadline:
                time.sleep(0.001)
    except KeyboardInterrupt:
        interrupted_at = clock()
        found = None
    sent_at = None
    if killer is not None:
        out = killer.communicate()[0]
        sent_at = float(out) if out.strip() else None
    end = finished or interrupted_at
    time.sleep(beat * 3)
    inside = [b for b in beats if t0 <= b <= end]
    around = [t0] + inside + [end]
    gaps = [b - a for a, b in zip(around, around[1:])]
    before = [b - a for a, b in zip(beats, beats[1:]) if b < t0]
    return {
        "in_s": end - t0, "finished": finished is not None, "found": found,
        "beats_during": len(inside), "longest_gap_s": max(gaps), "normal_gap_s": max(before) if before else None,
        "silent_fraction": max(gaps) / (end - t0) if end > t0 else None,
        "sigint_after_s": sigint_after,
        "sigint_sent_s": None if sent_at is None else sent_at - t0,
        "interrupt_s": None if interrupted_at is None else interrupted_at - t0,
        "interrupt_delay_s": None if interrupted_at is None or sent_at is None else interrupted_at - sent_at,
    }


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    raise SystemExit(main(run))
