"""The book: render the Jupyter Book from the executed chapters (:mod:`gillab.present.execute`),
with its table of contents and lists of the chapters from the registry
(:mod:`gillab.present.contents`), the first screen (:mod:`gillab.present.landing`), the method
chapter's generated tables (:mod:`gillab.present.timing`), the widgets' JavaScript and the data
files the pages link to.  It never measures.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from ..measure import experiments
from ..paths import BOOK_FIGURES, BOOK_FILES, repo_root
from . import contents
from .execute import execute_all
from .builds_view import builds_table
from .decided import efficiency, planned_run, runs_by_design, straddling
from .sittings import alone_rule, controls_table, probes_figure, spread_figure, steadiness_table
from .timing import measuring_times, profile_minutes, reproduce_times, timing_records

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


def stage(dest: Path) -> Path:
    """Copy the book's sources (config, TOC, prose, widget JS) to ``dest``, so that a book can
    be built elsewhere than the checkout (the tests do, leaving the working tree alone)."""
    dest = Path(dest)
    root = repo_root()
    shutil.copy2(root / "_config.yml", dest / "_config.yml")
    (dest / "book").mkdir(parents=True, exist_ok=True)
    for md in (root / "book").glob("*.md"):
        shutil.copy2(md, dest / "book" / md.name)
    contents.write(dest)                 # the table of contents and the introduction's list
    install_widgets_js()
    shutil.copytree(root / "book" / "_widgets", dest / "book" / "_widgets", dirs_exist_ok=True)
    return dest


def verdict_counts(yours: list[dict], ref: list[dict]) -> str:
    """The landing page's counts: per document, how many claims have each outcome (each claim once,
    on the document's own interpreter), from
    the reader's campaign where there is one, else the reference (computed when the book builds
    from :func:`gillab.judge.verdicts.campaign_verdicts`)."""
    from ..judge import verdicts
    from . import landing as land

    if not yours:
        return verdicts.counts_markdown(verdicts.flat(ref))
    mixed = land.mixed_rows(yours, ref)
    lent = sorted(set(mixed.loc[mixed["source"] == "reference", "experiment"])) if "source" in mixed else []
    head = ("These counts add to your run's the chapters it borrowed from the reference "
            f"({', '.join('`' + n + '`' for n in lent)}), each marked below, so they can be larger than the first "
            "figure's, which counts your run's chapters alone; the verdicts page counts your run's rows alone.\n\n"
            if lent else "")
    return head + verdicts.counts_markdown(mixed)


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


def landing(gen: Path, yours: list[dict], ref: list[dict], profile: str = "default", campaign: str | None = None,
            controls=None) -> str:
    """The first screen (:mod:`gillab.present.landing`): whose run it shows (the reader's machine
    beside the reference's, what was measured and what borrowed), then the figure (written as
    ``landing.png`` into ``gen``, with its alt text) and the findings, each linking to its chapter,
    from the reader's campaign where there is one beside the reference (their verdict rows:
    :func:`gillab.judge.verdicts.campaign_verdicts`); ``campaign``: the one asked for, if any;
    ``controls``: what the reader's run's controls say (:func:`gillab.judge.steadiness.controls_of`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..judge import across, verdicts
    from ..measure import campaigns
    from . import landing as land
    from . import plots

    plots.setup()
    mine = land.reader_campaign(campaign or (yours[0]["campaign"] if yours else None))
    rid = campaigns.reference_id()
    refc = campaigns.load(rid) if rid else None
    head = land.run_markdown(mine, refc, experiments.names(), controls if mine is not None else None)
    panels, titles = {}, {}
    for label, rows in (("yours", yours), ("reference", ref)):
        if rows:
            panels[label] = verdicts.flat(rows)
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
    chapter = {n: "generated/" + Path(experiments.notebook(n)).stem for n in experiments.names()}
    whose = "your run" if "yours" in panels else "the reference campaign"
    rows = verdicts.headline(shown)            # what the verdicts page counts: one row a claim, build and point
    definite = int(rows["outcome"].isin(across.DEFINITE).sum())
    return "\n".join([
        head,
        "```{figure} generated/landing.png",
        f":alt: {alt}",
        ":width: 100%",
        "",
        f"The documents' claims about a mechanism, each judged on the builds it speaks of, by document and build "
        f"family: one count per claim and build, its points combined. Of {whose}'s "
        f"{sh['held'] + sh['failed'] + sh['open']} claims x builds, {sh['held'] + sh['failed']} have a definite "
        f"outcome: {sh['held']} agree and {sh['failed']} are higher or lower; {sh['open']} are inconclusive (an "
        "interval that straddles the document's band, too few runs for one, or a setting not in force). The "
        f"[verdicts](generated/99_verdicts) page counts the same claims one point at a time: {len(rows)} rows, "
        f"{definite} of them definite."
        + (" Top: your run, the chapters it measured (a document it did not measure has no bar there); bottom: the "
           "reference campaign, every chapter." if len(panels) == 2 else ""),
        "```",
        "",
        *([land.beside_reference_sentence(panels["yours"], panels["reference"]), ""] if len(panels) == 2 else []),
        land.findings_markdown(found, chapter.get, shown["campaign"].iloc[0]),
        "",
    ]) + "\n"


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


def measuring_times_md(ref_flat, run_rec) -> str:
    """The method chapter's account of measuring time: the reference's minutes and the reader's
    planned run shown; how the reference's runs were planned and what they decided, and the
    documents' sizes' minutes, each folded under a line that names it."""
    from ..judge import tables

    planning = ((reproduce_times("verdicts") + "\n" if timing_records("verdicts") else "")
                + runs_by_design(ref_flat) + "\n" + efficiency(ref_flat)
                + ("\n" + straddling(ref_flat, " on the reference campaign") if ref_flat is not None else ""))
    seed = profile_minutes("seed")
    return (measuring_times() + "\n" + planned_run(ref_flat=ref_flat, record=run_rec) + "\n"
            + (tables.details_md("The reference's runs: what the judged claims need, what each minute decided, "
                                 "the rows left straddling their band", planning) + "\n" if planning.strip() else "")
            + (tables.details_md("The documents' own sizes (`seed`): minutes per chapter", seed) if seed.strip() else ""))


def build_book(root: Path | None = None, builder: str = "html", campaign: str | None = None) -> Path:
    """``jupyter-book build`` of the book whose _config.yml is in ``root`` (default: the checkout);
    ``campaign``: the reader's campaign the landing page shows beside the reference."""
    install_widgets_js()
    root = Path(root or repo_root())
    gen = root / "book" / "generated"
    gen.mkdir(parents=True, exist_ok=True)
    (gen / "builds_table.md").write_text(builds_table())
    (gen / "alone_rule.md").write_text(alone_rule())
    from . import landing as land_words

    shown = land_words.reader_campaign(campaign)
    (gen / "probes.md").write_text(probes_figure(gen, shown.id if shown else None))
    (gen / "conditions_table.md").write_text(conditions_table())

    (gen / "vocabulary.md").write_text(land_words.vocabulary_markdown())
    from . import trace_view

    (gen / "trace_overhead.md").write_text(trace_view.overhead_markdown() + trace_view.holds_markdown())
    from ..judge import flags

    (gen / "build_effects.md").write_text(flags.markdown(campaign))
    from ..judge import keyguard

    (gen / "code_keys.md").write_text(keyguard.markdown())
    from ..judge import changes

    (gen / "reference_changes.md").write_text(changes.markdown())
    serve_data(root)
    prune_figures(root)
    clear_served(root)
    from ..judge import verdicts

    yours, ref = verdicts.campaign_verdicts(campaign=campaign)
    from . import landing as land

    mine = land.reader_campaign(campaign or (yours[0]["campaign"] if yours else None))
    run_rec = land.run_record(mine) if mine is not None else None    # the method chapter shows the reader's plan
    (gen / "steadiness.md").write_text(steadiness_table(campaign=mine.id if mine is not None else None))
    from ..judge import steadiness

    ref_flat = verdicts.flat(ref) if ref else None          # read once, by the method chapter's tables
    controls = {rows[0]["campaign"]: steadiness.controls_of(flat)      # each campaign's, read once
                for rows, flat in ((ref, ref_flat), (yours, verdicts.flat(yours) if yours else None)) if rows}
    mine_controls = controls.get(yours[0]["campaign"]) if yours else None
    (gen / "landing.md").write_text(landing(gen, yours, ref, campaign=campaign, controls=mine_controls))
    (gen / "controls.md").write_text(controls_table(controls))
    from ..measure import campaigns as known

    shown_runs = {"the reference": known.reference_id()} | ({"your run": mine.id} if mine is not None else {})
    (gen / "spread.md").write_text(spread_figure(gen, {k: v for k, v in shown_runs.items() if v}))
    (gen / "verdict_counts.md").write_text(verdict_counts(yours, ref))
    (gen / "measuring_times.md").write_text(measuring_times_md(ref_flat, run_rec))
    contents.write(root)                 # the table of contents and every list of the chapters
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
