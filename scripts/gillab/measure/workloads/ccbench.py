"""Document 001's concurrency benchmark (Pitrou's ccbench, re-written): throughput of a task in
N threads (or processes), and the latency of a UDP echo thread while N threads run a task.

Tasks, each checking its own result once before timing starts:
  pi        digits of pi by an unbounded spigot (pure Python: lives in the eval loop)
  regex     a backtracking pattern over a 2,000-character text (C that holds the GIL ~1 ms a call)
  bz2       bz2.compress of 6,000 bytes (C that releases the GIL)
  countdown a trivial loop of 1,000 decrements (very short opcodes: the "Dave Beazley effect")

Throughput (as ccbench): the workers start together; each calls the task in batches until
``duration`` has passed (or another worker finished), sleeping 0.1 ms between batches that took
10 ms or more when there are several threads; speed = all iterations / the longest worker time.
One thread runs in the main thread, without any synchronisation.

Latency: this process answers UDP datagrams on 127.0.0.1 from its main thread while ``threads``
background threads run the task; a client process (this file again, role ``client``) sends a
timestamped ping every ``interval`` seconds for ``duration`` seconds and records each round trip.
Every wait is bounded: a ping not answered within ``bound`` seconds is recorded as starved (with
the time its echo came, if it came before the run ended); the client ends at the latest ``bound``
seconds after its last ping, and the background threads stop by themselves at the latest
``3 x duration + 2 x bound + 1`` seconds after their release (a main thread they starve, the old
GIL's result next to regex, cannot stop them; it reads the pings then).

Tool (``test=tool``): ccbench's own latency test, step for step, for the claims whose number is
that tool's output.  Its inputs are the tool's: task B runs the ``inspect`` module's pattern over
the first 2,000 characters of the benchmark's own source file (here: this file), task C
compresses the first 3,000 bytes of it, twice over; A computes 50 digits of pi.  Its protocol:
``threads`` background threads are made ready and wait; a client process sends one datagram (its
"ready"), sleeps 1 s, then 20 times sleeps 0.1 s and sends a datagram holding its send time,
then an end marker.  The ready datagram releases the threads, which call the task in a timed loop
(no yielding) until 1.5 x 2 s have passed; the main thread only reads datagrams and notes when
it read each (no echo).  The statistic, as the tool printed it, is the mean over the 20 pings
of (read time - send time).  Its window is part of the number: under the old GIL a ping that
cannot be read while the threads compute is read once they stop, 3 s after the release, so
each row also records when it was read and the run when the threads stopped.
Stdlib only; runs under CPython 2.7 and 3.x alike.
"""
import json
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

PI_50 = "31415926535897932384626433832795028841971693993751"
STARTUP_S = 30.0   # the longest the server and its client wait for each other to start


# -- tasks: (function, argument), each checked once ------------------------------------------------
def task_pi():
    def digits(n):
        # Gibbons' unbounded spigot: state (q, r, t, k, m, x); stdlib integers only
        q, r, t, k, m, x = 1, 0, 1, 1, 3, 3
        out = []
        while len(out) < n:
            if 4 * q + r - t < m * t:
                out.append(m)
                q, r, m = 10 * q, 10 * (r - m * t), (10 * (3 * q + r)) // t - 10 * m
            else:
                q, r, t, k, m, x = q * k, (2 * q + r) * x, t * x, k + 1, (q * (7 * k + 2) + r * x) // (t * x), x + 2
        return out
    got = "".join(str(d) for d in digits(50))
    if got != PI_50:
        raise AssertionError("pi digits wrong: %s" % got)
    return digits, 50


def _source_text():
    """2,000 characters of Python-like source, made here (the same bytes every run)."""
    lines, i = [], 0
    while sum(len(x) + 1 for x in lines) < 2000:
        if i % 5 == 0:
            lines.append("def handler_%d(request, *args):" % i)
        elif i % 7 == 0:
            lines.append("    key = sorted(items, key=lambda item: item[%d])" % (i % 3))
        elif i % 11 == 0:
            lines.append("@cached(maxsize=%d)" % (i * 8))
        else:
            lines.append("    value_%d = compute(value_%d, %d) + offset" % (i, i - 1, i))
        i += 1
    return "\n".join(lines)[:2000]


