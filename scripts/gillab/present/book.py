"""The book: execute the chapter notebooks with papermill (never measuring), reuse an executed
notebook whose inputs have not changed, and render the Jupyter Book.

An executed notebook carries, in its metadata, the key of everything it was made from: the
notebook, the package's code, profiles.toml and builds.toml, the published numbers, the stored
samples and run files it can read (the reference campaign's and the reader's), its parameters
and the versions of the libraries that draw it (as jupyter-cache and showyourwork key outputs
on their inputs).  ``gillab book`` executes only what changed, as many at a time as there are cores,
each worker reusing one kernel (see :func:`_execute_in_shared_kernel`).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

from ..judge import analysis
from ..measure import experiments
from . import notebooks
from ..measure.experiment import NOT_CONFIG
from ..measure.profiles import BUDGET_MINUTES
from ..paths import BOOK_FIGURES, BOOK_FILES, generated_dir, notebooks_dir, repo_root, results_dir

# not experiments: every verdict of one campaign; every claim on every machine's campaign
APPENDIX = {"verdicts": "99_verdicts.md", "machines": "98_machines.md"}


def notebook_files() -> dict[str, str]:
    """Chapter name -> its text notebook (:mod:`gillab.present.notebooks`), in the book's order (the
    registry's), then the appendix."""
    return {name: experiments.get(name).notebook for name in experiments.names()} | APPENDIX


def executed_name(name: str) -> str:
    """The executed notebook of chapter ``name`` in book/generated/ (what the book renders)."""
    return notebooks.ipynb_name(notebook_files()[name])

WIDGETS_DIR = repo_root() / "book" / "_widgets" / "widgets"   # served as _static/widgets/


def html_manager_version() -> str:
    """The @jupyter-widgets/html-manager release that matches the installed ipywidgets."""
    from ipywidgets import _version

    return _version.__html_manager_version__  # an npm range such as ^1.0.1


def install_widgets_js(force: bool = False) -> Path:
    """Fetch @jupyter-widgets/html-manager from npm and copy ``dist/embed.js`` and its fonts
    into ``book/_widgets/widgets/``, which the book serves itself (no CDN at view time)."""
    version = html_manager_version()
    stamp = WIDGETS_DIR / "VERSION"
    if not force and stamp.exists() and stamp.read_text().split("\n")[0] == version and (WIDGETS_DIR / "embed.js").exists():
        return WIDGETS_DIR
    if shutil.which("npm") is None:
        raise RuntimeError("npm is needed once to fetch the widget JavaScript (apt-get install npm)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", f"@jupyter-widgets/html-manager@{version}", "--silent",
                        "--pack-destination", tmp], check=True, stdout=subprocess.DEVNULL)
        tgz = next(Path(tmp).glob("*.tgz"))
        WIDGETS_DIR.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tgz) as tf:
            for m in tf.getmembers():
                name = Path(m.name)
                if m.isfile() and name.parts[:2] == ("package", "dist") and len(name.parts) == 3 \
                        and not name.name.startswith("embed-amd") and "libembed" not in name.name \
                        and not name.name.endswith(".map"):
                    (WIDGETS_DIR / name.name).write_bytes(tf.extractfile(m).read())
    (WIDGETS_DIR / "assets-path.js").write_text(
        "// Where embed.js finds its fonts: next to this file, wherever the book is served.\n"
        "window.__jupyter_widgets_assets_path__ = new URL('./', document.currentScript.src).href;\n")
    stamp.write_text(version + "\n" + tgz.name + "\n")
    return WIDGETS_DIR


def execute(experiment: str, profile: str = "default", overrides: dict | None = None, *,
            measure: bool = False, output_dir: Path | None = None, cwd: Path | None = None,
            key: str | None = None) -> Path:
    """Run one notebook with papermill; the executed copy is what the book renders.  ``key``
    (see :func:`cache_key`) is written into its metadata."""
    import papermill as pm

    files = notebook_files()
    if experiment not in files:
        raise ValueError(f"no notebook for {experiment!r}; known: {', '.join(files)}")
    src = notebooks_dir() / files[experiment]
    out_dir = Path(output_dir or generated_dir())
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / executed_name(experiment)
    params = {"profile": profile, "measure": measure, "live": False, **(overrides or {})}
    t0 = time.monotonic()
    os.environ["GILLAB_FIGURES"] = str(figures_dir(out_dir))   # the kernel inherits it
    print(f"[gillab] papermill {src.name} -> {out} {json.dumps(params)}", file=sys.stderr, flush=True)
    pm.execute_notebook(notebooks.for_papermill(src), str(out), parameters=params, cwd=str(cwd or notebooks_dir()),
                        kernel_name="python3", progress_bar=False, log_output=False,
                        kernel_manager_class=ipc_kernel_manager())
    _finish(out, key)
    print(f"[gillab] {src.name} done in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    return out


def figures_dir(output_dir: Path) -> Path:
    """Where the chapters executed into ``output_dir`` (a book's ``book/generated``) write the CSV
    of each figure: that book's ``book/_extra/figures``, served at its root."""
    return Path(output_dir).resolve().parent.parent / BOOK_FIGURES


def _finish(path: Path, key: str | None, seconds: float | None = None) -> None:
    """Leave the parameter cells (the defaults and papermill's injected ones) out of the book's
    page: the chapter's method section lists every value it ran with (``Chapter.method``); and
    record the cache key (and how long the notebook took)."""
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if {"parameters", "injected-parameters"} & set(tags) and "remove-cell" not in tags:
            cell["metadata"]["tags"] = tags + ["remove-cell"]
    nb["metadata"].setdefault("gillab", {})["cache_key"] = key
    if seconds is not None:
        nb["metadata"]["gillab"]["seconds"] = round(seconds, 1)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def _files_under(path: Path):
    if path.is_file():
        yield path
    elif path.is_dir():
        yield from sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))


@functools.lru_cache(maxsize=None)
def _digest(path: str, mtime_ns: int, size: int) -> bytes:
    """A file's sha256, read once per process for as long as it is unchanged (every chapter's
    key hashes the package's code and the reference numbers)."""
    return hashlib.sha256(Path(path).read_bytes()).digest()


def cache_key(name: str, params: dict) -> str:
    """The hash of everything the executed notebook of ``name`` is made from (see the module)."""
    from importlib.metadata import version

    from ..measure import campaigns

    root = repo_root()
    h = hashlib.sha256()
    inputs = [notebooks_dir() / notebook_files()[name], root / "profiles.toml", root / "builds.toml",
              root / "data" / "reference"]
    inputs += sorted((root / "scripts" / "gillab").rglob("*.py"))
    res = results_dir()
    inputs.append(res / "REFERENCE")
    read = () if name in APPENDIX else (name, *analysis.of(name).reads)
    for camp in sorted(p for p in res.iterdir() if p.is_dir()) if res.is_dir() else []:
        inputs.append(camp / "campaign.json")
        inputs += [camp] if name in APPENDIX else [camp / e for e in read]
    for path in inputs:
        for f in _files_under(path):
            st = f.stat()
            h.update(str(f.relative_to(root) if f.is_relative_to(root) else f).encode() + b"\0")
            h.update(_digest(str(f), st.st_mtime_ns, st.st_size))
    yours = [c.id for c in campaigns.own()]
    libs = {m: version(m) for m in ("papermill", "matplotlib", "seaborn", "pandas", "ipywidgets", "numpy")}
    h.update(json.dumps({"params": params, "yours": yours, "libs": libs, "python": sys.version},
                        sort_keys=True, default=str).encode())
    return h.hexdigest()[:20]


def executed_key(path: Path) -> str | None:
    try:
        return json.loads(path.read_text())["metadata"].get("gillab", {}).get("cache_key")
    except (OSError, ValueError, KeyError):
        return None


