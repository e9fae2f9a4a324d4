"""The code key (gillab.measure.codekey): what changes it and what does not (words never, behaviour
always, shown on a copy of this package edited), and the maps from the keys of earlier
definitions, recomputed from the commits they name."""
import ast
import csv
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tokenize
from pathlib import Path

import pytest

from gillab.measure import campaigns, codekey, resume, sweep
from gillab import paths
from gillab.measure import experiments
from gillab.measure.experiments import echo

ROOT = Path(__file__).resolve().parents[1]

FUNC = '''def echo(sock, n):
    """Answer n requests."""
    done = 0
    while done < n:   # one request a turn
        data = sock.recv(64)
        sock.sendall(data)
        done += 1
    return done
'''

CLASS = '''class Echo(Experiment):
    """The echo chapter."""
    name = "echo"
    title = "Echo under load"
    notebook = "03_convoy.ipynb"
    params = {"threads": Param("threads", positive_ints, "thread counts")}

    def points(self, p):
        return [{"threads": t} for t in p["threads"]]
'''


def key(**texts):
    return codekey.key_of(texts)


@pytest.mark.parametrize("same", [
    # layout a linter fixes: comments, blank lines, line breaks inside brackets, indentation width
    FUNC.replace("  # one request a turn", "").replace("    done = 0\n", "    done = 0\n\n"),
    FUNC.replace("sock.sendall(data)", "sock.sendall(\n            data)"),
    FUNC.replace("    ", "  "),
    # a docstring's words
    FUNC.replace("Answer n requests.", "Answer ``n`` requests on ``sock``, then return."),
    FUNC.replace('    """Answer n requests."""\n', ""),
])
def test_layout_comments_and_docstrings_keep_the_key(same):
    assert key(**{"code:echo": same}) == key(**{"code:echo": FUNC})


@pytest.mark.parametrize("changed", [
    FUNC.replace("recv(64)", "recv(65)"),            # a literal
    FUNC.replace("done < n", "done <= n"),           # an operator
    FUNC.replace("sock.sendall(data)", "sock.send(data)"),   # a name
    FUNC.replace("        done += 1\n", "        done += 1\n        done += 0\n"),   # a statement
    FUNC.replace("        done += 1\n", "    done += 1\n"),   # the block a statement is in
])
def test_any_change_of_code_changes_the_key(changed):
    assert key(**{"code:echo": changed}) != key(**{"code:echo": FUNC})


def test_a_class_keeps_its_key_when_only_its_presentation_changes():
    base = key(**{"class:Echo": CLASS})
    assert key(**{"class:Echo": CLASS.replace("Echo under load", "The convoy effect")}) == base
    assert key(**{"class:Echo": CLASS.replace("03_convoy.ipynb", "convoy.md")}) == base
    assert key(**{"class:Echo": CLASS.replace('    notebook = "03_convoy.ipynb"\n', "")}) == base
    # what shapes a sample still counts: its name, its parameters, its points
    assert key(**{"class:Echo": CLASS.replace('name = "echo"', 'name = "echo2"')}) != base
    assert key(**{"class:Echo": CLASS.replace('"threads", positive', '"thread", positive')}) != base
    assert key(**{"class:Echo": CLASS.replace('[{"threads": t}', '[{"threads": t + 1}')}) != base


def test_text_that_is_not_python_is_kept_as_it_is():
    js = "export default function () {\n  http.get(url);  // one request\n}\n"
    assert key(**{"text:k6 script": js}) != key(**{"text:k6 script": js.replace("// one request", "")})
    assert key(**{"text:k6 script": js}) == key(**{"text:k6 script": js.replace("\n", "\r\n")})


