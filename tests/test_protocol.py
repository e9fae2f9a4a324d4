"""One experiment protocol: an explicit registry, one analysis interface, chapters whose common
sections come from one helper, parameters declared once, typed storage, and a book that is
rendered from data/ (reusing what did not change) without measuring."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gillab import chapters
from gillab.judge import analysis
from gillab.present import contents, execute, notebooks, page
from gillab.measure import experiments
from gillab.paths import notebooks_dir
from gillab.measure.store import ExperimentStore, infer_type

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "scripts" / "gillab"


def _imports(path: Path) -> set[str]:
    """Every gillab module ``path`` imports, at any depth of the file (function-level too)."""
    mod = ".".join(path.relative_to(PKG.parent).with_suffix("").parts).removesuffix(".__init__")
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("gillab"):
                names = [f"{target}.{a.name}" for a in node.names]
                out |= {n if (PKG.parent / (n.replace(".", "/") + ".py")).exists()
                        or (PKG.parent / n.replace(".", "/")).is_dir() else target for n in names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("gillab")}
    return out - {mod}


def _registry_doors(path: Path, mod: str) -> set[str]:
    """The modules ``path`` reaches by name through a registry: each ``importlib.import_module``
    of an f-string whose text starts with a package (``f"gillab.chapters.{...}"`` or
    ``f"{__name__}.{...}"``) reaches that package's module of every name the registry lists
    (:data:`gillab.measure.experiments.NAMES`)."""
    from gillab.measure.experiments import NAMES

    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module"
                and node.args and isinstance(node.args[0], ast.JoinedStr)):
            continue
        first = node.args[0].values[0]
        if isinstance(first, ast.Constant):
            prefix = first.value
        elif isinstance(first, ast.FormattedValue) and getattr(first.value, "id", "") == "__name__":
            prefix = mod + "."
        else:
            raise AssertionError(f"{mod}: a registry door whose package the layer test cannot read")
        out |= {prefix + n for n in NAMES}
    return out


def _graph() -> dict[str, set[str]]:
    """Every module of the package -> the modules it imports, and those it reaches through a
    registry by name (:func:`_registry_doors`), so the drawn house is the real one."""
    graph = {}
    for path in PKG.rglob("*.py"):
        if "workloads" in path.parts:
            continue
        mod = ".".join(path.relative_to(PKG.parent).with_suffix("").parts).removesuffix(".__init__")
        graph[mod] = _imports(path) | _registry_doors(path, mod)
    return graph


# the harness in layers, each importing only those below it: the ground (where files are,
# statistics, a whole run's record), measuring, judging, presenting, a whole run (gillab.reproduce: plan, measure, book),
# then the command line over all of them.  A chapter (how one experiment's samples are read)
# stands over judging and presenting: it imports them; they reach it only through the chapters'
# registry (the package gillab.chapters, whose ``of`` imports a chapter by name), never by
# importing a chapter module.  A registry package reaches its own modules by name.
GROUND = ("gillab.paths", "gillab.stats", "gillab.record")
LAYERS = {"measure": 1, "judge": 2, "present": 3, "reproduce": 4}
REGISTRIES = ("gillab.measure.experiments", "gillab.chapters")
FAMILIES = {"gillab.measure.experiments": ("echo",), "gillab.chapters": ("echo", "over_threads", "doc002", "doc003")}


def _layer(mod: str) -> str:
    if mod in GROUND or mod == "gillab":
        return "ground"
    return mod.split(".")[1]


def allowed(a: str, b: str) -> bool:
    """Whether module ``a`` may import module ``b``."""
    la, lb = _layer(a), _layer(b)
    if lb == "ground" or la in ("cli", "__main__"):
        return True
    if a in REGISTRIES and b.startswith(a + "."):    # a registry's door to its own modules
        return True
    if la == "chapters":
        if lb == "chapters":                         # a family module, never another chapter
            return b.rsplit(".", 1)[-1] in FAMILIES["gillab.chapters"]
        return lb in ("measure", "judge", "present")
    if lb == "chapters":                             # the registry's door, never a chapter module
        return b == "gillab.chapters" and la in ("judge", "present", "reproduce")
    if la not in LAYERS or lb not in LAYERS:
        return False
    if LAYERS[lb] > LAYERS[la]:
        return False
    pkg = "gillab.measure.experiments"
    if a.startswith(pkg + ".") and b.startswith(pkg + "."):
        return b.rsplit(".", 1)[-1] in FAMILIES[pkg]   # no experiment imports another's module
    return True


def test_imports_run_only_down_the_layers_and_no_chapter_imports_another():
    graph = _graph()
    wrong = sorted(f"{a} -> {b}" for a, bs in graph.items() for b in bs if not allowed(a, b))
    assert not wrong, "imports against the layers (tests/test_protocol.py: allowed):\n" + "\n".join(wrong)
    layers = {_layer(m) for m in graph}
    assert {"ground", "measure", "judge", "present", "reproduce", "chapters", "cli"} <= layers, layers
    assert not {m for m in graph if _layer(m) not in (*LAYERS, "ground", "chapters", "cli", "__main__")}


def test_the_layer_rule_can_fail_and_sees_the_edges_it_rules_on():
    graph = _graph()
    # edges that exist, each kind once: down a layer, a chapter's family, an experiment's family,
    # the whole run over the layers it drives, and both registries' doors, read from the registry
    assert "gillab.measure.sweep" in graph["gillab.judge.across"]
    assert {"gillab.chapters.over_threads", "gillab.judge.analysis"} <= graph["gillab.chapters.countdown"]
    assert "gillab.measure.experiments.echo" in graph["gillab.measure.experiments.convoy"]
    assert {"gillab.present.book", "gillab.measure.sweep", "gillab.judge.budget"} <= graph["gillab.reproduce"]
    assert {f"gillab.chapters.{n}" for n in experiments.NAMES} <= graph["gillab.chapters"]
    assert {f"gillab.measure.experiments.{n}" for n in experiments.NAMES} <= graph["gillab.measure.experiments"]
    assert "gillab.chapters" in graph["gillab.judge.verdicts"] and "gillab.chapters" in graph["gillab.present.page"]
    assert not any(b.startswith("gillab.chapters.") for a, bs in graph.items() if _layer(a) != "chapters" for b in bs)
    # and what the rule refuses
    for a, b in [("gillab.measure.sweep", "gillab.judge.verdicts"), ("gillab.judge.verdicts", "gillab.present.plots"),
                 ("gillab.measure.experiments.affinity", "gillab.measure.experiments.convoy"),
                 ("gillab.chapters.affinity", "gillab.chapters.convoy"), ("gillab.judge.verdicts", "gillab.chapters.convoy"),
                 ("gillab.present.book", "gillab.chapters.countdown"), ("gillab.measure.sweep", "gillab.chapters"),
                 ("gillab.present.book", "gillab.reproduce"), ("gillab.chapters.countdown", "gillab.reproduce"),
                 ("gillab.chapters.countdown", "gillab.chapters"), ("gillab.paths", "gillab.measure.store")]:
        assert not allowed(a, b), (a, b)


def test_a_registry_door_is_drawn_from_the_registry(tmp_path):
    # a module that opens a door by name to a package's modules gets an edge to each name listed
    mod = tmp_path / "door.py"
    mod.write_text("import importlib\n\ndef of(n):\n    return importlib.import_module(f'gillab.judge.{n}')\n")
    assert _registry_doors(mod, "gillab.measure.door") == {f"gillab.judge.{n}" for n in experiments.NAMES}
    assert not allowed("gillab.measure.door", "gillab.judge.countdown")      # an arrow up, seen and refused


def test_the_package_imports_have_no_circle():
    graph = _graph()
    seen, stack, cycles = set(), [], []

    def visit(m):
        if m in stack:
            cycles.append(stack[stack.index(m):] + [m])
            return
        if m in seen:
            return
        seen.add(m)
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            visit(n)
        stack.pop()

    for m in sorted(graph):
        visit(m)
    assert not cycles, f"import circles: {cycles}"


def test_the_registry_imports_nothing_until_asked():
    code = ("import sys, gillab.measure.experiments as e; "
            "import gillab.chapters; "
            "print(sorted(m for m in sys.modules if m.startswith(('gillab.measure.experiments.', 'gillab.chapters.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_experiment_module_is_registered_and_complete():
    modules = {p.stem for p in (PKG / "measure" / "experiments").glob("*.py") if "EXPERIMENT = " in p.read_text()}
    readings = {p.stem for p in (PKG / "chapters").glob("*.py") if "ANALYSIS = " in p.read_text()}
    assert modules == readings == set(experiments.names())
    for name in experiments.names():
        exp, an = experiments.get(name), chapters.of(name)
        assert exp.name == name and (notebooks_dir() / experiments.notebook(name)).is_file(), name
        assert exp.notebook in ("", experiments.notebook(name)), name   # where it names one, the registry's
        assert exp.document[:3] in experiments.DOCUMENTS, name
        for method in analysis.INTERFACE:
            impl = getattr(an, method)
            assert getattr(impl, "__func__", None) is not getattr(analysis.Analysis, method), f"{name}: {method}"
    with pytest.raises(experiments.ParameterError, match="unknown experiment 'nope'"):
        experiments.get("nope")


def test_an_analysis_that_lacks_a_function_fails_when_imported(tmp_path, monkeypatch):
    (tmp_path / "half_done.py").write_text(
        "from gillab.judge.analysis import ModuleAnalysis\n"
        "def summary(df):\n    return df\n"
        "ANALYSIS = ModuleAnalysis(__name__)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match="half_done: the analysis lacks claims, figure, side_by_side, findings, explorer"):
        __import__("half_done")


def _cells(name):
    return notebooks.read(notebooks_dir() / name).cells


def test_every_parameters_cell_is_the_declaration():
    """The parameters cell of each chapter is generated from the experiment's parameters and
    their help (regenerate one with ``gillab.present.page.parameters_cell(name)``)."""
    from papermill.translators import PythonTranslator

    for name in experiments.names():
        (cell,) = [c for c in _cells(experiments.notebook(name)) if "parameters" in c.metadata.get("tags", [])]
        assert cell.source == page.parameters_cell(name), name
        declared = [p.name for p in PythonTranslator.inspect(cell)]
        assert set(declared) == set(page.NOTEBOOK_PARAMS) | set(experiments.get(name).params) | {
            "conditions", "repeats", "max_repeats", "ci_target", "timeout", "switch_interval", "affinity",
            "full_grid", "small_grid", "rest_repeats", "claim_grid", "claim_builds"}, name


def _glue(cell) -> bool:
    """A cell of no substance of its own: one call of the chapter object ``ch`` with literal
    arguments, its value shown or bound to a name (``ch.figure()``, ``fig = ch.figure("x")``)."""
    if cell.cell_type != "code":
        return False
    try:
        body = ast.parse(cell.source).body
    except SyntaxError:
        return False
    if len(body) != 1 or not isinstance(body[0], (ast.Expr, ast.Assign)):
        return False
    call = body[0].value
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "ch"
            and all(isinstance(a, ast.Constant) for a in [*call.args, *(k.value for k in call.keywords)]))


def test_no_cell_of_substance_is_copied_between_notebooks():
    """Prose and code are written once; a one-call cell of the chapter object (``ch.figure()``)
    is the chapter's interface, the same in every chapter by design."""
    seen, glue = {}, 0
    for nb in execute.notebook_files().values():
        for cell in _cells(nb):
            if cell.cell_type == "code" and cell.source.strip() == page.OPENING_CELL:
                continue        # the names before the parameters: the same opening in every chapter, by design
            if _glue(cell):
                glue += 1
                continue
            key = (cell.cell_type, cell.source.strip())
            assert key not in seen, f"{nb} repeats a cell of {seen.get(key)}: {cell.source[:80]!r}"
            seen[key] = nb
    assert glue > len(experiments.names())   # the rule above is what lets ch.figure() repeat