@functools.cache
def ipc_kernel_manager(asynchronous: bool = True) -> type:
    """A Jupyter kernel manager whose kernel talks over Unix domain sockets (``transport =
    "ipc"``), in Jupyter's runtime folder, instead of TCP ports on 127.0.0.1: nothing listens on a
    port, and ipykernel has no plain-text TCP channel to warn about ("Kernel is running over TCP
    without encryption"), which it otherwise prints for every notebook.  ``asynchronous``: the
    class nbclient (papermill) uses, else the blocking one of the shared kernel."""
    import uuid

    from jupyter_client.manager import AsyncKernelManager, KernelManager
    from jupyter_core.paths import jupyter_runtime_dir
    from traitlets import default

    class IPCKernelManager(AsyncKernelManager if asynchronous else KernelManager):
        @default("transport")
        def _transport_default(self):
            return "ipc"

        @default("ip")
        def _ip_default(self):   # one prefix per kernel: its socket files are <prefix>-<port>
            Path(jupyter_runtime_dir()).mkdir(parents=True, exist_ok=True, mode=0o700)
            return str(Path(jupyter_runtime_dir()) / f"gillab-{os.getpid()}-{uuid.uuid4().hex[:8]}")

    IPCKernelManager.__qualname__ = IPCKernelManager.__name__ = ("Async" if asynchronous else "") + "IPCKernelManager"
    return IPCKernelManager


# A worker of execute_all keeps one kernel for the notebooks it is given: starting a kernel and
# importing the plotting stack cost about 3 s a notebook, more than most chapters' own cells.
# Between notebooks the kernel's namespace is emptied (%reset) and every figure closed; modules
# stay imported.  Parameters are injected by papermill, as for a single notebook.
_WORKER: dict = {}


def _shared_kernel():
    km = _WORKER.get("km")
    if km is None or not km.is_alive():
        km = ipc_kernel_manager(asynchronous=False)(kernel_name="python3")
        km.start_kernel(cwd=str(notebooks_dir()))
        _WORKER["km"] = km
    return km


def _stop_shared_kernel() -> None:
    km = _WORKER.pop("km", None)
    if km is not None:
        km.shutdown_kernel(now=True)


def _execute_in_shared_kernel(job: tuple) -> tuple[str, float]:
    import atexit

    import nbformat
    from nbclient import NotebookClient
    from papermill.parameterize import parameterize_notebook

    name, profile, overrides, output_dir, key = job
    t0 = time.monotonic()
    src = notebooks_dir() / notebook_files()[name]
    out = Path(output_dir) / executed_name(name)
    params = {"profile": profile, "measure": False, "live": False, **(overrides or {})}
    print(f"[gillab] {src.name} -> {out} {json.dumps(params)}", file=sys.stderr, flush=True)
    nb = parameterize_notebook(notebooks.for_papermill(src), params, report_mode=False)
    os.environ["GILLAB_FIGURES"] = str(figures_dir(Path(output_dir)))   # before the worker's kernel starts
    km = _shared_kernel()
    atexit.register(_stop_shared_kernel)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        kc.execute_interactive("get_ipython().run_line_magic('reset', '-f')\n"
                               "import matplotlib.pyplot as _plt; _plt.close('all'); del _plt", timeout=60)
    finally:
        kc.stop_channels()
    NotebookClient(nb, km=km, timeout=1200, kernel_name="python3",
                   resources={"metadata": {"path": str(notebooks_dir())}}).execute()
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    seconds = time.monotonic() - t0
    _finish(out, key, seconds)
    print(f"[gillab] {src.name} done in {seconds:.0f} s", file=sys.stderr, flush=True)
    return name, seconds


def _expected_cost(name: str, executed: Path) -> float:
    """How long ``name``'s notebook is likely to take: its last run's seconds (papermill records
    each cell's), else the bytes of samples it will read (a clean clone), so that the longest
    start first and the pool ends together."""
    try:
        nb = json.loads(executed.read_text())
        if nb["metadata"].get("gillab", {}).get("seconds"):
            return float(nb["metadata"]["gillab"]["seconds"])
        return sum(c.get("metadata", {}).get("papermill", {}).get("duration") or 0 for c in nb["cells"])
    except (OSError, ValueError, KeyError):
        pass
    res = results_dir()
    sizes = [f.stat().st_size for f in res.glob(f"*/{name}/samples.csv")] if res.is_dir() else []
    return 1 + sum(sizes) / 1e5


def execute_all(profile: str = "default", overrides: dict | None = None, output_dir: Path | None = None,
                names: list[str] | None = None, force: bool = False, jobs: int | None = None) -> dict[str, str]:
    """Execute every chapter notebook (``measure=False``) whose inputs changed since it was last
    executed, ``jobs`` at a time (default: the number of cores).  Returns name -> "reused" or
    "executed"."""
    out_dir = Path(output_dir or generated_dir())
    files = notebook_files()
    todo, status = [], {}
    for name in names or list(files):
        params = {"profile": profile, "measure": False, "live": False, **(overrides or {})}
        key = cache_key(name, params)
        if not force and executed_key(out_dir / executed_name(name)) == key:
            status[name] = "reused"
            continue
        todo.append((name, profile, overrides, out_dir, key))
    failed = {}
    todo.sort(key=lambda job: -_expected_cost(job[0], out_dir / executed_name(job[0])))   # longest first
    if todo:
        workers = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            futures = {pool.submit(_execute_in_shared_kernel, job): job[0] for job in todo}
            for fut in as_completed(futures):
                try:
                    fut.result()
                    status[futures[fut]] = "executed"
                except Exception as exc:   # the others go on; all failures are reported together
                    failed[futures[fut]] = exc
    print(f"[gillab] notebooks: {sum(v == 'executed' for v in status.values())} executed, "
          f"{sum(v == 'reused' for v in status.values())} reused (inputs unchanged)"
          + (f", {len(failed)} failed" if failed else ""), file=sys.stderr, flush=True)
    if failed:
        raise NotebookFailed(failed)
    return status


class NotebookFailed(RuntimeError):
    def __init__(self, failed: dict):
        self.failed = failed
        super().__init__("notebook(s) failed: " + "; ".join(
            f"{name}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__}"
            for name, exc in failed.items()))


def toc_text() -> str:
    """``_toc.yml``, from the registry: the method chapter, one part per document with its
    chapters in order, the appendix: verdicts, machines, what changed between references (the
    tests check the committed file is this)."""
    lines = ["# Table of contents, generated from gillab.measure.experiments.NAMES by `gillab book` (do not edit).",
             "# Experiment chapters are the papermill outputs in book/generated/.",
             "format: jb-book", "root: book/intro", "parts:",
             "  - caption: The report", "    chapters:", "      - file: book/method"]
    part = None
    for name in experiments.names():
        exp = experiments.get(name)
        doc = exp.document[:3]
        if doc != part:
            lines += [f"  - caption: \"{experiments.DOCUMENTS[doc]}\"", "    chapters:"]
            part = doc
        lines.append(f"      - file: book/generated/{Path(exp.notebook).stem}")
    lines += ["  - caption: Appendix", "    chapters:"]
    lines += [f"      - file: book/generated/{Path(f).stem}" for f in APPENDIX.values()]
    lines.append("      - file: book/changes")
    return "\n".join(lines) + "\n"


def stage(dest: Path) -> Path:
    """Copy the book's sources (config, TOC, prose, widget JS) to ``dest``, so that a book can
    be built elsewhere than the checkout (the tests do, leaving the working tree alone)."""
    dest = Path(dest)
    root = repo_root()
    shutil.copy2(root / "_config.yml", dest / "_config.yml")
    (dest / "_toc.yml").write_text(toc_text())
    (dest / "book").mkdir(parents=True, exist_ok=True)
    for md in (root / "book").glob("*.md"):
        shutil.copy2(md, dest / "book" / md.name)
    install_widgets_js()
    shutil.copytree(root / "book" / "_widgets", dest / "book" / "_widgets", dirs_exist_ok=True)
    return dest


