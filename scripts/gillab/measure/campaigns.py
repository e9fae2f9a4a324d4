"""Campaigns: one reader's measuring on one machine, with one set of builds, at one time.

Every sample belongs to a campaign, a folder of ``data/results/``::

    data/results/REFERENCE                         names the committed reference campaign
    data/results/<campaign>/campaign.json          machine (CPU identity, fingerprint), created
    data/results/<campaign>/<experiment>/...       samples and run files (see gillab.measure.store)

* The **reference campaign** (the one ``REFERENCE`` names) is read-only to the harness: no
  measurement writes to it and none resumes from it.
* A reader's measuring goes to **their own** campaign: the newest campaign made on a machine
  of the same id and fingerprint, or a new one (the first time, or with ``--new-campaign``).
  Inside it a sweep resumes only samples whose resume key matches (see
  :func:`gillab.measure.experiments.plan`).
* A **contributed campaign** is one imported from another machine (``gillab import``, see
  :mod:`gillab.measure.exchange`): its folder keeps the ``MANIFEST.json`` it came with (every file's
  sha256).  Like the reference it is read-only, and it is never anyone's own campaign, even
  when it was measured on a machine of this kind.
* The book shows the reader's campaign beside the reference, claim by claim, and every
  campaign beside the others on the across-machines page (:mod:`gillab.judge.across`).
"""
from __future__ import annotations

import json
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import metadata
from ..paths import repo_root, results_dir
from .profiles import ParameterError
from .store import ExperimentStore, atomic_write_text

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - 3.10
    import tomli as tomllib  # type: ignore

REFERENCE_FILE = "REFERENCE"
CAMPAIGN_FILE = "campaign.json"
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$")


class NoCampaign(LookupError):
    """A campaign that is not there."""


class ReferenceIsReadOnly(ParameterError):
    """An attempt to measure into the committed reference campaign (or a contributed one)."""


@dataclass
class Campaign:
    id: str
    dir: Path
    meta: dict

    @property
    def is_reference(self) -> bool:
        return self.id == reference_id()

    @property
    def is_contributed(self) -> bool:
        """Imported from another machine (``gillab import``): read-only, never the reader's own."""
        return (self.dir / "MANIFEST.json").exists()

    @property
    def role(self) -> str:
        return "reference" if self.is_reference else "contributed" if self.is_contributed else "yours"

    @property
    def fingerprint(self) -> str | None:
        """The machine kind: campaign.json's fingerprint, else the one fingerprint every run file
        records (the reference campaign predates fingerprints in campaign.json)."""
        return self.machine_record.get("fingerprint")

    @property
    def machine_record(self) -> dict:
        """campaign.json's machine, its gaps filled from its run files (:func:`complete_machine`)."""
        def run_machines():   # read only when campaign.json lacks something
            for r in runs(self):
                yield r.get("machine") or {}
        return complete_machine(self.machine, run_machines())

    @property
    def machine(self) -> dict:
        return self.meta.get("machine") or {}

    @property
    def created(self) -> str:
        return self.meta.get("created") or ""

    def store(self, experiment: str) -> ExperimentStore:
        return ExperimentStore(experiment, self.id, root=self.dir.parent)

    def experiments(self) -> list[str]:
        """Experiments with samples or at least a run file (a run killed before its first sample)."""
        return sorted({p.parent.name for p in self.dir.glob("*/samples.csv")}
                      | {p.parent.name for p in self.dir.glob("*/runs")})

    def has(self, experiment: str) -> bool:
        return self.store(experiment).samples_path.exists()

    def label(self) -> str:
        m = self.machine
        return (f"{self.role + ' ' if self.role != 'yours' else ''}campaign `{self.id}` "
                f"({m.get('cpu_model', '?')}, {m.get('cpu_count', '?')} cores, from {self.created[:10] or '?'})")


