"""A B2-style parallel download (document 004), after b2sdk 1.21's ParallelDownloader and
WriterThread, which the B2 command line tool used in 2023, against a local web server.

Per file: the number of streams is min(threads, size // min_part_size), at least 1.  With two
streams or more the file is split into that many parts (smaller parts first); the first part is
read from the initial GET's response, the others are fetched with ranged GETs, each through the
``requests`` session of its thread, on one shared ``ThreadPoolExecutor(threads)``.  One writer
per file receives ``(offset, bytes)`` through a queue of depth 2 x parts and seeks and writes:
a thread fed by ``queue.Queue`` (as b2sdk), or a process fed by ``multiprocessing.Queue`` (the
variant the document says is about 15% slower).  Several files download at once through a
second pool of ``threads`` workers.  Every file is checked against its SHA-256 afterwards; a
mismatch fails the run.
"""
import hashlib
import multiprocessing
import os
import queue
import resource
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait

import requests

from _common import main

_local = threading.local()
# The writer process is started from a download thread: "fork" from a thread is unsafe (under
# CPython 3.11 the child exits at once), so a fork server is used, as Python 3.14 does by
# default; it is started before the timed region.
START_METHOD = "forkserver"


def _noop():
    pass


def session():
    s = getattr(_local, "session", None)
    if s is None:
        s = _local.session = requests.Session()
    return s


def write_loop(path, get):
    """Seek and write every (offset, data) until (None, None)."""
    with open(path, "r+b") as f:
        while True:
            offset, data = get()
            if offset is None:
                return
            f.seek(offset)
            f.write(data)


class ThreadWriter:
    def __init__(self, path, depth):
        self.queue = queue.Queue(maxsize=depth)
        self.worker = threading.Thread(target=write_loop, args=(path, self.queue.get))
        self.worker.start()

    def close(self):
        self.queue.put((None, None))
        self.worker.join()


def _process_writer(path, q, done):
    write_loop(path, q.get)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    done.put(ru.ru_utime + ru.ru_stime)  # its CPU time: it is the fork server's child, not ours


WRITER_CPU = []  # CPU seconds of the writer processes, added to the client's own
# Writers whose exit status the fork server lost: under load it can report 255 for a child that
# ended normally (CPython issue 140867).  Such a writer had finished: it sends its CPU time after
# its last write, and every byte is checked against its SHA-256 afterwards.
STATUS_LOST = []


class ProcessWriter:
    def __init__(self, path, depth):
        ctx = multiprocessing.get_context(START_METHOD)
        self.queue = ctx.Queue(maxsize=depth)
        self.done = ctx.Queue()
        self.worker = ctx.Process(target=_process_writer, args=(path, self.queue, self.done))
        self.worker.start()

    def close(self):
        self.queue.put((None, None))
        WRITER_CPU.append(self.done.get(timeout=300))
        self.worker.join()
        if self.worker.exitcode == 255:
            STATUS_LOST.append(1)
        elif self.worker.exitcode != 0:
            raise RuntimeError("the writer process failed with exit code %s" % self.worker.exitcode)


def prepare_process_writers():
    """Before the timed region and before any thread: start the fork server, and make one queue,
    so that every module a writer's queues import is imported.  Download threads making their
    first queues at once import them at once, which 3.9 fails ("cannot import name 'Queue' from
    partially initialized module 'multiprocessing.queues'", then 'register' from
    'multiprocessing.resource_tracker')."""
    ctx = multiprocessing.get_context(START_METHOD)
    warm = ctx.Process(target=_noop)
    warm.start()
    warm.join()
    q = ctx.Queue()
    q.close()
    q.join_thread()


def split(size, parts):
    """(start, end inclusive) of each part; the smaller parts first."""
    out, offset = [], 0
    for i in range(parts):
        n = (size - offset) // (parts - i)
        out.append((offset, offset + n - 1))
        offset += n
    return out


def read_into(response, start, end, put, chunk):
    """Put every chunk of ``response`` between file offsets start..end into the writer queue."""
    pos = start
    for data in response.iter_content(chunk_size=chunk):
        if pos + len(data) > end + 1:
            data = data[:end + 1 - pos]
        if data:
            put((pos, data))
            pos += len(data)
        if pos > end:
            break
    return pos - start


def ranged_part(url, start, end, put, chunk):
    with session().get(url, headers={"Range": "bytes=%d-%d" % (start, end)}, stream=True, timeout=60) as r:
        if r.status_code != 206:
            raise RuntimeError("ranged GET answered %d, not 206" % r.status_code)
        got = read_into(r, start, end, put, chunk)
    if got != end - start + 1:
        raise RuntimeError("part %d-%d: got %d bytes" % (start, end, got))


def first_part(response, start, end, put, chunk):
    try:
        got = read_into(response, start, end, put, chunk)
    finally:
        response.close()
    if got != end - start + 1:
        raise RuntimeError("first part: got %d bytes" % got)


def download(url, size, dest, part_pool, p):
    streams = min(p["threads"], size // p["min_part_size"]) or 1
    with open(dest, "wb") as f:
        f.truncate(size)
    response = session().get(url, stream=True, timeout=60)
    response.raise_for_status()
    parts = split(size, streams) if streams >= 2 and size >= 2 * p["min_part_size"] else [(0, size - 1)]
    writer = (ProcessWriter if p["writer"] == "process" else ThreadWriter)(dest, 2 * len(parts))
    try:
        futs = [part_pool.submit(first_part, response, parts[0][0], parts[0][1], writer.queue.put, p["chunk"])]
        futs += [part_pool.submit(ranged_part, url, s, e, writer.queue.put, p["chunk"]) for s, e in parts[1:]]
        for fut in futs:
            fut.result()
    finally:
        writer.close()
    return len(parts)


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cpu_seconds():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def run(params):
    base, files, out_dir = params["base_url"], params["files"], params["out_dir"]
    if not base.startswith("http://127.0.0.1:"):
        raise ValueError("downloads from 127.0.0.1 only")
    threads = int(params["threads"])
    p = {"threads": threads, "min_part_size": int(params["min_part_size"]), "chunk": int(params["chunk"]),
         "writer": params["writer"]}
    if p["writer"] not in ("thread", "process"):
        raise ValueError("writer must be thread or process")
    if p["writer"] == "process":
        prepare_process_writers()
    c0, t0 = cpu_seconds(), time.perf_counter()
    with ThreadPoolExecutor(threads) as part_pool, ThreadPoolExecutor(threads) as file_pool:
        futs = [file_pool.submit(download, base + "/" + f["name"], f["size"], os.path.join(out_dir, f["name"]),
                                 part_pool, p) for f in files]
        wait(futs)
        streams = [fut.result() for fut in futs]
    seconds = time.perf_counter() - t0
    cpu = cpu_seconds() - c0 + sum(WRITER_CPU)
    total = sum(f["size"] for f in files)
    for f in files:  # not timed: every byte checked
        got = sha256_of(os.path.join(out_dir, f["name"]))
        if got != f["sha256"]:
            raise AssertionError("%s: SHA-256 %s, expected %s" % (f["name"], got, f["sha256"]))
        os.remove(os.path.join(out_dir, f["name"]))
    return {"seconds": seconds, "bytes": total, "MBps": total / seconds / 1e6, "cpu_s": cpu,
            "cpu_per_wall": cpu / seconds, "streams_per_file": max(streams), "files": len(files), "verified": True,
            "writer_status_lost": len(STATUS_LOST)}


if __name__ == "__main__":
    sys.exit(main(run))
