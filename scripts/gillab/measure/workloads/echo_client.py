"""The echo client of document 000: send 1 byte, wait for the echo, as fast as it can.

Like the document's client, it blocks: ``sendall`` one byte, then a blocking ``recv`` of one
byte, with no socket timeout and no ``TCP_NODELAY``.  Requests are counted in 1-second windows
(the document's RPS) after a warm-up window.  The loop is bounded by a watchdog, not by polling:
an interval timer (``SIGALRM``) fires at ``warmup_s + windows * window_s`` seconds and ends the
loop even inside a ``recv`` the server never answers (such a request does not count), and
``max_requests`` bounds it in count.  It also reports its own CPU time, so that a reader can see
whether the client, not the server, was the limit.  Where it may run is its affinity mask,
recorded by the harness.
"""
import signal
import socket
import sys
import time

from _common import main, rusage


class _TimeUp(Exception):
    """Raised by the watchdog's SIGALRM handler: the counted windows are over."""


_armed = [False]


def _time_up(signum, frame):
    """The watchdog's handler: ends the loop while it is armed, and is a no-op once disarmed.

    A SIGALRM that arrives just as the timer is cancelled is run by the interpreter later, at its
    next check for signals, which may be past the ``except`` meant for it (``signal.signal``
    itself runs pending handlers before it restores the old one): there it must not raise."""
    if _armed[0]:
        raise _TimeUp()


def _loop(sock, counts, done, start, warmup, window, max_requests):
    """The request loop, in a frame of its own.  The watchdog's exception surfaces where the
    interpreter checks for signals; when that is the loop's backward jump, CPython (gh-108214; seen
    on 3.13.5) looks up the handler at the wrong instruction and the exception skips every
    ``try`` of the frame that holds the loop.  Here the loop's frame has none: the exception leaves
    it and is caught at the call, in :func:`run`.  ``done`` is a one-item list, so that the count
    survives the exception."""
    windows = len(counts)
    while done[0] < max_requests:
        sock.sendall(b"x")
        if not sock.recv(1):
            raise ConnectionError("the server closed the connection")
        t = time.perf_counter() - start - warmup
        if t >= 0:
            i = int(t // window)
            if i < windows:
                counts[i] += 1
        done[0] += 1


def timed_loop(sock, warmup, windows, window, max_requests):
    """Run :func:`_loop` under the watchdog for ``warmup + windows * window`` seconds; returns
    (counts per window, requests done, wall seconds)."""
    counts = [0] * windows
    done = [0]
    previous = signal.signal(signal.SIGALRM, _time_up)
    start = time.perf_counter()
    try:
        # the watchdog's exception may surface anywhere from here on, even inside the inner
        # finally or in place of another exception raised as the windows end: the outer
        # handler catches it wherever it comes from
        try:
            _armed[0] = True
            signal.setitimer(signal.ITIMER_REAL, warmup + windows * window)
            _loop(sock, counts, done, start, warmup, window, max_requests)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            _armed[0] = False
    except _TimeUp:
        pass
    finally:
        signal.signal(signal.SIGALRM, previous)
    return counts, done[0], time.perf_counter() - start


def run(params):
    host, port = params.get("host", "127.0.0.1"), int(params["port"])
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError("the echo client talks to loopback only")
    warmup, windows, window = float(params["warmup_s"]), int(params["windows"]), float(params["window_s"])
    max_requests = int(params.get("max_requests", 10_000_000))
    sock = socket.create_connection((host, port), timeout=5)
    sock.settimeout(None)   # blocking from here on, as the document's client; the watchdog bounds it
    ru0 = rusage()
    counts, done, wall = timed_loop(sock, warmup, windows, window, max_requests)
    # close gracefully, so that the server's handler sees the end of the stream and never a reset
    # (closing with the last echo unread would send one): no more requests, then read what is
    # left until the server closes its end, for at most a second
    try:
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(1.0)
        while sock.recv(64):
            pass
    except OSError:   # socket.timeout included
        pass
    sock.close()
    ru1 = rusage()
    cpu = (ru1["cpu_user_s"] - ru0["cpu_user_s"]) + (ru1["cpu_sys_s"] - ru0["cpu_sys_s"])
    return {
        "rows": [{"window": i, "requests": n, "rps": n / window} for i, n in enumerate(counts)],
        "client_requests": done, "client_wall_s": wall, "client_cpu_s": cpu,
        "client_cpu_share": cpu / wall if wall else None,
    }


if __name__ == "__main__":
    sys.exit(main(run))
