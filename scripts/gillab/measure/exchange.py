"""Campaigns that travel: one archive per campaign, checked whole before anything is written.

``gillab export [CAMPAIGN] -o FILE`` writes a gzipped tar holding ``MANIFEST.json`` and the
campaign's folder (``<campaign>/campaign.json``, ``<campaign>/reproduce-*.json`` and per
experiment ``samples.csv``, ``samples.schema.json``, ``runs/*.json``).  The manifest names the
archive's schema, the campaign and its machine record (with its fingerprint), the harness that
wrote the manifest (commit, dirty), per experiment the code keys its samples were measured with
beside this harness's own, and every file with its size and sha256.  The archive is
deterministic (sorted members, no times, owners or modes of this machine), so exporting the same
campaign twice gives the same bytes.

``gillab import FILE`` (an archive, or a campaign folder as ``gillab`` wrote it) reads every
member into memory and checks, before writing anything: the archive is whole, every member a
plain file at a plain relative path inside the campaign's folder, sizes within
:data:`MAX_FILE_BYTES` / :data:`MAX_TOTAL_BYTES` (from the headers, before reading), a schema this
harness knows, every file in the manifest with its size and hash and none beside it, a known
experiment for every folder, each file of its type (JSON objects, a CSV whose every row has every
column and whose typed columns parse as their schema says), and a machine record whose fingerprint
is what its fields hash to.  The campaign id must be new and never the reference's.  Only then is
the campaign written, under a temporary name renamed into place, with its ``MANIFEST.json``: a
*contributed* campaign, read-only to the harness like the reference (see
:mod:`gillab.measure.campaigns`).  Samples of different campaigns are never pooled: the across-machines
page (:mod:`gillab.judge.across`) judges each campaign alone and counts outcomes.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from . import campaigns, metadata, store
from ..paths import results_dir
from .profiles import ParameterError

SCHEMA = "gillab-campaign-archive/1"
MANIFEST = "MANIFEST.json"
MAX_FILE_BYTES = 64 * 2 ** 20        # one file of a campaign (the largest so far: a few MB)
MAX_TOTAL_BYTES = 256 * 2 ** 20      # a whole campaign, unpacked
MAX_ARCHIVE_BYTES = 256 * 2 ** 20    # the archive as given
MAX_FILES = 20_000
REQUIRED_COLUMNS = store.REQUIRED_COLUMNS
SCHEMA_TYPES = {"int", "float", "bool", "str", "json", None}

# where a file may lie inside a campaign folder: its top level, or an experiment's folder
_TOP = re.compile(r"^(campaign\.json|reproduce-[A-Za-z0-9._-]+\.json)$")
_EXP = re.compile(r"^(?P<exp>[a-z0-9_]+)/(samples\.csv|samples\.schema\.json|samples\.damaged\.csv"
                  r"|runs/[A-Za-z0-9._-]+\.json)$")
# GIL traces (gillab.measure.trace_record): each chapter's in its folder, with its metadata; the overhead samples
# and the second witness (gillab.measure.witness): its files, the traces beside them and each round's times
_TRACE = re.compile(r"^(traces/overhead\.csv|(traces|witness)/(?P<exp>[a-z0-9_]+)/[A-Za-z0-9.,=_+-]+\.(gtrace\.xz|json))$")


class ArchiveError(ParameterError):
    """An archive (or folder) that cannot be imported as it is; nothing was written."""


@dataclass
class Checked:
    """An archive's content after every check: the campaign id, its manifest (as bytes, kept
    byte for byte) and its files (path inside the campaign folder -> bytes)."""
    campaign: str
    manifest: dict
    manifest_bytes: bytes
    files: dict[str, bytes]


# -- export ----------------------------------------------------------------------------------
def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def campaign_files(folder: Path) -> dict[str, bytes]:
    """The files of a campaign folder (path relative to it -> bytes): what :func:`export`
    packs.  Hidden files (locks, temporary files) and a stored manifest are left out; anything
    else that is no part of a campaign, or not a plain file, is refused."""
    folder = Path(folder)
    out, stray = {}, []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in rel.split("/")) or rel == MANIFEST:
            continue
        if p.is_symlink():
            stray.append(f"{rel} (a link)")
        elif p.is_dir():
            continue
        elif not p.is_file():
            stray.append(f"{rel} (not a plain file)")
        elif not (_TOP.match(rel) or _EXP.match(rel) or _TRACE.match(rel)):
            stray.append(rel)
        else:
            out[rel] = p.read_bytes()
    if stray:
        raise ArchiveError(f"{folder} holds what is no part of a campaign: {', '.join(stray[:5])}"
                           + (f" and {len(stray) - 5} more" if len(stray) > 5 else ""))
    if "campaign.json" not in out:
        raise ArchiveError(f"{folder} is not a campaign folder: it has no campaign.json")
    return out


def _fingerprint_of(meta: dict, runs: list[dict]) -> str | None:
    """The campaign's machine fingerprint: its campaign.json's, else the one fingerprint all its
    run files record (a campaign made before campaign.json recorded one), as
    :attr:`gillab.measure.campaigns.Campaign.fingerprint` reads a campaign on disk."""
    return campaigns.complete_machine(meta.get("machine") or {},
                                      [r.get("machine") or {} for r in runs]).get("fingerprint")


def _experiments_record(files: dict[str, bytes]) -> dict:
    """Per experiment: how many sample rows, the code keys they were measured with (and how many
    rows each), the commits of the harness that measured them, and this harness's code key."""
    from . import experiments
    from . import sweep

    out: dict[str, dict] = {}
    for rel, data in files.items():
        m = _EXP.match(rel)
        if not m:
            continue
        rec = out.setdefault(m["exp"], {"samples": 0, "sample_code_keys": {}, "commits": []})
        if rel.endswith("/samples.csv"):
            for row in csv.DictReader(io.StringIO(data.decode())):
                rec["samples"] += 1
                key = row.get("code_key") or "not recorded"
                rec["sample_code_keys"][key] = rec["sample_code_keys"].get(key, 0) + 1
        elif "/runs/" in rel:
            commit = ((json.loads(data).get("harness") or {}).get("commit"))
            if commit and commit not in rec["commits"]:
                rec["commits"] = sorted(rec["commits"] + [commit])
    for name, rec in out.items():
        rec["code_key_of_this_harness"] = (sweep.code_key(experiments.get(name))
                                           if name in experiments.names() else None)
    return dict(sorted(out.items()))


