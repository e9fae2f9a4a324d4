"""The reader's path: every chapter through papermill, measuring, the book built from them, the
pages in a browser (one chapter at a time: tests/test_chapter_runs.py)."""
import contextlib
import json
import os
import re
from pathlib import Path

import pytest

from gillab.present import book, execute

from conftest import outputs, writes_the_cache, writing_the_cache

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def built_book(builds, tmp_path_factory):
    """Stage the book in a temporary folder, measure every chapter there in the smoke profile (into
    a temporary data/) and build it, as a reader's run does: the measuring first, the countdown's
    through its notebook (papermill, ``measure=True``: the path a reader's own rerun of a chapter
    takes), every other chapter's through the command line's code; then every other notebook
    executed as `make book` executes them (``measure=False``, one kernel reused).  Nothing lands in
    the working tree."""
    from gillab.measure import sweep

    root = tmp_path_factory.mktemp("book")
    data = tmp_path_factory.mktemp("data")
    generated = root / "book" / "generated"
    old = {k: os.environ.get(k) for k in ("GILLAB_DATA", "GILLAB_MACHINE")}
    os.environ.update(GILLAB_DATA=str(data), GILLAB_MACHINE="test-machine")
    try:
        book.stage(root)
        out = {"countdown": execute.execute("countdown", "smoke", measure=True, output_dir=generated)}
        rest = [n for n in execute.notebook_files() if n != "countdown"]
        for name in [n for n in rest if n not in execute.APPENDIX]:
            with writing_the_cache(tmp_path_factory) if writes_the_cache(name) else contextlib.nullcontext():
                res = sweep.measure(name, "smoke", progress=False)     # flask_k6 and b2_download make venvs
            assert res.failed == 0, (name, res.status)
        assert set(execute.execute_all("smoke", output_dir=generated, names=rest, jobs=1).values()) == {"executed"}
        out |= {n: generated / execute.executed_name(n) for n in rest}
        index = book.build_book(root)
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return {"root": root, "data": data, "index": index, "executed": out}


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
# and the most a page may weigh (its figures and kernel-free explorers are inline images)
MAX_PAGE_BYTES = 5_000_000


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
    heavy = {p.relative_to(html).as_posix(): p.stat().st_size for p in pages if p.stat().st_size > MAX_PAGE_BYTES}
    assert not heavy, f"pages over {MAX_PAGE_BYTES:,} bytes: {heavy}"


# words the book used for a verdict's outcome or a checked sentence's before it had one vocabulary
# (issue 78): the verdicts' outcomes (agrees, higher, lower, inconclusive) and the comparison of two
# campaigns (the same, different, open) say it all
OLD_WORDS = ("cannot be judged here", "does not hold", "Not shown by these runs", "not shown by these runs")


def test_the_built_book_speaks_one_vocabulary(built_book):
    from gillab.judge import pairs, prose

    html = built_book["index"].parent
    found = {p.relative_to(html).as_posix(): w for p in html.rglob("*.html") for w in OLD_WORDS
             if w in p.read_text(errors="replace")}
    assert not found, found
    # the words, defined once, on the introduction (the landing page)
    intro = (html / "book" / "intro.html").read_text()
    assert "The words." in intro
    for word in ("agrees", "higher", "lower", "inconclusive", *pairs.PAIR_OUTCOMES, prose.NOT_SHOWN, prose.NOT_TRUE,
                 prose.NOT_MEASURED):
        assert f"<em>{word}</em>" in intro, word


def test_the_first_screen_prints_no_nan(built_book):
    """Issue 78: the first screen's first finding printed 'nan (n = 0)'. A number not measured is
    said in words there (or left to its chapter), never printed as nan."""
    import html as html_lib

    page = (built_book["index"].parent / "book" / "intro.html").read_text()
    main = page[page.find("<main"):page.find("</main>")]
    text = html_lib.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style)\b.*?</\1>", " ", main, flags=re.S)))
    assert text.strip() and not re.search(r"(?<![\w.])nan(?![\w])", text), re.findall(r".{60}\bnan\b.{20}", text)
