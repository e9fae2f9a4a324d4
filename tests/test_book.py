"""The reader's path: a notebook through papermill, the book built from it, the page in a browser."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gillab.present import book, execute, notebooks
from gillab.measure import campaigns, sweep

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def built_book(builds, tmp_path_factory):
    """Stage the book in a temporary folder, run every notebook there in the smoke profile
    (measuring into a temporary data/), and build it. Nothing lands in the working tree."""
    root = tmp_path_factory.mktemp("book")
    data = tmp_path_factory.mktemp("data")
    old = {k: os.environ.get(k) for k in ("GILLAB_DATA", "GILLAB_MACHINE")}
    os.environ.update(GILLAB_DATA=str(data), GILLAB_MACHINE="test-machine")
    try:
        book.stage(root)
        out = {}
        for name in execute.notebook_files():
            out[name] = execute.execute(name, "smoke", measure=True, output_dir=root / "book" / "generated")
        index = book.build_book(root)
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return {"root": root, "data": data, "index": index, "executed": out}


def outputs(nb_path):
    nb = json.loads(Path(nb_path).read_text())
    return nb, [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]


def test_countdown_notebook_measures_and_keeps_widget_state(built_book):
    nb, outs = outputs(built_book["executed"]["countdown"])
    assert not [o for o in outs if o["output_type"] == "error"]
    html = json.dumps([o.get("data", {}).get("text/html", "") for o in outs])
    assert '<img src=\\"data:image/png;base64,' in html and 'alt=\\"' in html, "the figure is missing"
    # what the figure plots, as a CSV the book serves, linked under it
    csv = built_book["root"] / "book" / "_extra" / "figures" / "countdown" / "figure.csv"
    assert csv.exists() and {"panel", "series", "x", "y", "y_low", "y_high"} <= set(csv.read_text().splitlines()[0].split(","))
    assert len(csv.read_text().splitlines()) > 4 and "../../figures/countdown/figure.csv" in html
    state = nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    kinds = {m["model_name"] for m in state.values()}
    assert {"StackModel", "SelectionSliderModel", "DropdownModel", "ImageModel", "LinkModel"} <= kinds
    (camp,) = [d for d in (built_book["data"] / "results").iterdir() if d.is_dir()]
    samples = camp / "countdown" / "samples.csv"
    assert camp.name.startswith("test-machine-") and samples.exists() and len(samples.read_text().splitlines()) > 1
    text = json.dumps(outs)
    assert "papermill notebooks/01_countdown.ipynb" in text  # the rerun command is printed


def test_verdicts_page_lists_the_countdown_claims(built_book):
    nb, outs = outputs(built_book["executed"]["verdicts"])
    assert not [o for o in outs if o["output_type"] == "error"]
    html = "".join(o.get("data", {}).get("text/html", "") if isinstance(o.get("data", {}).get("text/html", ""), str)
                   else "".join(o["data"]["text/html"]) for o in outs)
    assert "time with 8 threads / time with 1 thread" in html and "3.13.5t" in html


def test_book_pages_exist(built_book):
    html = built_book["index"].parent
    page = html / "book" / "generated" / "01_countdown.html"
    assert page.exists() and (html / "book" / "method.html").exists()
    # the history of references: this book's data folder (measured by the test) has none, and says so
    changes = (html / "book" / "changes.html").read_text()
    assert "What changed between references" in changes and "cannot be read here" in changes
    text = page.read_text()
    assert "application/vnd.jupyter.widget-state+json" in text
    assert "_static/widgets/embed.js" in text
    # nothing is loaded from elsewhere (thebe's URL is a string it would use only if launched)
    assert not re.findall(r'(?:src|href)="https?://', text)
    # no page prints Markdown it could not render: a struck sentence is <del>, never literal tildes
    tildes = [p.relative_to(html).as_posix() for p in html.rglob("*.html") if "~~" in p.read_text()]
    assert not tildes, f"literal ~~ in {tildes}"


def test_papermill_with_an_unknown_parameter_fails_before_measuring(builds, tmp_path):
    env = dict(os.environ, GILLAB_DATA=str(tmp_path / "data"), GILLAB_MACHINE="test-machine")
    notebooks.ipynb_of(REPO / "notebooks" / "01_countdown.md")   # what `gillab notebooks` writes
    out = subprocess.run([str(Path(sys.executable).with_name("papermill")), "notebooks/01_countdown.ipynb",
                          str(tmp_path / "out.ipynb"), "-p", "profile", "smoke", "-p", "thraeds", "[1]"],
                         cwd=REPO, env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert "unknown parameter(s) thraeds" in out.stderr + out.stdout
    assert not (tmp_path / "data").exists()


def test_the_page_in_a_browser(built_book, tmp_path):
    from browser import RequestLog, page_session, serve
    from playwright.sync_api import expect

    html = built_book["index"].parent
    with serve(html) as base, page_session() as page:
        log = RequestLog(page, base)
        page.goto(f"{base}/book/generated/01_countdown.html", wait_until="networkidle")
        explorer = page.locator(".gillab-explorer")
        explorer.wait_for(timeout=20_000)
        # the static figure of the results section, with its alt text, and the files linked under it
        figures = page.locator("img[alt][src^='data:image/png']")
        assert figures.count() >= 1 and figures.first.evaluate("i => i.naturalWidth") > 300
        assert "against" in figures.first.get_attribute("alt")
        for href in ("../../figures/countdown/figure.csv", "samples.csv"):
            link = page.locator(f".gillab-source a[href$='{href}']").first
            got = page.evaluate("u => fetch(u).then(r => r.status)", link.get_attribute("href"))
            assert got == 200, (href, got)
        # the explorer: one figure visible, then a slider move and a dropdown change swap it
        visible = explorer.locator("img:visible")
        assert visible.count() == 1 and visible.evaluate("i => i.naturalWidth") > 300
        before = visible.screenshot()
        first_src = visible.get_attribute("src")
        explorer.locator(".noUi-handle").first.focus()
        page.keyboard.press("ArrowRight")
        # synchronised on the page's own events (the figure swapped, the readout updated), no fixed wait
        expect(explorer.locator("img:visible")).not_to_have_attribute("src", first_src, timeout=20_000)
        expect(explorer.locator(".widget-readout")).to_have_text("2", timeout=20_000)
        visible = explorer.locator("img:visible")
        assert visible.count() == 1 and visible.screenshot() != before
        second_src = visible.get_attribute("src")
        explorer.locator("select").select_option(index=1)
        expect(explorer.locator("select")).to_have_value(re.compile("speedup"), timeout=20_000)
        expect(explorer.locator("img:visible")).not_to_have_attribute("src", second_src, timeout=20_000)
        page.screenshot(path=str(tmp_path / "countdown.png"), full_page=True)
        page.goto(f"{base}/book/generated/99_verdicts.html", wait_until="networkidle")
        assert page.locator("table").count() >= 2
        page.goto(f"{base}/book/intro.html", wait_until="networkidle")
    assert log.external == [], f"requests left 127.0.0.1: {log.external}"
    assert log.failed == [], f"failed requests: {log.failed}"


# the tallest page a person reads at 1280 px wide: what is long and secondary (the rows a chapter
# cannot judge, a table of every cell) is folded under a line that counts it
MAX_PAGE_PX = 30_000
READING_WIDTH = 1280


def test_no_page_is_taller_than_a_reader_scrolls(built_book):
    """Every chapter, the appendix pages, the intro and the method, in one browser at 1280 px
    wide: none taller than MAX_PAGE_PX once loaded."""
    from browser import book_pages, page_heights, page_session, serve

    html = built_book["index"].parent
    pages = book_pages(html)
    chapters = {Path(execute.executed_name(n)).stem for n in execute.notebook_files()}
    assert chapters <= {p.stem for p in pages}, "a chapter's page is missing"
    with serve(html) as base, page_session(width=READING_WIDTH) as page:
        heights = page_heights(page, base, html, pages)
    assert len(heights) == len(pages) and min(heights.values()) > 1000, heights   # every page measured, laid out
    tall = {k: v for k, v in heights.items() if v > MAX_PAGE_PX}
    assert not tall, f"pages taller than {MAX_PAGE_PX:,} px at {READING_WIDTH} px wide: {tall}"


def test_live_explorer_builds_in_a_kernel(tmp_path):
    """With live=True (as in `make live`), the kernel-driven explorer is built from the stored
    data and draws its first figure; here on the committed reference run, measuring nothing."""
    out = tmp_path / "live.ipynb"
    notebooks.ipynb_of(REPO / "notebooks" / "01_countdown.md")
    run = subprocess.run([str(Path(sys.executable).with_name("papermill")), "notebooks/01_countdown.ipynb",
                          str(out), "-p", "measure", "False", "-p", "live", "True"],
                         cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    nb, outs = outputs(out)
    state = nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    kinds = {m["model_name"] for m in state.values()}
    assert {"DropdownModel", "SelectMultipleModel", "TextModel", "ButtonModel", "IntProgressModel",
            "ImageModel"} <= kinds
    images = [m for m in state.values() if m["model_name"] == "ImageModel"]
    assert any(m.get("buffers") for m in images)  # the first figure was drawn


def test_your_campaign_is_shown_beside_the_reference(builds, data_dir, tmp_path):
    """A reader who reran countdown (default configuration; fewer repeats and one build, which
    do not change the configuration) sees the chapter and the verdicts page set their campaign
    beside the committed reference campaign, claim by claim, with both machines."""
    from conftest import copy_reference

    ref = copy_reference(data_dir)
    src = REPO / "data" / "results"
    res = sweep.measure("countdown", "default", {"conditions": "3.13.5", "repeats": 2}, progress=False)
    assert res.campaign != ref and res.measured == 8
    for name in ("countdown", "verdicts"):
        out = execute.execute(name, "default", {"live": False}, measure=False, output_dir=tmp_path)
        nb, outs = outputs(out)
        assert not [o for o in outs if o["output_type"] == "error"]
        text = json.dumps(outs)
        assert res.campaign in text and ref in text and "same outcome" in text and "fingerprint" in text
        assert "yours / reference" in text
    nb, outs = outputs(tmp_path / "01_countdown.ipynb")
    assert f"your campaign** `{res.campaign}`" in json.dumps(outs)   # the figures show the reader's run
    assert campaigns.load(ref).store("countdown").samples_path.read_bytes() == \
        (src / ref / "countdown" / "samples.csv").read_bytes()


def test_notebooks_run_in_a_kernel_on_unix_sockets_not_tcp(tmp_path):
    """The kernels gillab starts (papermill's and the book's shared one) talk over Unix domain
    sockets: no TCP port is opened, so ipykernel has no plain-text TCP to warn about, and its
    warning never reaches the reader's terminal.  A TCP kernel, for contrast, prints it."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("6 * 7")])
    for cls, transport in ((execute.ipc_kernel_manager(), "ipc"), (None, "tcp")):
        client = NotebookClient(nb, kernel_name="python3", **({"kernel_manager_class": cls} if cls else {}))
        err = tmp_path / f"{transport}.err"
        with open(err, "w") as fh, client.setup_kernel(stdout=fh, stderr=fh):
            assert client.km.transport == transport
            out = client.execute_cell(nb.cells[0], 0)
            assert out.outputs[0]["data"]["text/plain"] == "42"
            if transport == "ipc":   # the shell channel is a socket file, named after an absolute prefix
                assert os.path.isabs(client.km.ip) and Path(f"{client.km.ip}-{client.km.shell_port}").is_socket()
        warned = "running over TCP without encryption" in err.read_text()
        assert warned == (transport == "tcp"), err.read_text()[-500:]
    assert execute.ipc_kernel_manager(asynchronous=False)(kernel_name="python3").transport == "ipc"   # the shared kernel


