"""Read stored samples and run metadata back, and find which machine's data to show."""
from __future__ import annotations


import pandas as pd

from . import metadata
from .paths import reference_dir, results_dir
from .store import ExperimentStore

REFERENCE_FILE = "REFERENCE"  # data/results/REFERENCE names the machine of the committed run


class NoData(LookupError):
    """No stored samples for this experiment (and configuration)."""


def reference_machine() -> str | None:
    path = results_dir() / REFERENCE_FILE
    return path.read_text().strip() if path.exists() else None


def pick_machine(experiment: str, machine: str | None = None) -> str:
    """``machine`` if given; else this machine if it has data; else the committed reference run's."""
    if machine:
        return machine
    here = metadata.machine_id()
    if ExperimentStore(experiment, here).samples_path.exists():
        return here
    ref = reference_machine()
    if ref and ExperimentStore(experiment, ref).samples_path.exists():
        return ref
    raise NoData(f"no stored samples for {experiment} in {results_dir()} (this machine is {here!r}); "
                 "run it with measure=True or `gillab run`")


def samples(experiment: str, machine: str | None = None, config_id: str | None = None,
            include_failed: bool = False) -> pd.DataFrame:
    machine = pick_machine(experiment, machine)
    store = ExperimentStore(experiment, machine)
    df = pd.DataFrame(store.rows())
    if df.empty:
        raise NoData(f"{store.samples_path} holds no samples")
    if config_id is not None:
        df = df[df["config"] == config_id]
    if not include_failed:
        df = df[df["status"] == "ok"]
    if df.empty:
        raise NoData(f"{store.samples_path} holds no successful samples for configuration {config_id}")
    for col in df.columns:
        if col in ("config", "run_id", "point", "condition", "status", "error", "time", "profile",
                   "experiment", "python", "affinity_runtime", "affinity"):
            continue
        converted = pd.to_numeric(df[col], errors="coerce")
        if converted.notna().sum() == df[col].replace("", pd.NA).notna().sum():
            df[col] = converted
    df = df.copy()
    df.attrs["machine"] = machine
    return df


def runs(experiment: str, machine: str | None = None) -> list[dict]:
    return ExperimentStore(experiment, pick_machine(experiment, machine)).runs()


def conditions_seen(experiment: str, machine: str | None = None) -> dict[str, dict]:
    """Identity of every condition, from the newest run that recorded it."""
    out: dict[str, dict] = {}
    for run in runs(experiment, machine):
        for cid, ident in run.get("conditions", {}).items():
            out[cid] = ident
    return out


def reference(name: str) -> pd.DataFrame:
    """A table of published numbers from ``data/reference/<name>.csv``."""
    path = reference_dir() / f"{name}.csv"
    if not path.exists():
        raise FileNotFoundError(f"no published table {path}")
    return pd.read_csv(path)