def verdict_counts(yours: list[dict], ref: list[dict]) -> str:
    """The landing page's counts: per document, how many claims x builds have each outcome, from
    the reader's campaign where there is one, else the reference (computed when the book builds
    from :func:`gillab.judge.report.campaign_verdicts`)."""
    from ..judge import report
    from . import landing as land

    return report.counts_markdown(land.mixed_rows(yours, ref) if yours else report.flat(ref))


def conditions_table() -> str:
    """The builds of builds.toml, one line each (its id, its GIL twin, what it stands for), for the
    landing page: generated, so it names every build the report measures."""
    from ..measure import provision

    lines = ["| id | what it is |", "|---|---|"]
    for spec in (s for s in provision.all_specs() if not s.trace_of):
        twin = (f"; `{spec.gil_twin[0]}`: the same binary with `{spec.gil_twin[1]}={spec.gil_twin[2]}`, its GIL back on"
                if spec.gil_twin else "")
        lines.append(f"| `{spec.build_id}` | {spec.doc}{twin} |")
    return "\n".join(lines) + "\n"


def landing(gen: Path, yours: list[dict], ref: list[dict], profile: str = "default", campaign: str | None = None) -> str:
    """The first screen (:mod:`gillab.present.landing`): whose run it shows (the reader's machine
    beside the reference's, what was measured and what borrowed), then the figure (written as
    ``landing.png`` into ``gen``, with its alt text) and the findings, each linking to its chapter,
    from the reader's campaign where there is one beside the reference (their verdict rows:
    :func:`gillab.judge.report.campaign_verdicts`); ``campaign``: the one asked for, if any."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from . import landing as land, plots
    from ..judge import report
    from ..measure import campaigns

    plots.setup()
    mine = land.reader_campaign(campaign or (yours[0]["campaign"] if yours else None))
    rid = campaigns.reference_id()
    refc = campaigns.load(rid) if rid else None
    head = land.run_markdown(mine, refc, experiments.names())
    panels, titles = {}, {}
    for label, rows in (("yours", yours), ("reference", ref)):
        if rows:
            panels[label] = report.flat(rows)
            titles[label] = (f"your run {rows[0]['campaign']}: the chapters it measured" if label == "yours"
                             else f"the reference campaign {rows[0]['campaign']}")
    if not panels:
        return head + "\n*No campaign holds any samples yet: `make reproduce` measures them.*\n"
    shown = panels.get("yours", panels.get("reference"))
    fig = land.figure(panels, titles)
    fig.savefig(gen / "landing.png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    sh = land.share(shown)
    alt = land.alt_text(shown).replace('"', "'")
    found = land.findings(shown["campaign"].iloc[0], profile)
    chapter = {n: "generated/" + Path(experiments.get(n).notebook).stem for n in experiments.names()}
    whose = "your run" if "yours" in panels else "the reference campaign"
    return "\n".join([
        head,
        "```{figure} generated/landing.png",
        f":alt: {alt}",
        ":width: 100%",
        "",
        f"The documents' claims about a mechanism, each judged on the builds it speaks of, by document and build "
        f"family: one count per claim and build. Of {whose}'s {sh['held'] + sh['failed']} with a definite outcome "
        f"{sh['held']} hold and {sh['failed']} do not; {sh['open']} cannot be judged here (an interval that straddles "
        "the document's band, or too few runs for one). Every one is on the [verdicts](generated/99_verdicts) page."
        + (" Top: your run, the chapters it measured (a document it did not measure has no bar there); bottom: the "
           "reference campaign, every chapter." if len(panels) == 2 else ""),
        "```",
        "",
        *([land.beside_reference_sentence(panels["yours"], panels["reference"]), ""] if len(panels) == 2 else []),
        land.findings_markdown(found, chapter.get, shown["campaign"].iloc[0]),
        "",
    ]) + "\n"


def measuring_times(profile: str = "default") -> str:
    """How long the reference campaign's ``profile`` runs took, per document and chapter, from
    the start and end its run files record (for the method chapter; computed when the book
    builds, never typed).  Only runs that hold samples in the store count."""
    from ..measure import campaigns

    ref = campaigns.reference_id()
    if ref is None:
        return "*No reference campaign in `data/results/`.*\n"
    camp = campaigns.load(ref)
    per_doc, rows = {}, []
    for name in experiments.names():
        if not camp.has(name):
            continue
        secs, n = 0.0, 0
        for run in campaigns.runs_that_stored(camp.store(name)):
            took = campaigns.run_seconds(run)
            if run.get("profile") != profile or took is None:
                continue
            secs += took
            n += 1
        if not n:
            continue
        doc = experiments.get(name).document[:3]
        per_doc[doc] = per_doc.get(doc, 0.0) + secs
        rows.append(f"| `{name}` | {doc} | {n} | {secs / 60:.1f} |")
    total = sum(per_doc.values())
    head = (f"The committed reference campaign (`{ref}`) took **{total / 60:.0f} minutes** of measuring in "
            f"the `{profile}` profile, as its run files record: {_per_document(per_doc)}.\n\n")
    table = "| chapter | document | runs | minutes |\n|---|---|---|---|\n" + "\n".join(rows) + "\n"
    return head + table + "\n" + reproduce_times(profile)


def chapter_times(profile: str = "seed", campaign: str | None = None) -> dict:
    """The record of how long ``profile``'s samples took to measure in ``campaign`` (default: the
    reference), chapter by chapter, from its run files: every run that stored samples of the
    profile's configuration (a profile measured in several sittings, or whose samples `default`
    and `verdicts` runs measured, has several), with its time, samples and load average, and how
    much of the profile's sweep the campaign holds (``gillab timing`` writes it to
    ``data/timing/``; the method chapter shows it)."""
    from ..measure import campaigns, metadata, sweep

    cid = campaign or campaigns.reference_id()
    if cid is None:
        raise campaigns.NoCampaign("no reference campaign to read")
    camp = campaigns.load(cid)
    out = {"kind": "chapter times", "profile": profile, "campaign": cid, "written": metadata.now(),
           "git": metadata.git_commit(), "experiments": []}
    for name in experiments.names():
        cov = sweep.coverage(name, profile, cid)
        runs = [{k: run.get(k) for k in ("run_id", "profile", "started", "finished", "status", "measured",
                                         "skipped_already_measured", "failed", "loadavg_start", "loadavg_end",
                                         "cpu_steal_share")} | {"seconds": campaigns.run_seconds(run)}
                for run in (campaigns.runs_that_stored(camp.store(name), cov["config_id"]) if camp.has(name) else [])]
        p = cov["params"]
        out["experiments"].append({
            "experiment": name, "config_id": cov["config_id"], "planned": cov["planned"], "stored": cov["stored"],
            "to_measure": cov["to_measure"], "missing_conditions": cov["missing_conditions"],
            "seconds": round(sum(r["seconds"] or 0.0 for r in runs), 1), "runs": runs,
            "params": {k: p[k] for k in NOT_CONFIG if k in p}})
    return out


def write_chapter_times(profile: str = "seed", campaign: str | None = None) -> Path:
    """:func:`chapter_times` as ``data/timing/<profile>-chapters.json`` (one file per profile,
    rewritten as sittings add to the campaign)."""
    rec = chapter_times(profile, campaign)
    path = timing_dir() / f"{profile}-chapters.json"
    path.write_text(json.dumps(rec, indent=1, default=str) + "\n")
    return path


def chapter_times_record(profile: str = "seed") -> dict | None:
    """The committed :func:`chapter_times` record of ``profile`` (None without one)."""
    path = timing_dir() / f"{profile}-chapters.json"
    return json.loads(path.read_text()) if path.is_file() else None


def asks_as_recorded(entry: dict, profile: str) -> bool:
    """Whether ``profile`` still asks for what the record's ``entry`` (one chapter of
    :func:`chapter_times_record`) measured: the same configuration and the same runs, grids and
    builds.  Where the profile now asks for more (a grid that a new claim reads), the chapter the
    record calls complete is not complete any more."""
    exp = experiments.get(entry["experiment"])
    now = exp.resolve(profile)
    asked = json.loads(json.dumps({k: now.get(k) for k in entry.get("params", {})}, default=str))
    return exp.config_id(now) == entry.get("config_id") and asked == entry.get("params")


def profile_minutes(profile: str = "seed") -> str:
    """Per chapter, the minutes ``default`` took (the newest whole run) beside those of
    ``profile``'s samples in the reference campaign (all its sittings), with how much of the
    profile's sweep the campaign holds: what measuring the documents' own sizes costs on 2 cores
    (for the method chapter; from the committed records in ``data/timing/``)."""
    rec = chapter_times_record(profile)
    if rec is None:
        return f"*No record of the `{profile}` profile's chapter times in `data/timing/` (`gillab timing -P {profile}`).*\n"
    default = (timing_records("default") or [None])[-1]
    dmin = _minutes_of(default)          # a chapter's planned runs and its later rounds, summed
    rows = [f"| chapter | minutes in `default` | minutes in `{profile}` | `{profile}` runs (profiles) "
            "| samples stored of those asked |", "|---|---|---|---|---|"]
    total, whole = 0.0, 0
    for e in rec["experiments"]:
        total += e["seconds"]
        asks = asks_as_recorded(e, profile)
        whole += e["to_measure"] == 0 and asks
        profiles = sorted({r["profile"] for r in e["runs"]})
        held = f"{e['stored']:,} of {e['planned']:,}" + ("" if e["to_measure"] == 0 else " (**not complete**)")
        if not asks:
            held += " (**the profile now asks for more**: measure it again with `-P " + profile + "`)"
        d = dmin.get(e["experiment"])
        rows.append(f"| `{e['experiment']}` | {'-' if d is None else f'{d:.1f}'} | {e['seconds'] / 60:.1f} "
                    f"| {len(e['runs'])} ({', '.join(profiles) or '-'}) | {held} |")
    n = len(rec["experiments"])
    return (f"The `{profile}` profile in the reference campaign `{rec['campaign']}`: **{total / 60:.0f} minutes** of "
            f"measuring over its sittings, as its run files record (`data/timing/{profile}-chapters.json`, written "
            f"{rec['written'][:10]}); {whole} of {n} chapters hold every sample the profile asks for today. A chapter "
            f"whose `{profile}` configuration is `default`'s (the same sizes) shares its samples, so its runs are "
            "`default`'s and `verdicts`'s. The minutes in `default` are the newest whole run's"
            + (f" (`{default['campaign']}`, every round of a chapter counted)" if default else "") + ".\n\n"
            + "\n".join(rows) + "\n")


def _by_chapter(judged):
    """(chapter, its judged rows) in the report's order, for the chapters that have any."""
    for name in experiments.names():
        g = judged[judged["experiment"] == name]
        if not g.empty:
            yield name, g


