"""Beazley's fib server (document 003), in the four shapes the document gives it.

``kind``:

- ``thread``: a thread per connection; ``fib(n)`` runs in the handler thread.
- ``pool``: a thread per connection; every ``fib(n)`` goes to ``ProcessPoolExecutor(nprocs)``
  (``pool.submit(fib, n).result()``).
- ``threshold``: as ``pool`` for ``n > threshold``, inline for the others (the document: 15).
- ``prefork``: ``nprocs`` forked copies of the server *plus the parent* accept on one socket,
  each serving one connection at a time inline (the document's loop ``for n in range(NPROCS):
  if os.fork() == 0: break`` leaves the parent accepting too).

The handler is the document's: ``recv(1000)``, ``int(data)``, ``fib``, send the result and a
newline.  The server binds 127.0.0.1 on a free port, prints ``GILLAB-READY <port> {...}`` with
its run-time state, and serves until the harness stops its process group (forked copies and
pool workers included: they are in the same group).
"""
import json
import os
import socket
import sys
import threading
import traceback

from _common import emit, runtime_info, setup

READY = "GILLAB-READY "


def fib(n):
    if n <= 2:
        return 1
    else:
        return fib(n - 1) + fib(n - 2)


def handler(client, compute):
    try:
        while True:
            data = client.recv(1000)
            if not data:
                break
            result = compute(int(data))
            client.send(str(result).encode("ascii") + b"\n")
    except (ConnectionError, OSError):
        pass
    finally:
        client.close()


def serve(params):
    kind = params["kind"]
    nprocs = int(params.get("nprocs", 4))
    threshold = int(params.get("threshold", 15))
    runtime = runtime_info()
    if kind in ("pool", "threshold"):
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(nprocs)
        # start the workers now, not on the first request (which would then time the start-up)
        list(pool.map(fib, [1] * nprocs))

        def compute(n):
            if kind == "threshold" and n <= threshold:
                return fib(n)
            return pool.submit(fib, n).result()
    elif kind in ("thread", "prefork"):
        compute = fib
    else:
        raise ValueError("unknown server kind %r" % kind)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    if kind == "prefork":
        children = []
        for _ in range(nprocs):
            pid = os.fork()
            if pid == 0:
                children = None
                break
            children.append(pid)
        if children is not None:   # the parent announces; it serves too, as in the document
            sys.stdout.write(READY + "%d %s\n" % (port, json.dumps({"runtime": runtime, "acceptors": nprocs + 1})))
            sys.stdout.flush()
        while True:
            client, _ = sock.accept()
            handler(client, fib)
    sys.stdout.write(READY + "%d %s\n" % (port, json.dumps({"runtime": runtime, "acceptors": 1})))
    sys.stdout.flush()
    while True:
        client, _ = sock.accept()
        t = threading.Thread(target=handler, args=(client, compute))
        t.daemon = True
        t.start()


if __name__ == "__main__":
    spec = setup()
    try:
        serve(spec.get("params", {}))
    except Exception as exc:
        emit({"ok": False, "error": "%s: %s" % (type(exc).__name__, exc), "traceback": traceback.format_exc(limit=5)})
        sys.exit(1)
