"""The live explorers, as a reader uses them.

In a kernel (this process): every chapter's explorer re-plots from the stored samples when a
control moves; "measure now" refuses bad values before measuring, and measures a small sweep
into the reader's campaign, which the figure then shows.

In a browser: `gillab live`'s JupyterLab on a free loopback port, the "Explore live" notebook
opened in Debian's Chromium, all cells run, a control moved, bad values refused in the page,
"measure now" pressed; every request stays on 127.0.0.1, and once JupyterLab is shut down no
kernel or workload process is left.  Every wait is on an event (the server answering, an
element appearing, an image changing), bounded by a timeout.
"""
import json
import os
import secrets
import socket
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from gillab.measure import campaigns
from gillab.measure import experiments
from gillab.present import live, notebooks
from gillab.measure.profiles import ParameterError

from conftest import copy_reference
from proctools import alive, descendants, wait_gone, with_env

pytestmark = pytest.mark.slow     # a notebook, a page built or a browser: tests/conftest.py runs it early

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"


def own_campaigns():
    return [c.id for c in campaigns.all_campaigns() if not c.is_reference]


# -- in a kernel ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", experiments.names())
def test_every_chapter_replots_as_its_controls_move(name):
    """From the committed data: the explorer opens on a figure, and choosing fewer builds (or
    another campaign's samples) draws a different one."""
    x = live.LiveExplorer(name)
    first = bytes(x.image.value)
    assert first.startswith(b"\x89PNG") and x.frame is not None and len(x.builds.options) >= 1
    if len(x.builds.options) > 1:
        x.builds.value = x.builds.options[:1]
    else:
        x.data.value = next(d.key for d in x.sets if d.key != x.data.value)
    assert bytes(x.image.value).startswith(b"\x89PNG") and bytes(x.image.value) != first
    assert "cannot draw" not in x.figure_note.value
    assert set(x.params) >= {"switch_interval"}


@pytest.mark.parametrize("builds,texts,says", [
    ("3.13.5", {"switch_interval": "0"}, "switch_interval=0 is not valid"),
    ("3.99", {}, "unknown condition(s) 3.99"),
    ("", {}, "choose at least one build"),
    ("3.13.5", {"threads": "0, 1"}, "threads"),
    ("3.13.5", {"total_decrements": "many"}, "total_decrements"),
])
def test_bad_input_is_refused_before_measuring(data_dir, builds, texts, says):
    copy_reference(data_dir)
    x = live.LiveExplorer("countdown")
    x.measure_builds.value = builds
    for k, v in texts.items():
        x.params[k].value = v
    assert x.measure() is False
    assert says in x.status.value and "not measured" in x.status.value and "#b00020" in x.status.value
    assert own_campaigns() == [] and x.progress.value == 0      # nothing measured, nothing made


def test_measure_now_stores_in_your_campaign_and_shows_it(builds, data_dir):
    ref = copy_reference(data_dir)
    x = live.LiveExplorer("countdown")
    seen = []
    report = x._report
    x._report = lambda done, total, what: (seen.append((done, total)), report(done, total, what))
    x.measure_builds.value = "3.13.5"
    x.params["total_decrements"].value = "200_000"
    assert x.measure() is True, x.status.value
    mine = own_campaigns()
    assert len(mine) == 1 and mine[0] != ref
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)                   # 2 thread counts x 2 repeats
    assert x.data.value.startswith(mine[0] + "/") and "yours" in x.data.label
    assert set(x.frame["condition"]) == {"3.13.5"} and len(x.frame) == 4
    assert "measured 4 samples" in x.status.value and mine[0] in x.status.value
    assert len(campaigns.load(mine[0]).store("countdown").frame()) == 4
    assert x.measure() is True and "measured 0 samples (4 already stored)" in x.status.value   # resumed


def test_live_refuses_a_busy_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(ParameterError, match="in use"):
            live.check_port(s.getsockname()[1])
    with pytest.raises(ParameterError, match="not a TCP port"):
        live.check_port(0)


# -- in a browser --------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base: str, token: str, path: str, method: str = "GET"):
    req = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.read()