def test_a_chapter_the_readers_run_did_not_measure_opens_with_a_banner(tmp_path):
    """A chapter whose samples the run shown did not measure shows the reference's, and says so at
    its top: the banner names the run, the reference campaign and both machines; a chapter the run
    measured has none.  On the committed data, no measuring."""
    short = next(c for c in campaigns.all_campaigns() if c.is_contributed and not c.has("sha256") and c.has("affinity"))
    ref = campaigns.reference_id()
    pages = {name: execute.execute(name, "default", {"campaign": short.id}, output_dir=tmp_path)
             for name in ("sha256", "affinity")}

    def banner(path):
        _, outs = outputs(path)
        html = ["".join(o["data"]["text/html"]) for o in outs if "text/html" in o.get("data", {})]
        return [h for h in html if "gillab-borrowed" in h]

    (lent,) = banner(pages["sha256"])
    assert short.id in lent and ref in lent and "did not measure this chapter" in lent
    assert "gillab measure sha256" in lent
    assert banner(pages["affinity"]) == []
    # it is the first thing the chapter shows after its title: no output comes before it
    nb, _ = outputs(pages["sha256"])
    first = next(c for c in nb["cells"] if c["cell_type"] == "code" and c.get("outputs"))
    assert "gillab-borrowed" in json.dumps(first["outputs"])
    # and the built page shows it, as an admonition, before the chapter's first section
    (tmp_path / "book").mkdir()
    root = book.stage(tmp_path / "book")
    (root / "_toc.yml").write_text("format: jb-book\nroot: sha256\nchapters:\n  - file: affinity\n")
    for name, path in pages.items():
        (root / f"{name}.ipynb").write_bytes(Path(path).read_bytes())
    jb = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jb), "build", str(root), "--builder", "html"], check=True, capture_output=True)
    html = {n: (root / "_build" / "html" / f"{n}.html").read_text() for n in pages}
    assert html["sha256"].count('class="admonition warning gillab-borrowed"') == 1
    assert html["sha256"].index("gillab-borrowed") < html["sha256"].index('id="what-the-document-claimed"')
    assert "gillab-borrowed" not in html["affinity"]
    assert "~~" not in html["sha256"] + html["affinity"]