def complete_machine(machine: dict, run_machines) -> dict:
    """A campaign.json's machine record, its gaps filled from the newest run file's where every
    run file records the same machine kind (the reference campaign's campaign.json predates the
    CPU identity and the fingerprint, its run files record them).  ``run_machines``: the run
    files' machine records, oldest first, read only when the record lacks something; a campaign
    in an archive not yet written gives them from memory (:mod:`gillab.measure.exchange`)."""
    m = dict(machine)
    if m.get("fingerprint") and m.get("cpu"):
        return m
    recs = list(run_machines)
    kinds = {r.get("fingerprint") for r in recs} - {None}
    if len(kinds) != 1 or (m.get("fingerprint") not in (None, *kinds)):
        return m
    newest = next(r for r in reversed(recs) if r.get("fingerprint"))
    return {**newest, **{k: v for k, v in m.items() if v not in (None, "", {})}}


def reference_id() -> str | None:
    path = results_dir() / REFERENCE_FILE
    return path.read_text().strip() or None if path.exists() else None


def _check_id(cid: str) -> str:
    if not ID_RE.match(cid or ""):
        raise ParameterError(f"campaign id {cid!r} is not valid: letters, digits, '.', '_' and '-' only")
    return cid


def load(cid: str) -> Campaign:
    d = results_dir() / _check_id(cid)
    if not d.is_dir():
        known = ", ".join(c.id for c in all_campaigns()) or "none"
        raise NoCampaign(f"no campaign {cid!r} in {results_dir()}; known: {known}")
    path = d / CAMPAIGN_FILE
    meta = json.loads(path.read_text()) if path.exists() else {}
    return Campaign(cid, d, meta)


def all_campaigns() -> list[Campaign]:
    root = results_dir()
    if not root.is_dir():
        return []
    out = [load(d.name) for d in sorted(root.iterdir())
           if d.is_dir() and ID_RE.match(d.name) and ((d / CAMPAIGN_FILE).exists() or any(d.glob("*/samples.csv")))]
    return sorted(out, key=lambda c: (c.created, c.id))


def is_this_machine(c: Campaign, here: dict | None = None) -> bool:
    here = here or metadata.machine()
    m = c.machine
    return m.get("machine_id") == here["machine_id"] and m.get("fingerprint") == here["fingerprint"]


def own(here: dict | None = None) -> list[Campaign]:
    """The reader's campaigns made on this machine (same id and fingerprint), oldest first;
    never the reference, never a contributed campaign."""
    here = here or metadata.machine()
    return [c for c in all_campaigns() if not c.is_reference and not c.is_contributed and is_this_machine(c, here)]


def create(cid: str | None = None) -> Campaign:
    m = metadata.machine()
    if cid is None:
        base = f"{m['machine_id']}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
        cid, n = base, 1
        while (results_dir() / cid).exists():
            n += 1
            cid = f"{base}-{n}"
    d = results_dir() / _check_id(cid)
    if (d / CAMPAIGN_FILE).exists():
        raise ParameterError(f"campaign {cid!r} exists already")
    meta = {"campaign": cid, "created": metadata.now(), "machine": m,
            "note": "one reader's measuring on one machine with one set of builds"}
    atomic_write_text(d / CAMPAIGN_FILE, json.dumps(metadata.portable(meta), indent=2) + "\n")
    return Campaign(cid, d, meta)


def for_measuring(campaign: str | None = None, new: bool = False, create_new: bool = True) -> Campaign | None:
    """Where a measurement goes: ``campaign`` if named (made if new), else a new campaign if
    ``new``, else the reader's newest campaign on this machine, else a new one.  Never the
    reference campaign.  With ``create_new=False`` (a plan) nothing is made: None stands for
    the new campaign a measurement would make."""
    if campaign:
        if campaign == reference_id():
            raise ReferenceIsReadOnly(
                f"campaign {campaign!r} is the committed reference run (data/results/{REFERENCE_FILE}): "
                "it is read-only; measure into a campaign of your own (the default)")
        if (results_dir() / _check_id(campaign)).is_dir():
            c = load(campaign)
            if c.is_contributed:
                raise ReferenceIsReadOnly(
                    f"campaign {campaign!r} was contributed from another machine (gillab import): it is read-only; "
                    "measure into a campaign of your own (the default)")
            return c
        return create(campaign) if create_new else None
    if not new:
        mine = own()
        if mine:
            return mine[-1]
    return create() if create_new else None


