"""Tidy storage of raw samples and run metadata, written atomically, resumable.

Layout, per campaign (see :mod:`gillab.measure.campaigns`) and experiment::

    data/results/<campaign>/campaign.json                 the machine and time of the campaign
    data/results/<campaign>/<experiment>/samples.csv      one row per sample (ok or failed)
    data/results/<campaign>/<experiment>/samples.schema.json  the type of every column
    data/results/<campaign>/<experiment>/runs/<run>.json  metadata of each run

``samples.csv`` is rewritten through a temporary file and ``os.replace`` after every sample,
so a run killed halfway keeps every sample measured so far and never leaves a torn file.
Rows are only ever added: a failed or interrupted run cannot lose or overwrite results.

The CSV stays plain text for auditing; ``samples.schema.json`` says what each column held when
it was written (``int``, ``float``, ``bool``, ``str`` or ``json`` for lists and mappings), so
that :func:`typed_frame` gives numbers, booleans and lists back as what they were.  A file
written before the schema existed is read with :func:`infer_type`.

A damaged row (a machine crash or a bad copy can cut one mid-line) is found when the file is
read (:func:`read_samples`): it is reported with its file and line, left out of what is read, and
every other row reads normally.  The next write sets it aside in ``samples.damaged.csv`` beside
the samples (line, when, why, the row's text as it was), before ``samples.csv`` is rewritten
without it: nothing is deleted, and measuring resumes (the sample it held is measured again).
"""
from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .metadata import portable
from ..paths import results_dir


class StoreBusy(RuntimeError):
    """Another run is writing to the same experiment folder."""


class StoreWriteError(RuntimeError):
    """A sample could not be stored (a full disk, a folder turned read-only): the sweep stops,
    every row stored before it is kept, and the run file says why."""


# held in a hidden file while a run writes, given back when the disk is full so that the run
# file can still say how the run ended (a run file is a few KiB; this is room for it, many times)
RESERVE_BYTES = 256 * 1024


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


# text even where every value looks like a number (a file without a schema is inferred)
TEXT_COLUMNS = ("config", "run_id", "point", "condition", "status", "error", "time", "profile", "experiment",
                "python", "affinity_runtime", "affinity", "identity_key", "code_key")


def type_of(value) -> str | None:
    """The schema type of one Python value (None: says nothing)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, (list, tuple, dict)):
        return "json"
    return "str"


def merge_types(a: str | None, b: str | None) -> str | None:
    """A column that held ints and floats is float; any other mix is text."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    if {a, b} == {"int", "float"}:
        return "float"
    return "str"