def straddling(flat, where: str = "") -> str:
    """Per chapter, the judged rows inconclusive with enough runs (their interval straddles an edge
    of the band), and how many more runs each would need at its current spread
    (:func:`gillab.judge.budget.runs_to_decide`):
    within the 20 a point may get, and the median of those, or not within them."""
    import statistics as st

    from ..judge import report
    from ..judge.budget import runs_to_decide
    from .. import stats

    open_ = report.straddling(report.judged(flat))
    open_ = open_[open_["estimand"].isin([*stats.ORDER, stats.RATIO])]
    if open_.empty:
        return ""
    rows = ["| chapter | straddling their band | decided within 20 at their spread (median more runs, pairs or "
            "trials) | not within 20 |", "|---|---|---|---|"]
    for name, g in _by_chapter(open_):
        more = [runs_to_decide(r) for _, r in g.iterrows()]
        within = [k for k in more if k is not None]
        rows.append(f"| `{name}` | {len(g)} | {len(within)}" + (f" ({st.median(within):g})" if within else "")
                    + f" | {len(more) - len(within)} |")
    return (f"Rows left inconclusive{where} with enough runs (their interval straddles an edge of the band), and how "
            "many more runs each would need at its current spread to lie wholly inside or outside the band (the "
            "interval's ranks read as a normal distribution's quantiles: a projection to plan runs with, not an "
            "interval; beyond 20 runs a point gets no more rounds, and a row is decided only by a narrower "
            "spread):\n\n" + "\n".join(rows) + "\n")


def _width_over_band(g) -> str:
    """The median width of the *about* rows' intervals over their band's (under 1: an interval can
    lie inside the band), with how many rows, or '-'."""
    import numpy as np

    about = g[g["band"].notna() & (g["band"] > 0) & g["ci_low"].notna() & g["published"].notna()]
    w = (about["ci_high"] - about["ci_low"]) / (2 * about["band"] * about["published"].abs())
    w = w[np.isfinite(w)]
    return f"{w.median():.2f} ({len(w)})" if len(w) else "-"


def _minutes_of(rec: dict | None) -> dict[str, float]:
    """Per chapter, the minutes a whole run's record says it spent: its planned run and its later
    rounds, summed."""
    out: dict[str, float] = {}
    for e in (rec or {}).get("experiments", []):
        out[e["experiment"]] = out.get(e["experiment"], 0.0) + e["seconds"] / 60
    return out


def _chapter_minutes(profile: str, campaign: str | None = None) -> dict[str, float]:
    """Per chapter, the minutes the newest whole ``profile`` run (``data/timing/``; into
    ``campaign``, if given) spent on it."""
    return _minutes_of(([r for r in timing_records(profile) if campaign is None or r.get("campaign") == campaign]
                        or [None])[-1])


