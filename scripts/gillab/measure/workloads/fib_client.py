"""The clients of document 003, against a fib server on 127.0.0.1 (``port``).

``scenario``:

- ``perf1``: the document's perf1 loop (``send(b'30')``, ``recv(100)``, time it), client A
  alone for ``before`` responses, then a second identical client B started beside it, until A
  has ``after`` more.  One row per response: client, when it was sent, how long it took, and
  whether B was running (``phase`` alone/both).
- ``perf2``: the document's perf2 loop (``send(b'1')``, ``recv(100)``, count), counted in bins
  of ``bin_s`` seconds.  After ``before_s`` seconds another connection asks for ``fib(long_n)``
  (the document's ``nc`` session asking for 40); the loop goes on until ``after_s`` seconds
  after that answer (or ``max_long_s`` without one).  One row per bin: its start, requests
  answered, and whether the long request was running (``phase`` before/during/after/edge).
- ``lockout``: ``nlong`` connections each ask for ``fib(long_n)`` (and hang up once answered),
  then one more asks for ``fib(1)``; one row per request with the time to its answer.  Against
  the pre-forked server with as many acceptors as long requests, the short one waits for a long
  one to finish.

The sockets block as in the document (no timeouts, no polling); the harness bounds the whole
client with a watchdog (its timeout kills the process group).  Stdlib only.
"""
import socket
import threading

from _common import main, perf_counter


def connect(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect(("127.0.0.1", port))
    return s


def ask(sock, n):
    """Send n, read the whole answer line; returns the number."""
    sock.send(str(n).encode("ascii"))
    buf = b""
    while not buf.endswith(b"\n"):
        got = sock.recv(100)
        if not got:
            raise ConnectionError("the server closed the connection")
        buf += got
    return int(buf)


def perf1(p):
    port, n, before, after = p["port"], int(p["n"]), int(p["before"]), int(p["after"])
    t0 = perf_counter()
    rows = []
    stop = threading.Event()
    errors = []

    def timed(name, sock, index, phase):
        start = perf_counter()
        ask(sock, n)
        end = perf_counter()
        rows.append({"client": name, "index": index, "sent_s": round(start - t0, 6),
                     "latency_s": round(end - start, 6), "phase": phase})

    def client_b(sock):
        i = 0
        try:
            while not stop.is_set():
                i += 1
                timed("B", sock, i, "both")
        except Exception as exc:   # reported with the result, not lost in a thread
            errors.append("B: %s: %s" % (type(exc).__name__, exc))
        finally:
            sock.close()

    a, b = connect(port), connect(port)
    for i in range(1, before + 1):              # A alone
        timed("A", a, i, "alone")
    b_started = perf_counter() - t0
    tb = threading.Thread(target=client_b, args=(b,))
    tb.start()
    for i in range(before + 1, before + after + 1):   # A with B beside it
        timed("A", a, i, "both")
    stop.set()
    tb.join()
    a.close()
    if errors:
        raise RuntimeError("; ".join(errors))
    return {"b_started_s": round(b_started, 6), "rows": rows}


def perf2(p):
    port, bin_s = p["port"], float(p["bin_s"])
    before_s, after_s, long_n = float(p["before_s"]), float(p["after_s"]), int(p["long_n"])
    max_long_s = float(p["max_long_s"])
    sock = connect(port)
    counts = []
    long_t = {}
    errors = []

    def long_request():
        try:
            s = connect(port)
            long_t["start"] = perf_counter()
            long_t["value"] = ask(s, long_n)
            long_t["end"] = perf_counter()
            s.close()
        except Exception as exc:
            errors.append("long request: %s: %s" % (type(exc).__name__, exc))

    t0 = perf_counter()
    started = None
    while True:
        sock.send(b"1")
        sock.recv(100)
        now = perf_counter() - t0
        k = int(now / bin_s)
        while len(counts) <= k:
            counts.append(0)
        counts[k] += 1
        if started is None and long_n and now >= before_s:
            started = threading.Thread(target=long_request)
            started.daemon = True
            started.start()
        end = long_t.get("end")
        if not long_n and now >= before_s + after_s:
            break
        if end is not None and now >= end - t0 + after_s:
            break
        if now >= before_s + max_long_s + after_s:
            break
    sock.close()
    if errors:
        raise RuntimeError("; ".join(errors))
    ls = long_t.get("start")
    le = long_t.get("end")
    ls = None if ls is None else ls - t0
    le = None if le is None else le - t0
    rows = []
    for k, c in enumerate(counts[:-1]):          # the last bin is cut short by the stop
        a, b = k * bin_s, (k + 1) * bin_s
        if ls is None or b <= ls:
            phase = "before"
        elif le is not None and a >= le:
            phase = "after"
        elif a >= ls and (le is None or b <= le):
            phase = "during"
        else:
            phase = "edge"
        rows.append({"bin": k, "bin_start_s": round(a, 6), "requests": c, "rate": c / bin_s, "phase": phase})
    return {"long_start_s": ls, "long_end_s": le, "long_s": None if le is None else le - ls,
            "long_answered": le is not None, "long_value": long_t.get("value"), "rows": rows}


def lockout(p):
    port, long_n, nlong = p["port"], int(p["long_n"]), int(p["nlong"])
    rows = []
    errors = []
    t0 = perf_counter()

    def long_request(s, sent):
        # the answer, then the connection closed: a pre-forked acceptor serves one connection at
        # a time, so it is busy until the client hangs up, not only while it computes
        try:
            buf = b""
            while not buf.endswith(b"\n"):
                got = s.recv(100)
                if not got:
                    raise ConnectionError("the server closed a long request's connection")
                buf += got
            rows.append({"request": "long", "n": long_n, "sent_s": round(sent - t0, 6),
                         "latency_s": round(perf_counter() - sent, 6)})
        except Exception as exc:
            errors.append("long request: %s: %s" % (type(exc).__name__, exc))
        finally:
            s.close()

    threads = []
    for _ in range(nlong):
        s = connect(port)
        s.send(str(long_n).encode("ascii"))
        t = threading.Thread(target=long_request, args=(s, perf_counter()))
        t.start()
        threads.append(t)
    short = connect(port)
    start = perf_counter()
    ask(short, 1)
    short_wait = perf_counter() - start
    short.close()
    rows.append({"request": "short", "n": 1, "sent_s": round(start - t0, 6), "latency_s": round(short_wait, 6)})
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError("; ".join(errors))
    return {"short_wait_s": short_wait, "rows": rows}


def run(p):
    return {"perf1": perf1, "perf2": perf2, "lockout": lockout}[p["scenario"]](p)


if __name__ == "__main__":
    raise SystemExit(main(run))
