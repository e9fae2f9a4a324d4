"""The thread-per-connection TCP echo server of document 000, with CPU-bound neighbours.

Switch interval and CPU affinity are applied first, so every thread it starts inherits them.
It starts ``cpu_processes`` processes, then ``cpu_threads`` threads, running the document's
``compute()`` (``n += 1; n -= 1`` forever), binds 127.0.0.1 on a free port and prints
``GILLAB-READY <port> {...}`` (its run-time state and the CPU threads' ids).  It accepts one
client and serves it in a new thread with ``recv(4096)`` / ``sendall``.  When the client
disconnects, the handler prints one ``GILLAB-RESULT`` line (requests served, its thread id)
and the server idles until the harness, which reads the threads'
context switches from ``/proc`` from outside (so that no extra GIL hand-over is needed),
stops its process group.  Nothing is measured inside the request loop: an earlier version read
``/proc/thread-self/stat`` every 512 requests to see where the handler ran, and that read alone
stalled the handler on a busy core (request counts came out as multiples of 512).

What the switch interval achieved is read without touching the request loop either: with
``timer_slack_ns`` the server sets its timer slack before it starts a thread (every thread
inherits it; :mod:`_gil`), each thread reads back the slack it has before its work, and where the
build keeps the GIL's count of hand-offs the handler reads it (a memory read, no hand-over) when
the client connects and when it leaves: the GIL's hand-offs a second over the connection.
"""
import json
import multiprocessing
import socket
import sys
import threading
import traceback

from _common import emit, perf_counter, runtime_info, setup
from _gil import set_timer_slack, switch_counter, timer_slack

READY = "GILLAB-READY "


def compute(slacks=None):
    if slacks is not None:
        slacks.append(timer_slack())      # list.append is atomic under the GIL and without it
    n = 0
    while True:
        n += 1
        n -= 1


def handle_client(sock, runtime, gil):
    served = 0
    switches, slacks = gil["switches"], gil["slacks"]
    slacks.append(timer_slack())
    first = switches() if switches else None
    t0 = perf_counter()
    try:
        while True:
            received = sock.recv(4096)
            if not received:
                break
            sock.sendall(received)
            served += 1
        seconds = perf_counter() - t0
        last = switches() if switches else None
        sock.close()
        known = [x for x in slacks if x is not None]
        emit({"ok": True, "runtime": runtime, "result": {
            "requests_served": served, "handler_tid": threading.get_native_id(), "connection_s": seconds,
            "gil_switches": None if first is None else last - first,
            "timer_slack_ns_asked": gil["asked"],
            "timer_slack_ns_min": min(known) if known else None,
            "timer_slack_ns_max": max(known) if known else None}})
        threading.Event().wait()  # stay alive, so that the harness can read this thread in /proc
    except Exception as exc:
        emit({"ok": False, "error": "%s: %s" % (type(exc).__name__, exc), "traceback": traceback.format_exc(limit=5)})


def serve(params):
    cpu_threads = int(params.get("cpu_threads", 0))
    cpu_processes = int(params.get("cpu_processes", 0))
    if params.get("timer_slack_ns") is not None:
        set_timer_slack(params["timer_slack_ns"])
    switches = switch_counter()         # before any thread starts: it sets the interval meanwhile
    runtime = runtime_info()
    for _ in range(cpu_processes):
        multiprocessing.Process(target=compute, daemon=True).start()
    tids, slacks = [], []
    for _ in range(cpu_threads):
        t = threading.Thread(target=compute, args=(slacks,), daemon=True)
        t.start()
        tids.append(t.native_id)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    sys.stdout.write(READY + "%d %s\n" % (sock.getsockname()[1], json.dumps({"runtime": runtime, "cpu_tids": tids})))
    sys.stdout.flush()
    sock.settimeout(float(params.get("accept_timeout", 60)))
    client, _ = sock.accept()
    client.settimeout(None)
    threading.Thread(target=handle_client, args=(client, runtime, {
        "switches": switches, "slacks": slacks, "asked": params.get("timer_slack_ns")})).start()
    threading.Event().wait()  # until the harness stops the process group


if __name__ == "__main__":
    spec = setup()
    try:
        serve(spec.get("params", {}))
    except Exception as exc:
        emit({"ok": False, "error": "%s: %s" % (type(exc).__name__, exc), "traceback": traceback.format_exc(limit=5)})
        sys.exit(1)