def test_the_glue_rule_lets_only_one_call_cells_repeat():
    from nbformat.v4 import new_code_cell, new_markdown_cell

    assert _glue(new_code_cell("ch.figure()")) and _glue(new_code_cell('fig = ch.figure("tool_figure")'))
    assert not _glue(new_code_cell("ch.figure(); ch.verdicts()"))
    assert not _glue(new_code_cell("x = compute(ch.df)"))
    assert not _glue(new_code_cell("fig = other.figure()"))
    assert not _glue(new_code_cell("ch.figure(df)"))
    assert not _glue(new_markdown_cell("ch.figure()"))


def test_chapters_are_text_named_and_numbered_as_the_book_orders_them():
    """One text notebook per chapter, ``NN_<registry name>.md`` with NN its place in the book;
    one chapter object name (``ch``); prose wrapped at 100 columns."""
    names = experiments.names()
    # the registry is read from these numbers: every one below the appendix's is a chapter's, once
    numbered = sorted(p.name for p in notebooks_dir().glob("[0-9][0-9]_*.md")
                      if int(p.name[:2]) < experiments.APPENDIX_FROM)
    assert numbered == sorted(experiments.notebook(n) for n in names), "a numbered notebook that names no experiment"
    assert len({nb[:2] for nb in numbered}) == len(numbered), "two chapters share a number"
    for i, name in enumerate(names, 1):
        nb = experiments.notebook(name)
        assert nb == f"{i:02d}_{name}.md", (name, nb)
        src = (notebooks_dir() / nb).read_text()
        assert f'ch = Chapter("{name}", globals(), _before)' in src, name
        first = next(c for c in notebooks.read(notebooks_dir() / nb).cells if c.cell_type == "code")
        assert first.source.strip() == page.OPENING_CELL, name     # before the parameters cell
    assert not list(notebooks_dir().glob("*.ipynb")) or all(
        p.with_suffix(".md").is_file() for p in notebooks_dir().glob("*.ipynb"))   # only ones written from text
    for path in notebooks.sources():
        for cell in notebooks.read(path).cells:
            if cell.cell_type == "markdown":
                long = [ln for ln in cell.source.splitlines() if len(ln) > 100 and not ln.lstrip().startswith("|")]
                assert not long, (path.name, long[0][:60])