def task_regex():
    import re
    text = _source_text()
    # The middle alternative backtracks over each line (".*" before a look-behind), so one call
    # spends a millisecond or more in C holding the GIL: the character of ccbench's regex task.
    pat = re.compile(r"^\s*def\s+(\w+)|(.*(?<!\w)lambda[:\s])|^\s*@(\w+)", re.MULTILINE)
    expected = (text.count("\ndef ") + text.startswith("def "), text.count("lambda "), text.count("\n@"))
    found = pat.findall(text)
    got = tuple(sum(1 for m in found if m[i]) for i in range(3))
    if got != expected:
        raise AssertionError("regex matches %r, expected %r" % (got, expected))
    return pat.findall, text


def task_bz2():
    import bz2
    data = (_source_text().encode("ascii") * 3)[:6000]
    if bz2.decompress(bz2.compress(data)) != data:
        raise AssertionError("bz2 round trip differs")
    return bz2.compress, data


def task_countdown():
    def countdown(n):
        while n > 0:
            n -= 1
        return n
    if countdown(1000) != 0:
        raise AssertionError("countdown did not reach 0")
    return countdown, 1000


TASKS = {"pi": task_pi, "regex": task_regex, "bz2": task_bz2, "countdown": task_countdown}


def timed_loop(func, arg, start, duration, stop, do_yield):
    """Call ``func(arg)`` in batches until ``duration`` has passed since ``start`` or ``stop``
    is set (another worker finished: then this worker's last full batch counts)."""
    step, n, elapsed = 20, 0, 0.0
    t1 = start
    while True:
        for _ in range(step):
            func(arg)
        t2 = time.time()
        if stop.is_set():
            return n, elapsed
        n += step
        elapsed = t2 - start
        if elapsed >= duration:
            stop.set()
            return n, elapsed
        if t2 - t1 < 0.01:
            step = step * 3 // 2
        elif do_yield:
            time.sleep(0.0001)
        t1 = t2


def _process_worker(task, duration, start_at, queue):
    func, arg = TASKS[task]()
    while time.time() < start_at:
        time.sleep(0.001)
    queue.put(timed_loop(func, arg, start_at, duration, threading.Event(), False))


def throughput(task, workers, threads, duration):
    func, arg = TASKS[task]()
    func(arg)   # warm up
    if threads == 1 and workers == "threads":
        results = [timed_loop(func, arg, time.time(), duration, threading.Event(), False)]
    elif workers == "threads":
        results, ready, go, stop = [], [], threading.Event(), threading.Event()
        lock = threading.Lock()
        box = {}

        def run():
            with lock:
                ready.append(1)
            go.wait()
            r = timed_loop(func, arg, box["start"], duration, stop, True)
            with lock:
                results.append(r)

        ts = [threading.Thread(target=run) for _ in range(threads)]
        for t in ts:
            t.daemon = True
            t.start()
        while len(ready) < threads:   # thread start-up stays out of the timing
            time.sleep(0.001)
        box["start"] = time.time()
        go.set()
        for t in ts:
            t.join(duration * 10 + 30)
        if len(results) < threads:
            raise RuntimeError("a worker thread did not finish within its bound")
    else:
        import multiprocessing
        queue = multiprocessing.Queue()
        start_at = time.time() + 0.2 + 0.05 * threads
        ps = [multiprocessing.Process(target=_process_worker, args=(task, duration, start_at, queue))
              for _ in range(threads)]
        for p in ps:
            p.start()
        results = [queue.get(timeout=duration * 10 + 30) for _ in ps]
        for p in ps:
            p.join(5)
    iterations = sum(r[0] for r in results)
    longest = max(r[1] for r in results)
    return {"iterations": iterations, "seconds": longest, "speed": iterations / longest,
            "per_worker": [r[0] for r in results]}