def for_reading(experiment: str, campaign: str | None = None) -> tuple[Campaign | None, Campaign | None]:
    """(yours, reference) for a chapter: ``campaign`` if named, else the reader's newest
    campaign on this machine that holds this experiment; and the reference campaign, if it
    holds the experiment.  Either may be None."""
    ref = None
    rid = reference_id()
    if rid:
        try:
            ref = load(rid)
        except NoCampaign:
            ref = None
    if ref is not None and not ref.has(experiment):
        ref = None
    if campaign:
        c = load(campaign)
        return (None, ref) if c.is_reference else (c, ref)
    mine = [c for c in own() if c.has(experiment)]
    return (mine[-1] if mine else None), ref


def run_seconds(run: dict) -> float | None:
    """How long a run took, from its run file's start and end; None while it has no end."""
    import datetime as dt

    if not run.get("finished"):
        return None
    return (dt.datetime.fromisoformat(run["finished"]) - dt.datetime.fromisoformat(run["started"])).total_seconds()


def runs_that_stored(store, config: str | None = None) -> list[dict]:
    """The run files of ``store`` whose runs hold samples in it (of ``config``, if given): a run
    that only resumed, or was killed before its first sample, took time but measured nothing."""
    used = {r.get("run_id") for r in store.rows() if config is None or r.get("config") == config}
    return [run for run in store.runs() if run.get("run_id") in used]


def runs(c: Campaign) -> list[dict]:
    out = []
    for exp in c.experiments():
        store = c.store(exp)
        locked = None
        for r in store.runs():
            if r.get("status") == "running":
                locked = store.is_locked() if locked is None else locked
                if not locked:
                    r = r | {"status": "killed (noticed on the next run)"}
            out.append(r)
    return out


def whole_runs(c: Campaign) -> list:
    """The records of the whole ``gillab reproduce`` runs kept in ``c``'s folder
    (``reproduce-*.json``, :class:`gillab.record.RunRecord`: the plan, pace, probes, chapters left
    out, load, steal), in the order of their file names (their start); an unreadable one is
    skipped."""
    from ..record import load

    out = []
    for path in sorted(c.dir.glob("reproduce-*.json")):
        try:
            out.append(load(path))
        except (ValueError, TypeError):
            continue
    return out


def boots(c: Campaign) -> list[str]:
    """The boots of the machine its runs were measured in (their run files' ``boot_id``), oldest
    run first; empty where no run file records one."""
    out: list[str] = []
    for r in sorted(runs(c), key=lambda r: r.get("started") or ""):
        b = r.get("boot_id")
        if b and b not in out:
            out.append(b)
    return out


def boots_by_experiment(c: Campaign) -> dict[str, set[str]]:
    """Per experiment, the boots its runs were measured in (their run files' ``boot_id``)."""
    out: dict[str, set[str]] = {}
    for r in runs(c):
        out.setdefault(r["experiment"], set()).update([r["boot_id"]] if r.get("boot_id") else [])
    return out


def describe(c: Campaign) -> dict:
    """One line of ``gillab campaigns``: machine, cores, builds, profiles, time, status, samples."""
    rs = runs(c)
    builds: dict[str, str] = {}
    for r in rs:
        for cid, ident in (r.get("conditions") or {}).items():
            if ident.get("available"):
                builds[cid] = ident.get("version_short") or ""
    samples = failed = 0
    for exp in c.experiments():
        for row in c.store(exp).rows():
            if row.get("status") == "ok":
                samples += 1
            else:
                failed += 1
    statuses = [r.get("status", "") for r in rs]
    status = ("empty" if not rs else "running" if "running" in statuses
              else "has killed runs" if any(s.startswith("killed") for s in statuses)
              else "has interrupted runs" if any(s.startswith("interrupted") for s in statuses)
              else "complete")
    m = c.machine_record
    cpu = m.get("cpu") or {}
    return {
        "campaign": c.id, "reference": c.is_reference, "contributed": c.is_contributed, "role": c.role,
        "this_machine": is_this_machine(c), "machine_id": m.get("machine_id"), "fingerprint": c.fingerprint,
        "cpu_model": m.get("cpu_model"), "cpu": {k: cpu.get(k) for k in ("vendor", "family", "model", "stepping")},
        "hypervisor": cpu.get("hypervisor"), "cores": m.get("cpu_count"),
        "builds": builds, "profiles": sorted({r.get("profile") for r in rs if r.get("profile")}),
        "experiments": c.experiments(), "created": c.created,
        "started": min((r.get("started") for r in rs if r.get("started")), default=None),
        "finished": max((r.get("finished") for r in rs if r.get("finished")), default=None),
        "status": status, "runs": len(rs), "samples": samples, "failed_samples": failed,
    }