def test_each_chapter_file_names_the_functions_that_hold_its_words_and_figures():
    """A reader of a chapter's text finds, beside each call, the function that draws the figure
    or holds the sentences (the book shows the same under each output)."""
    import re

    for name in experiments.names():
        an = chapters.of(name)
        text = (notebooks_dir() / experiments.notebook(name)).read_text()
        calls = re.findall(r'ch\.figure\((?:"(\w+)")?\)', text)
        wanted = [page.qualified_name(getattr(an, which or "figure")) for which in calls]
        wanted += [page.qualified_name(getattr(an, m)) for m in ("claims", "findings", "prose", "side_by_side", "explorer")]
        missing = [w for w in wanted if w not in text]
        assert not missing, (name, missing)


def test_the_ipynb_is_written_from_the_text_and_a_readers_newer_edit_is_kept(tmp_path):
    import os
    import shutil

    src = tmp_path / "01_countdown.md"
    shutil.copy(notebooks_dir() / "01_countdown.md", src)
    out = notebooks.ipynb_of(src)
    cells = json.loads(out.read_text())["cells"]
    assert [c["cell_type"] for c in cells] == [c.cell_type for c in notebooks.read(src).cells]
    (param,) = [c for c in cells if "parameters" in c["metadata"].get("tags", [])]
    assert "".join(param["source"]) == page.parameters_cell("countdown")
    # a reader's edit in JupyterLab (the .ipynb newer than the text) is kept ...
    edited = out.read_text().replace("Countdown over threads", "My countdown")
    out.write_text(edited)
    os.utime(out, ns=(src.stat().st_mtime_ns + 10**9,) * 2)
    assert notebooks.ipynb_of(src).read_text() == edited
    # ... until the text changes
    os.utime(src, ns=(out.stat().st_mtime_ns + 10**9,) * 2)
    assert "My countdown" not in notebooks.ipynb_of(src).read_text()


