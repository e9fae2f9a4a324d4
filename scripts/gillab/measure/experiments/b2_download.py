"""Document 004, Backblaze: "Python GIL vs. nogil: Boost I/O Performance 10x With One Line
Change".  The B2 command line tool's download architecture (b2sdk 1.21) rebuilt against nginx
on 127.0.0.1, single file and many files, threads swept, writer thread or writer process.

A sample downloads the scenario's files once (workload ``b2_download``, in a venv of the build
with ``requests``) and verifies every byte.  The server's ceiling is measured beside it with
curl fetching the same files in parallel (condition ``curl``), so that the server is shown not
to be what limits the Python client."""
from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from .. import procs as guarded
from .. import runner, servers, venvs
from ..profiles import Param, ParameterError, choices, one_of, positive_int, positive_ints
from ..protocol import Experiment
from ..metadata import filesystem_of


MiB = 1 << 20


SCENARIOS = ("single", "many")


WRITERS = ("thread", "process")


# The HTTP client in each build's venv, pinned: ``requests-2.32.5`` (Python 3.8 or newer; the
# chapter's default), and ``requests-2.27.1``, the last release for Python 3.6, with every
# dependency pinned, so that one client serves every build of document 004's version sweep (3.6 to
# 3.13) and only the interpreter changes from one build to the next.
CLIENTS = {
    "requests-2.32.5": ("requests==2.32.5",),
    "requests-2.27.1": ("requests==2.27.1", "urllib3==1.26.20", "idna==3.10", "charset-normalizer==2.0.12",
                        "certifi==2024.8.30"),
}


DEFAULT_CLIENT = "requests-2.32.5"


def files_dir() -> Path:
    from ..provision import cache_root

    return cache_root() / "b2-files"


def make_file(path: Path, size: int, seed: int) -> str:
    """A file of ``size`` bytes, deterministic in ``seed`` (1 MiB pseudo-random blocks), and its
    SHA-256.  Made once; kept while its recorded digest still matches its size and seed."""
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        m = json.loads(meta.read_text())
        if m.get("size") == size and m.get("seed") == seed and path.stat().st_size == size:
            return m["sha256"]
    h = hashlib.sha256()
    rng = random.Random(seed)
    with open(path, "wb") as f:
        left = size
        while left:
            block = rng.randbytes(min(MiB, left))
            f.write(block)
            h.update(block)
            left -= len(block)
    meta.write_text(json.dumps({"size": size, "seed": seed, "sha256": h.hexdigest()}))
    return h.hexdigest()


def scenario_files(p: dict, scenario: str) -> list[dict]:
    d = files_dir()
    d.mkdir(parents=True, exist_ok=True)
    if scenario == "single":
        specs = [("single-%d.bin" % p["single_mb"], p["single_mb"] * MiB, 1)]
    else:
        specs = [("many-%d-%02d.bin" % (p["many_mb"], i), p["many_mb"] * MiB, 100 + i) for i in range(p["many_files"])]
    return [{"name": n, "size": s, "sha256": make_file(d / n, s, seed)} for n, s, seed in specs]


def download_dir() -> Path:
    from ..provision import cache_root

    d = cache_root() / "b2-downloads"
    d.mkdir(parents=True, exist_ok=True)
    return d


