"""Tidy storage of raw samples and run metadata, written atomically, resumable.

Layout, per campaign (see :mod:`gillab.campaigns`) and experiment::

    data/results/<campaign>/campaign.json                 the machine and time of the campaign
    data/results/<campaign>/<experiment>/samples.csv      one row per sample (ok or failed)
    data/results/<campaign>/<experiment>/runs/<run>.json  metadata of each run

``samples.csv`` is rewritten through a temporary file and ``os.replace`` after every sample,
so a run killed halfway keeps every sample measured so far and never leaves a torn file.
Rows are only ever added: a failed or interrupted run cannot lose or overwrite results.
"""
from __future__ import annotations

import contextlib
import csv
import fcntl
import json
import os
import tempfile
from pathlib import Path

from .metadata import portable
from .paths import results_dir


class StoreBusy(RuntimeError):
    """Another run is writing to the same experiment folder."""


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _rows_to_csv(fieldnames: list[str], rows: list[dict]) -> str:
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fieldnames, extrasaction="raise", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fieldnames})
    return buf.getvalue()


class ExperimentStore:
    def __init__(self, experiment: str, campaign: str, root: Path | None = None):
        self.experiment = experiment
        self.campaign = campaign
        self.dir = (root or results_dir()) / campaign / experiment
        self.samples_path = self.dir / "samples.csv"
        self.runs_dir = self.dir / "runs"
        self._rows: list[dict] | None = None
        self._fields: list[str] | None = None

    # -- reading -----------------------------------------------------------------------
    def rows(self) -> list[dict]:
        if self._rows is None:
            if self.samples_path.exists():
                with open(self.samples_path, newline="") as f:
                    reader = csv.DictReader(f)
                    self._fields = list(reader.fieldnames or [])
                    self._rows = list(reader)
            else:
                self._rows, self._fields = [], []
        return self._rows

    def runs(self) -> list[dict]:
        if not self.runs_dir.is_dir():
            return []
        return [json.loads(p.read_text()) for p in sorted(self.runs_dir.glob("*.json"))]

    def measured(self, config: str) -> dict[tuple[str, str, int], dict]:
        """(condition, point key, repeat) -> the newest successful row of this configuration."""
        out = {}
        for r in self.rows():
            if r.get("config") == config and r.get("status") == "ok":
                out[(r["condition"], r["point"], int(r["repeat"]))] = r
        return out

    def failed(self, config: str) -> set[tuple[str, str, int]]:
        """(condition, point key, repeat) stored as failed with this configuration."""
        return {(r["condition"], r["point"], int(r["repeat"])) for r in self.rows()
                if r.get("config") == config and r.get("status") != "ok"}

    def is_locked(self) -> bool:
        """Whether a live run holds this folder's lock (a run file saying ``running`` whose
        lock is free belongs to a harness that was killed)."""
        path = self.dir / ".lock"
        if not path.exists():
            return False
        with open(path, "a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
        return False

    def mark_killed(self) -> list[str]:
        """Call with the lock held: every run file still saying ``running`` is of a harness
        that died without a word (SIGKILL, power loss); say so in it."""
        from .metadata import now

        marked = []
        for run in self.runs():
            if run.get("status") == "running":
                run.update(status="killed", killed_noticed=now())
                self.write_run(run)
                marked.append(run["run_id"])
        return marked

    # -- writing -----------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        fh = open(self.dir / ".lock", "w")
        try:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise StoreBusy(f"another run is writing to {self.dir}; wait for it to finish") from None
            yield self
        finally:
            fh.close()

    def append(self, row: dict) -> None:
        self.extend([row])

    def extend(self, new_rows: list[dict]) -> None:
        """Add rows (all of one sample) in one atomic rewrite: a sample is stored whole or not."""
        new_rows = [portable(r) for r in new_rows]
        rows = self.rows()
        fields = list(self._fields or [])
        for row in new_rows:
            for k in row:
                if k not in fields:
                    fields.append(k)
        atomic_write_text(self.samples_path, _rows_to_csv(fields, rows + new_rows))
        rows.extend({k: ("" if r.get(k) is None else str(r.get(k))) for k in fields} for r in new_rows)
        self._fields = fields

    def write_run(self, meta: dict) -> Path:
        path = self.runs_dir / f"{meta['run_id']}.json"
        atomic_write_text(path, json.dumps(portable(meta), indent=2, sort_keys=False, default=str) + "\n")
        return path