def test_the_chapter_list_comes_from_the_registry():
    """_toc.yml, the README's chapter table and the introduction's list are what
    ``gillab notebooks`` writes from the registry (rewrite them with it), and name every chapter."""
    made = contents.expected(REPO)
    assert set(made) == {REPO / "_toc.yml", REPO / "README.md", REPO / "book" / "intro.md"}
    for path, text in made.items():
        assert path.read_text() == text, f"{path.name} is not what `gillab notebooks` writes: run it"
    assert made[REPO / "_toc.yml"] == contents.toc_text()
    readme, intro = (REPO / "README.md").read_text(), (REPO / "book" / "intro.md").read_text()
    for name in experiments.names():
        stem = Path(experiments.notebook(name)).stem
        assert f"`{stem}`" in readme, f"README lists no {stem}"
        assert f"generated/{stem})" in intro, f"the introduction links no {stem}"
        assert f"book/generated/{stem}\n" in made[REPO / "_toc.yml"], f"the table of contents has no {stem}"


def test_a_list_of_chapters_lives_between_its_marks_and_names_what_the_notebook_says(tmp_path):
    """A generated list is rewritten between its marks only (the words around it are kept), from
    each notebook's title and tagline; a file without the marks, or a notebook without a tagline, is
    refused with the reason."""
    block = contents.BLOCKS[contents.README]
    text = f"before\n{block.start}\nstale rows\n{block.end}\nafter\n"
    out = contents.with_block(text, block)
    assert out.startswith(f"before\n{block.start}\n\n| notebook |") and out.endswith(f"\n\n{block.end}\nafter\n")
    assert "stale rows" not in out and contents.with_block(out, block) == out
    assert "| `01_countdown` | countdown split over 1/2/4/8 threads | 000 |" in out
    with pytest.raises(ValueError, match="lacks the marks"):
        contents.with_block("no marks here\n", block, "README.md")
    bare = tmp_path / "01_countdown.md"
    bare.write_text("---\nkernelspec:\n  name: python3\n---\n\n# Countdown\n")
    assert contents.title(bare) == "Countdown" and contents.front_matter(bare) == {"kernelspec": {"name": "python3"}}
    import gillab.present.contents as module

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "notebooks_dir", lambda: tmp_path)
        with pytest.raises(ValueError, match="01_countdown.md has no tagline"):
            contents.entry("countdown", bare.name, "000")