def test_the_key_follows_measuring_code_not_analysis_nor_modules():
    cd = codekey.sources(experiments.get("countdown"))
    assert {"file:workload[0]", "file:workloads/_common.py", "file:runner.py",
            "class:Countdown", "class:Experiment"} <= set(cd)
    assert cd["file:workload[0]"].text == (Path(codekey.__file__).parent / "workloads" / "countdown.py").read_text()
    assert not any("figure" in k or "summary" in k for k in cd)
    convoy = codekey.sources(experiments.get("convoy"))
    assert {"file:workload[0]", "file:workload[1]", "code:echo_sample"} <= set(convoy)
    # a helper is named without its module: moving it keeps the key
    assert not any(k.startswith("code:gillab") for k in convoy)
    assert sweep.code_key(experiments.get("convoy")) == codekey.key_of(convoy)




CHECKED = CLASS + '''
    def check(self, p):
        if p["threads"] > 64:
            raise ParameterError("echo: too many threads")
'''


@pytest.mark.parametrize("same", [
    CLASS.replace('"thread counts"', '"how many threads, e.g. [1, 2]"'),                    # a help text
    CLASS.replace('"thread counts"', 'f"thread counts, at most {64}"'),
    CLASS.replace('    notebook =', '    document = "000 (a blog post), first table"\n    notebook ='),
])
def test_a_help_text_and_the_document_keep_the_key(same):
    assert key(**{"class:Echo": same}) == key(**{"class:Echo": CLASS})


@pytest.mark.parametrize("same", [
    CHECKED.replace('"echo: too many threads"', 'f"echo: {p[\'threads\']} threads is more than 64"'),
    CHECKED.replace('"echo: too many threads"', '"echo: " "more than 64 threads is not meaningful"'),
    CHECKED.replace('"echo: too many threads"', '"echo: %d threads" % p["threads"]'),
])
def test_an_error_message_keeps_the_key(same):
    assert key(**{"class:Echo": same}) == key(**{"class:Echo": CHECKED})


@pytest.mark.parametrize("changed", [
    CHECKED.replace("> 64", "> 65"),                                   # the check itself
    CHECKED.replace("raise ParameterError", "raise ValueError"),       # the type raised
    CHECKED.replace('("echo: too many threads")', '("echo: too many threads", 2)'),   # an argument not words
    CHECKED.replace('"thread counts")', '"thread counts", True)'),      # a Param's optional flag
    CHECKED.replace('Param("threads", positive_ints,', 'Param("threads", positive_int,'),   # its parser
])
def test_the_code_around_the_words_still_changes_the_key(changed):
    assert key(**{"class:Echo": changed}) != key(**{"class:Echo": CHECKED})


def test_an_import_alias_keys_as_the_name_it_imports():
    use = "def f(x):\n    return parse(x) + parse(x)\n"
    aliased = codekey.Source(use.replace("parse", "_parse"), {"_parse": "parse"})
    plain = codekey.Source(use, {"parse": "parse"})
    assert key(**{"code:f": aliased}) == key(**{"code:f": plain})
    # a name the module does not import is the function's own; another import is another name
    assert key(**{"code:f": codekey.Source(use.replace("parse", "_parse"))}) != key(**{"code:f": plain})
    assert key(**{"code:f": codekey.Source(use, {"parse": "intervals"})}) != key(**{"code:f": plain})
    module = "from .echo import counts as _counts\nimport os.path as osp\nN = _counts(osp.sep)\n"
    assert (key(**{"file:m.py": module})
            == key(**{"file:m.py": "from ..family import counts\nimport os.path\nN = counts(os.path.sep)\n"}))
    assert key(**{"file:m.py": module}) != key(**{"file:m.py": module.replace("counts as", "intervals as")})
    # a workload's standard-library imports still count: another module is another program
    assert key(**{"file:m.py": "import json\n"}) != key(**{"file:m.py": "import pickle\n"})


