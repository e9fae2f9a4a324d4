"""A new chapter is five files: a workload, its experiment, how its chapter reads the samples, its
text notebook and its claims rows.  In a scratch copy of the repository (the files git tracks; the
reference campaign linked, never written), a toy chapter is added in exactly those five files and
nothing else is edited; then, with the copy's own package on the path, the registry lists it in its
notebook's place, `gillab notebooks` writes it into the table of contents, the README's table and
the introduction's list, its smoke profile (declared in its experiment module: profiles.toml has no
table of it) measures it under the 3.13.5 build, its page executes with the figure and the verdict
row of its claim, and the repository's own checks of a chapter pass on it."""
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need_builds
from gillab.measure import experiments

pytestmark = pytest.mark.slow     # a notebook, a page built or a browser: tests/conftest.py runs it early

REPO = Path(__file__).resolve().parents[1]
NAME = "abacus"          # sorts before every chapter: its place comes from its number, not its name
CLAIM = f"{NAME}/conclusion/two_threads_same_time"
PARAMETERS = "# the parameters cell, generated below from the declaration"

WORKLOAD = '''\
"""A toy: ``beads`` additions split evenly over ``threads`` threads; the wall time from creating
the threads to joining them."""
import sys

from _common import main, timed_threads


def slide(n):
    total = 0
    for _ in range(n):
        total += 1
    return total


def run(params):
    threads = int(params["threads"])
    seconds = timed_threads(slide, [(int(params["beads"]) // threads,)] * threads)
    return {"seconds": seconds}


if __name__ == "__main__":
    sys.exit(main(run))
'''

EXPERIMENT = '''\
"""A toy chapter's experiment: an abacus over 1 and 2 threads (document 000's countdown in small)."""
from __future__ import annotations

from ..profiles import Param, positive_int, positive_ints
from ..protocol import Experiment


class Abacus(Experiment):
    name = "abacus"
    adaptive_metric = "seconds"
    workload = "abacus"
    title = "An abacus over threads"
    document = "000_7286df4c8fefdbad.txt (Python behind the scenes #13), the first table in small"
    params = {
        "threads": Param("threads", positive_ints, "thread counts to sweep, e.g. [1, 2]"),
        "beads": Param("beads", positive_int, "additions in all, split evenly over the threads"),
    }
    point_keys = ("threads",)

    def points(self, p):
        return [{"threads": t} for t in p["threads"]]


EXPERIMENT = Abacus()

# its profiles: profiles.toml has no [abacus.*] table, so these are read (as data) in their place
PROFILES = {
    "smoke": {"threads": [1, 2], "beads": 200_000, "repeats": 3, "timeout": 60, "conditions": "3.13.5"},
    "default": {"threads": [1, 2], "beads": 2_000_000, "repeats": 8, "timeout": 120},
    "verdicts": {"repeats": 9},
    "seed": {"threads": [1, 2], "beads": 20_000_000, "repeats": 8, "timeout": 300},
}
'''

