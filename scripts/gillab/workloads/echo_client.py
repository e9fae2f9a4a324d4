"""The echo client of document 000: send 1 byte, wait for the echo, as fast as it can.

Requests are counted in 1-second windows (the document's RPS) after a warm-up window.  The
loop is bounded: it stops after ``warmup_s + windows * window_s`` seconds or ``max_requests``
requests, whichever comes first, even when the server stops answering (a request that gets no
answer within the window simply does not count).  It also reports its own CPU time, so that a
reader can see whether the client, not the server, was the limit.  Where it may run is its
affinity mask, recorded by the harness.
"""
import socket
import sys
import time

from _common import main, rusage


def run(params):
    host, port = params.get("host", "127.0.0.1"), int(params["port"])
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError("the echo client talks to loopback only")
    warmup, windows, window = float(params["warmup_s"]), int(params["windows"]), float(params["window_s"])
    max_requests = int(params.get("max_requests", 10_000_000))
    sock = socket.create_connection((host, port), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(0.05)
    start = time.perf_counter()
    end = start + warmup + windows * window
    counts = [0] * windows
    done = 0
    ru0 = rusage()
    while done < max_requests:
        now = time.perf_counter()
        if now >= end:
            break
        sock.sendall(b"x")
        got = b""
        while not got:
            try:
                got = sock.recv(1)
            except socket.timeout:
                if time.perf_counter() >= end:
                    break
                continue
            if not got:
                raise ConnectionError("the server closed the connection")
        if not got:
            break
        t = time.perf_counter() - start - warmup
        if t >= 0:
            i = int(t // window)
            if i < windows:
                counts[i] += 1
        done += 1
    wall = time.perf_counter() - start
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