def test_a_message_with_other_characters_than_ascii_is_found_where_it_is():
    text = 'def f(n):\n    if n > 1:\n        raise ValueError("n ≥ 2 × too many")\n    return n\n'
    assert key(**{"code:f": text}) == key(**{"code:f": text.replace("n ≥ 2 × too many", "no")})
    assert key(**{"code:f": text}) != key(**{"code:f": text.replace("return n", "return n + 1")})


# -- every word of every experiment, edited in a copy of this package ----------------------------------
KEYS_OF_COPY = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from gillab.measure import experiments
from gillab.measure import sweep
print(json.dumps({n: sweep.code_key(experiments.get(n)) for n in experiments.names()}))
"""


def _keys_now() -> dict[str, str]:
    return {n: sweep.code_key(experiments.get(n)) for n in experiments.names()}


def _package_copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "scripts" / "gillab", tmp_path / "scripts" / "gillab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("builds.toml", "profiles.toml"):
        shutil.copy2(ROOT / f, tmp_path / f)
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns("*.ipynb"))  # the registry
    return tmp_path / "scripts"


def _keys_of(scripts: Path) -> dict[str, str]:
    out = subprocess.run([sys.executable, "-c", KEYS_OF_COPY, str(scripts)], capture_output=True, text=True,
                         cwd=scripts.parent, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _offset(text: str, row: int, col: int) -> int:
    """ast's (line, UTF-8 byte column) as an index into ``text``."""
    lines = text.splitlines(keepends=True)
    return sum(len(x) for x in lines[:row - 1]) + len(lines[row - 1].encode()[:col].decode())


def _replace(text: str, nodes, new: str) -> str:
    spans = sorted({(_offset(text, n.lineno, n.col_offset), _offset(text, n.end_lineno, n.end_col_offset))
                    for n in nodes}, reverse=True)
    for a, b in spans:
        text = text[:a] + new + text[b:]
    return text


def _is_string(node) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, str) or isinstance(node, ast.JoinedStr)
            or isinstance(node, ast.BinOp) and _is_string(node.left))


def _help_texts(tree):
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            name = getattr(n.func, "id", getattr(n.func, "attr", ""))
            if name == "Param" and len(n.args) > 2 and _is_string(n.args[2]):
                yield n.args[2]
            yield from (k.value for k in n.keywords if k.arg == "help" and _is_string(k.value))


def _messages(tree):
    for n in ast.walk(tree):
        if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call):
            yield from (a for a in n.exc.args if _is_string(a))
        if isinstance(n, ast.FunctionDef) and n.name == "applies":
            yield from (r.value for r in ast.walk(n) if isinstance(r, ast.Return) and _is_string(r.value))


def _documents(tree):
    for n in ast.walk(tree):
        if isinstance(n, ast.ClassDef):
            for st in n.body:
                if isinstance(st, ast.Assign) and [getattr(t, "id", "") for t in st.targets] == ["document"]:
                    yield st.value


def _docstrings(tree):
    for n in ast.walk(tree):
        if (isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body and isinstance(n.body[0], ast.Expr)
                and isinstance(n.body[0].value, ast.Constant) and isinstance(n.body[0].value.value, str)):
            yield n.body[0].value


def _names(text: str):
    return list(tokenize.generate_tokens(io.StringIO(text).readline))


def _rename(text: str, old: str, new: str) -> str:
    """Every use of the name ``old`` (not an attribute) as ``new``, its imports' ``as old`` too."""
    toks = _names(text)
    spans = [(_offset(text, *t.start), _offset(text, *t.end)) for i, t in enumerate(toks)
             if t.type == tokenize.NAME and t.string == old and (i == 0 or toks[i - 1].string != ".")]
    for a, b in reversed(spans):
        text = text[:a] + new + text[b:]
    return text