def curl_ceiling(base: str, files: list[dict], parallel: int, timeout: float) -> dict:
    """curl fetching the same files, ``parallel`` at once (ranges of the single file), to /dev/null."""
    if shutil.which("curl") is None:
        raise runner.WorkloadError("curl is not installed")
    total = sum(f["size"] for f in files)
    if len(files) == 1:
        size = files[0]["size"]
        n = max(1, parallel)
        bounds = [(i * size // n, (i + 1) * size // n - 1) for i in range(n)]
        cmds = [["curl", "-sS", "-o", "/dev/null", "-r", f"{a}-{b}", f"{base}/{files[0]['name']}"] for a, b in bounds]
    else:
        cmds = [["curl", "-sS", "-o", "/dev/null", f"{base}/{f['name']}"] for f in files]
    t0 = time.perf_counter()
    procs = []
    pending = list(cmds)
    try:
        while pending or procs:
            while pending and len(procs) < parallel:
                procs.append(guarded.popen(pending.pop(0)))
            procs[0].wait(timeout=timeout)
            guarded.kill_group(procs[0])   # its watcher
            if procs[0].returncode != 0:
                raise runner.WorkloadError(f"curl failed with exit {procs[0].returncode}")
            procs.pop(0)
    finally:  # on an error or Ctrl-C, no curl is left running
        for proc in procs:
            guarded.kill_group(proc)
            proc.wait()
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "bytes": total, "MBps": total / seconds / 1e6}


class B2Download(Experiment):
    name = "b2_download"
    adaptive_metric = "seconds"
    notebook = "15_b2_download.md"
    measuring_code = (curl_ceiling, scenario_files, make_file, servers.nginx, ("nginx.conf", servers.NGINX_CONF),
                      venvs.ensure, ("clients", json.dumps(CLIENTS, sort_keys=True)))
    workload = "b2_download"
    title = "A B2-style parallel download"
    document = "004_22030fa0f093a28f.txt (Backblaze: Python GIL vs. nogil)"
    params = {
        "scenarios": Param("scenarios", choices(SCENARIOS), "single (one large file) and/or many (several at once)"),
        "threads": Param("threads", positive_ints, "pool sizes to sweep; the tool's default is 10"),
        "writers": Param("writers", choices(WRITERS), "thread (queue.Queue) and/or process (multiprocessing.Queue)"),
        "process_writer_threads": Param("process_writer_threads", positive_ints,
                                        "thread counts at which the process writer is measured"),
        "min_part_size_mb": Param("min_part_size_mb", positive_int, "minimum part size in MiB; 100 in b2sdk"),
        "single_mb": Param("single_mb", positive_int, "size of the single file in MiB"),
        "many_files": Param("many_files", positive_int, "number of files in the many-files scenario"),
        "many_mb": Param("many_mb", positive_int, "size of each of those files in MiB"),
        "chunk_kb": Param("chunk_kb", positive_int, "bytes read from a response per chunk, in KiB"),
        "client": Param("client", one_of(tuple(CLIENTS)), "the pinned HTTP client in each build's venv: "
                        + ", ".join(CLIENTS) + " (the last for Python 3.6)"),
    }
    point_keys = ("scenario", "threads", "writer")

    def points(self, p):
        pts = [{"scenario": s, "threads": t, "writer": "thread"} for s in p["scenarios"] for t in p["threads"]
               if "thread" in p["writers"]]
        if "process" in p["writers"]:
            pts += [{"scenario": s, "threads": t, "writer": "process"} for s in p["scenarios"]
                    for t in p["process_writer_threads"]]
        return pts

    def config(self, p):
        """The default client leaves the configuration id as it was before the client could be chosen."""
        c = super().config(p)
        if c.get("client") == DEFAULT_CLIENT:
            del c["client"]
        return c

    def check(self, p):
        need = 2 * max(p["single_mb"], p["many_files"] * p["many_mb"]) * MiB
        for d in (files_dir(), download_dir()):
            d.mkdir(parents=True, exist_ok=True)
            free = shutil.disk_usage(d).free
            if free < need:
                raise ParameterError(f"b2_download: {d} has {free / 2**30:.1f} GiB free; the files need about "
                                     f"{need / 2**30:.1f} GiB (smaller single_mb / many_mb, or free some space)")
        if p["min_part_size_mb"] > p["single_mb"]:
            raise ParameterError("b2_download: min_part_size_mb larger than single_mb: the single file would not split")
        for tool in ("nginx", "curl"):
            if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
                raise ParameterError(f"b2_download: {tool} is not installed (scripts/install-system-deps.sh)")

    def before_sweep(self, p, needed, add_row):
        """The server's ceiling, with curl, once per scenario and repeat (not per condition)."""
        for rep in range(p["repeats"]):
            for s in p["scenarios"]:
                point = {"scenario": s, "threads": max(p["threads"]), "writer": "curl"}
                if not needed("curl", point, rep):
                    continue
                files = scenario_files(p, s)
                with servers.nginx(str(files_dir())) as base:
                    r = curl_ceiling(base, files, point["threads"], p["timeout"])
                add_row("curl", point, rep, r)

    def run_sample(self, p, point, cond):
        vcond = venvs.ensure(cond, CLIENTS[p["client"]])
        files = scenario_files(p, point["scenario"])
        with servers.nginx(str(files_dir())) as base, tempfile.TemporaryDirectory(dir=download_dir()) as out:
            fs = filesystem_of(out)
            s = runner.run(vcond, "b2_download", {
                "base_url": base, "files": files, "out_dir": out, "threads": point["threads"],
                "min_part_size": p["min_part_size_mb"] * MiB, "chunk": p["chunk_kb"] * 1024,
                "writer": point["writer"]}, timeout=p["timeout"])
        s.result.update(fs_type=fs["fstype"], fs_device=fs["device"])
        return s


def work(p: dict, point: dict) -> float:
    """The megabytes a run downloads (the forecast's measure of a size): one file, or all of many."""
    if point["scenario"] == "single":
        return float(p["single_mb"])
    return float(p["many_files"]) * float(p["many_mb"])


EXPERIMENT = B2Download()
