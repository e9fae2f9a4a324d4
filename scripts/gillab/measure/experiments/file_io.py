"""Document 002's I/O-bound benchmark: files written and read back in chunks with fsync,
one after another and on a thread pool."""
from __future__ import annotations

import os
from pathlib import Path

from ..protocol import Experiment
from ..metadata import filesystem_of
from ..profiles import Param, ParameterError, positive_int, text


def default_io_dir() -> Path:
    from ..provision import cache_root

    return cache_root() / "io-bench"


class FileIO(Experiment):
    name = "file_io"
    adaptive_metric = "seconds"
    notebook = "09_file_io.md"
    workload = "file_io"
    title = "File I/O with fsync"
    document = "002_238bc8ef41f65af2.txt (Goodbye GIL), I/O-bound benchmark"
    params = {
        "file_mb": Param("file_mb", positive_int, "size of each file in MiB; 24 in the document"),
        "chunk_kb": Param("chunk_kb", positive_int, "write/read chunk in KiB, fsync after each; 64"),
        "single_ops": Param("single_ops", positive_int, "operations one after another; 8"),
        "multi_ops": Param("multi_ops", positive_int, "operations on the thread pool; 12"),
        "threads": Param("threads", positive_int, "pool size; 6"),
        "directory": Param("directory", text, "where the files go (a real disk; empty means the gillab cache)",
                           optional=True),
        "allow_tmpfs": Param("allow_tmpfs", lambda v: str(v).lower() in ("1", "true", "yes"),
                             "measure on tmpfs anyway (fsync is then free)"),
    }

    def points(self, p):
        return [{"mode": "single"}, {"mode": "threads"}]

    def directory(self, p) -> Path:
        return Path(p["directory"]).expanduser() if p["directory"] else default_io_dir()

    def workload_params(self, p, point):
        ops = p["single_ops"] if point["mode"] == "single" else p["multi_ops"]
        return {"directory": str(self.directory(p)), "file_mb": p["file_mb"], "chunk_kb": p["chunk_kb"],
                "ops": ops, "threads": p["threads"], "mode": point["mode"]}

    def check(self, p):
        d = self.directory(p)
        d.mkdir(parents=True, exist_ok=True)
        fs = filesystem_of(d)
        if fs["fstype"] in ("tmpfs", "ramfs") and not p["allow_tmpfs"]:
            raise ParameterError(f"file_io: {d} is on {fs['fstype']}, where fsync costs nothing; choose a "
                                 "directory on a disk, or set allow_tmpfs=True to measure it anyway")
        need = p["file_mb"] * 1024 * 1024 * max(p["threads"], 1) * 2
        free = os.statvfs(d).f_bavail * os.statvfs(d).f_frsize
        if free < need:
            raise ParameterError(f"file_io: {d} has {free / 2**20:,.0f} MiB free, needs about {need / 2**20:,.0f}")
        if (p["file_mb"] * 1024) % p["chunk_kb"]:
            raise ParameterError("file_io: file_mb must be a whole number of chunks")

    def run_sample(self, p, point, cond):
        s = super().run_sample(p, point, cond)
        fs = filesystem_of(self.directory(p))
        # where the files went: "" in the configuration means the gillab cache of whichever machine
        # measures, so that the same profile names the same configuration everywhere
        s.result.update({"fs_type": fs["fstype"], "fs_device": fs["device"], "fs_mountpoint": fs["mountpoint"],
                         "io_directory": str(self.directory(p))})
        return s


EXPERIMENT = FileIO()