def _edit_aliases(text: str, tree, how: str) -> str:
    imports = [a for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names]
    plain = {a.name for a in imports if not a.asname}
    # an alias that another import binds plainly (`import tomllib` / `import tomli as tomllib`) is a fallback
    aliases = [(a.name, a.asname) for a in imports
               if a.asname and a.asname != a.name and "." not in a.name and a.asname not in plain]
    for name, alias in aliases:
        if how == "renamed":
            text = _rename(text, alias, alias + "_renamed")
        elif sum(t.string == name for t in _names(text)) == 1:
            # `from m import x as y` -> `from m import x`, every y -> x, where x is free in the module
            text = re.sub(rf"\b{re.escape(name)} as {re.escape(alias)}\b", name, text)
            text = _rename(text, alias, name)
    return text


EDITS = {
    "help texts": lambda text, tree: _replace(text, list(_help_texts(tree)), '"an edited help text"'),
    "error messages": lambda text, tree: _replace(text, list(_messages(tree)), 'f"an edited message {1 + 1}"'),
    "document strings": lambda text, tree: _replace(text, list(_documents(tree)), '"an edited document"'),
    "docstrings": lambda text, tree: _replace(text, list(_docstrings(tree)), '"""An edited docstring."""'),
    "import aliases renamed": lambda text, tree: _edit_aliases(text, tree, "renamed"),
    "import aliases dropped": lambda text, tree: _edit_aliases(text, tree, "dropped"),
}


@pytest.mark.parametrize("kind", list(EDITS))
def test_every_word_of_every_experiment_can_change_without_changing_its_key(tmp_path, kind):
    """Each kind of word edited in every module of a copy of this package (experiments, harness,
    workloads): no experiment's key changes.  The edit must have touched every experiment's
    module (help texts, documents, docstrings) or at least one module, or it proves nothing."""
    scripts = _package_copy(tmp_path)
    edited = []
    for f in sorted((scripts / "gillab").rglob("*.py")):
        text = f.read_text()
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        new = EDITS[kind](text, tree)
        if new != text:
            ast.parse(new)
            f.write_text(new)
            edited.append(f.relative_to(scripts / "gillab").as_posix())
    experiment_modules = {f"measure/experiments/{n}.py" for n in experiments.names()}
    if kind in ("help texts", "document strings", "docstrings"):
        assert experiment_modules <= set(edited), sorted(experiment_modules - set(edited))
    assert edited, f"no {kind} found"
    assert _keys_of(scripts) == _keys_now(), f"{kind} changed a key (edited {edited})"


def _first_default(text: str) -> str:
    """The first function default of ``text`` made another value."""
    tree = ast.parse(text)
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef):
            d = next((d for d in n.args.defaults + n.args.kw_defaults if d is not None), None)
            if d is not None:
                return _replace(text, [d], f"({ast.get_source_segment(text, d)}, 1)[1]")
    raise AssertionError("no default to change")


def _first_number(text: str) -> str:
    """The first positive integer literal of ``text`` one more."""
    n = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant) and type(n.value) is int and n.value > 0)
    return _replace(text, [n], str(n.value + 1))


def _swap(old: str, new: str):
    def edit(text):
        assert text.count(old) == 1, f"{old!r} is no longer in the file: update this test"
        return text.replace(old, new)
    return edit


CHANGES = {   # (file, edit, the experiments whose key must change)
    "a literal that reaches a workload": ("measure/experiments/convoy.py", _swap('[{"switch_interval": 0.005,',
                                                                         '[{"switch_interval": 0.004,'), {"convoy"}),
    "a literal in a workload": ("measure/workloads/countdown.py", _first_number,
                                {n for n in experiments.names()
                                 if "countdown" in (experiments.get(n).workloads or (experiments.get(n).workload,))}),
    "a literal in a workload module": ("measure/workloads/_gil.py", _first_number,     # the modules that import it
                                       {"countdown", "switch_interval", "convoy", "affinity", "data_race"}),
    "a parameter's default": ("measure/runner.py", _first_default, set(experiments.names())),
    "a helper's parameter default": ("measure/experiments/echo.py", _swap('client_affinity=None, placement: str = "os",',
                                                                  'client_affinity=0, placement: str = "os",'),
                                     {n for n in experiments.names()
                                      if echo.echo_sample in experiments.get(n).measuring_code}),
    "a statement of run_sample": ("measure/experiments/convoy.py", _swap('client_affinity=p["affinity"], placement',
                                                                 "client_affinity=None, placement"), {"convoy"}),
    "a parameter's parser": ("measure/experiments/convoy.py", _swap('"cpu_threads", counts,', '"cpu_threads", intervals,'),
                             {"convoy"}),
}