CHAPTER = '''\
"""How the abacus chapter reads its samples (what it measures:
:mod:`gillab.measure.experiments.abacus`).  Its one claim is a conclusion row of claims.csv, which
the analysis judges itself (two threads' time over one thread's)."""
from __future__ import annotations

import pandas as pd

from .. import stats
from ..judge.analysis import ModuleAnalysis, frame_cached


def _ok(df):
    return df[df["status"] == "ok"] if "status" in df.columns else df


@frame_cached
def summary(df):
    rows = [{"condition": c, "threads": int(t), **stats.summarize(g["seconds"])}
            for (c, t), g in _ok(df).groupby(["condition", "threads"], sort=True)]
    return pd.DataFrame(rows)


def claims(df):
    return []      # the conclusions of claims.csv (abacus/conclusion/...) are added by the analysis


def side_by_side(df):
    return summary(df)[["condition", "threads", "n", "median", "ci_lo", "ci_hi"]]


def findings(df):
    s = summary(df)
    ratios = []
    for cond, g in s.groupby("condition"):
        m = dict(zip(g["threads"], g["median"]))
        if 1 in m and 2 in m:
            ratios.append(f"`{cond}` {m[2] / m[1]:.2f}")
    return "Two threads' median time over one thread's: " + (", ".join(ratios) or "not measured") + "."


def prose(df):
    return []      # no checked sentences yet


def figure(df):
    import matplotlib.pyplot as plt

    from ..present import plots

    ok = _ok(df)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    plots.median_with_ci(ax, ok, "threads", "seconds", "condition", plots.palette(ok["condition"].unique()))
    ax.set(title="An abacus over threads", xlabel="threads", ylabel="seconds (the same additions in all)")
    ax.legend(title="build")
    fig.tight_layout()
    return fig


def explorer(df):
    import matplotlib.pyplot as plt

    from ..present.widgets import stack_explorer

    ok = _ok(df)
    conds, threads = sorted(ok["condition"].unique()), sorted(ok["threads"].unique())

    def draw(cond, t):
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.plot(ok.loc[(ok["condition"] == cond) & (ok["threads"] == t), "seconds"].to_numpy(), "o")
        ax.set(title=f"{cond}, {t} threads", xlabel="sample", ylabel="seconds")
        return fig
    return stack_explorer(draw, ("build", conds, conds), ("threads", threads, [str(t) for t in threads]),
                          title="Every sample of a build and thread count")


ANALYSIS = ModuleAnalysis(__name__)
'''

NOTEBOOK = '''\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
    jupytext_version: 1.19.6
kernelspec:
  display_name: Python 3
  language: python
  name: python3
gillab:
  tagline: a toy counting loop over 1 and 2 threads, added by the test of a new chapter
---

# An abacus over threads

*A toy chapter: document 000's countdown in small, added in five files.*

```{code-cell}
:tags: [remove-cell]

from gillab.present.page import Chapter

_before = set(globals())
```

```{code-cell}
:tags: [parameters, remove-cell]

PARAMETERS
```

```{code-cell}
:tags: [remove-input]

ch = Chapter("abacus", globals(), _before)
```

## What the abacus stands for

The same number of additions, split over one thread and over two. With the GIL, document 000
says of its countdown that the times don't change.

## Results

```{code-cell}
:tags: [remove-input]

fig = ch.figure()   # gillab.chapters.abacus.figure
```

```{code-cell}
:tags: [remove-input]

ch.side_by_side()   # gillab.chapters.abacus.side_by_side
```

```{code-cell}
:tags: [remove-input]

# the claims judged by gillab.chapters.abacus.claims
# the findings in words: gillab.chapters.abacus.findings
ch.verdicts()
```

```{code-cell}
:tags: [remove-input]

ch.prose()   # gillab.chapters.abacus.prose
```

## Explore the abacus

```{code-cell}
:tags: [remove-input]

ch.explorer()   # gillab.chapters.abacus.explorer
```

## Method: the abacus

```{code-cell}
:tags: [remove-input]

ch.method()
```

```{code-cell}
:tags: [remove-input]

ch.interpreters()
```

```{code-cell}
:tags: [remove-input]

ch.rerun()
```

## Summary

Five files made this chapter, and every list of the chapters found it.
'''.replace("PARAMETERS", PARAMETERS)

CLAIM_ROW = {
    "claim_id": CLAIM, "document": "000", "experiment": NAME,
    "section": "The effects of the GIL (the countdown table, read by a toy chapter)",
    "quote": "The times don't change.", "kind": "ratio",
    "statistic": "abacus time with 2 threads / with 1 (the same additions in all), ratio of medians",
    "doc_statistic": "not stated", "doc_statistic_words": "a toy's reading of the sentence: one run",
    "point": "threads=2 / threads=1", "comparison": "about", "value": "1", "unit": "ratio",
    "value_source": "the words: the times don't change", "band": "0.10",
    "band_reason": "'the same' (lexicon): about 1 within 10%", "phrase": "the same",
    "interpreter": "CPython 3.9", "machine": "MacBook Pro, 2 cores + hyper-threading", "about": "mechanism",
    "about_reason": "a ratio of times with the same total work on one machine", "role": "claim",
    "builds": "GIL", "builds_reason": "with a GIL one thread runs bytecode at a time; without one the two share the work",
    "threads": "2",
    "own": ("pbts13_t1_countdown_threads[threads=2].time_s_best_of_3 / "
            "pbts13_t1_countdown_threads[threads=1].time_s_best_of_3"),
}


