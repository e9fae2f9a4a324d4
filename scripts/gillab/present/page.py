"""What every chapter notebook shows the same way, from one place: its parameters (checked
against the experiment's declaration), its data (measured first only when asked, through
:func:`gillab.measure.sweep.measure`, as the command line does), the interpreters and runs behind
them, the claims with verdicts, the reader's campaign beside the reference, the explorers and
the command that reruns it.  A notebook keeps its own prose and figures and calls these.

Why it is long: the :class:`Chapter` every notebook calls is one object whose sections share the chapter's
parameters, its data and the campaigns beside it; its helpers print what only it shows.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pandas as pd
from IPython.display import HTML, Markdown, display

from ..measure import campaigns, grid, interpreters, sweep
from ..measure import experiments
from . import notebooks, parts, plots
from .. import chapters
from ..judge import verdicts, results, tables
from ..judge.claims import OWN_ONE   # a paired run's own one-thread time
from .live import LIVE_NOTEBOOK
from ..paths import BOOK_FILES, BOOK_FIGURES
from ..measure.profiles import BUDGET_MINUTES, COMMON, Param, ParameterError

NOTEBOOK_PARAMS = {
    "profile": Param("profile", str, "smoke, default, verdicts or seed"),
    "measure": Param("measure", bool, "True measures into your campaign first (what gillab measure does)"),
    "campaign": Param("campaign", str, "whose data to show, None means your newest campaign here else the reference",
                      optional=True),
    "live": Param("live", bool, "show the kernel-driven explorer (make live)"),
}
# every chapter's first code cell, before its parameters cell: the names that exist before papermill
# injects any (``Chapter`` refuses an injected name the chapter does not know); the same by design
OPENING_CELL = "from gillab.present.page import Chapter\n\n_before = set(globals())"
NOTEBOOK_DEFAULTS = {"profile": '"default"', "measure": "False", "campaign": "None", "live": "True"}
ANNOTATIONS = {"profile": "str", "measure": "bool", "live": "bool"}


def parameters_cell(name: str) -> str:
    """The ``parameters`` cell of ``name``'s notebook, generated from the declaration: the
    notebook's own switches, the experiment's parameters and the common ones, each with its
    help text (the tests check every notebook against this)."""
    exp = experiments.get(name)
    lines = [f"# {name}: declared in gillab/measure/experiments/{name}.py and profiles.toml; None keeps the profile's value"]

    def line(target: str, value: str, helptext: str) -> str:
        return f"{target + ' = ' + value:<26} # {helptext}"

    for k, p in NOTEBOOK_PARAMS.items():
        ann = f"{k}: {ANNOTATIONS[k]}" if k in ANNOTATIONS else k
        lines.append(line(ann, NOTEBOOK_DEFAULTS[k], p.help))
    for k, p in {**exp.params, **COMMON}.items():
        lines.append(line(k, "None", p.help))
    return "\n".join(lines)


def qualified_name(fn) -> str:
    """``module.function`` of ``fn`` (through a wrapper, a ``functools.partial`` or a bound method)."""
    f = fn
    for attr in ("__wrapped__", "func", "__func__"):
        f = getattr(f, attr, f)
    return f"{f.__module__}.{f.__qualname__}"


# where a chapter's page sits in the built book (book/generated/<chapter>.html): the way back to the
# book's root, under which `gillab book` serves data/ and the figures' CSVs (html_extra_path)
TO_ROOT = "../../"


def source_line(fn, files: list[str], *, what: str = "Drawn", config: str | None = None,
                plotted: str | None = None) -> HTML:
    """The small line under a figure or table: the function that made it and the files it read,
    each a link to the copy the book serves (a folder for a pattern of files); ``plotted``: the
    CSV of exactly what a figure plots."""
    from html import escape

    def code(text):
        return f"<code>{escape(text)}</code>"

    def link(f):
        target = f.split("*", 1)[0] if "*" in f else f
        return f'<a href="{escape(TO_ROOT + BOOK_FILES.name + "/" + target)}">{code(f)}</a>'

    read = (" from " + ", ".join(link(f) for f in files)) if files else ""
    cfg = f" (configuration {code(config)})" if config else ""
    data = f' The points plotted: <a href="{escape(TO_ROOT + plotted)}">{code(Path(plotted).name)}</a>.' if plotted else ""
    return HTML(f'<p class="gillab-source" style="font-size: 0.8em; color: #666; margin-top: 0">'
                f"{what} by {code(qualified_name(fn))}{read}{cfg}.{data}</p>")


def show_figure(fig, name: str) -> str:
    """Display ``fig`` with its alt text (:func:`gillab.present.plots.describe`) and write exactly what it
    plots (:func:`gillab.present.plots.tidy`) to ``book/_extra/figures/<name>.csv`` of the book being built
    (``$GILLAB_FIGURES``), which the book serves at its root; returns that path, from the root."""
    import os

    from ..paths import repo_root

    # the book being built (``gillab book`` names it for its kernels), else this checkout's
    base = Path(os.environ["GILLAB_FIGURES"]) if os.environ.get("GILLAB_FIGURES") else repo_root() / BOOK_FIGURES
    path = base / f"{name}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    plots.tidy(fig).to_csv(path, index=False)
    display(HTML(tables.image(fig, plots.describe(fig), dpi=100)))
    return f"{BOOK_FIGURES.name}/{name}.csv"


def as_figure(obj):
    """The matplotlib figure of what a figure function returned (a Figure, a seaborn grid), or
    None (a widget, a table)."""
    for cand in (obj, getattr(obj, "figure", None), getattr(obj, "fig", None)):
        if cand is not None and hasattr(cand, "savefig") and hasattr(cand, "axes"):
            return cand
    return None


def aside_words(campaign: str, experiment: str, config_id: str) -> str:
    """How many samples of ``experiment``'s configuration in ``campaign`` were measured beside other
    processes' load, kept aside and never read (:mod:`gillab.measure.alone`), and how many of them
    were measured again alone; '' where none was."""
    from ..measure import alone

    try:
        rows = campaigns.load(campaign).store(experiment).rows()
    except (campaigns.NoCampaign, OSError):
        return ""
    mine = [r for r in rows if r.get("config") == config_id]
    aside = [r for r in mine if r.get("status") == alone.NOT_ALONE]
    if not aside:
        return ""
    keys = {(r["condition"], r["point"], r["repeat"]) for r in aside}
    ok = {(r["condition"], r["point"], r["repeat"]) for r in mine if r.get("status") == "ok"}
    n = len(keys)
    rows_words = "" if len(aside) == n else f"; {len(aside)} rows kept aside, a sample's tries and sub-rows"
    return (f"**{n} sample{'s were' if n != 1 else ' was'} measured beside other processes' "
            f"load** ({alone.words()}{rows_words}): {len(keys & ok)} of the {n} measured again alone, the other "
            f"{len(keys - ok)} left with fewer runs. None of them is read below. ")


class Chapter:
    """One chapter's parameters, checked, and the data they select; displays the common sections.

    ``before`` is the set of global names that existed before the ``parameters`` cell, so that
    any name papermill injected that the notebook does not know is an error (papermill itself
    only warns), raised before anything is measured.
    """

    def __init__(self, experiment: str, g: dict, before: set):
        self.exp = experiments.get(experiment)
        self.analysis = chapters.of(experiment)
        known = set(NOTEBOOK_PARAMS) | set(COMMON) | set(self.exp.params)
        given = {k for k in g if k not in before and not k.startswith("_")}
        unknown = sorted(given - known)
        if unknown:
            raise ParameterError(f"unknown parameter(s) {', '.join(unknown)} for {experiment}; "
                                 f"known: {', '.join(sorted(known))}")
        self.profile = g.get("profile", "default")
        self.measure = bool(g.get("measure", False))
        self.campaign = g.get("campaign") or None   # asked for; after loading: the campaign shown
        self.asked = self.campaign
        self.live = bool(g.get("live", False))
        self.overrides = {k: g[k] for k in set(COMMON) | set(self.exp.params) if g.get(k) is not None}
        self.params = self.exp.resolve(self.profile, self.overrides)
        self.small_grid = grid.small_values(self.exp, self.params)   # refused here, before anything is measured
        self.config_id = self.exp.config_id(self.params)
        self.result = None
        plots.setup()
        pd.set_option("display.max_colwidth", None)
        self.df = self._load()

    def borrowed_from(self):
        """The reader's run this chapter's data are not from, or None: set when the samples shown
        are the reference's while the book shows a run of the reader's (the campaign asked for, or
        their newest here) that did not measure this chapter's configuration."""
        from . import landing

        if self.df is not self.reference_df or self.reference is None:
            return None
        try:
            run = self.yours or landing.reader_campaign(self.asked)
        except campaigns.NoCampaign:
            return None
        return run if run is not None and run.id != self.reference.id else None

    def banner(self) -> None:
        """At the top of the chapter, when its data are borrowed (:meth:`borrowed_from`): whose
        samples every figure, table, verdict and sentence below shows, on which machine, and how to
        measure the chapter here.  Nothing when the data are the run's own."""
        from html import escape

        from . import landing

        earlier = self.df.attrs.get("earlier_config")
        if earlier:     # the reference's samples of the configuration it measured before the code changed
            display(HTML(
                '<div class="admonition warning gillab-earlier"><p class="admonition-title">Measured with earlier '
                "code</p><p>" + escape(
                    f"The reference campaign {self.df.attrs['campaign']} measured this chapter before its measuring code "
                    f"changed (data/results/MEASURE_AGAIN.toml says what changed). It holds no samples of today's "
                    f"configuration {self.config_id}; what this page shows of it is its samples of configuration "
                    f"{earlier}, read with today's rules, until it is measured again.") + "</p></div>"))
        run = self.borrowed_from()
        if run is None:
            return
        ref = self.reference
        display(HTML(
            '<div class="admonition warning gillab-borrowed"><p class="admonition-title">Borrowed: not measured in '
            "your run</p><p>"
            + escape(f"Your run (campaign {run.id}, on {landing.machine_words(run)}) did not measure this chapter. "
                     f"Every figure, table, verdict and sentence of its results on this page is the committed reference "
                     f"campaign's ({ref.id}, measured on {landing.machine_words(ref)}; the GIL traces name their own "
                     "campaign)"
                     + (", another machine than yours: its absolute numbers are not yours, and \"this machine\" on "
                        "this page is that one." if run.fingerprint != ref.fingerprint else ".")
                     + " To measure it here: ")
            + f"<code>{escape(self.measure_command())}</code>.</p></div>"))

    def method(self) -> None:
        """The parameters this chapter ran with (every value, where it came from) and the data
        it shows: the chapter's method section, after its results."""
        display(Markdown(self._parameters_text()))
        display(Markdown(self._data_text()))

    @staticmethod
    def published(experiment: str) -> None:
        """The document's numbers as it printed them, and where they are kept."""
        an = chapters.of(experiment)
        with results.recording() as read:
            table = an.published_table()
        display(tables.published(table))
        display(source_line(an.published_table, read, what="Kept"))

    # -- data ------------------------------------------------------------------------------
    def _load(self) -> pd.DataFrame:
        """Measure (when ``measure`` is true, into the reader's campaign, never the reference)
        and load the samples of this configuration from the reader's campaign and the reference
        campaign.  The figures show the reader's when there are any, else the reference's."""
        if self.measure:
            from ..judge import steadiness

            self.result = sweep.measure(self.exp.name, self.profile, self.overrides, campaign=self.campaign,
                                        probes=steadiness.Probes(self.profile))
            self.campaign = self.result.campaign
        self.yours, self.reference = campaigns.for_reading(self.exp.name, self.campaign)
        self.yours_df = self._samples(self.yours)
        self.reference_df = self._samples(self.reference)
        df = self.yours_df if self.yours_df is not None else self.reference_df
        if df is None:
            raise results.NoData(
                f"no stored samples of {self.exp.name}, configuration {self.config_id} (profile {self.profile}), "
                f"in {'campaign ' + self.campaign if self.campaign else 'your campaigns or the reference campaign'}; "
                f"measure them with `gillab measure {self.exp.name} -P {self.profile}` or measure=True")
        self.campaign = df.attrs["campaign"]
        return df

    def _samples(self, c) -> pd.DataFrame | None:
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

    # -- the common sections -----------------------------------------------------------------
    def _parameters_text(self) -> str:
        lines = [f"**{self.exp.title}**, profile `{self.profile}`, configuration `{self.config_id}`. Defaults come "
                 f"from {self._profile_source()}; a value set in the parameters cell (or with papermill's `-p`) "
                 "overrides it, and unknown names or impossible values stop the notebook before anything is measured:",
                 ""]
        lines += [f"- `{k}` = `{v}`" for k, v in self.params.items()]
        if self.small_grid:
            small = "; ".join(f"`{k}` = `{v}`" for k, v in self.small_grid.items())
            lines += ["", f"A sweep of these parameters measures the builds of `full_grid` (`{self.params['full_grid']}`) "
                      f"at every point and the other builds on the small grid only ({small}); elsewhere they are "
                      "*not measured* in that run. The profile trades those points for time (the whole `default` "
                      f"report has to fit {BUDGET_MINUTES} minutes on 2 cores); `full_grid=all` measures every build everywhere"
                      + (", as the committed reference campaign did." if verdicts.reference_grids() == "all" else ".")]
        if self.params.get("rest_repeats") is not None:
            g = grid.of(self.exp, self.params)
            where = g.describe_claim()
            lines += ["", f"The claims' points ({where}) get all {self.params['repeats']} repeats for the builds "
                      f"`{self.params['claim_builds']}`"
                      + (" (a build outside `full_grid` at those of them on the small grid only: it is measured "
                         "nowhere else)" if self.small_grid else "")
                      + f", the runs their verdicts need; every other point "
                      f"{self.params['rest_repeats']} (`rest_repeats`, `claim_grid`, `claim_builds`)."]
        return "\n".join(lines)

    def _profile_source(self) -> str:
        """Where the profile's values come from: ``profiles.toml``, or, for a table it lacks, the
        tables the experiment's module declares (:func:`gillab.measure.profiles.tables`), said so."""
        from ..measure.profiles import table_source

        used = [self.profile] + (["default"] if self.profile == "verdicts" else [])
        elsewhere = [(p, table_source(self.exp.name, p)) for p in used if table_source(self.exp.name, p) != "profiles.toml"]
        if not elsewhere:
            return "the profile in `profiles.toml`"
        return "the profile's tables that " + "; ".join(
            f"`{where}` declares (`{p}`: `profiles.toml` has no `[{self.exp.name}.{p}]` table)" for p, where in elsewhere)

    def _data_text(self) -> str:
        how = (f"This notebook measured first (`measure=True`), through the code of `gillab measure`: "
               f"{self.result.measured} samples measured, {self.result.skipped} already stored and resumed, "
               f"{self.result.failed} failed." if self.result is not None else
               "This notebook only loads stored samples (`measure=False`, as the book is built); "
               f"`gillab measure {self.exp.name} -P {self.profile}` (or `measure=True`) measures them.")
        return (f"{how} Samples are stored in `data/results/<campaign>/{self.exp.name}/samples.csv` the moment "
                "each is measured, in **your campaign**, never in the committed reference campaign; samples of the "
                "same configuration, interpreter build and measuring code are resumed, anything else is measured "
                f"anew.\n\n{len(self.df)} stored rows of configuration `{self.config_id}`. {self.aside_line()}"
                f"{self.machine_line()}{self.pairing_line()}")

    def pairing_line(self) -> str:
        """How this chapter's runs of more than one thread were timed against one thread (where it
        has the ``paired`` parameter): how many timed their own one-thread countdown in their
        process, read from the samples."""
        if "paired" not in self.exp.params or "threads" not in self.df.columns:
            return ""
        ok = self.df[(self.df["status"] == "ok") & (self.df["threads"] > 1)] if "status" in self.df.columns else \
            self.df[self.df["threads"] > 1]
        if not len(ok):
            return ""
        own = int(ok[OWN_ONE].notna().sum()) if OWN_ONE in ok.columns else 0
        if not own:
            return (f"\n\nEach of its {len(ok)} runs of more than one thread ran in a process of its own, the "
                    "document's way: its ratio to one thread reads the one-thread point's runs of the same round.")
        return (f"\n\nOf its {len(ok)} runs of more than one thread, {own} timed their own one-thread countdown in "
                "the same process, A-B-B-A (half the work in one thread, half over the threads, twice: the "
                "`paired` parameter), and their ratios to one thread are each run's own: a pace that differs "
                "from one process to the next is on both sides of each"
                + (f"; the other {len(ok) - own} read the one-thread point's runs of the same round."
                   if own < len(ok) else "."))

    def aside_line(self) -> str:
        return aside_words(self.campaign, self.exp.name, self.config_id)

    def machine_line(self) -> str:
        runs = self.runs()
        if not runs:
            return ""
        m = runs[-1]["machine"]
        whose = ("the committed **reference campaign**" if self.df is self.reference_df
                 else f"**{self._whose(self.yours)}**")
        return (f"These are the samples of {whose} `{self.campaign}`, measured on `{m.get('machine_id')}`: "
                f"{m['cpu_model']}, {m['cpu_count']} cores, {(m.get('memory_bytes') or 0) / 2**30:.0f} GiB, "
                f"{m.get('distribution')}, {m['os']}.")

    def interpreters(self) -> None:
        """Which interpreters produced these numbers, and the runs that measured them."""
        display(Markdown(
            "Each condition is a binary plus its environment, asked what it is in a fresh process (`sys.version`, "
            "`Py_GIL_DISABLED`, and `sys._is_gil_enabled()` **at run time**, which every sample records again). A "
            "condition of the document's set that is missing on this machine is listed as *not measured*; it is "
            "never replaced by another build."))
        display(tables.table(self.conditions_table()))
        runs = f"data/results/{self.campaign}/{self.exp.name}/runs/*.json"
        display(source_line(Chapter.conditions_table, [runs, f"data/results/{self.campaign}/{self.exp.name}/samples.csv"],
                            what="Made"))
        display(Markdown("The runs behind these samples: when each started and how long it took, the machine's "
                         "1-minute load average at its start and end, and the share of CPU time the hypervisor "
                         "gave to other guests during it, and the samples measured beside other processes' load "
                         "(kept aside, with how many were measured again alone; \"-\": not recorded; the run files "
                         "keep all three load averages):"))
        display(tables.table(self.run_table()))
        display(source_line(Chapter.run_table, [runs], what="Made"))

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
            gil_rt = self.df.loc[self.df["condition"] == cid, "gil_enabled"]
            if measured and not ident:  # e.g. curl: a reference measurement, not an interpreter
                rows.append({"condition": cid, "status": f"measured ({n} sample{'s' if n != 1 else ''})",
                             "build": "not an interpreter (reference measurement)"})
                continue
            rows.append({
                "condition": cid,
                "status": f"measured ({n} sample{'s' if n != 1 else ''})" if measured else "not measured",
                "build": ident.get("kind", "missing") if measured else (ident.get("error") or "missing"),
                "version": (ident.get("version") or "").split(" (")[0],
                "Py_GIL_DISABLED": "" if ident.get("py_gil_disabled") is None else str(ident.get("py_gil_disabled")),
                "GIL at run time": ("on" if gil_rt.eq(True).all() else "off" if gil_rt.eq(False).all()
                                    else "mixed") if measured else "",
                "environment": " ".join(f"{k}={v}" for k, v in (ident.get("env") or {}).items()),
                "executable": ident.get("executable", ""),
            })
        return pd.DataFrame(rows)

    def run_table(self) -> pd.DataFrame:
        rows = []
        for r in self.runs():
            took = campaigns.run_seconds(r)
            rows.append({
                "run": r["run_id"], "status": f"{r.get('status')} ({r['profile']})",
                "samples": int((self.df["run_id"] == r["run_id"]).sum()),
                "started (UTC)": r["started"][:16].replace("T", " "), "minutes": "-" if took is None else f"{took / 60:.1f}",
                "load start → end": " → ".join(str((r.get(k) or ["-"])[0]) for k in ("loadavg_start", "loadavg_end")),
                "CPU stolen": "-" if r.get("cpu_steal_share") is None else f"{r['cpu_steal_share']:.0%}",
                "not alone": ("-" if "not_alone" not in r else
                              f"{r['not_alone']} ({r.get('measured_again', 0)} again)" if r["not_alone"] else "0"),
                "commit": (r["harness"].get("commit") or "")[:7] + (" (dirty)" if r["harness"].get("dirty") else ""),
            })
        return pd.DataFrame(rows)

    # -- where each figure and table comes from ----------------------------------------------
    def _made_files(self, fn, *, claims_csv: bool = False):
        """``fn`` of the samples shown, recording the data files it reads: its value and those
        files (the samples shown first)."""
        with results.recording() as read, plots.steady_jitter():
            out = fn(self.df)
        files = [f"data/results/{self.campaign}/{self.exp.name}/samples.csv"]
        files += [f for f in read if f not in files]
        if claims_csv:
            files.append("data/reference/claims.csv")
        return out, files

    def _made(self, fn, *, what: str = "Drawn", claims_csv: bool = False):
        """``fn`` of the samples shown; returns its value and the line that names ``fn`` and the
        files it read."""
        out, files = self._made_files(fn, claims_csv=claims_csv)
        return out, source_line(fn, files, what=what, config=self.config_id)

    def figure(self, which: str = "figure"):
        """One of the analysis's figures (``figure`` is the main one), drawn from the data shown,
        with its alt text, and a line under it naming the function that drew it, the files it
        read and the CSV of what it plots."""
        fn = getattr(self.analysis, which)
        out, files = self._made_files(fn)
        fig = as_figure(out)
        plotted = show_figure(fig, f"{self.exp.name}/{which}") if fig is not None else None
        display(source_line(fn, files, config=self.config_id, plotted=plotted))
        return out

    def side_by_side(self, precision: int = 3) -> None:
        self.table("side_by_side", precision)

    def table(self, which: str, precision: int = 3) -> None:
        """One of the analysis's further tables (``extras``), made from the data shown, with the
        line naming the function that made it and the files it read."""
        table, line = self._made(getattr(self.analysis, which), what="Made")
        display(tables.table(table, precision=precision))
        display(line)

    def claims(self, df: pd.DataFrame | None = None) -> list[dict]:
        return self.analysis.claims(self.df if df is None else df)

    def verdicts(self) -> None:
        """The claims with their verdicts, one line per claim and build with a value: the judged
        claims shown, the others (the author's machine's numbers, not testable here, not
        measured) each kind folded under a line that counts them; then the findings in words."""
        from ..judge import claims

        cpus = [int(r["machine"]["cpu_count"]) for r in self.runs() if (r.get("machine") or {}).get("cpu_count")]
        cpus = min(cpus) if cpus else None
        rows, line = self._made(self.analysis.claims, what="Judged", claims_csv=True)
        parts = tables.verdict_parts(rows, claims.families(self.df), cpus)
        shown = parts.pop("judged", None)
        if shown is not None:
            display(shown)
        if parts:
            n = 0 if shown is None else len(shown)
            display(Markdown(
                (f"{n} of the {len(rows)} claims {'is' if n == 1 else 'are'} judged on this run's builds (above); "
                 if n else f"None of the {len(rows)} claims is judged on this run's builds; ")
                + "the others are folded below, each kind counted (open one to read its rows)."))
        for kind, part in parts.items():
            display(tables.collapsed(tables.folded_summary(kind, len(part), cpus), part))
        display(line)
        self._flips()
        misses = claims.own_misses()
        misses = misses[misses["claim_id"].isin({r["claim_id"] for r in rows})]
        own = "document's own number"
        if len(misses):
            display(Markdown(
                "**Where the document's own numbers miss its own words** (a finding about the document: the band is "
                "the lexicon's, never widened to let them through): " + "; ".join(
                    f"`{m['claim_id']}` reads '{m['phrase']}' as {m['reading']}, and the document's own number is "
                    f"{m[own]:.4g} ({m['outside by']:+.1%} outside)" for _, m in misses.iterrows())
                + ". The verdicts page lists every such row."))
        text, line = self._made(self.analysis.findings, what="Written")
        display(Markdown(text))
        display(line)

    def _flips(self) -> None:
        """The judged rows of this chapter definite on two kinds of CPU on different sides
        (:func:`gillab.judge.across.flips`, over every counted campaign measured with this code),
        each with what decides it, or marked as without a cause: not yet a result."""
        from ..judge import across

        f = across.flips(self.exp.name, self.profile)
        if f.empty:
            return
        without = int((f["cause"] == "").sum())
        display(Markdown(
            f"**Differs between kinds of CPU** ({len(f)} row{'s' if len(f) != 1 else ''}"
            + (f", **{without} without a cause found yet**: not yet a result" if without else "") + "): "
            + "; ".join(f"`{r.claim_id}` on {r.condition}: {r.outcome} on {mine}, {r.beside_outcome} on {theirs}, "
                        + (f"decided by {r.cause}" if r.cause else "**no cause found yet**") for r in f.itertuples()
                        for mine, theirs in [across.kind_names(r.group, r.beside)])
            + ". The machines page lists them with every campaign's value."))

    def profile_part(self, profile: str, figure: str, table: str) -> pd.DataFrame | None:
        """A part of the chapter that another profile measures (document 004's version sweep:
        ``history``): its samples from the reader's campaign, else the reference's, with the
        analysis's ``figure`` and ``table``, and the verdicts of the claims that profile answers
        (:attr:`~gillab.judge.analysis.Analysis.claims_from_profile`); where neither campaign holds it,
        the command that measures it.  Returns the samples shown (None without any)."""
        from ..judge import claims

        try:
            cfg = self.exp.config_id(self.exp.resolve(profile))
        except ParameterError as exc:
            display(Markdown(f"The `{profile}` profile cannot be resolved here: {exc}"))
            return None
        shown = parts.part_samples(self.exp.name, cfg, self.yours)[1]
        cmd = f"`gillab measure {self.exp.name} -P {profile}`"
        if shown is None:
            display(Markdown(f"**Not measured in this run.** No campaign here (yours, the reference or a contributed "
                             f"one) holds samples of the `{profile}` profile (configuration `{cfg}`); {cmd} measures "
                             "them."))
            return None
        camp = shown.attrs["campaign"]
        whose = ("your campaign" if self.yours is not None and camp == self.yours.id
                 else "the reference campaign" if self.reference is not None and camp == self.reference.id
                 else "the contributed campaign (neither yours nor the reference holds this profile)")
        runs = [r for r in results.runs(self.exp.name, camp) if r["run_id"] in set(shown["run_id"])]
        took = [campaigns.run_seconds(r) for r in runs]
        took = sum(t for t in took if t is not None)
        display(Markdown(f"From {whose} `{camp}`: {len(shown)} samples of the `{profile}` profile (configuration "
                         f"`{cfg}`) in {len(runs)} run{'s' if len(runs) != 1 else ''} taking {took / 60:.1f} minutes; "
                         f"{cmd} measures them again (and resumes what is stored)."))
        files = [f"data/results/{camp}/{self.exp.name}/samples.csv"]
        fig = as_figure(getattr(self.analysis, figure)(shown))
        plotted = show_figure(fig, f"{self.exp.name}/{figure}") if fig is not None else None
        display(source_line(getattr(self.analysis, figure), files, config=cfg, plotted=plotted))
        display(tables.table(getattr(self.analysis, table)(shown)))
        display(source_line(getattr(self.analysis, table), files, what="Made", config=cfg))
        prefix = self.analysis.claims_from_profile.get(profile, "")
        rows = [r for r in self.analysis.claims(shown) if prefix and r["claim_id"].startswith(prefix)]
        cpus = [int(r["machine"]["cpu_count"]) for r in runs if (r.get("machine") or {}).get("cpu_count")]
        if not rows:
            display(Markdown(f"These samples judge none of the `{profile}` profile's claims."))
            return shown
        display(tables.table(tables.verdict_table(rows, claims.families(shown), min(cpus) if cpus else None)))
        display(source_line(self.analysis.claims, files + ["data/reference/claims.csv"], what="Judged", config=cfg))
        return shown

    def _traces_elsewhere(self, camp) -> str:
        """A sentence when the traces were recorded on another kind of machine (or in another
        campaign) than the samples this page shows: they explain the mechanism, not these numbers."""
        from . import landing

        try:
            shown = campaigns.load(self.campaign)
        except campaigns.NoCampaign:
            return ""
        if camp.id == shown.id:
            return ""
        same = camp.fingerprint and camp.fingerprint == shown.fingerprint
        return (f" **Recorded in another campaign than the samples above** (`{camp.id}`, on "
                f"{landing.machine_words(camp)}; the samples: `{shown.id}`, on {landing.machine_words(shown)}"
                + ("; the same kind of machine" if same else "; **another kind of machine**")
                + "): they show how each GIL hands over, not why these numbers are what they are on this machine.")

    def gil_traces(self) -> None:
        """The chapter's GIL traces (:mod:`gillab.present.trace_view`): whose they are, a timeline, the
        table and sentences computed from them, and an explorer over them; or how to record them."""
        from . import trace_view

        camp, trs, damaged = trace_view.load(self.exp.name, self.campaign)
        section = trace_view.CHAPTERS[self.exp.name](trs) if trs else None
        if section is None:
            display(Markdown(trace_view.none_yet(self.exp.name)))
            return
        files = [f"data/results/{camp.id}/traces/{self.exp.name}/"]
        m = camp.machine
        first = trs[0].meta
        rounds = max(t.meta.get("rounds", 1) for t in trs)
        display(Markdown(
            f"Traces of campaign `{camp.id}` ({m.get('cpu_model', '?')}, {m.get('cpu_count', '?')} cores), recorded "
            f"{first.get('recorded_at', '?')[:16]} with the traced builds (`<build>+trace`): "
            + (f"{rounds} runs a point, " if rounds > 1 else "one sample each, ")
            + f"a window of {first.get('window_ms', ['?', '?'])[1]} ms a run. They explain the measurements above; "
            "the traced builds' own numbers are never counted in a verdict (their hooks cost time: the method chapter "
            "measures how much)."
            + (f" **{len(damaged)} trace(s) could not be read** and are left out: " + "; ".join(damaged) if damaged
               else "")
            + self._traces_elsewhere(camp)))
        fig = section.figure
        plotted = show_figure(fig, f"{self.exp.name}/gil_trace")
        display(source_line(trace_view.CHAPTERS[self.exp.name], files, plotted=plotted))
        for sentence in section.sentences:
            display(Markdown(sentence))
        display(tables.table(section.table, precision=3))
        display(source_line(trace_view.CHAPTERS[self.exp.name], files, what="Computed"))
        # kernel-free (drawn now, switched in the browser), like the chapter's own explorer
        display(trace_view.explorer(section.explore, section.length_ms, io=section.io,
                                    title="Move through the traces: pick one, then slide the window"))

    def gil_race(self) -> None:
        """The race behind the convoy on every machine whose campaign holds traces
        (:mod:`gillab.present.race`): a figure of the share of releases lost (the machine's part)
        and the length of a wait (the GIL's part), sentences at the document's setting, and the
        table of every traced point; or how to record them."""
        from . import race

        df, damaged = race.across(self.exp.name)
        if df.empty:
            from . import trace_view

            display(Markdown("No campaign here holds traces of the server beside a CPU thread on a new GIL. "
                             + trace_view.none_yet(self.exp.name)))
            return
        files = [f"data/results/{c}/traces/{self.exp.name}/" for c in dict.fromkeys(df["campaign"])]
        display(Markdown(
            f"Traces of {df['campaign'].nunique()} campaign(s) on {df['machine'].nunique()} kind(s) of machine, "
            "the figure beside one CPU thread, the table at every traced point; each statistic is the median over "
            "runs with its 95% interval (or \"too few runs\")."
            + (" **Traces that could not be read** are left out: "
               + "; ".join(f"`{c}`: {len(b)}" for c, b in damaged.items()) if damaged else "")))
        plotted = show_figure(race.figure(df), f"{self.exp.name}/gil_race")
        display(source_line(race.figure, files, plotted=plotted))
        for sentence in race.sentences(df):
            display(Markdown(sentence))
        with tables.folded("Every traced point, on every machine"):
            display(tables.table(race.table(df), precision=3))
            display(source_line(race.points, files, what="Computed"))

    def gil_witness(self) -> None:
        """The second witness (:mod:`gillab.present.witness_view`): CPython 3.15's own sampler beside
        our trace of 3.13.5, the shares each saw, whether they agree, and what watching cost; or how
        to record it."""
        from . import witness_view

        camp = witness_view.campaign_for(self.exp.name, self.campaign)
        df, bad = (witness_view.runs(camp, self.exp.name) if camp is not None else (pd.DataFrame(), []))
        if camp is None or not len(df):
            display(Markdown(
                f"No campaign here holds a second witness of `{self.exp.name}`. To record one: provision "
                "Debian's CPython 3.15 and the traced 3.13.5 (`make interpreters TRACE=1`), then run "
                "`gillab trace witness` (seven interleaved rounds, about a minute)."))
            return
        m = camp.machine
        files = [f"data/results/{camp.id}/witness/{self.exp.name}/"]
        display(Markdown(
            f"Recorded in campaign `{camp.id}` ({m.get('cpu_model', '?')}, {m.get('cpu_count', '?')} cores) by "
            "`gillab trace witness`: rounds in a rotated order of the 3.15 build witnessed and alone, the traced "
            f"3.13.5 and the untraced 3.13.5 alone ({witness_view.setting(camp, self.exp.name)})."
            + (f" **{len(bad)} file(s) could not be read** and are left out: " + "; ".join(bad) if bad else "")))
        cost = witness_view.costs(camp, self.exp.name)
        plotted = show_figure(witness_view.figure(df), f"{self.exp.name}/gil_witness")
        display(source_line(witness_view.figure, files, plotted=plotted))
        for sentence in witness_view.sentences(df, cost):
            display(Markdown(sentence))
        display(tables.table(witness_view.summary(df, cost)))
        display(source_line(witness_view.summary, files, what="Computed"))

    def prose_of(self, df: pd.DataFrame | None, which: str) -> None:
        """The analysis's sentences ``which`` checked against ``df`` (another profile's samples,
        from :meth:`profile_part`); nothing where that part is not measured."""
        from ..judge import prose

        if df is None:
            return
        fn = getattr(self.analysis, which)
        display(Markdown(prose.markdown(fn(df))))
        display(source_line(fn, [f"data/results/{df.attrs['campaign']}/{self.exp.name}/samples.csv"], what="Checked"))

    def prose(self) -> None:
        """The chapter's sentences about its results, each shown with the numbers that bear it
        out, or struck through where this run no longer does."""
        from ..judge import prose

        checks, line = self._made(self.analysis.prose, what="Checked")
        display(Markdown(prose.markdown(checks)))
        display(line)

    def comparison(self) -> None:
        """Your campaign beside the reference campaign, claim by claim; or a sentence saying
        which of the two exists."""
        display(Markdown(
            "When you have measured this chapter yourself (`make reproduce`, `gillab measure`, or this notebook "
            "with `measure=True`), your campaign is what the figures above show, and here every claim is set beside "
            "the committed reference campaign: the two outcomes compared (the same, different or open) and your value "
            "over the reference's. The "
            "machines are compared field by field, so that a difference in speed can be traced to a different CPU, "
            "hypervisor or kernel. A campaign contributed from another machine (`gillab import`) is shown the same way "
            "with `-p campaign <id>` (or `gillab book --campaign <id>`); the *across machines* page counts every "
            "campaign's outcomes, claim by claim."))
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
        from ..judge.pairs import counts_sentence, pair_counts

        rows = verdicts.compare(self.claims(self.yours_df), self.claims(self.reference_df))
        both = rows[rows["same outcome"] != "-"]
        counts = pair_counts(both, "compared")
        whose = self._whose(self.yours)
        display(Markdown(
            f"{whose[0].upper() + whose[1:]} `{self.yours.id}` beside the reference campaign `{self.reference.id}`, "
            "every row of the chapter (the authors' machine numbers included; the first screen counts the judged "
            f"rows alone): {counts_sentence(counts, 'claims x conditions')}; an open row says nothing either way. "
            f"*{self.yours.role} / reference* is the ratio of the two values with the interval that follows from "
            "the two 95% intervals (lowest over highest, highest over lowest): it holds the ratio wherever both hold "
            f"their values, so at least {verdicts.RATIO_CI_LEVEL:.0%} of the time; none where either value has no 95% "
            "interval. The machines, every claim of both campaigns and the main figure of each are folded below."))
        with tables.folded("The machines, every claim of both campaigns and the main figure of each"):
            display(tables.table(pd.DataFrame(campaigns.machine_rows(self.yours, self.reference))))
            display(Markdown("Claim by claim:"))
            display(tables.table(tables.compare_view(rows, self.yours.role)))
            self.figures_beside()

    @staticmethod
    def _whose(c) -> str:
        return ("the contributed campaign (measured on another machine, imported)" if c.is_contributed
                else "your campaign")

    def figures_beside(self) -> None:
        """The chapter's main figure from the reference campaign and from the one shown beside
        it, on the same axes (:func:`gillab.present.plots.share_axes`)."""
        with plots.steady_jitter():
            figs = [self.analysis.figure(self.reference_df), self.analysis.figure(self.yours_df)]
        shared = plots.share_axes(*figs)
        axes = "on the same axes" if shared else "each on its own axes (their panels differ: not the same builds or points)"
        display(Markdown(
            f"The main figure drawn from each campaign, {axes}: "
            f"first the reference campaign `{self.reference.id}`, then {self._whose(self.yours)} `{self.yours.id}`."))
        for c, fig in zip((self.reference, self.yours), figs):
            display(Markdown(f"*{c.label()}*"))
            plotted = show_figure(fig, f"{self.exp.name}/figure-{c.id}")
            display(source_line(self.analysis.figure, [f"data/results/{c.id}/{self.exp.name}/samples.csv"],
                                plotted=plotted))

    def explorer(self) -> None:
        """The kernel-free explorer, then how to get the live one, and (with ``live``) the live
        one itself (:mod:`gillab.present.live`), opening on the data shown above."""
        display(Markdown("This explorer needs no kernel: every figure was drawn when the notebook ran, and the "
                         "controls switch between them in your browser."))
        widget, line = self._made(self.analysis.explorer, what="Drawn")
        display(widget)
        display(line)
        display(Markdown(
            f"**Live.** `make live` prints one address that opens JupyterLab on 127.0.0.1 at *Explore live* "
            f"(`{LIVE_NOTEBOOK}`): choose this chapter ({self.exp.title}) and the explorer re-plots from any "
            "campaign's samples as you move its controls, and measures a small sweep on request (*measure now*: "
            "the smoke profile with your values, into your campaign, with a progress bar). This "
            f"notebook opened in JupyterLab (`notebooks/{notebooks.ipynb_name(experiments.notebook(self.exp.name))}`, "
            "`live = True`) "
            "shows the same explorer below; in the static book it is not shown, as it needs a kernel."))
        if self.live:
            from . import live

            display(live.explorer(self.exp.name, self.campaign, self.config_id))

    def rerun(self) -> None:
        """The exact commands that measure this chapter again with these parameters."""
        display(Markdown("The exact commands that measure this chapter again with the parameters used here (samples "
                         "already stored for the same configuration, build and code are resumed): the command line, "
                         "then the notebook, which measures through the same code with `measure True`."))
        print(self.measure_command())
        print(self.rerun_command())

    def _override_args(self, cli: bool) -> list[str]:
        args = []
        for k, v in sorted(self.overrides.items()):
            if k == "conditions" and v == "auto":
                continue
            if cli:
                args += ["-p", f"{k}={v!r}" if isinstance(v, (list, dict, str)) else f"{k}={v}"]
            else:
                args += ["-y", f"{k}: {json.dumps(v)}"] if isinstance(v, (list, dict)) else ["-p", k, str(v)]
        return args

    def measure_command(self) -> str:
        args = ["gillab", "measure", self.exp.name, "-P", self.profile, *self._override_args(cli=True)]
        return " ".join(shlex.quote(a) for a in args)

    def rerun_command(self) -> str:
        """The exact papermill command that measures this notebook again with these parameters."""
        name = notebooks.ipynb_name(experiments.notebook(self.exp.name))
        nb = f"notebooks/{name}"   # written from the text notebook by `gillab notebooks`
        out = f"book/generated/{name}"
        args = ["papermill", nb, out, "-p", "profile", self.profile, "-p", "measure", "True",
                *self._override_args(cli=False)]
        return " ".join(shlex.quote(a) for a in args)