def _decided_table(judged, minutes: dict[str, float], few=None, total: float | None = None) -> list[str]:
    """Per chapter: judged claims x builds, decided, (with ``few``, a mask of the rows, those
    inconclusive for too few runs), the runs they rest on, their intervals' width over the band's,
    the minutes spent and the rows decided per minute; the last line sums them (``total``: the
    minutes to divide by, else those of the chapters in the table)."""
    import math

    import pandas as pd

    from ..judge.across import DEFINITE

    head = ["chapter", "judged claims x builds", "decided", *(["inconclusive, too few runs"] if few is not None else []),
            "runs (median)", "interval / band, *about* rows (median, rows)", "minutes", "decided per minute"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    spent = 0.0
    for name, g in _by_chapter(judged):
        m = minutes.get(name, math.nan)
        d = int(g["outcome"].isin(DEFINITE).sum())
        n = pd.to_numeric(g["n"], errors="coerce").median()
        rows.append(f"| `{name}` | {len(g)} | {d} |" + (f" {int(few[g.index].sum())} |" if few is not None else "")
                    + f" {'-' if math.isnan(n) else f'{n:.0f}'} | {_width_over_band(g)} "
                    f"| {'-' if math.isnan(m) else f'{m:.1f}'} | {'-' if not m or math.isnan(m) else f'{d / m:.2f}'} |")
        spent += 0.0 if math.isnan(m) else m
    total = spent if total is None else total
    decided = int(judged["outcome"].isin(DEFINITE).sum())
    rows.append(f"| all | {len(judged)} | {decided} |" + (f" {int(few.sum())} |" if few is not None else "")
                + f" | {_width_over_band(judged)} | {total:.1f} | {decided / total if total else math.nan:.2f} |")
    return rows


def planned_run(flat=None, ref_flat=None, record: dict | None = None) -> str:
    """What the newest committed whole `default` run decided on its own samples (a record written by a
    planned run: it holds its forecast), chapter by chapter: judged claims x builds, decided, and
    inconclusive for too few runs, with the minutes it spent; and the rows it left to `verdicts`,
    named, with the minutes `verdicts` adds for their chapters (forecast on the reference's
    times).  ``flat``: that campaign's verdict rows, where the caller has them."""
    import math

    from ..judge import budget, report
    from ..measure import campaigns
    from .. import stats
    from ..judge.across import DEFINITE

    recs = [r for r in timing_records("default") if "forecast" in r]
    if record is not None and "forecast" in record and record.get("profile") == "default":
        recs = [record]                       # the reader's own run, from its campaign's folder
    if not recs:
        return ""
    rec = recs[-1]
    where = (f"data/results/{rec['campaign']}/{rec['file']}" if rec is record else f"data/timing/{rec['file']}")
    which = "Your run" if rec is record else "The newest whole `default` run"
    try:
        campaigns.load(rec["campaign"])
    except campaigns.NoCampaign:
        return ""
    if flat is None:
        flat = report.flat(report.verdicts(rec["campaign"], profile="default"))
    judged = report.judged(flat)
    minutes = _minutes_of(rec)
    few = judged["why"].map(stats.too_few_runs)
    rows = _decided_table(judged, minutes, few, total=sum(minutes.values()))
    decided = int(judged["outcome"].isin(DEFINITE).sum())
    left = judged[few | (judged["outcome"] == "not measured")]
    ref_flat = report.reference_flat(ref_flat)
    ref_j = report.judged(ref_flat) if ref_flat is not None else None
    every = len(ref_j) if ref_j is not None else len(judged)
    skipped = {**rec.get("left_out", {}), **rec.get("not_reached", {})}
    late = [n for n in rec.get("not_reached", {}) if n not in rec.get("left_out", {})]
    lines = [f"{which} (`{where}`, campaign `{rec['campaign']}`, "
             f"{rec['started'][:10]}) measured for **{rec['seconds'] / 60:.1f} minutes** of its "
             f"{rec.get('budget_minutes') or BUDGET_MINUTES:g}-minute budget (its chapters' sweeps "
             f"{sum(minutes.values()):.1f} of them, the rest the pace probe and the plan) and decided **{decided} of the "
             f"{len(judged)}** judged claims x builds of the chapters it measured on its own samples "
             f"({decided / max(len(judged), 1):.0%}); the report judges {every} on the reference "
             f"({decided / max(every, 1):.0%} of them decided by this run).", "", *rows, ""]
    if skipped:
        count = {n: (int((ref_j["experiment"] == n).sum()) if ref_j is not None else len(v)) for n, v in skipped.items()}
        lines += [f"Not measured in this run's budget ({sum(count.values())} judged rows on the reference; their "
                  f"chapters did not fit at the machine's pace, {rec.get('choice') or budget.CHOSEN_BEFORE}"
                  + (f"; {', '.join(f'`{n}`' for n in late)} fitted the forecast but not the minutes left at the "
                     "pace the run kept" if late else "") + "): "
                  + "; ".join(f"`{n}` ({k} rows)" for n, k in count.items())
                  + ". A faster machine, `--minutes`, or `PROFILE=verdicts make reproduce` measures them.", ""]
    open_ = straddling(flat, " by this run")
    if open_:
        lines += [open_, ""]
    if len(left):
        extra = {}
        for name in sorted(set(left["experiment"])):
            try:
                v = budget.forecast_chapter(name, "verdicts", None, [], new_campaign=True).seconds
                d = budget.forecast_chapter(name, "default", None, [], new_campaign=True).seconds
                extra[name] = max(0.0, v - d) / 60
            except Exception:   # noqa: BLE001 - a forecast that cannot be made is shown as unknown
                extra[name] = math.nan
        named = "; ".join(
            f"`{name}` ({'?' if math.isnan(extra[name]) else f'{extra[name]:.1f}'} more minutes in `verdicts`): "
            + ", ".join(f"`{r.claim_id}` @ {r.condition}" for r in g.itertuples())
            for name, g in left.groupby("experiment", sort=False))
        lines += [f"Left to `verdicts` by the plan ({len(left)} rows, {len(left) / max(len(judged), 1):.0%} of the judged "
                  f"ones; `b2_download/history/*` are the `history` profile's): {named}.", ""]
    return "\n".join(lines)


def runs_by_design(flat=None) -> str:
    """Per chapter: the estimands of its judged claims (from the reference campaign's verdict
    rows) and the runs a 95% interval of each needs (a best of 3: trials of 3 runs), the repeats
    `default` and `verdicts` give, and the minutes each profile's whole run in the reference
    campaign spent on it: what judging them costs (for the method chapter; computed when the book
    builds; ``flat``: the reference's verdict rows, where the caller has them)."""
    import math

    from ..judge import claims, report
    from ..measure import campaigns
    from .. import stats

    flat = report.reference_flat(flat)
    if flat is None:
        return ""
    judged = report.judged(flat)
    judged = judged[judged["estimand"] != ""]
    # both profiles' minutes from the reference's own runs (the newest whole run of one profile may
    # be another machine's, at another pace)
    minutes = {p: _chapter_minutes(p, campaigns.reference_id()) for p in ("default", "verdicts")}
    rows = ["| chapter | judged claims x builds | what their intervals need | `default` gives | `verdicts` gives "
            "| minutes in `default` | minutes `verdicts` added |", "|---|---|---|---|---|---|---|"]
    for name, g in _by_chapter(judged):
        needs = []
        for (estimand, cid), _ in g.groupby(["estimand", "claim_id"]):
            need = stats.runs_needed(estimand)
            size = claims.trial_size(cid) if cid in claims.table().index else 1
            words = ("no interval (no runs are enough)" if need is None else
                     f"{need * size} runs ({need} trials of {size})" if size > 1 else
                     f"{need} runs{' a side' if estimand == stats.RATIO else ''}")
            needs.append(f"{estimand}: {words}")
        exp = experiments.get(name)
        d, v = exp.resolve("default"), exp.resolve("verdicts")
        gives = f"{d['repeats']}" + (f" to {d['max_repeats']}" if d["max_repeats"] else "")

        def mins(p):
            m = minutes[p].get(name)
            return "-" if m is None or (isinstance(m, float) and math.isnan(m)) else f"{m:.1f}"
        rows.append(f"| `{name}` | {len(g)} | {'; '.join(dict.fromkeys(needs))} | {gives} | {v['repeats']} "
                    f"| {mins('default')} | {mins('verdicts')} |")
    return ("What the judged claims need for a 95% interval, and what each profile gives them: per chapter, the "
            "intervals its judged claims rest on (on the reference campaign) and the runs each needs, "
            "the repeats of each profile, and the minutes the reference campaign's whole run of each spent on the "
            "chapter (`data/timing/`; `verdicts` runs into default's campaign and adds the rest).\n\n"
            + "\n".join(rows) + "\n")


def efficiency(flat=None) -> str:
    """Per chapter, on the reference campaign's `default` configuration (its `verdicts` runs
    included): the judged claims x builds, how many a definite outcome decides, the runs they rest
    on, how wide their intervals are against the band (the *about* rows: an interval can lie inside
    its band only under 1), the minutes the newest whole `default` and `verdicts` runs spent on the
    chapter, and the rows decided per measuring minute: what a plan of runs is measured against
    (for the method chapter; computed when the book builds; ``flat``: the reference's verdict rows,
    where the caller has them)."""
    from ..measure import campaigns
    from ..judge import report

    flat = report.reference_flat(flat)
    if flat is None:
        return ""
    minutes: dict[str, float] = {}
    for p in ("default", "verdicts"):
        for name, m in _chapter_minutes(p, campaigns.reference_id()).items():
            minutes[name] = minutes.get(name, 0.0) + m
    rows = _decided_table(report.judged(flat), minutes)
    return ("How much each measuring minute decides, on the reference campaign (measured before `default` was "
            "planned around the judged rows: every point 3 runs, then `verdicts` 7 or 8): per chapter, the claims x "
            "builds judged on the builds they speak of, how many have a definite outcome (agrees, higher or lower), "
            "the runs their intervals rest on, their intervals' width over the band's (*about* rows), and the "
            "minutes the reference's whole `default` and `verdicts` runs spent on the chapter (`data/timing/`).\n\n"
            + "\n".join(rows) + "\n")


def _per_document(seconds: dict) -> str:
    """'document 000: 11.1, document 001: 2.1 minutes' from document -> seconds."""
    return ", ".join(f"document {d}: {v / 60:.1f}" for d, v in sorted(seconds.items())) + " minutes"


def timing_dir() -> Path:
    """Committed records of whole ``gillab reproduce`` runs (copied unchanged from the campaign
    that wrote them), whatever ``$GILLAB_DATA`` says."""
    return repo_root() / "data" / "timing"


def timing_records(profile: str = "default") -> list[dict]:
    """The committed reproduce records of ``profile`` that ran to their end, oldest first: every
    chapter measured (some samples may have failed: each chapter's count is in the record), or, for
    a run against a budget, stopped by its clock (the chapters it left out or did not reach in
    time are named in it); not a run interrupted or still running."""
    out = []
    for f in timing_dir().glob("*.json"):
        rec = json.loads(f.read_text())
        done = rec.get("status") in ("complete", "complete with failures") or (
            rec.get("status") == "stopped on time" and rec.get("budget_minutes"))
        if rec.get("profile") == profile and done:
            out.append(rec | {"file": f.name})
    return sorted(out, key=lambda r: r["started"])


def profile_drift(record: dict) -> list[str]:
    """What in today's profile differs from the one ``record`` measured: per experiment, its
    configuration or a parameter that says how much to measure (repeats, grids, builds)."""
    out = []
    # a chapter's planned run (its later rounds only add repeats where intervals straddled a band)
    seen = {e["experiment"]: e for e in record["experiments"] if e.get("phase", "plan") == "plan"}
    for name in experiments.names():
        if name not in seen:
            # left out by the budget, or no longer in time at the run's pace: the plan, not drift
            if name not in record.get("left_out", {}) and name not in record.get("not_reached", {}):
                out.append(f"{name}: not in the record")
            continue
        exp, rec = experiments.get(name), seen[name]
        p = exp.resolve(record["profile"])
        if exp.config_id(p) != rec["config_id"]:
            out.append(f"{name}: configuration {rec['config_id']} then, {exp.config_id(p)} now")
        for k in NOT_CONFIG:
            if k in rec["params"] and json.dumps(rec["params"][k], sort_keys=True) != json.dumps(p.get(k), sort_keys=True):
                out.append(f"{name}: {k} {rec['params'][k]!r} then, {p.get(k)!r} now")
    return out


def reproduce_times(profile: str = "default") -> str:
    """How long the newest committed whole run of ``profile`` took (``gillab reproduce``), per
    document and chapter, with how quiet the machine was and whether today's profile is the one
    it measured."""
    recs = timing_records(profile)
    if not recs:
        return f"*No record of a whole `{profile}` run in `data/timing/`.*\n"
    r = recs[-1]
    per_doc, rows = {}, []
    per_chapter: dict[str, dict] = {}       # a chapter's planned run and its later rounds, summed
    for e in r["experiments"]:
        c = per_chapter.setdefault(e["experiment"], {"measured": 0, "failed": 0, "seconds": 0.0, "rounds": 0})
        c["measured"] += e["measured"]
        c["failed"] += e["failed"]
        c["seconds"] += e["seconds"]
        c["rounds"] += e.get("phase") == "rounds"
    for name, c in per_chapter.items():
        doc = experiments.get(name).document[:3]
        per_doc[doc] = per_doc.get(doc, 0.0) + c["seconds"]
        more = f" (+{c['rounds']} round{'s' if c['rounds'] != 1 else ''})" if c["rounds"] else ""
        rows.append(f"| `{name}`{more} | {doc} | {c['measured']} | {c['failed']} | {c['seconds'] / 60:.1f} |")
    minutes = r["seconds"] / 60
    within = "within" if round(minutes, 1) <= BUDGET_MINUTES else "**over**"   # as printed, to 0.1 minute
    budget = (f"{within} the {BUDGET_MINUTES}-minute budget of the report on 2 cores" if profile == "default" else
              "the long profile, which has no budget")
    resumed = sum(int(e.get("resumed") or 0) for e in r["experiments"])
    failed = sum(int(e.get("failed") or 0) for e in r["experiments"])
    steal = r.get("cpu_steal_share")
    commit = (r.get("git") or {}).get("commit") or "?"
    drift = profile_drift(r)
    from ..judge import report

    grids = report.reference_grids() if profile == "default" else None
    lines = [
        f"A whole `{profile}` run, `gillab reproduce`"
        f"{' from an empty campaign' if profile == 'default' else ''} on {r['started'][:10]} (commit "
        f"`{commit[:10]}`, machine `{r['machine'].get('machine_id')}`"
        + (f" of kind `{r['machine']['fingerprint']}`" if r["machine"].get("fingerprint") else "")
        + f"), measured for **{minutes:.1f} minutes**, "
        f"{budget}: "
        + _per_document(per_doc) + ". "
        f"The 1-minute load average went from {(r.get('loadavg_start') or ['?'])[0]} to "
        f"{(r.get('loadavg_end') or ['?'])[0]}"
        + (f", and the hypervisor took {steal:.0%} of the CPU time" if steal is not None else "") + ". "
        + ("Where a chapter's grid times its builds would not fit, the profile measures the document's own GIL "
           "build and today's at every point and the other builds on a small grid (`full_grid`, `small_grid` in "
           "`profiles.toml`); `-p full_grid=all` measures everything"
           + (", as the reference campaign did." if grids == "all" else
              ". The reference campaign measured the profile's grids, as this run did." if grids == "profile"
              else ".") if profile == "default" else
           f"It ran into a campaign that a `default` run had measured, resuming its {resumed:,} samples: "
           "the minutes are what it added."),
        "",
        *([f"{failed} sample{'s' if failed != 1 else ''} failed (recorded with why, in the chapter's store).", ""]
          if failed else []),
        *([_plan_words(r), ""] if "forecast" in r else []),
        "| chapter | document | samples | failed | minutes |", "|---|---|---|---|---|", *rows, "",
        (f"The profile has changed since this record: {'; '.join(drift)}." if drift else
         f"Today's `{profile}` profile is the one this run measured (`data/timing/{r['file']}`)."),
    ]
    return "\n".join(lines) + "\n"


def _plan_words(r: dict) -> str:
    """What a planned run's record says of its plan: the machine's pace against the times it
    forecast from, the forecast, the chapters left out, and the rounds after the plan."""
    fc = sum(c["seconds"] for c in r["forecast"] if c["experiment"] not in r.get("left_out", {})) / 60
    out = [f"It planned its runs before measuring: {r.get('speed') or 'at the times read'}; forecast "
           f"{fc:.1f} minutes for the chapters it chose"]
    if r.get("left_out"):
        from ..judge.budget import CHOSEN_BEFORE

        out.append(f"left out {', '.join(f'`{n}`' for n in r['left_out'])} ({r.get('choice') or CHOSEN_BEFORE}: "
                   "they did not fit the budget at that pace)")
    if r.get("not_reached"):
        out.append(f"and did not reach {', '.join(f'`{n}`' for n in r['not_reached'])} in time")
    if r.get("rounds"):
        per = {}
        for x in r["rounds"]:
            per[x["experiment"]] = per.get(x["experiment"], 0) + 1
        out.append("then spent what was left on more rounds where judged rows straddled their band ("
                   + ", ".join(f"`{n}` {k}" for n, k in per.items()) + ")")
    return "; ".join(out) + "."


def builds_table() -> str:
    """Every build of builds.toml as a Markdown table, for the method chapter (narrow enough to
    read at 1300 px: the full sha256 and commit are in builds.toml)."""
    from ..measure import provision

    lines = ["| build (built here?) | source, checked by | configure flags |", "|---|---|---|"]
    for spec in provision.all_specs():
        s = spec.src
        if "tarball" in s:
            source = (f"{s['tarball']}<br>sha256 `{s['sha256'][:10]}`<br>commit `{s['commit'][:10]}`"
                      f"<br>{s['repository'].split('://')[-1]}")
        else:
            source = f"Debian {s['debian']} ({s['suite']})<br>sha256 from the `.dsc`"
        rec = provision.read_marker(spec)
        lacks = [m for m, ok in (rec or {}).get("modules", {}).items() if not ok]
        built = (f"built in {rec['build_seconds']:.0f} s" + (f"<br>without {', '.join(lacks)}" if lacks else "")
                 if rec and rec.get("build_seconds") else "not built")
        twin = f"<br>and `{spec.gil_twin[0]}`:<br>{spec.gil_twin[1]}={spec.gil_twin[2]}" if spec.gil_twin else ""
        flags = "<br>".join(f"`{f}`" for f in spec.configure_flags)
        lines.append(f"| `{spec.build_id}`{twin}<br>*{built}* | {source} | {flags} |")
    return "\n".join(lines) + "\n"


def serve_data(root: Path) -> Path:
    """Copy ``data/`` (the campaigns' samples and run files, the published numbers, the timing
    records) to ``book/_extra/files/data``, which the book serves beside the figures' CSVs:
    the links under every figure and table lead there, with no network.  A reader's campaigns
    are local, and so is their copy."""
    from ..paths import data_dir, reference_dir

    dest = root / BOOK_FILES / "data"
    shutil.rmtree(dest.parent, ignore_errors=True)
    shutil.rmtree(root / "book" / "_extra" / "data", ignore_errors=True)   # where an earlier build put it
    dest.mkdir(parents=True)
    for part in ("results", "timing"):
        if (data_dir() / part).is_dir():
            shutil.copytree(data_dir() / part, dest / part, ignore=shutil.ignore_patterns(".lock", ".reserve"))
    shutil.copytree(reference_dir(), dest / "reference")
    return dest


def prune_figures(root: Path) -> list[Path]:
    """Remove the figures' CSVs in ``root``'s ``book/_extra/figures`` that no executed chapter in
    ``book/generated`` links to (a campaign shown by an earlier build, a figure since renamed),
    so that the book serves only the points its pages plot; returns what it removed."""
    figures = root / BOOK_FIGURES
    if not figures.is_dir():
        return []
    linked = "\n".join(p.read_text(errors="replace") for p in (root / "book" / "generated").glob("*.ipynb"))
    gone = []
    for csv in sorted(figures.rglob("*.csv")):
        if f"{BOOK_FIGURES.name}/{csv.relative_to(figures).as_posix()}" not in linked:
            csv.unlink()
            gone.append(csv)
    return gone


def clear_served(root: Path) -> list[Path]:
    """Remove the copies an earlier build made of what the book serves at its root
    (``_build/html/figures``, ``_build/html/files``): Sphinx copies ``html_extra_path`` over the
    output and never deletes, so without this a pruned CSV or a removed campaign stays served."""
    gone = []
    for part in (BOOK_FIGURES, BOOK_FILES):
        built = root / "_build" / "html" / part.name
        if built.is_dir():
            shutil.rmtree(built)
            gone.append(built)
    return gone


def build_book(root: Path | None = None, builder: str = "html", campaign: str | None = None) -> Path:
    """``jupyter-book build`` of the book whose _config.yml is in ``root`` (default: the checkout);
    ``campaign``: the reader's campaign the landing page shows beside the reference."""
    install_widgets_js()
    root = Path(root or repo_root())
    gen = root / "book" / "generated"
    gen.mkdir(parents=True, exist_ok=True)
    (gen / "builds_table.md").write_text(builds_table())
    (gen / "conditions_table.md").write_text(conditions_table())
    from . import trace_view

    (gen / "trace_overhead.md").write_text(trace_view.overhead_markdown() + trace_view.holds_markdown())
    from ..judge import keyguard

    (gen / "code_keys.md").write_text(keyguard.markdown())
    from ..judge import changes

    (gen / "reference_changes.md").write_text(changes.markdown())
    serve_data(root)
    prune_figures(root)
    clear_served(root)
    from ..judge import report

    yours, ref = report.campaign_verdicts(campaign=campaign)
    from . import landing as land

    mine = land.reader_campaign(campaign or (yours[0]["campaign"] if yours else None))
    run_rec = land.run_record(mine) if mine is not None else None    # the method chapter shows the reader's plan
    (gen / "landing.md").write_text(landing(gen, yours, ref, campaign=campaign))
    ref_flat = report.flat(ref) if ref else None          # read once, by the method chapter's tables
    (gen / "verdict_counts.md").write_text(verdict_counts(yours, ref))
    (gen / "measuring_times.md").write_text(measuring_times()
                                            + ("\n" + reproduce_times("verdicts") if timing_records("verdicts") else "")
                                            + "\n" + runs_by_design(ref_flat) + "\n" + efficiency(ref_flat)
                                            + ("\n" + straddling(ref_flat, " on the reference campaign")
                                               if ref_flat is not None else "")
                                            + "\n" + planned_run(ref_flat=ref_flat, record=run_rec)
                                            + "\n" + profile_minutes("seed"))
    if (root / "_toc.yml").read_text() != toc_text():
        (root / "_toc.yml").write_text(toc_text())
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(root), "--builder", builder]
    subprocess.run(cmd, check=True, cwd=root)
    index = root / "_build" / "html" / "index.html"
    print(f"[gillab] the book: {index}\n[gillab] serve it with: python3 -m http.server -d "
          f"{index.parent} --bind 127.0.0.1 8000", flush=True)
    return index