def machine_rows(*cs: Campaign) -> list[dict]:
    """The machines of campaigns, field by field, for a side-by-side table."""
    rows = []
    fields = [("machine id", lambda m: m.get("machine_id")), ("fingerprint", lambda m: m.get("fingerprint")),
              ("CPU model", lambda m: m.get("cpu_model")), ("cores", lambda m: m.get("cpu_count")),
              ("memory GiB", lambda m: round((m.get("memory_bytes") or 0) / 2 ** 30)),
              ("vendor", lambda m: (m.get("cpu") or {}).get("vendor")),
              ("family / model / stepping", lambda m: "/".join(str((m.get("cpu") or {}).get(k, "?"))
                                                            for k in ("family", "model", "stepping"))
               if m.get("cpu") else None),
              ("microcode", lambda m: (m.get("cpu") or {}).get("microcode")),
              ("MHz (as read)", lambda m: (m.get("cpu") or {}).get("mhz_now")),
              ("flags that matter", lambda m: " ".join((m.get("cpu") or {}).get("flags") or []) or None),
              ("caches", lambda m: " ".join(f"{k} {v}" for k, v in ((m.get("cpu") or {}).get("caches") or {}).items())
               or None),
              ("hypervisor", lambda m: (m.get("cpu") or {}).get("hypervisor")),
              ("kernel", lambda m: m.get("os")), ("distribution", lambda m: m.get("distribution"))]
    for name, get in fields:
        row = {"": name}
        for c in cs:
            v = get(c.machine_record)
            row[c.id] = "not recorded" if v in (None, "", "?/?/?") else v
        rows.append(row)
    return rows


def cores_of(df) -> int:
    """The cores of the machine whose campaign measured ``df`` (its ``attrs['campaign']``): a
    chapter drawn from another machine's campaign draws that machine's ceiling, not this one's;
    this machine's where the frame names no campaign."""
    import os

    cid = getattr(df, "attrs", {}).get("campaign")
    try:
        return int(load(cid).machine.get("cpu_count") or os.cpu_count()) if cid else os.cpu_count()
    except (NoCampaign, ParameterError, TypeError, ValueError):
        return os.cpu_count()


# -- the reference's chapters declared to be measured again (gillab.judge.keyguard reads and guards it) --
MEASURE_AGAIN_FILE = "MEASURE_AGAIN.toml"


@dataclass(frozen=True)
class Declared:
    """A chapter of the reference declared "to be measured again" (MEASURE_AGAIN.toml)."""
    chapter: str
    reference: str
    code_key: str
    reason: str

    def commit(self, path: str = f"data/results/{MEASURE_AGAIN_FILE}") -> str:
        """The commit that declared it: the first whose ``path`` holds its key (git), or '' where
        there is no such commit (not committed yet, or no git history)."""
        try:
            out = subprocess.run(["git", "-C", str(repo_root()), "log", "--format=%h", "--reverse",
                                  f"-S{self.code_key}", "--", path],
                                 capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return ""
        lines = out.stdout.split() if out.returncode == 0 else []
        return lines[0] if lines else ""


def declared_path():
    return results_dir() / MEASURE_AGAIN_FILE


def declared() -> list[Declared]:
    """The committed list of chapters to be measured again (empty where the file is absent)."""
    path = declared_path()
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"{path.name} is not valid TOML ({exc})") from None
    out = []
    for i, entry in enumerate(data.get("chapter", [])):
        missing = [k for k in ("name", "reference", "code_key", "reason") if not str(entry.get(k, "")).strip()]
        if missing:
            raise ParameterError(f"{path.name}: chapter entry {i + 1} lacks {', '.join(missing)}")
        out.append(Declared(entry["name"], entry["reference"], entry["code_key"], entry["reason"].strip()))
    return out