@pytest.mark.parametrize("what", list(CHANGES))
def test_a_change_of_behaviour_changes_the_key(tmp_path, what):
    path, edit, changed = CHANGES[what]
    scripts = _package_copy(tmp_path)
    f = scripts / "gillab" / path
    text = f.read_text()
    new = edit(text)
    assert new != text
    f.write_text(new)
    now, then = _keys_now(), _keys_of(scripts)
    assert {n for n in now if now[n] != then[n]} == changed


# -- keys of earlier definitions ----------------------------------------------------------------------
def test_a_stored_key_of_an_earlier_definition_stands_for_todays_key_of_the_same_code():
    exp = "sha256"
    (text_key, token_key), = codekey.LEGACY[0]["keys"][exp].items()
    (v1, v2), = codekey.LEGACY[1]["keys"][exp].items()
    (w1, w2), = codekey.LEGACY[2]["keys"][exp].items()
    assert token_key == v1 and v2 == w1     # sha256's code did not change between the eras' commits
    now = sweep.code_key(experiments.get(exp))
    assert codekey.canonical(exp, text_key) == codekey.canonical(exp, v1) == codekey.canonical(exp, w1) == w2 == now
    assert codekey.same_code(exp, text_key, now) and codekey.same_code(exp, now, now)
    assert not codekey.same_code(exp, text_key, "0" * 16)
    assert not codekey.same_code(exp, "", now)
    assert codekey.canonical("countdown", text_key) == text_key      # another chapter's key means nothing here
    row = {"identity_key": "i", "code_key": text_key}
    assert resume.why_not_resumable(row, "i", now, exp) is None
    assert resume.why_not_resumable(row, "i", "0" * 16, exp) == resume.CODE_CHANGED


def test_a_key_whose_code_changed_before_a_later_era_stays_other_code():
    """ccbench's code changed between the first era's commit and the second's: its text key maps
    to a token key the second era does not know, so it is other code today."""
    exp = "ccbench"
    (text_key, token_key), = codekey.LEGACY[0]["keys"][exp].items()
    assert token_key not in codekey.LEGACY[1]["keys"][exp]
    assert codekey.canonical(exp, text_key) == token_key != sweep.code_key(experiments.get(exp))


def _git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False)


def _extract(commit: str, dest: Path, *paths: str) -> None:
    arch = _git("archive", "--format=tar", commit, *paths)
    assert arch.returncode == 0, f"commit {commit} is not in this repository: {arch.stderr.decode()}"
    with tarfile.open(fileobj=io.BytesIO(arch.stdout)) as tar:
        tar.extractall(dest)


OLD_KEYS = r"""
import importlib.util, json, sys
from pathlib import Path
old, new = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, str(old))
from gillab import experiments, runner, sweep            # the commit's own layout: one flat package
from gillab.experiment import Experiment
spec = importlib.util.spec_from_file_location("newcodekey", new)
ck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ck)
out = {}
for n in experiments.names():
    e = experiments.get(n)
    srcs = ck.sources(e, pkg=old / "gillab", workload_path=runner.workload_path, base=Experiment)
    out[n] = [sweep.code_key(e), ck.key_of(srcs)]
print(json.dumps(out))
"""