def book(execute_notebooks: bool = True, profile: str = "default", force: bool = False,
         campaign: str | None = None) -> Path:
    """Render the book from data/ without measuring: notebooks run with ``measure=False``, and
    only those whose inputs changed; ``campaign`` is the one the chapters show beside the
    reference (default: the reader's newest on this machine)."""
    if execute_notebooks:
        execute_all(profile, overrides={"campaign": campaign} if campaign else None, force=force)
    return build_book(campaign=campaign)


def precheck(profile: str = "default", campaign: str | None = None, new_campaign: bool = False) -> dict[str, str]:
    """Every check of a whole run before anything is made or measured: the data folder can be
    written, the campaign may be measured into, and each chapter's profile and builds (its
    :func:`gillab.measure.sweep.plan`).  Returns the chapters that cannot start, each with why; raises
    :class:`ParameterError` when none can."""
    from ..measure import campaigns, sweep
    from ..paths import results_dir
    from ..measure.profiles import ParameterError

    sweep.check_writable(results_dir())
    campaigns.for_measuring(campaign, new=new_campaign, create_new=False)   # the reference is refused here
    cannot = {}
    for name in experiments.names():
        try:
            sweep.plan(name, profile, campaign=campaign, new_campaign=new_campaign)
        except ParameterError as exc:
            cannot[name] = str(exc)
    if len(cannot) == len(experiments.names()):
        raise ParameterError("no chapter can be measured: " + "; ".join(f"{k}: {v}" for k, v in cannot.items()))
    return cannot