# -- latency --------------------------------------------------------------------------------------
def client(port, pings, interval, bound):
    """Send ``pings`` timestamped datagrams every ``interval`` s and time each echo."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(STARTUP_S)
    addr = ("127.0.0.1", port)
    sock.sendto(b"hello", addr)
    sock.recvfrom(64)   # "go": the server and its background threads are running
    sent, back = {}, {}
    done = threading.Event()

    def receive():
        sock.settimeout(0.2)
        deadline = None
        while True:
            if done.is_set() and deadline is None:
                deadline = time.time() + bound
            if deadline is not None and (time.time() > deadline or len(back) == len(sent)):
                return
            try:
                data, _ = sock.recvfrom(256)
            except socket.timeout:
                continue
            now = time.time()
            seq = int(data.split(b" ")[0])
            back.setdefault(seq, now)

    r = threading.Thread(target=receive)
    r.start()
    t0 = time.time()
    for i in range(pings):
        delay = t0 + (i + 1) * interval - time.time()
        if delay > 0:
            time.sleep(delay)
        sent[i] = time.time()
        sock.sendto(("%d %r" % (i, sent[i])).encode("ascii"), addr)
    done.set()
    r.join()
    sock.sendto(b"end", addr)
    rows = []
    for i in sorted(sent):
        wait = back[i] - sent[i] if i in back else None
        # an echo later than the bound counts as starved; when it came at all is kept
        rows.append({"seq": i, "sent_s": round(sent[i] - t0, 6),
                     "rtt_ms": wait * 1000.0 if wait is not None and wait <= bound else None,
                     "late_echo_ms": wait * 1000.0 if wait is not None and wait > bound else None})
    sys.stdout.write(json.dumps(rows) + "\n")


def latency(task, threads, duration, interval, bound):
    func, arg = TASKS[task]()
    func(arg)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(STARTUP_S)
    port = sock.getsockname()[1]
    pings = int(round(duration / interval))
    spec = json.dumps({"params": {"role": "client", "port": port, "pings": pings, "interval": interval,
                                  "bound": bound}})
    proc = subprocess.Popen([sys.executable, "-s", "-B", os.path.abspath(__file__), spec], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    stop, release, counts = threading.Event(), threading.Event(), []

    def background():
        release.wait()
        # the threads stop by themselves at the latest a second after the client's last possible
        # wait (pings for ``duration``, a ``bound`` for their echoes): where they starve this main
        # thread (the old GIL next to regex), nothing else would stop them
        counts.append(timed_loop(func, arg, time.time(), duration * 3 + bound * 2 + 1, stop, False)[0])

    oneway = {}
    try:
        _, caddr = sock.recvfrom(64)            # the client is up
        bg = [threading.Thread(target=background) for _ in range(threads)]
        for t in bg:
            t.daemon = True
            t.start()                           # each waits for the release: no contention yet
        # "go" is sent before the threads compete, as ccbench releases its threads only once the
        # first ping is in: a main thread starved by them (the old GIL's result) then shows as
        # late or starved pings, never as a client that gave up waiting to start
        sock.sendto(b"go", caddr)
        release.set()
        sock.settimeout(min(bound, 0.2))
        deadline = time.time() + duration + 2 * bound + 5
        while time.time() < deadline:
            try:
                data, addr = sock.recvfrom(256)
            except socket.timeout:
                continue
            now = time.time()
            if data == b"end":
                break
            sock.sendto(data, addr)             # the echo: needs this thread to get the GIL
            seq, sent = data.split(b" ")
            oneway[int(seq)] = (now - float(sent)) * 1000.0
    finally:
        release.set()
        stop.set()
        out, err = proc.communicate()
    lines = out.decode("ascii").strip().splitlines()
    if proc.returncode or not lines:
        raise RuntimeError("the ping client exited %s without results: %s"
                           % (proc.returncode, err.decode("ascii", "replace").strip()[-400:]))
    rows = json.loads(lines[-1])
    for row in rows:
        row["oneway_ms"] = oneway.get(row["seq"])
    answered = [r["rtt_ms"] for r in rows if r["rtt_ms"] is not None]
    return {"pings": len(rows), "answered": len(answered), "starved": len(rows) - len(answered),
            "background_iterations": sum(counts), "rows": rows}


# -- the tool's own latency protocol ------------------------------------------------------------
TOOL_INTERVAL = 0.1     # seconds between pings
TOOL_DURATION = 2.0     # seconds of pings: 20 of them
TOOL_READY_WAIT = 1.0   # the client's pause after its ready datagram
TOOL_LOOP = 1.5         # the background threads compute for this many times TOOL_DURATION


def _own_source(n, mode):
    with open(os.path.abspath(__file__), mode) as f:
        return f.read(n)


def tool_task(task):
    """The tool's task inputs: (function, argument)."""
    if task == "regex":
        import re
        pat = re.compile(r"^(\s*def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)", re.MULTILINE)   # inspect's pattern
        return pat.findall, _own_source(2000, "r")
    if task == "bz2":
        import bz2
        return bz2.compress, _own_source(3000, "rb") * 2
    return TASKS[task]()