def manifest_for(cid: str, files: dict[str, bytes]) -> dict:
    meta = json.loads(files["campaign.json"])
    runs = [json.loads(d) for rel, d in files.items() if "/runs/" in rel]
    machine = dict(meta.get("machine") or {})
    if not machine.get("fingerprint"):
        fp = _fingerprint_of(meta, runs)
        if fp:
            machine["fingerprint"] = fp
            machine["fingerprint_from"] = "the run files (campaign.json predates fingerprints)"
    return {
        "schema": SCHEMA,
        "campaign": cid,
        "machine": machine,
        "manifest_written_by": metadata.git_commit(),
        "experiments": _experiments_record(files),
        "files": [{"path": rel, "bytes": len(data), "sha256": _sha256(data)} for rel, data in sorted(files.items())],
    }


def _manifest_bytes(manifest: dict) -> bytes:
    return (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()


def _tar_bytes(members: list[tuple[str, bytes]]) -> bytes:
    """A gzipped tar of ``members`` in the given order, with nothing of this machine or this
    moment in it: the same members give the same bytes."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def export(cid: str | None, out: Path) -> Path:
    """Write campaign ``cid`` (default: your newest campaign on this machine) as one archive at
    ``out``.  A contributed campaign is written with the manifest it came with (after checking
    its files still match it), so an imported campaign exports to the archive it came from."""
    if cid is None:
        mine = campaigns.own()
        if not mine:
            raise ArchiveError("you have no campaign on this machine to export; name one (gillab campaigns lists them)")
        cid = mine[-1].id
    c = campaigns.load(cid)
    files = campaign_files(c.dir)
    stored = c.dir / MANIFEST
    if stored.exists():
        mbytes = stored.read_bytes()
        check(_members(cid, mbytes, files), reference=None)   # the files still match what came
    else:
        mbytes = _manifest_bytes(manifest_for(cid, files))
    data = _tar_bytes(_members(cid, mbytes, files))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


def _members(cid: str, manifest: bytes, files: dict[str, bytes]) -> list[tuple[str, bytes]]:
    return [(MANIFEST, manifest)] + [(f"{cid}/{rel}", data) for rel, data in sorted(files.items())]


# -- reading and checking ----------------------------------------------------------------------
def read_archive(path: Path) -> list[tuple[str, bytes]]:
    """The members of an archive, each a plain file within the size limits, read whole; a
    damaged, truncated or hostile archive raises :class:`ArchiveError` (nothing is written)."""
    path = Path(path)
    if not path.is_file():
        raise ArchiveError(f"no archive at {path}")
    size = path.stat().st_size
    if size > MAX_ARCHIVE_BYTES:
        raise ArchiveError(f"{path} is {size / 2**20:.0f} MiB, more than the {MAX_ARCHIVE_BYTES // 2**20} MiB "
                           "a campaign archive may be")
    members: list[tuple[str, bytes]] = []
    total = 0
    try:
        with tarfile.open(path, mode="r:*") as tar:
            while True:
                info = tar.next()
                if info is None:
                    break
                name = _safe_name(info.name)
                if info.isdir():
                    continue
                if not info.isreg():
                    kind = "a link" if (info.issym() or info.islnk()) else "not a plain file"
                    raise ArchiveError(f"{path}: member {name!r} is {kind}; a campaign archive holds plain files only")
                if info.size > MAX_FILE_BYTES:
                    raise ArchiveError(f"{path}: member {name!r} is {info.size / 2**20:,.0f} MiB, more than the "
                                       f"{MAX_FILE_BYTES // 2**20} MiB one file of a campaign may be")
                total += info.size
                if total > MAX_TOTAL_BYTES:
                    raise ArchiveError(f"{path}: its files add up to more than {MAX_TOTAL_BYTES // 2**20} MiB")
                if len(members) >= MAX_FILES:
                    raise ArchiveError(f"{path}: more than {MAX_FILES} files")
                fh = tar.extractfile(info)
                data = fh.read() if fh is not None else b""
                if len(data) != info.size:
                    raise ArchiveError(f"{path} is truncated: member {name!r} ends early")
                members.append((name, data))
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        detail = (str(exc).strip().splitlines() or [type(exc).__name__])[0].rstrip(":")
        raise ArchiveError(f"{path} is not a whole campaign archive (truncated or damaged: {detail})") from None
    return members


def _safe_name(name: str) -> str:
    """A member name as a plain relative POSIX path, or :class:`ArchiveError`."""
    parts = name.rstrip("/").split("/")
    if (not name or name.startswith("/") or "\\" in name or "\0" in name
            or any(p in ("", ".", "..") for p in parts)):
        raise ArchiveError(f"archive member {name!r} is not a plain relative path inside the campaign's folder")
    return "/".join(parts)


def read_folder(folder: Path) -> list[tuple[str, bytes]]:
    """A campaign folder as gillab wrote it, as the members of the archive it would export to
    (its manifest made here)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ArchiveError(f"no campaign folder at {folder}")
    files = campaign_files(folder)
    total = sum(len(d) for d in files.values())
    if total > MAX_TOTAL_BYTES or any(len(d) > MAX_FILE_BYTES for d in files.values()):
        raise ArchiveError(f"{folder} is larger than a campaign may be")
    meta = _json_object("campaign.json", files["campaign.json"])
    cid = meta.get("campaign") or folder.name
    return _members(cid, _manifest_bytes(manifest_for(cid, files)), files)


def _json_object(rel: str, data: bytes) -> dict:
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ArchiveError(f"{rel} is not valid JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise ArchiveError(f"{rel} is not a JSON object")
    return obj


def _check_samples(rel: str, data: bytes, schema: dict) -> None:
    """Refuse a samples file with any damaged row (:func:`gillab.measure.store.read_samples` finds them;
    a reader's own campaign sets such a row aside, an archive is refused whole)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ArchiveError(f"{rel} is not UTF-8 text ({exc})") from None
    header, _, damaged = store.read_samples(text, schema)
    if not header:
        raise ArchiveError(f"{rel} is empty")
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ArchiveError(f"{rel} lacks the column(s) {', '.join(missing)}")
    unknown = [c for c in header if c not in schema]
    if schema and unknown:
        raise ArchiveError(f"{rel}: column(s) {', '.join(unknown[:5])} are not in samples.schema.json")
    if damaged:
        d = damaged[0]
        raise ArchiveError(f"{rel} line {d.line}: {d.reason}"
                           + (f" (and {len(damaged) - 1} more damaged row(s))" if len(damaged) > 1 else ""))


def check(members: list[tuple[str, bytes]], reference: str | None | bool = True) -> Checked:
    """Every check of the module's list on an archive's members; returns what to write.
    ``reference``: the reference campaign's id to refuse (True: this data folder's)."""
    names = [n for n, _ in members]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ArchiveError(f"the archive holds {dupes[0]!r} twice")
    by_name = dict(members)
    if MANIFEST not in by_name:
        raise ArchiveError(f"not a gillab campaign archive: it has no {MANIFEST}")
    mbytes = by_name.pop(MANIFEST)
    manifest = _json_object(MANIFEST, mbytes)
    cid = _check_manifest_head(manifest, reference)
    files = _files_of(cid, by_name)
    _check_listed(cid, manifest, files)
    _check_layout(cid, files)
    meta, runs = _check_json(cid, files)
    for rel, data in files.items():
        if rel.endswith("/samples.csv"):
            schema_rel = rel.replace("samples.csv", "samples.schema.json")
            schema = json.loads(files[schema_rel])["columns"] if schema_rel in files else {}
            _check_samples(f"{cid}/{rel}", data, schema)
    _check_machine(cid, manifest, meta, runs)
    return Checked(cid, manifest, mbytes, files)


def _check_manifest_head(manifest: dict, reference: str | None | bool) -> str:
    """The manifest's schema and campaign id (never the reference's); returns the id."""
    if manifest.get("schema") != SCHEMA:
        raise ArchiveError(f"unknown archive schema {manifest.get('schema')!r}; this harness reads {SCHEMA!r}")
    cid = manifest.get("campaign")
    if not isinstance(cid, str) or not campaigns.ID_RE.match(cid):
        raise ArchiveError(f"the manifest names no valid campaign id ({cid!r})")
    ref = campaigns.reference_id() if reference is True else reference
    if ref and cid == ref:
        raise ArchiveError(f"the archive's campaign {cid!r} is the reference campaign's id; the reference is never "
                           "replaced by an import")
    return cid


def _files_of(cid: str, by_name: dict[str, bytes]) -> dict[str, bytes]:
    """The members by their path inside the campaign's folder; none may lie outside it."""
    files: dict[str, bytes] = {}
    for name, data in by_name.items():
        if not name.startswith(cid + "/"):
            raise ArchiveError(f"archive member {name!r} lies outside the campaign's folder {cid}/")
        files[name[len(cid) + 1:]] = data
    return files


