"""Document 002's I/O-bound benchmark: a file written in chunks with flush + fsync after every
chunk, read back in chunks, then removed; ``ops`` times one after another, or ``ops`` times on
a ThreadPoolExecutor of ``threads`` workers.  The files live in ``directory`` (a real disk:
the harness checks it is not tmpfs, where fsync is free)."""
import os
import sys
import tempfile
import time
from concurrent.futures import ALL_COMPLETED, ThreadPoolExecutor, wait

from _common import main


def io_bound(directory, file_bytes, chunk):
    total_chunks = file_bytes // chunk
    buf = b"A" * chunk
    tmp = tempfile.NamedTemporaryFile(prefix="io_bench_", dir=directory, delete=False)
    name = tmp.name
    tmp.close()
    try:
        with open(name, "wb", buffering=0) as f0:
            f0.truncate(file_bytes)
        fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o600)
        f = os.fdopen(fd, "r+b", buffering=0)
        try:
            f.seek(0)
            for _ in range(total_chunks):
                f.write(buf)
                f.flush()
                os.fsync(f.fileno())
            f.seek(0)
            remaining = total_chunks
            while remaining > 0:
                if not f.read(chunk):
                    break
                remaining -= 1
        finally:
            f.close()
    finally:
        os.remove(name)


def run(params):
    directory = params["directory"]
    file_bytes = int(params["file_mb"]) * 1024 * 1024
    chunk = int(params["chunk_kb"]) * 1024
    ops, threads, mode = int(params["ops"]), int(params["threads"]), params["mode"]
    t0 = time.perf_counter()
    if mode == "single":
        for _ in range(ops):
            io_bound(directory, file_bytes, chunk)
    elif mode == "threads":
        with ThreadPoolExecutor(max_workers=threads) as ex:
            futs = [ex.submit(io_bound, directory, file_bytes, chunk) for _ in range(ops)]
            done, _ = wait(futs, return_when=ALL_COMPLETED)
            for fut in done:
                fut.result()
    else:
        raise ValueError("mode must be single or threads")
    left = [n for n in os.listdir(directory) if n.startswith("io_bench_")]
    return {"seconds": time.perf_counter() - t0, "files_left": len(left),
            "fsyncs": ops * (file_bytes // chunk)}


if __name__ == "__main__":
    sys.exit(main(run))