def budget_minutes(profile: str) -> float | None:
    """The minutes a whole run of ``profile`` may measure: `default` the report's budget,
    `verdicts` its own; the others (smoke, seed, history) are not timed."""
    from ..measure.profiles import VERDICTS_MINUTES

    return {"default": float(BUDGET_MINUTES), "verdicts": float(VERDICTS_MINUTES)}.get(profile)


def reproduce(profile: str = "default", campaign: str | None = None, render: bool = True,
              new_campaign: bool = False, minutes: float | None = None) -> tuple[Path, list[dict]]:
    """Measure every experiment into the reader's campaign (resuming what it holds), through
    the command line's code, then render the book, which shows that campaign beside the reference.

    Every check comes first (:func:`precheck`); the campaign is made only once they pass.  Then,
    for `default` and `verdicts` (or with ``minutes``), the forecast (:mod:`gillab.judge.budget`): what
    each chapter's planned runs take on this machine and which judged rows they decide, printed
    before anything is measured; the chapters that do not fit the minutes are left out, the fewest
    rows the reference decides at the planned runs per minute first
    (:attr:`gillab.judge.budget.ChapterForecast.rank`), and named.  The chosen chapters' planned
    runs come first, then, while time is left, one more round at a time where judged rows still
    straddle an edge of their band; no sample starts after the deadline.  A chapter that fails (it
    cannot start, a build's environment cannot be made, its store cannot be written) is recorded
    with why, and the others are measured all the same; Ctrl-C stops the whole run.  The whole
    measurement is recorded in the campaign as ``reproduce-<started>.json``, saved after each
    chapter (what :func:`reproduce_times` reports once committed to ``data/timing/``): how long the
    report took to measure, chapter by chapter, the forecast, and how quiet the machine was.
    Returns the book's folder (or the record's path with ``render=False``) and the chapters that
    failed, each with its reason."""
    from ..judge import budget
    from ..measure import campaigns, metadata, sweep

    cannot = precheck(profile, campaign, new_campaign)
    minutes = budget_minutes(profile) if minutes is None else minutes
    timed = minutes is not None
    factor, speed = budget.speed_factor() if timed else (1.0, "")
    forecast = (budget.forecast(profile, campaign, new_campaign=new_campaign, factor=factor) if timed else [])
    chosen, left_out = budget.choose(forecast, minutes) if timed else (experiments.names(), [])
    if timed:
        chosen = budget.by_yield(forecast, chosen)
        print(f"[gillab] this machine now: {speed}\n[gillab] the plan, before anything is measured, at that "
              "speed:\n" + budget.describe(forecast, chosen, minutes), file=sys.stderr, flush=True)
    planned = {c.experiment: c for c in forecast}
    camp = campaigns.for_measuring(campaign, new=new_campaign)
    record = {"profile": profile, "campaign": camp.id, "started": metadata.now(), "git": metadata.git_commit(),
              "machine": metadata.machine(), "loadavg_start": metadata.loadavg(),
              "cpu_times_start": metadata.cpu_times(), "status": "running", "experiments": [],
              "budget_minutes": minutes, "speed_factor": round(factor, 3), "speed": speed,
              "forecast": [{"experiment": c.experiment, "samples": c.samples, "seconds": round(c.seconds, 1),
                            "waits": round(c.waits, 1), "judged": len(c.judged), "decided": len(c.decided),
                            "too_few": c.short, "basis": c.basis, "error": c.error}
                           for c in forecast],
              "choice": budget.CHOICE,
              "left_out": {c.experiment: c.judged + c.short for c in left_out}}
    path = camp.dir / f"reproduce-{record['started'].replace(':', '').replace('+0000', 'Z')}.json"
    t0 = time.monotonic()
    deadline = budget.Deadline.after(minutes)
    failures: list[dict] = []

    def save(status: str) -> None:
        end = metadata.cpu_times()
        record.update(status=status, finished=metadata.now(), seconds=round(time.monotonic() - t0, 1),
                      loadavg_end=metadata.loadavg(), cpu_times_end=end, failures=failures,
                      cpu_steal_share=metadata.steal_share(record["cpu_times_start"], end))
        path.write_text(json.dumps(metadata.portable(record), indent=1, default=str) + "\n")

    def run(name: str, overrides: dict | None, phase: str):
        t1 = time.monotonic()
        try:
            res = sweep.measure(name, profile, overrides, campaign=camp.id, deadline=deadline)
        except Exception as exc:   # noqa: BLE001 - this chapter fails; the others are measured
            failures.append({"experiment": name, "error": f"{type(exc).__name__}: {exc}",
                             "seconds": round(time.monotonic() - t1, 1)})
            print(f"[gillab] {name} failed ({type(exc).__name__}: {exc}); going on with the other chapters",
                  file=sys.stderr)
            save("running")
            return None
        record["experiments"].append({
            "experiment": name, "run_id": res.run_id, "status": res.status, "seconds": round(time.monotonic() - t1, 1),
            "measured": res.measured, "resumed": res.skipped, "failed": res.failed,
            "missing_conditions": res.missing_conditions, "config_id": res.config_id, "phase": phase,
            "params": {k: res.params[k] for k in NOT_CONFIG if k in res.params}})
        save("running")
        return res

    spent = forecast_spent = 0.0      # the chosen chapters measured so far: their seconds, and forecast's
    try:
        for name in [n for n in experiments.names() if n in cannot]:
            failures.append({"experiment": name, "error": cannot[name]})
            print(f"[gillab] {name} cannot start ({cannot[name]}); going on with the other chapters", file=sys.stderr)
        for name in [n for n in experiments.names() if n not in cannot and n not in chosen]:
            print(f"[gillab] {name}: left out, its planned runs do not fit the {minutes:g} minutes", file=sys.stderr)
        for name in [n for n in chosen if n not in cannot]:
            # the forecast, corrected by how the chapters so far ran against theirs
            expect = planned[name].seconds * (spent / forecast_spent if forecast_spent > 0 else 1.0) if timed else 0
            if timed and expect > deadline.left():
                record.setdefault("not_reached", {})[name] = planned[name].judged + planned[name].short
                print(f"[gillab] {name}: left out, its planned runs (about {expect / 60:.1f} minutes at the pace so "
                      f"far) no longer fit the {deadline.left() / 60:.1f} minutes left", file=sys.stderr)
                continue
            t1 = time.monotonic()
            res = run(name, None, "plan")
            if timed and res is not None and res.status != sweep.STOPPED_ON_TIME:
                spent += time.monotonic() - t1
                forecast_spent += planned[name].seconds
        if timed and profile in ("default", "verdicts") and deadline.left() > 0:
            more_rounds(camp.id, profile, [n for n in chosen if n not in cannot], deadline, run, record)
    except BaseException as exc:
        save(f"interrupted ({type(exc).__name__})")
        raise
    failed_samples = sum(e["failed"] for e in record["experiments"])
    stopped = any(e["status"] == sweep.STOPPED_ON_TIME and e["phase"] == "plan" for e in record["experiments"])
    save("stopped on time" if stopped or record.get("not_reached") else
         "complete" if not failures and not failed_samples else "complete with failures")
    return (book(profile=profile) if render else path), failures


