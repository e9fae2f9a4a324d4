"""Execute the chapter notebooks with papermill (never measuring), reusing an executed notebook
whose inputs have not changed.

An executed notebook carries, in its metadata, the key of everything it was made from: the
notebook, the package's code, profiles.toml and builds.toml, the published numbers, the stored
samples and run files it can read (the reference campaign's and the reader's), its parameters
and the versions of the libraries that draw it (as jupyter-cache and showyourwork key outputs
on their inputs).  :func:`execute_all` executes only what changed, as many at a time as there are
cores, each worker reusing one kernel (see :func:`_execute_in_shared_kernel`).  The book is
rendered from them by :mod:`gillab.present.book`.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from .. import chapters
from ..measure import experiments
from . import notebooks
from ..paths import BOOK_FIGURES, generated_dir, notebooks_dir, repo_root, results_dir


# not experiments: every verdict of one campaign; every claim on every machine's campaign
APPENDIX = {"verdicts": "99_verdicts.md", "machines": "98_machines.md"}


# A worker of execute_all keeps one kernel for the notebooks it is given: starting a kernel and
# importing the plotting stack cost about 3 s a notebook, more than most chapters' own cells.
# Between notebooks the kernel's namespace is emptied (%reset) and every figure closed; modules
# stay imported.  Parameters are injected by papermill, as for a single notebook.
_WORKER: dict = {}


def notebook_files() -> dict[str, str]:
    """Chapter name -> its text notebook (:mod:`gillab.present.notebooks`), in the book's order (the
    registry's), then the appendix."""
    return {name: experiments.notebook(name) for name in experiments.names()} | APPENDIX


def executed_name(name: str) -> str:
    """The executed notebook of chapter ``name`` in book/generated/ (what the book renders)."""
    return notebooks.ipynb_name(notebook_files()[name])


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
    read = () if name in APPENDIX else (name, *chapters.of(name).reads)
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
