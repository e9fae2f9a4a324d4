"""The reader's runs of one chapter at a time: papermill refusing an unknown parameter, the
reader's campaign beside the reference, the banner of a chapter the reader's run did not measure,
the kernels on Unix sockets (the whole book: tests/test_book.py; the live explorer in a kernel, as
`make live` opens it in JupyterLab: tests/test_live.py)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gillab.present import book, execute, notebooks
from gillab.measure import campaigns, sweep

from conftest import outputs

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]


def test_papermill_with_an_unknown_parameter_fails_before_measuring(builds, tmp_path):
    env = dict(os.environ, GILLAB_DATA=str(tmp_path / "data"), GILLAB_MACHINE="test-machine")
    notebooks.ipynb_of(REPO / "notebooks" / "01_countdown.md")   # what `gillab notebooks` writes
    out = subprocess.run([str(Path(sys.executable).with_name("papermill")), "notebooks/01_countdown.ipynb",
                          str(tmp_path / "out.ipynb"), "-p", "profile", "smoke", "-p", "thraeds", "[1]"],
                         cwd=REPO, env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert "unknown parameter(s) thraeds" in out.stderr + out.stdout
    assert not (tmp_path / "data").exists()


def test_your_campaign_is_shown_beside_the_reference(builds, data_dir, tmp_path):
    """A reader who reran countdown (default configuration; fewer repeats and one build, which
    do not change the configuration) sees the chapter and the verdicts page set their campaign
    beside the committed reference campaign, claim by claim, with both machines."""
    from conftest import copy_reference

    ref = copy_reference(data_dir)
    src = REPO / "data" / "results"
    res = sweep.measure("countdown", "default", {"conditions": "3.13.5", "repeats": 2}, progress=False)
    assert res.campaign != ref and res.measured == 2 + 2 + 1 + 1    # 1 and 2 threads its claims', 4 and 8 one run
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


def test_a_chapter_the_readers_run_did_not_measure_opens_with_a_banner(tmp_path, data_dir):
    """A chapter whose samples the run shown did not measure shows the reference's, and says so at
    its top: the banner names the run, the reference campaign and both machines; a chapter the run
    measured has none.  On the committed data, no measuring."""
    from conftest import short_run

    short = campaigns.load(short_run(data_dir, without=("sha256",)))
    assert short.is_contributed and not short.has("sha256") and short.has("affinity")
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