def _scratch(root: Path) -> Path:
    """The files git tracks, copied to ``root`` as the working tree has them, but the committed
    campaigns: a data/results/ of its own with the reference campaign linked (read, never written)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for rel in (p.decode() for p in listed.split(b"\0") if p):
        if rel.startswith("data/results/") or not (REPO / rel).is_file():
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, root / rel)
    results = root / "data" / "results"
    results.mkdir(parents=True, exist_ok=True)
    ref = (REPO / "data" / "results" / "REFERENCE").read_text().strip()
    (results / ref).symlink_to(REPO / "data" / "results" / ref, target_is_directory=True)
    for f in ("REFERENCE", "REFERENCES.toml", "MEASURE_AGAIN.toml"):
        if (REPO / "data" / "results" / f).is_file():
            shutil.copy2(REPO / "data" / "results" / f, results / f)
    return root


def _add_chapter(root: Path, number: int) -> list[Path]:
    """The toy chapter, in five files; returns them."""
    pkg = root / "scripts" / "gillab"
    files = {pkg / "measure" / "workloads" / f"{NAME}.py": WORKLOAD,
             pkg / "measure" / "experiments" / f"{NAME}.py": EXPERIMENT,
             pkg / "chapters" / f"{NAME}.py": CHAPTER,
             root / "notebooks" / f"{number:02d}_{NAME}.md": NOTEBOOK}
    for path, text in files.items():
        assert not path.exists(), path
        path.write_text(text)
    claims = root / "data" / "reference" / "claims.csv"
    with claims.open(newline="") as f:
        columns = next(csv.reader(f))
    with claims.open("a", newline="") as f:
        csv.DictWriter(f, columns, lineterminator="\n").writerow({c: CLAIM_ROW.get(c, "") for c in columns})
    return [*files, claims]


def _run(root: Path, *args: str, timeout: int = 300) -> str:
    env = {**os.environ, "PYTHONPATH": str(root / "scripts"), "GILLAB_DATA": str(root / "data"),
           "GILLAB_MACHINE": "test-machine"}
    env.pop("GILLAB_FIGURES", None)
    out = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"{' '.join(args)[:200]}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


READ_REGISTRY = """
import json
from gillab.measure import experiments
from gillab.present import page
print(json.dumps({"names": experiments.names(), "notebook": experiments.notebook("abacus"),
                  "parameters": page.parameters_cell("abacus")}))