def _check_listed(cid: str, manifest: dict, files: dict[str, bytes]) -> None:
    """The manifest lists exactly the files there are, each with its size and sha256."""
    listed = manifest.get("files")
    if not isinstance(listed, list) or not all(isinstance(f, dict) for f in listed):
        raise ArchiveError("the manifest has no list of files")
    listed_paths = [f.get("path") for f in listed]
    extra = sorted(set(files) - set(listed_paths))
    if extra:
        raise ArchiveError(f"{cid}/{extra[0]} is in the archive but not in its manifest")
    for f in listed:
        rel = f.get("path")
        if rel not in files:
            raise ArchiveError(f"{cid}/{rel} is in the manifest but not in the archive")
        data = files[rel]
        if len(data) != f.get("bytes") or _sha256(data) != f.get("sha256"):
            raise ArchiveError(f"{cid}/{rel} does not match its manifest (size or sha256): damaged or changed")


def _check_layout(cid: str, files: dict[str, bytes]) -> None:
    """Every file is part of a campaign, of an experiment this harness knows."""
    from . import experiments

    known = set(experiments.names())
    for rel in files:
        m = _EXP.match(rel) or _TRACE.match(rel)
        if not (m or _TOP.match(rel)):
            raise ArchiveError(f"{cid}/{rel} is no part of a campaign")
        if rel.endswith(".gtrace.xz"):
            _check_trace(cid, rel, files)
        if m and m["exp"] is not None and m["exp"] not in known:
            raise ArchiveError(f"{cid}/{rel}: unknown experiment {m['exp']!r} (this harness knows "
                               f"{', '.join(sorted(known))})")


