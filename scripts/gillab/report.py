"""Summaries and verdicts across experiments, as plain data (what ``gillab results/verdicts`` print)."""
from __future__ import annotations

from . import results as store_results
from .experiments import REGISTRY, get


def analysis(experiment: str):
    """What summarizes an experiment and states its verdicts: ``summary(df)``, ``verdicts(df)``."""
    return get(experiment)


def results(experiment: str, machine: str | None = None) -> dict:
    df = store_results.samples(experiment, machine)
    return {
        "experiment": experiment,
        "machine": df.attrs["machine"],
        "conditions": store_results.conditions_seen(experiment, df.attrs["machine"]),
        "summary": analysis(experiment).summary(df).to_dict(orient="records"),
    }


def verdicts(machine: str | None = None, experiments: list[str] | None = None) -> list[dict]:
    get("countdown")  # importing one experiment registers them all
    rows = []
    for name in experiments or sorted(REGISTRY):
        try:
            df = store_results.samples(name, machine)
        except store_results.NoData:
            continue
        for row in analysis(name).verdicts(df):
            rows.append(row | {"machine": df.attrs["machine"]})
    return rows


def fmt(v) -> str:
    """A number as a reader wants it: 30,000 not 3e+04; 0.546; 1e-06."""
    import math

    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def verdict_matrix(rows: list[dict]):
    """One line per published claim, one column per condition: 'value [CI] verdict'."""
    import pandas as pd

    out = []
    for r in rows:
        line = {"experiment": r["experiment"], "claim": r["claim"],
                "published": f"{fmt(r['published'])} {r['unit']}"}
        for cond, m in r["measured"].items():
            note = f" ({m['note']})" if m.get("note") else ""
            line[cond] = f"{fmt(m['median'])} [{fmt(m['ci_lo'])}, {fmt(m['ci_hi'])}]: {m['verdict']}{note}"
        out.append(line)
    return pd.DataFrame(out).fillna("not measured")


def verdict_table(rows: list[dict]):
    """The matrix of one experiment's verdicts, as a chapter shows it."""
    return verdict_matrix(rows).drop(columns=["experiment"])


def builds(machine: str | None = None, experiments: list[str] | None = None):
    """Every condition that produced data, with its build record, from the runs' metadata."""
    import pandas as pd

    get("countdown")
    seen: dict[str, dict] = {}
    for name in experiments or sorted(REGISTRY):
        try:
            for run in store_results.runs(name, machine):
                for cid, ident in run.get("conditions", {}).items():
                    if ident.get("available"):
                        seen[cid] = ident
        except store_results.NoData:
            continue
    rows = []
    for cid, ident in sorted(seen.items()):
        rec = ident.get("build_record") or {}
        rows.append({
            "condition": cid, "kind": ident.get("kind"), "sys.version": (ident.get("version") or "").replace("\n", " "),
            "Py_GIL_DISABLED": ident.get("py_gil_disabled"),
            "environment": " ".join(f"{k}={v}" for k, v in (ident.get("env") or {}).items()),
            "origin": ident.get("origin"),
            "configure flags": " ".join(rec.get("configure_flags", [])) or ident.get("config_args", ""),
            "source": f"{rec.get('source_tarball')} (sha256 {rec.get('source_sha256', '')[:12]}...)" if rec else "",
            "build seconds": rec.get("build_seconds"),
        })
    return pd.DataFrame(rows)


def experiment_names() -> list[str]:
    get("countdown")
    return sorted(REGISTRY)