def test_the_store_gives_back_what_was_written(tmp_path):
    store = ExperimentStore("x", "c", root=tmp_path)
    store.extend([{"n": 3, "f": 0.5, "b": True, "s": "07", "l": [1, 2], "none": None, "late": None}])
    store.extend([{"n": 4, "f": 2, "b": False, "s": "8", "l": [], "none": None, "late": 1.5}])
    df = ExperimentStore("x", "c", root=tmp_path).frame()
    assert df["n"].tolist() == [3, 4] and str(df["n"].dtype) == "int64"
    assert df["f"].tolist() == [0.5, 2.0] and str(df["f"].dtype) == "float64"
    assert df["b"].tolist() == [True, False] and str(df["b"].dtype) == "bool"
    assert df["s"].tolist() == ["07", "8"]          # text stays text, leading zero and all
    assert df["l"].tolist() == [[1, 2], []]
    assert df["late"].isna().tolist() == [True, False] and df["late"].iloc[1] == 1.5
    schema = json.loads(store.schema_path.read_text())["columns"]
    assert schema["none"] is None and schema["late"] == "float" and schema["s"] == "str"
    # the CSV stays plain text for auditing
    assert store.samples_path.read_text().splitlines()[1].startswith("3,0.5,True,07,")


def test_a_file_without_a_schema_is_read_by_its_text():
    assert infer_type(["True", "False", ""]) == "bool"
    assert infer_type(["1", "-2"]) == "int" and infer_type(["1", "2.5"]) == "float"
    assert infer_type(["[1, 2]", "[]"]) == "json" and infer_type(["0,1", "0"]) == "str"
    assert infer_type(["", ""]) is None