def _check_trace(cid: str, rel: str, files: dict[str, bytes]) -> None:
    """A GIL trace reads whole, beside its metadata (:func:`gillab.measure.trace_file.parse`)."""
    import lzma

    from . import trace_file

    if rel.removesuffix(trace_file.SUFFIX) + ".json" not in files:
        raise ArchiveError(f"{cid}/{rel}: its metadata ({Path(rel).name.removesuffix(trace_file.SUFFIX)}.json) is missing")
    try:
        trace_file.parse(lzma.decompress(files[rel]), where=f"{cid}/{rel}")
    except (lzma.LZMAError, EOFError, trace_file.TraceError) as exc:
        raise ArchiveError(f"{cid}/{rel} is not a whole GIL trace: {exc}") from None


def _check_json(cid: str, files: dict[str, bytes]) -> tuple[dict, list[dict]]:
    """campaign.json, the run files and the sample schemas read as what they claim to be;
    returns campaign.json and the run files."""
    if "campaign.json" not in files:
        raise ArchiveError(f"{cid}/campaign.json is missing")
    meta = _json_object("campaign.json", files["campaign.json"])
    if meta.get("campaign", cid) != cid:
        raise ArchiveError(f"campaign.json names campaign {meta.get('campaign')!r}, the manifest {cid!r}")
    runs = []
    for rel, data in sorted(files.items()):
        if not rel.endswith(".json"):
            continue
        obj = _json_object(f"{cid}/{rel}", data)
        if "/runs/" in rel:
            if obj.get("run_id") != Path(rel).stem:
                raise ArchiveError(f"{cid}/{rel} is not a run file (its run_id is {obj.get('run_id')!r})")
            runs.append(obj)
        if rel.endswith("samples.schema.json"):
            cols = obj.get("columns")
            if not isinstance(cols, dict) or not all(v in SCHEMA_TYPES for v in cols.values()):
                raise ArchiveError(f"{cid}/{rel} is not a samples schema")
    return meta, runs