def encode(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    return str(value)


def infer_type(values) -> str | None:
    """The type of a column written without a schema, from its text: every non-empty value
    True/False -> bool; every one a whole number -> int, a number -> float; a JSON list -> json."""
    vals = [v for v in values if v not in ("", None) and v == v]
    if not vals:
        return None
    if all(v in ("True", "False") for v in vals):
        return "bool"

    def number(v):
        try:
            float(v)
            return True
        except ValueError:
            return False

    if all(number(v) for v in vals):
        return "int" if all(v.lstrip("-").isdigit() for v in vals) else "float"
    if all(v.startswith("[") for v in vals):
        try:
            [json.loads(v) for v in vals]
            return "json"
        except ValueError:
            pass
    return "str"


def typed_frame(rows: list[dict], schema: dict[str, str]):
    """The rows as a DataFrame whose columns have their schema's types: int (Int64 where a value
    is missing), float, bool (``boolean`` where missing), str, json (parsed lists/mappings).  A
    column that holds no value at all (its schema type null: a switch interval in a campaign of
    2.7.18 only) is missing values (NaN), as the same column is in the rows that lack a value
    where others have one; text columns (:data:`TEXT_COLUMNS`) stay text."""
    import pandas as pd

    if not rows:
        return pd.DataFrame(rows)
    # column by column in plain Python, one Series each: a samples file is hundreds of rows and
    # dozens of columns, where pandas' per-operation cost outweighs the work (the judging reads
    # hundreds of these files)
    names = list(rows[0])
    if all(list(r) == names for r in rows):
        columns = zip(*(r.values() for r in rows))
    else:                                                 # rows of other shapes: pandas aligns them
        names = list(pd.DataFrame(rows).columns)
        columns = ([r.get(col) for r in rows] for col in names)
    out = {}
    for col, raw in zip(names, columns):
        kind = schema.get(col) or ("str" if col in TEXT_COLUMNS else infer_type(raw))
        if kind in ("int", "float", "bool"):
            missing = [v is None or v == "" or v != v for v in raw]
        if kind is None:
            out[col] = pd.Series([float("nan")] * len(raw), dtype="float64")
        elif kind in ("int", "float"):
            parse = _number if kind == "float" else _whole
            nums = [None if m else parse(v) for v, m in zip(raw, missing)]
            if kind == "float":
                out[col] = pd.Series([float("nan") if x is None else x for x in nums], dtype="float64")
            elif None in nums:
                out[col] = pd.Series([pd.NA if x is None else x for x in nums], dtype="Int64")
            else:
                out[col] = pd.Series(nums, dtype="int64")
        elif kind == "bool":
            vals = [_BOOL.get(v, float("nan")) if isinstance(v, (str, bool)) else float("nan") for v in raw]
            out[col] = (pd.Series([pd.NA if m else v for v, m in zip(vals, missing)], dtype="boolean") if any(missing)
                        else pd.Series(vals).astype(bool))
        elif kind == "json":
            out[col] = pd.Series([None if v in ("", None) else json.loads(v) if isinstance(v, str) else v
                                  for v in raw], dtype=object)
        else:
            out[col] = pd.Series(["" if v is None or v != v else str(v) for v in raw], dtype="str")
    return pd.DataFrame(out)


_BOOL = {"True": True, "False": False, True: True, False: False}


def _number(v) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _whole(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        x = _number(v)                    # "3.0": what pandas' to_numeric reads as a number
        return int(x) if x is not None and x == x and x.is_integer() else None


# what every sample row has, whatever the experiment (an archive lacking one is refused)
REQUIRED_COLUMNS = ("config", "condition", "point", "repeat", "status")
STATUSES = ("ok", "failed", "not alone")   # not alone: measured beside foreign load (.alone)
DAMAGED_FILE = "samples.damaged.csv"
DAMAGED_FIELDS = ["line", "set_aside", "reason", "text"]
_PARSE = {"int": int, "float": float, "bool": lambda v: {"True": True, "False": False}[v], "json": json.loads}


_REPORTED: set = set()   # (file, mtime, line) of the damaged rows already reported by this process


@dataclass
class Damaged:
    """A row of a samples file that cannot be read as a sample: where it starts, why, its text."""
    line: int
    reason: str
    text: str


def row_checker(header: list[str], schema: dict) -> Callable[[list[str]], str | None]:
    """For a file with this header and schema, the function that says why a row (the fields of
    one CSV record) is no whole sample row, or None when it is one: the header's columns looked up
    once a file, not once a row."""
    width = len(header)
    at = {name: i for i, name in enumerate(header)}
    required = [(name, at[name]) for name in REQUIRED_COLUMNS if name in at]
    repeat, status = at.get("repeat"), at.get("status")
    typed = [(name, at[name], _PARSE[kind], kind) for name, kind in schema.items() if name in at and kind in _PARSE]

    def problem(row: list[str]) -> str | None:
        if len(row) != width:
            return f"{len(row)} fields, not {width} (a cut or damaged row)"
        for name, i in required:
            if row[i] == "":
                return f"no {name}"
        if repeat is not None:
            try:
                int(row[repeat])
            except ValueError:
                return f"repeat {row[repeat][:40]!r} is not a whole number"
        if status is not None and row[status] not in STATUSES:
            return f"status {row[status][:40]!r} is none of {', '.join(STATUSES)}"
        for name, i, parse, kind in typed:
            if row[i] != "":
                try:
                    parse(row[i])
                except (ValueError, KeyError):
                    return f"{name} = {row[i][:40]!r} is not of its type {kind}"
        return None

    return problem


def read_samples(text: str, schema: dict) -> tuple[list[str], list[dict], list[Damaged]]:
    """A samples file's header, its whole rows (as dicts of text) and its damaged rows, each with
    the line it starts on.  A row is damaged when the CSV cannot be parsed there (strict quoting)
    or :func:`row_checker`'s check says so; the rows after it read normally."""
    lines = text.splitlines(keepends=True)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        return [], [], []
    rows, damaged = [], []
    problem = row_checker(header, schema)
    while True:
        start = reader.line_num + 1
        try:
            rec = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            damaged.append(Damaged(start, f"not CSV: {exc}", "".join(lines[start - 1:reader.line_num])))
            continue
        if not rec and reader.line_num == start:   # a blank line: nothing
            continue
        why = problem(rec)
        if why:
            damaged.append(Damaged(start, why, "".join(lines[start - 1:reader.line_num])))
        else:
            rows.append(dict(zip(header, rec)))
    return header, rows, damaged


def _rows_to_csv(fieldnames: list[str], rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fieldnames, extrasaction="raise", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k, "") for k in fieldnames})
    return buf.getvalue()