@contextmanager
def jupyterlab(tmp_path: Path):
    """`gillab live`'s JupyterLab on a free loopback port, serving a copy of the "Explore live"
    notebook (JupyterLab saves what it runs: the working tree stays as it is), its settings and
    workspaces in ``tmp_path``; shut down through its API afterwards (killed if that fails)."""
    port, token = free_port(), secrets.token_hex(16)
    root = tmp_path / "root"
    (root / Path(live.LIVE_NOTEBOOK).parent).mkdir(parents=True)
    text = (REPO / live.LIVE_NOTEBOOK).with_suffix(".md")   # what `gillab live` writes the notebook from
    notebooks.write_ipynb(notebooks.read(text), root / live.LIVE_NOTEBOOK)
    cmd = live.lab_command(port, token, root) + [f"--LabApp.workspaces_dir={tmp_path / 'ws'}",
                                                 f"--LabApp.user_settings_dir={tmp_path / 'settings'}"]
    log = open(tmp_path / "jupyterlab.log", "w")
    proc = subprocess.Popen(cmd, cwd=root, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:          # the server answering is the event; each try is bounded
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab ended at start:\n{(tmp_path / 'jupyterlab.log').read_text()[-3000:]}")
            try:
                if api(base, token, "/api/status")[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            if time.monotonic() > deadline:
                pytest.fail("JupyterLab did not answer within 120 s")
            time.sleep(0.2)
        yield proc, base, token
    finally:
        below = descendants(proc.pid)
        try:
            api(base, token, "/api/shutdown", method="POST")
            proc.wait(timeout=60)
        except Exception:
            proc.kill()
            proc.wait()
        log.close()
        assert wait_gone(below) == [], "a kernel or workload outlived JupyterLab"


def test_live_explorer_in_jupyterlab(builds, data_dir, tmp_path):
    from browser import RequestLog, page_session
    from playwright.sync_api import Error as PlaywrightError

    copy_reference(data_dir)
    copy_reference(data_dir, "primes")
    ARTIFACTS.mkdir(exist_ok=True)
    with jupyterlab(tmp_path) as (proc, base, token):
        with page_session() as page:
            log = RequestLog(page, base)
            page.set_default_timeout(120_000)
            page.goto(live.lab_url(int(base.rsplit(":", 1)[1]), token))
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell")
            # its kernel started and idle (running cells before would ask which kernel to start)
            page.locator(".jp-StatusBar-TextItem", has_text="| Idle").wait_for()
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.locator(".lm-Menu-item:has(.lm-Menu-itemLabel:text-is('Run All Cells'))").click()
            x = page.locator(".gillab-live")
            img = x.locator("img").first
            img.wait_for(state="visible")
            page.wait_for_function("() => document.querySelector('.gillab-live img').naturalWidth > 0")
            def shot(name, anchor):
                # JupyterLab's news toast, if shown: a toast already fading out (still in the page, no
                # longer visible) needs no click, and one that goes while clicked is gone all the same
                for no in page.get_by_role("button", name="No", exact=True).all():
                    if no.is_visible():
                        try:
                            no.click(timeout=5_000)
                        except PlaywrightError:
                            pass
                anchor.scroll_into_view_if_needed()
                page.screenshot(path=str(ARTIFACTS / name))

            shot("live-1-opened.png", x.locator(".widget-dropdown").first)
            kernels = json.loads(api(base, token, "/api/kernels")[1])
            assert len(kernels) == 1

            def changed(old):
                page.wait_for_function("old => { const i = document.querySelector('.gillab-live img');"
                                       " return i.src !== old && i.naturalWidth > 0 }", arg=old)
                return img.get_attribute("src")

            # move a control: one build instead of all -> another figure
            src = img.get_attribute("src")
            select = x.locator(".widget-select-multiple select")
            options = select.locator("option").all_text_contents()
            assert len(options) >= 2
            select.select_option(options[:1])
            src = changed(src)

            def field(label):
                return x.locator(f".widget-text:has(label:text-is('{label}')) input")

            def press_measure_and_wait(says):
                """Press "measure now" and wait for the message that this press (not an earlier
                one) brings: ``says`` is text only it shows."""
                x.locator("button", has_text="measure now").click()
                page.wait_for_function("says => document.querySelector('.gillab-live').textContent.includes(says)",
                                       arg=says)
                return x.text_content()

            # bad input: said in the page, nothing measured
            field("switch_interval").fill("0")
            field("switch_interval").press("Enter")
            said = press_measure_and_wait("switch_interval=0 is not valid")
            assert "not measured: countdown: parameter switch_interval=0 is not valid" in said
            shot("live-2-refused.png", x.locator("button", has_text="measure now"))
            field("switch_interval").fill("")
            field("switch_interval").press("Enter")
            field("builds to measure").fill("3.99")
            field("builds to measure").press("Enter")
            said = press_measure_and_wait("unknown condition(s) 3.99")
            assert "not measured" in said and "switch_interval=0" not in said
            assert own_campaigns() == []

            # measure now: smoke sizes, one build; the bar fills, the figure shows the new samples
            field("builds to measure").fill("3.13.5")
            field("builds to measure").press("Enter")
            field("total_decrements").fill("200_000")
            field("total_decrements").press("Enter")
            # every text the progress label takes while it runs (text nodes keep their value
            # after they are replaced, so none is lost to batching)
            page.evaluate("""() => { window.seen = [];
                new MutationObserver(ms => ms.forEach(m => m.addedNodes.forEach(n => {
                    const t = n.textContent || ''; if (/^\\d+\\/\\d+ samples/.test(t)) window.seen.push(t); })))
                  .observe(document.querySelector('.gillab-live'), {childList: true, subtree: true}); }""")
            text = press_measure_and_wait("measured 4 samples")
            seen = page.evaluate("() => window.seen")
            counts = [tuple(map(int, t.split()[0].split("/"))) for t in seen]
            assert (0, 4) in counts and (4, 4) in counts and any(0 < k < 4 for k, _ in counts), seen
            mine = own_campaigns()
            assert len(mine) == 1 and "measured 4 samples (0 already stored) in" in text and mine[0] in text
            assert "4/4 samples" in text
            changed(src)
            assert "yours" in x.locator(".widget-dropdown select").first.evaluate(
                "s => s.options[s.selectedIndex].text")
            shot("live-3-measured.png", x.locator("button", has_text="measure now"))
            stored = campaigns.load(mine[0]).store("countdown").frame()
            assert len(stored) == 4 and set(stored["condition"]) == {"3.13.5"}

            # another chapter from the picker: its own explorer, on its own data
            title = experiments.get("primes").title
            page.locator(".widget-dropdown select").first.select_option(label=f"{title} (primes)")
            page.wait_for_function("t => [...document.querySelectorAll('.gillab-live b')].some(b => b.textContent"
                                   " === 'Live explorer: ' + t)", arg=title)
            page.wait_for_function("() => document.querySelector('.gillab-live img').naturalWidth > 0")
        assert log.external == [], f"requests left 127.0.0.1: {log.external}"
        below = descendants(proc.pid)
        assert below, "the kernel runs below JupyterLab"
    assert [p for p in below if alive(p)] == []
    assert with_env("GILLAB_DATA", os.environ["GILLAB_DATA"]) == [], "a process of this test is left"