@pytest.mark.parametrize("era", range(len(codekey.LEGACY)))
def test_each_era_of_the_map_is_what_its_commit_computes(tmp_path, era):
    """An era's keys are recomputed from the files of the commit it names: that commit's own
    ``sweep.code_key``, and the next definition's key over that commit's sources (the next era's
    commit's ``codekey.py``; this module's for the last era)."""
    if _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout: the commits' files cannot be read")
    e = codekey.LEGACY[era]
    _extract(e["commit"], tmp_path / "old", "scripts", "builds.toml", "profiles.toml")
    if era + 1 < len(codekey.LEGACY):
        _extract(codekey.LEGACY[era + 1]["commit"], tmp_path / "next", "scripts/gillab/codekey.py",
                 "scripts/gillab/codekey_legacy.json")
        new = tmp_path / "next" / "scripts" / "gillab" / "codekey.py"
    else:
        new = Path(codekey.__file__)
    out = subprocess.run([sys.executable, "-c", OLD_KEYS, str(tmp_path / "old" / "scripts"), str(new)],
                         capture_output=True, text=True, cwd=tmp_path / "old", timeout=300)
    assert out.returncode == 0, out.stderr
    computed = json.loads(out.stdout)
    assert set(e["keys"]) <= set(computed)
    for name, pairs in e["keys"].items():
        assert pairs == {computed[name][0]: computed[name][1]}, name


def test_the_committed_campaigns_stay_resumable_where_their_code_is_unchanged():
    """Samples stored with an earlier definition's keys resume under today's key where their code
    is still this code, and nowhere else."""
    unchanged = changed = 0
    earlier = {n: {k for e in codekey.LEGACY for k in e["keys"].get(n, {})} for n in experiments.names()}
    for ref, name in [(c.id, n) for c in campaigns.all_campaigns() if c.is_reference or c.is_contributed
                      for n in experiments.names()]:
        f = paths.results_dir() / ref / name / "samples.csv"
        if not f.is_file():
            continue
        with open(f, newline="") as fh:
            rows = [r for r in csv.DictReader(fh) if r["status"] == "ok" and r.get("code_key") in earlier[name]]
        now = sweep.code_key(experiments.get(name))
        for stored in {r["code_key"] for r in rows}:
            resumes = {resume.why_not_resumable(r, r["identity_key"], now, name) for r in rows if r["code_key"] == stored}
            if codekey.canonical(name, stored) == now:
                assert resumes == {None}, name
                unchanged += 1
            else:
                assert resumes == {resume.CODE_CHANGED}, name
                changed += 1
    assert unchanged >= 1 and changed >= 1


# helpers an experiment calls that decide where a sample's files live, not what it measures: the
# sample records the place (its filesystem), and moving it is not a change of measuring code
PLACES = {"default_io_dir", "download_dir", "files_dir", "filesystem_of"}


@pytest.mark.parametrize("name", experiments.names())
def test_every_helper_that_shapes_a_sample_is_part_of_the_key(name):
    """A module function an experiment's methods call (a point's size, a window's length, the slack
    asked) shapes its samples: it must be keyed (``measuring_code``), or a change to it would resume
    samples of other code.  The switch-interval sizes and the convoy's window once were not."""
    import inspect
    import textwrap

    exp = experiments.get(name)
    cls = type(exp)
    module = sys.modules[cls.__module__]
    keyed = {id(o) for o in exp.measuring_code if not isinstance(o, tuple)}
    unkeyed = set()
    for fn in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(cls)))):
        if not isinstance(fn, ast.FunctionDef) or fn.name == "check":       # check only refuses
            continue
        for call in ast.walk(fn):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                obj = getattr(module, call.func.id, None)
                if (callable(obj) and not isinstance(obj, type) and id(obj) not in keyed
                        and (getattr(obj, "__module__", "") or "").startswith("gillab.measure")
                        and call.func.id not in PLACES):
                    unkeyed.add(call.func.id)
    assert not unkeyed, f"{name}: {sorted(unkeyed)} shape its samples but are not in measuring_code"