class ExperimentStore:
    def __init__(self, experiment: str, campaign: str, root: Path | None = None):
        self.experiment = experiment
        self.campaign = campaign
        self.dir = (root or results_dir()) / campaign / experiment
        self.samples_path = self.dir / "samples.csv"
        self.schema_path = self.dir / "samples.schema.json"
        self.runs_dir = self.dir / "runs"
        self.damaged_path = self.dir / DAMAGED_FILE
        self._rows: list[dict] | None = None
        self._fields: list[str] | None = None
        self.damaged: list[Damaged] = []   # rows of samples.csv found damaged when it was read

    # -- reading -----------------------------------------------------------------------
    def rows(self) -> list[dict]:
        """Every whole row of ``samples.csv`` (text); a damaged row is reported on stderr with its
        line, kept in :attr:`damaged` and left out (see :func:`read_samples`)."""
        if self._rows is None:
            if self.samples_path.exists():
                text = self.samples_path.read_text(encoding="utf-8", errors="replace")
                self._fields, self._rows, self.damaged = read_samples(text, self.schema())
                st = self.samples_path.stat()
                for d in self.damaged:
                    said = (str(self.samples_path), st.st_mtime_ns, d.line)
                    if said in _REPORTED:   # once per process, however many times the file is read
                        continue
                    _REPORTED.add(said)
                    print(f"[gillab] {self.samples_path} line {d.line} is damaged ({d.reason}): left out; "
                          f"the other rows read normally, and the next measurement here sets it aside in "
                          f"{DAMAGED_FILE}", file=sys.stderr)
            else:
                self._rows, self._fields = [], []
        return self._rows

    def schema(self) -> dict[str, str]:
        """Column -> type, as written (empty for a file written before schemas)."""
        if self.schema_path.exists():
            try:
                cols = json.loads(self.schema_path.read_text())["columns"]
            except (ValueError, KeyError, TypeError) as exc:
                print(f"[gillab] {self.schema_path} is damaged ({exc!r}): the columns' types are inferred "
                      "from their text instead", file=sys.stderr)
                return {}
            return cols if isinstance(cols, dict) else {}
        return {}

    def frame(self):
        """Every row, typed (see :func:`typed_frame`)."""
        return typed_frame(self.rows(), self.schema())

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
        old = self.schema()
        schema = dict(old) if old or not rows else {f: infer_type(r.get(f, "") for r in rows) for f in fields}
        for row in new_rows:
            for k, v in row.items():
                if k not in fields:
                    fields.append(k)
                schema[k] = merge_types(schema.get(k), type_of(v))
        text_rows = [{k: encode(r.get(k)) for k in fields} for r in new_rows]
        schema = {f: schema.get(f) for f in fields}   # null: only empty values so far
        self._set_aside_damaged()   # before the rewrite that leaves them out
        if schema != old:   # the schema first: a column it names that the CSV lacks is harmless
            atomic_write_text(self.schema_path, json.dumps({"columns": schema}, indent=1) + "\n")
        atomic_write_text(self.samples_path, _rows_to_csv(fields, rows + text_rows))
        rows.extend(text_rows)
        self._fields = fields

    def set_aside(self) -> list[dict]:
        """The rows set aside so far (``samples.damaged.csv``), oldest first."""
        if not self.damaged_path.exists():
            return []
        with open(self.damaged_path, newline="") as f:
            return list(csv.DictReader(f))

    def _set_aside_damaged(self) -> None:
        """Append the damaged rows read from ``samples.csv`` to ``samples.damaged.csv`` (written
        whole, atomically, before ``samples.csv`` is rewritten without them)."""
        if not self.damaged:
            return
        from .metadata import now

        when = now()
        kept = self.set_aside() + [{"line": d.line, "set_aside": when, "reason": d.reason, "text": d.text}
                                   for d in self.damaged]
        atomic_write_text(self.damaged_path, _rows_to_csv(DAMAGED_FIELDS, kept))
        print(f"[gillab] {len(self.damaged)} damaged row(s) of {self.samples_path} set aside in "
              f"{self.damaged_path}", file=sys.stderr)
        self.damaged = []

    def reserve(self) -> bool:
        """Hold :data:`RESERVE_BYTES` of real disk in ``.reserve`` (written, not sparse), for
        :meth:`write_run_even_if_full`; False when even that does not fit."""
        path = self.dir / ".reserve"
        try:
            with open(path, "wb") as f:
                f.write(b"\0" * RESERVE_BYTES)
                f.flush()
                os.fsync(f.fileno())
            return True
        except OSError:
            with contextlib.suppress(OSError):
                path.unlink()
            return False

    def release_reserve(self) -> None:
        with contextlib.suppress(OSError):
            (self.dir / ".reserve").unlink()

    def write_run_even_if_full(self, meta: dict) -> str | None:
        """Write the run file; on a full disk give back the reserve and try once more.  Returns
        None when written, else why not (the run file then still says ``running``, and the next
        run here marks it killed)."""
        try:
            self.write_run(meta)
            return None
        except OSError:
            self.release_reserve()
        try:
            self.write_run(meta)
            return None
        except OSError as exc:
            return f"{exc.strerror or exc} ({exc.filename or self.runs_dir})"

    def write_run(self, meta: dict) -> Path:
        path = self.runs_dir / f"{meta['run_id']}.json"
        atomic_write_text(path, json.dumps(portable(meta), indent=2, sort_keys=False, default=str) + "\n")
        return path
