"""What every experiment notebook does the same way: parameters, measuring or loading,
describing the run, and printing the command that reruns it."""
from __future__ import annotations

import json
import shlex

import pandas as pd

from . import campaigns, experiments, interpreters, plots, report, results
from .profiles import COMMON, ParameterError

NOTEBOOK_PARAMS = ("profile", "measure", "campaign", "live")


class Run:
    """The parameters a notebook was given, checked, and the data they select.

    ``before`` is the set of global names that existed before the ``parameters`` cell, so that
    any name papermill injected that the notebook does not know is an error (papermill itself
    only warns), raised before anything is measured.
    """

    def __init__(self, experiment: str, g: dict, before: set):
        self.exp = experiments.get(experiment)
        known = set(NOTEBOOK_PARAMS) | set(COMMON) | set(self.exp.params)
        given = {k for k in g if k not in before and not k.startswith("_")}
        unknown = sorted(given - known)
        if unknown:
            raise ParameterError(f"unknown parameter(s) {', '.join(unknown)} for {experiment}; "
                                 f"known: {', '.join(sorted(known))}")
        self.profile = g.get("profile", "default")
        self.measure = bool(g.get("measure", False))
        self.campaign = g.get("campaign") or None   # asked for; after go(): the campaign shown
        self.live = bool(g.get("live", False))
        self.overrides = {k: g[k] for k in set(COMMON) | set(self.exp.params) if g.get(k) is not None}
        self.params = self.exp.resolve(self.profile, self.overrides)
        self.config_id = self.exp.config_id(self.params)
        self.result = None
        self.df: pd.DataFrame | None = None
        self.yours: campaigns.Campaign | None = None
        self.reference: campaigns.Campaign | None = None
        self.yours_df: pd.DataFrame | None = None
        self.reference_df: pd.DataFrame | None = None
        plots.setup()
        pd.set_option("display.max_colwidth", None)

    # ------------------------------------------------------------------------------------
    def go(self) -> pd.DataFrame:
        """Measure (when ``measure`` is true, into the reader's campaign, never the reference)
        and load the samples of this configuration: the reader's campaign and the reference
        campaign.  The chapter's figures show the reader's when there are any, else the
        reference's; :meth:`comparison` sets them side by side."""
        if self.measure:
            self.result = experiments.measure(self.exp.name, self.profile, self.overrides, campaign=self.campaign)
            self.campaign = self.result.campaign
        self.yours, self.reference = campaigns.for_reading(self.exp.name, self.campaign)
        self.yours_df = self._load(self.yours)
        self.reference_df = self._load(self.reference)
        self.df = self.yours_df if self.yours_df is not None else self.reference_df
        if self.df is None:
            raise results.NoData(
                f"no stored samples of {self.exp.name}, configuration {self.config_id} (profile {self.profile}), "
                f"in {'campaign ' + self.campaign if self.campaign else 'your campaigns or the reference campaign'}; "
                "measure them with measure=True or `gillab measure`")
        self.campaign = self.df.attrs["campaign"]
        return self.df

    def _load(self, c) -> pd.DataFrame | None:
        if c is None:
            return None
        try:
            return results.samples(self.exp.name, c.id, self.config_id)
        except results.NoData:
            return None

    @property
    def conditions(self) -> list[str]:
        return sorted(self.df["condition"].unique())

    def runs(self) -> list[dict]:
        ids = set(self.df["run_id"])
        return [r for r in results.runs(self.exp.name, self.campaign) if r["run_id"] in ids]

    def conditions_table(self) -> pd.DataFrame:
        """Exact identity of every condition in the data, plus those of the document's set (its
        era's builds and today's pair) that were not measured."""
        seen = {}
        for run in self.runs():
            seen.update(run.get("conditions", {}))
        rows = []
        expected = interpreters.sets().get(self.exp.document_set) or list(interpreters.CORE_IDS)
        for cid in interpreters.display_order(set(self.conditions) | set(expected)):
            ident = seen.get(cid, {})
            measured = cid in self.conditions
            n = int((self.df["condition"] == cid).sum())
            gil_rt = self.df.loc[self.df["condition"] == cid, "gil_enabled"].astype(str).str.lower()
            if measured and not ident:  # e.g. curl: a reference measurement, not an interpreter
                rows.append({"condition": cid, "status": f"measured ({n} samples)",
                             "build": "not an interpreter (reference measurement)"})
                continue
            rows.append({
                "condition": cid,
                "status": f"measured ({n} samples)" if measured else "not measured",
                "build": ident.get("kind", "missing") if measured else (ident.get("error") or "missing"),
                "version": (ident.get("version") or "").split(" (")[0],
                "Py_GIL_DISABLED": "" if ident.get("py_gil_disabled") is None else str(ident.get("py_gil_disabled")),
                "GIL at run time": ("on" if (gil_rt == "true").all() else "off" if (gil_rt == "false").all()
                                    else "mixed") if measured else "",
                "environment": " ".join(f"{k}={v}" for k, v in (ident.get("env") or {}).items()),
                "executable": ident.get("executable", ""),
            })
        return pd.DataFrame(rows)

    def run_table(self) -> pd.DataFrame:
        rows = []
        for r in self.runs():
            rows.append({
                "run": r["run_id"], "profile": r["profile"], "status": r.get("status"),
                "samples": int((self.df["run_id"] == r["run_id"]).sum()),
                "started (UTC)": r["started"], "finished (UTC)": r.get("finished"),
                "load avg start": " ".join(map(str, r.get("loadavg_start", []))),
                "load avg end": " ".join(map(str, r.get("loadavg_end", []))),
                "commit": (r["harness"].get("commit") or "")[:10] + (" (dirty)" if r["harness"].get("dirty") else ""),
            })
        return pd.DataFrame(rows)

    def machine_line(self) -> str:
        runs = self.runs()
        if not runs:
            return ""
        m = runs[-1]["machine"]
        whose = ("the committed **reference campaign**" if self.df is self.reference_df
                 else "**your campaign**")
        return (f"These are the samples of {whose} `{self.campaign}`, measured on `{m.get('machine_id')}`: "
                f"{m['cpu_model']}, {m['cpu_count']} cores, {(m.get('memory_bytes') or 0) / 2**30:.0f} GiB, "
                f"{m.get('distribution')}, {m['os']}.")

    def verdict_rows(self, df: pd.DataFrame | None = None) -> list[dict]:
        return self.exp.verdicts(self.df if df is None else df)

    def comparison(self):
        """Your campaign beside the reference campaign, claim by claim; or a sentence saying
        which of the two exists.  Displays itself (Markdown and tables)."""
        from IPython.display import Markdown, display

        name = self.exp.name
        if self.yours_df is None:
            mine = [c for c in campaigns.own() if c.has(name)]
            extra = (f" Your campaign `{mine[-1].id}` holds {name} samples of another configuration only."
                     if mine else "")
            display(Markdown(
                f"**No campaign of yours** holds this configuration on this machine, so this chapter shows the "
                f"reference campaign `{self.reference.id if self.reference else '-'}` alone.{extra} Measure yours with "
                f"`gillab measure {name} -P {self.profile}` (or `make reproduce`); the chapter then shows your "
                "numbers, and here beside the reference's, claim by claim."))
            return
        if self.reference_df is None:
            display(Markdown(f"No reference campaign holds this configuration: your campaign `{self.yours.id}` "
                             "is shown alone."))
            return
        rows = report.compare(self.verdict_rows(self.yours_df), self.verdict_rows(self.reference_df))
        same = int((rows["same outcome"] == "yes").sum())
        differ = int((rows["same outcome"] == "NO").sum())
        display(Markdown(
            f"Your campaign `{self.yours.id}` beside the reference campaign `{self.reference.id}`: of "
            f"{same + differ} claims x conditions measured in both, **{same} have the same outcome and {differ} "
            "differ**. *yours / reference* is the ratio of the two values with an approximate 95% interval "
            "(from the two CIs, independent campaigns). The machines:"))
        display(table(pd.DataFrame(campaigns.machine_rows(self.yours, self.reference))))
        display(Markdown("Claim by claim:"))
        display(table(report.compare_view(rows)))

    def describe(self) -> str:
        p = self.params
        lines = [f"**{self.exp.title}**, profile `{self.profile}`, campaign `{self.campaign or 'yours, else the reference'}`, "
                 f"configuration `{self.config_id}`:"]
        for k, v in p.items():
            lines.append(f"- `{k}` = `{v}`")
        return "\n".join(lines)

    def rerun_command(self) -> str:
        """The exact papermill command that measures this notebook again with these parameters."""
        nb = f"notebooks/{NOTEBOOK_FILES[self.exp.name]}"
        out = f"book/generated/{NOTEBOOK_FILES[self.exp.name]}"
        args = ["papermill", nb, out, "-p", "profile", self.profile, "-p", "measure", "True"]
        for k, v in sorted(self.overrides.items()):
            if k == "conditions" and v == "auto":
                continue
            args += ["-y", f"{k}: {json.dumps(v)}"] if isinstance(v, (list, dict)) else ["-p", k, str(v)]
        return " ".join(shlex.quote(a) for a in args)


def table(df: pd.DataFrame, precision: int = 3):
    """A table for the book: no row numbers, numbers rounded for reading (the data keep all digits)."""
    return df.style.hide(axis="index").format(precision=precision, na_rep="-")


NOTEBOOK_FILES = {
    "countdown": "01_countdown.ipynb",
    "sha256": "02_sha256.ipynb",
    "convoy": "03_convoy.ipynb",
    "switch_interval": "04_switch_interval.ipynb",
    "affinity": "05_affinity.ipynb",
    "data_race": "06_data_race.ipynb",
    "st_loop": "07_single_thread.ipynb",
    "file_io": "08_file_io.ipynb",
    "primes": "09_primes.ipynb",
    "flask_k6": "10_flask.ipynb",
    "b2_download": "11_b2_download.ipynb",
    "verdicts": "99_verdicts.ipynb",   # not an experiment: gathers every verdict, run last
}