def _check_machine(cid: str, manifest: dict, meta: dict, runs: list[dict]) -> None:
    machine = manifest.get("machine")
    if not isinstance(machine, dict) or not machine.get("machine_id"):
        raise ArchiveError("the manifest has no machine record")
    fp = machine.get("fingerprint")
    if not (isinstance(fp, str) and re.fullmatch(r"[0-9a-f]{12}", fp)):
        raise ArchiveError(f"campaign {cid}'s machine has no fingerprint: it cannot be compared with other machines")
    if fp != _fingerprint_of(meta, runs):
        raise ArchiveError(f"the manifest's fingerprint {fp} is not the one campaign {cid}'s own files record")
    if machine.get("cpu") and metadata.fingerprint(machine) != fp:
        raise ArchiveError(f"campaign {cid}'s machine record does not hash to its fingerprint {fp}: changed after "
                           "it was measured")


# -- import --------------------------------------------------------------------------------------
def import_(source: Path) -> tuple[str, str]:
    """Check ``source`` (an archive or a campaign folder) whole, then file it under the data
    folder as a contributed campaign.  Returns (campaign id, "imported" or "already here")."""
    source = Path(source)
    members = read_folder(source) if source.is_dir() else read_archive(source)
    got = check(members)
    dest = results_dir() / got.campaign
    if dest.exists():
        if (dest / MANIFEST).exists() and (dest / MANIFEST).read_bytes() == got.manifest_bytes \
                and campaign_files(dest) == got.files:
            return got.campaign, "already here"
        raise ArchiveError(f"a campaign {got.campaign!r} exists already in {results_dir()} with other content; "
                           "nothing was written")
    results_dir().mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=results_dir(), prefix=f".import-{got.campaign}-"))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)   # mkdtemp's 0700 would hide the campaign from the machine's other users
    try:
        for rel, data in got.files.items():
            p = tmp / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        (tmp / MANIFEST).write_bytes(got.manifest_bytes)
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return got.campaign, "imported"