def more_rounds(campaign: str, profile: str, names: list[str], deadline, run, record: dict) -> None:
    """While time is left: one more round of the chapter whose straddling judged rows more runs
    would most decide per second of a round (:mod:`gillab.judge.budget`), its claims' points only,
    up to the confidence sequence's runs; each round is recorded like a chapter's run."""
    from .. import stats
    from ..judge import budget

    repeats = {n: experiments.get(n).resolve(profile)["repeats"] for n in names}
    open_rows = {}
    for n in names:
        try:
            open_rows[n] = budget.straddling(n, campaign)
        except Exception as exc:   # noqa: BLE001 - a chapter that cannot be read gets no more rounds
            print(f"[gillab] {n}: its verdicts cannot be read ({type(exc).__name__}: {exc}); no more rounds",
                  file=sys.stderr)
    rounds = record.setdefault("rounds", [])
    while deadline.left() > 0:
        best = None
        for n, o in open_rows.items():
            step = budget.round_size(n)
            if not o.rows or not o.sequential or repeats[n] + step > budget.most_repeats(n):
                continue
            more = {"repeats": repeats[n] + step}
            fc = budget.forecast_chapter(n, profile, campaign, [], overrides=more)   # at this run's own times
            if fc.error or not fc.samples or fc.seconds > deadline.left():
                continue
            score = (o.decidable / fc.seconds, o.rows / fc.seconds)
            if best is None or score > best[0]:
                best = (score, n, more, fc)
        if best is None:
            break
        _, n, more, fc = best
        o = open_rows[n]
        print(f"[gillab] {n}: {o.rows} judged row(s) straddle their band ({o.decidable} projected to decide "
              f"within {stats.ADAPTIVE_MAX} runs): one more round (repeats {more['repeats']}, {fc.samples} samples, "
              f"about {fc.seconds:.0f} s)", file=sys.stderr)
        res = run(n, more, "rounds")
        repeats[n] = more["repeats"]
        rounds.append({"experiment": n, "repeats": more["repeats"], "straddling_before": o.rows,
                       "decidable_before": o.decidable})
        if res is None:
            open_rows.pop(n)
            continue
        open_rows[n] = budget.straddling(n, campaign)