def test_the_book_cache_key_follows_the_data(tmp_path, monkeypatch):
    """An executed chapter is reused only while its notebook, code, parameters and the samples
    it can read are unchanged: a new sample of countdown changes countdown's key (and the
    verdicts page's), not sha256's."""
    from conftest import copy_reference

    monkeypatch.setenv("GILLAB_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("GILLAB_MACHINE", "test-machine")
    ref = copy_reference(tmp_path / "data")
    params = {"profile": "default", "measure": False, "live": False}
    before = {n: execute.cache_key(n, params) for n in ("countdown", "sha256", "verdicts")}
    assert execute.cache_key("countdown", params | {"profile": "smoke"}) != before["countdown"]
    samples = tmp_path / "data" / "results" / ref / "countdown" / "samples.csv"
    samples.write_text(samples.read_text() + samples.read_text().splitlines()[-1] + "\n")
    after = {n: execute.cache_key(n, params) for n in before}
    assert after["sha256"] == before["sha256"]
    assert after["countdown"] != before["countdown"] and after["verdicts"] != before["verdicts"]


def test_the_book_executes_chapters_in_one_kernel_and_then_reuses_them(tmp_path, monkeypatch):
    """``gillab book``'s path: two chapters in one worker (one kernel, emptied between them) from
    the reference data, each with its own parameters and no error; run again, both are reused."""
    from conftest import copy_reference

    data = tmp_path / "data"
    monkeypatch.setenv("GILLAB_DATA", str(data))
    monkeypatch.setenv("GILLAB_MACHINE", "test-machine")
    copy_reference(data, "countdown")
    copy_reference(data, "sha256")
    out = tmp_path / "generated"
    names = ["countdown", "sha256"]
    assert execute.execute_all("default", output_dir=out, names=names, jobs=1) == {n: "executed" for n in names}
    for n in names:
        nb = json.loads((out / execute.executed_name(n)).read_text())
        outs = [o for c in nb["cells"] for o in c.get("outputs", [])]
        assert not [o for o in outs if o["output_type"] == "error"], n
        text = json.dumps(outs)
        assert f"gillab measure {n} -P default" in text   # its own chapter, not the previous one's
        assert nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    assert execute.execute_all("default", output_dir=out, names=names, jobs=1) == {n: "reused" for n in names}


def test_the_book_shows_outputs_without_code_toggles():
    """A reader of the book sees outputs, no "Show code cell source" toggle: a chapter's cells only
    call its helpers (each output names the function that made it), so their source is removed from
    the page (``remove-input``), and the parameters cell and the one that loads the data leave no
    trace there (``remove-cell``: the method section lists every parameter)."""
    for path in notebooks.sources():
        for cell in notebooks.read(path).cells:
            if cell.cell_type == "code":
                tags = cell.metadata.get("tags", [])
                assert "remove-input" in tags or "remove-cell" in tags, (path.name, cell.source[:40])
                assert "hide-input" not in tags, (path.name, cell.source[:40])
                if "parameters" in tags:
                    assert "remove-cell" in tags, path.name


def test_a_chapter_leads_with_its_results_and_ends_with_its_method():
    """What the document claimed, then our results (figure, verdicts, findings), the explorer, and
    only then the method: parameters, interpreters, runs and the rerun command."""
    for path in notebooks.sources():
        if not path.name[:2].isdigit() or path.name.startswith("9"):
            continue
        heads = [line for line in path.read_text().splitlines() if line.startswith("## ")]
        at = {h.split()[1].rstrip(":"): i for i, h in enumerate(heads)}
        assert at["What"] == 0, (path.name, heads)
        assert at["What"] < at["Results"] < at["Explore"] < at["Method"] < at["Summary"], (path.name, heads)
        assert "ch.method()" in path.read_text(), path.name


def _modules() -> list[Path]:
    return [p for p in sorted(PKG.rglob("*.py")) if "workloads" not in p.parts and p.name != "__main__.py"]


def test_every_module_is_on_the_readmes_map():
    """The README maps the harness layer by layer: a module added, moved or renamed is named there."""
    readme = (REPO / "README.md").read_text()
    block = readme[readme.index("The harness, `scripts/gillab/`, in layers"):]
    block = block[:block.index("```", block.index("```") + 3)]
    missing = [str(p.relative_to(PKG)) for p in _modules()
               if p.parent.name not in ("experiments", "chapters") and p.name != "__init__.py"
               and p.name not in block]
    assert not missing, f"modules the README's map does not name: {missing}"


LONG = 500      # lines


def test_a_module_over_about_500_lines_says_why_in_its_docstring():
    """One concern per module: a long module is split, or its docstring says why it is one."""
    long = {str(p.relative_to(PKG)): n for p in _modules() if (n := len(p.read_text().splitlines())) > LONG}
    silent = [f"{m} ({n} lines)" for m, n in long.items()
              if "Why it is long:" not in (ast.get_docstring(ast.parse((PKG / m).read_text())) or "")]
    assert not silent, f"long modules that do not say why: {silent}"