def tool_client(port, pings, interval, wait):
    """The tool's client: a ready datagram, a pause, then ``pings`` timestamped datagrams, each
    after sleeping ``interval`` (so the sleeps' overrun accumulates, as the tool's did), then END."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    addr = ("127.0.0.1", port)
    sock.sendto(("ready %r" % time.time()).encode("ascii"), addr)
    time.sleep(wait)
    for i in range(pings):
        time.sleep(interval)
        sock.sendto(("%d %r" % (i, time.time())).encode("ascii"), addr)
    sock.sendto(b"END", addr)
    sock.close()


def tool_latency(task, threads, bound):
    func, arg = tool_task(task)
    pings = int(round(TOOL_DURATION / TOOL_INTERVAL))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    lock, ready, stopped = threading.Lock(), [], []
    release, stop, box = threading.Event(), threading.Event(), {}

    def background():
        with lock:
            ready.append(1)
        release.wait()
        n = timed_loop(func, arg, box["start"], TOOL_DURATION * TOOL_LOOP, stop, False)[0]
        with lock:
            stopped.append((time.time(), n))

    bg = [threading.Thread(target=background) for _ in range(threads)]
    if threads:
        func(arg)                                   # warm up, as the tool did
    for t in bg:
        t.daemon = True
        t.start()
    limit = time.time() + STARTUP_S
    while len(ready) < threads:                     # thread start-up stays out of the test
        if time.time() > limit:
            raise RuntimeError("the background threads did not start within %g s" % STARTUP_S)
        time.sleep(0.001)
    spec = json.dumps({"params": {"role": "tool_client", "port": port, "pings": pings,
                                  "interval": TOOL_INTERVAL, "wait": TOOL_READY_WAIT}})
    proc = subprocess.Popen([sys.executable, "-s", "-B", os.path.abspath(__file__), spec],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    read = []
    try:
        sock.settimeout(STARTUP_S)
        sock.recv(256)                              # the ready datagram: the threads start now
        box["start"] = time.time()
        release.set()
        # every read is bounded: the threads stop by themselves after TOOL_LOOP x TOOL_DURATION.
        # The tool's read blocked without a timeout; here a read returns at the latest 0.2 s
        # after it began, and loops: pings come every 0.1 s, so a ping is never waited on past
        # its arrival for this reason (the GIL decides when the reading thread runs again)
        deadline = box["start"] + TOOL_READY_WAIT + TOOL_DURATION * TOOL_LOOP + bound
        sock.settimeout(0.2)
        while time.time() < deadline:
            try:
                data = sock.recv(256)
            except socket.timeout:
                continue
            now = time.time()
            if data == b"END":
                break
            read.append((now, data))
    finally:
        release.set()
        stop.set()
        for t in bg:
            t.join(TOOL_DURATION * TOOL_LOOP + 30)
        out, err = proc.communicate()
        sock.close()
    if proc.returncode:
        raise RuntimeError("the tool's client exited %s: %s" % (proc.returncode, err.decode("ascii", "replace")[-400:]))
    start = box["start"]
    got = {}
    for now, data in read:
        seq, sent = data.split(b" ")
        got[int(seq)] = (float(sent), now)
    rows = [{"seq": i, "sent_s": round(got[i][0] - start, 6) if i in got else None,
             "read_s": round(got[i][1] - start, 6) if i in got else None,
             "oneway_ms": (got[i][1] - got[i][0]) * 1000.0 if i in got else None} for i in range(pings)]
    return {"pings": pings, "answered": len(got), "starved": pings - len(got),
            "background_iterations": sum(n for _, n in stopped),
            "bg_stopped_s": round(max(t for t, _ in stopped) - start, 6) if stopped else None, "rows": rows}


def run(p):
    if p.get("check_interval") is not None:
        if sys.version_info >= (3, 2):
            raise ValueError("check_interval is the old GIL's (2.x); this build has a switch interval")
        sys.setcheckinterval(int(p["check_interval"]))
    if p["test"] == "throughput":
        return throughput(p["task"], p["workers"], int(p["threads"]), float(p["duration"]))
    if p["test"] == "tool":
        return tool_latency(p["task"], int(p["threads"]), float(p["bound"]))
    return latency(p["task"], int(p["threads"]), float(p["duration"]), float(p["interval"]), float(p["bound"]))


if __name__ == "__main__":
    spec = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    if spec.get("params", {}).get("role") == "client":
        c = spec["params"]
        client(int(c["port"]), int(c["pings"]), float(c["interval"]), float(c["bound"]))
    elif spec.get("params", {}).get("role") == "tool_client":
        c = spec["params"]
        tool_client(int(c["port"]), int(c["pings"]), float(c["interval"]), float(c["wait"]))
    else:
        _common.main(run)
