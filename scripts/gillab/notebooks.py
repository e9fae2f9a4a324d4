"""Execute the notebooks with papermill and render the Jupyter Book."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from .notebook import NOTEBOOK_FILES
from .paths import generated_dir, notebooks_dir, repo_root

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
            measure: bool = True, output_dir: Path | None = None, cwd: Path | None = None) -> Path:
    """Run one notebook with papermill; the executed copy is what the book renders."""
    import papermill as pm

    if experiment not in NOTEBOOK_FILES:
        raise ValueError(f"no notebook for {experiment!r}; known: {', '.join(NOTEBOOK_FILES)}")
    src = notebooks_dir() / NOTEBOOK_FILES[experiment]
    out_dir = Path(output_dir or generated_dir())
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / src.name
    params = {"profile": profile, "measure": measure, "live": False, **(overrides or {})}
    t0 = time.monotonic()
    print(f"[gillab] papermill {src.name} -> {out} {json.dumps(params)}", file=sys.stderr, flush=True)
    pm.execute_notebook(str(src), str(out), parameters=params, cwd=str(cwd or notebooks_dir()),
                        kernel_name="python3", progress_bar=False, log_output=False)
    _fold_parameter_cells(out)
    print(f"[gillab] {src.name} done in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    return out


def _fold_parameter_cells(path: Path) -> None:
    """Show the parameter cells (defaults and papermill's injected ones) folded in the book."""
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if {"parameters", "injected-parameters"} & set(tags) and "hide-input" not in tags:
            cell["metadata"]["tags"] = tags + ["hide-input"]
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def stage(dest: Path) -> Path:
    """Copy the book's sources (config, TOC, prose, widget JS) to ``dest``, so that a book can
    be built elsewhere than the checkout (the tests do, leaving the working tree alone)."""
    dest = Path(dest)
    root = repo_root()
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(root / name, dest / name)
    (dest / "book").mkdir(parents=True, exist_ok=True)
    for md in (root / "book").glob("*.md"):
        shutil.copy2(md, dest / "book" / md.name)
    install_widgets_js()
    shutil.copytree(root / "book" / "_widgets", dest / "book" / "_widgets", dirs_exist_ok=True)
    return dest


def builds_table() -> str:
    """Every build of builds.toml as a Markdown table, for the method chapter (narrow enough to
    read at 1300 px: the full sha256 and commit are in builds.toml)."""
    from . import provision

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


def build_book(root: Path | None = None, builder: str = "html") -> Path:
    """``jupyter-book build`` of the book whose _config.yml is in ``root`` (default: the checkout)."""
    install_widgets_js()
    root = Path(root or repo_root())
    gen = root / "book" / "generated"
    gen.mkdir(parents=True, exist_ok=True)
    (gen / "builds_table.md").write_text(builds_table())
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(root), "--builder", builder]
    subprocess.run(cmd, check=True, cwd=root)
    index = root / "_build" / "html" / "index.html"
    print(f"[gillab] the book: {index}\n[gillab] serve it with: python3 -m http.server -d "
          f"{index.parent} --bind 127.0.0.1 8000", flush=True)
    return index


def book(execute_notebooks: bool = True, profile: str = "default") -> Path:
    """Render the book from data/ without measuring: notebooks run with ``measure=False``."""
    if execute_notebooks:
        for name in NOTEBOOK_FILES:
            execute(name, profile, measure=False)
    return build_book()


def reproduce(profile: str = "default", campaign: str | None = None) -> Path:
    """Measure every experiment into the reader's campaign (resuming what it holds), then
    render the book, which shows that campaign beside the reference."""
    for name in NOTEBOOK_FILES:
        execute(name, profile, {"campaign": campaign} if campaign else None, measure=True)
    return build_book()