"""

EXECUTE = """
import json, sys
from pathlib import Path
from gillab.present import execute
print(json.dumps(str(execute.execute("abacus", "smoke", output_dir=Path(sys.argv[1])))))
"""


def test_a_new_chapter_is_five_files_and_every_list_finds_it(tmp_path):
    need_builds(("3.13.5",), "the 3.13.5 build", "gillab provision")
    root = _scratch(tmp_path / "repo")
    number = int(list(experiments.NOTEBOOKS.values())[-1][:2]) + 1     # after the last chapter
    added = _add_chapter(root, number)
    assert not (REPO / "scripts" / "gillab" / "chapters" / f"{NAME}.py").exists()     # the repository itself is
    assert CLAIM not in (REPO / "data" / "reference" / "claims.csv").read_text()        # untouched

    # the registry lists it in its notebook's place; its parameters cell is the declaration's
    got = json.loads(_run(root, "-c", READ_REGISTRY))
    stem = f"{number:02d}_{NAME}"
    assert got["names"] == experiments.names() + [NAME] and got["notebook"] == f"{stem}.md"
    nb = root / "notebooks" / f"{stem}.md"
    nb.write_text(nb.read_text().replace(PARAMETERS, got["parameters"]))

    # `gillab notebooks` writes its .ipynb and every list of the chapters names it
    _run(root, "-m", "gillab", "notebooks")
    assert (root / "notebooks" / f"{stem}.ipynb").is_file()
    toc, readme, intro = ((root / f).read_text() for f in ("_toc.yml", "README.md", "book/intro.md"))
    lines = toc.splitlines()
    assert lines[lines.index(f"      - file: book/generated/{stem}") + 1] == "  - caption: Appendix"   # the last chapter
    assert f"| `{stem}` | a toy counting loop over 1 and 2 threads, added by the test of a new chapter | 000 |" in readme
    assert f"- [An abacus over threads](generated/{stem}): a toy counting loop" in intro

    # its smoke profile (its module's PROFILES) measures it under the 3.13.5 build
    res = json.loads(_run(root, "-m", "gillab", "measure", NAME, "-P", "smoke"))
    assert res["measured"] == 6 and res["failed"] == 0, res
    samples = root / "data" / "results" / res["campaign"] / NAME / "samples.csv"
    rows = list(csv.DictReader(samples.open()))
    assert {r["condition"] for r in rows} == {"3.13.5"} and {r["threads"] for r in rows} == {"1", "2"}

    # its page executes, with its figure and the verdict row of its claim
    out = Path(json.loads(_run(root, "-c", EXECUTE, str(tmp_path / "site" / "book" / "generated"))))
    cells = json.loads(out.read_text())["cells"]
    outputs = [o for c in cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    text = json.dumps(outputs, ensure_ascii=False)
    assert "data:image/png;base64" in text and "gillab.chapters.abacus.figure" in text
    verdict = "abacus time with 2 threads / with 1 (the same additions in all), ratio of medians"
    assert verdict in text and "about 1 ±10%" in text and "gillab.chapters.abacus.claims" in text
    assert "inconclusive (n too small: 3 and 3 runs" in text       # 3 smoke runs a side: judged, and too few
    assert "gillab/measure/experiments/abacus.py (PROFILES)" in text     # the method says where its values came from

    # and that page alone renders with jupyter-book, as the book renders it
    site = out.parents[2]
    shutil.copy2(root / "_config.yml", site / "_config.yml")
    (site / "_toc.yml").write_text(f"format: jb-book\nroot: book/generated/{stem}\n")
    jb = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jb) if jb.exists() else "jupyter-book", "build", str(site), "--builder", "html"], check=True,
                   capture_output=True, timeout=300)
    html = (site / "_build" / "html" / "book" / "generated" / f"{stem}.html").read_text()
    assert "An abacus over threads" in html and verdict in html and '<img src="data:image/png;base64' in html

    # the repository's own checks of a chapter pass on it, in the copy
    checks = [f"tests/test_protocol.py::{t}" for t in (
        "test_every_experiment_module_is_registered_and_complete", "test_every_parameters_cell_is_the_declaration",
        "test_chapters_are_text_named_and_numbered_as_the_book_orders_them",
        "test_each_chapter_file_names_the_functions_that_hold_its_words_and_figures",
        "test_the_chapter_list_comes_from_the_registry", "test_no_cell_of_substance_is_copied_between_notebooks",
        "test_the_book_shows_outputs_without_code_toggles", "test_a_chapter_leads_with_its_results_and_ends_with_its_method")]
    checks += ["tests/test_parameters.py::test_every_experiment_resolves_every_profile",
               "tests/test_parameters.py::test_the_verdicts_profile_is_defaults_configuration_with_more_runs"]
    _run(root, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *checks)

    # exactly five files: the copy differs from the repository in those (and the generated lists) alone
    assert [p.relative_to(root).as_posix() for p in added] == [
        f"scripts/gillab/measure/workloads/{NAME}.py", f"scripts/gillab/measure/experiments/{NAME}.py",
        f"scripts/gillab/chapters/{NAME}.py", f"notebooks/{stem}.md", "data/reference/claims.csv"]
    kept = [rel for rel in (p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
            if not rel.startswith("data/results/") and "__pycache__" not in rel and not rel.endswith(".ipynb")]
    new = sorted(rel for rel in kept if not (REPO / rel).is_file())
    edited = sorted(rel for rel in kept if (REPO / rel).is_file() and (REPO / rel).read_bytes() != (root / rel).read_bytes())
    assert new == sorted(p.relative_to(root).as_posix() for p in added[:4]), new
    assert edited == sorted(["README.md", "_toc.yml", "book/intro.md", "data/reference/claims.csv"]), edited
