"""The code key: which measuring code produced a sample.

A sample is resumed, and a campaign counted as "measured with this code", only where its stored
code key equals the key of the code here (:mod:`gillab.sweep`, :mod:`gillab.across`).  The key
covers the code that shapes a sample: the runner, the workloads' common start-up, the experiment's
workload programs, its class (points, parameters, ``run_sample``) and the helpers it names in
``measuring_code``; not the analysis, so a new figure keeps the samples.

The key is taken over the code's *tokens*, not its text, so that what cannot change a sample
does not change the key:

* comments, blank lines, line breaks inside brackets and the width of indentation;
* docstrings (of modules, classes and functions);
* a class's presentation attributes (:data:`PRESENTATION`: the chapter's title and notebook)
  and the names of its workload programs (``workload``, ``workloads``: each program's text is
  keyed by its place, so renaming ``race.py`` to ``data_race.py`` keeps the key);
* the module a class or function lives in (moving a helper to a module of its own keeps it).

Anything else (a name, a literal, an operator, a statement) changes the key.  A linter's fix
of layout, a moved helper or a renamed notebook therefore keeps the samples; a changed workload
does not.

Samples stored before this key existed carry the key of the code's whole text (:data:`LEGACY`,
kept in ``codekey_legacy.json`` beside this module): that file maps each such key, measured
with the code of one commit, to this key of the same code; ``tests/test_codekey.py`` recomputes
both from that commit's files (``git archive``), so the map cannot claim two codes equal that
were not.
"""
from __future__ import annotations

import ast
import hashlib
import inspect
import io
import json
import tokenize
from pathlib import Path

HARNESS_FILES = ("runner.py", "procs.py", "workloads/_common.py")
PRESENTATION = ("title", "notebook", "workload", "workloads")
LEGACY_FILE = Path(__file__).with_name("codekey_legacy.json")


def sources(exp, *, pkg: Path | None = None, workload_path=None, base: type | None = None) -> dict[str, str]:
    """The code that shapes a sample of ``exp``, by role: ``file:`` the harness files and the
    workload programs (``file:workload[i]``, by their place in ``exp.workloads``), ``class:``
    the experiment's classes (its own and every base that is an experiment), ``code:`` the
    helpers of ``measuring_code`` (by qualified name, without their module), ``text:`` texts it
    names (a k6 script, an nginx.conf).

    ``pkg``, ``workload_path`` and ``base`` default to this package's; the test passes another
    commit's, to recompute its keys."""
    if pkg is None or workload_path is None or base is None:
        from . import runner
        from .experiment import Experiment
        pkg = pkg or Path(__file__).resolve().parent
        workload_path = workload_path or runner.workload_path
        base = base or Experiment
    out = {f"file:{name}": (pkg / name).read_text() for name in HARNESS_FILES}
    for i, w in enumerate(exp.workloads or (exp.workload,)):
        out[f"file:workload[{i}]"] = Path(workload_path(w)).read_text()
    for cls in type(exp).__mro__:
        if isinstance(cls, type) and issubclass(cls, base):
            out[f"class:{cls.__qualname__}"] = inspect.getsource(cls)
    for obj in exp.measuring_code:   # a function or class, or a (name, text) pair
        if isinstance(obj, tuple):
            out[f"text:{obj[0]}"] = obj[1]
        else:
            out[f"code:{obj.__qualname__}"] = inspect.getsource(obj)
    return out


def _spans_left_out(tree: ast.AST, *, presentation: bool) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions of every docstring in ``tree`` and, where ``presentation``, of the
    presentation attributes assigned in a class body."""
    spans = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) or not body:
            continue
        first = body[0]
        if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)):
            spans.append(((first.lineno, first.col_offset), (first.end_lineno, first.end_col_offset)))
        if presentation and isinstance(node, ast.ClassDef):
            for stmt in body:
                targets = (stmt.targets if isinstance(stmt, ast.Assign)
                           else [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id in PRESENTATION:
                    spans.append(((stmt.lineno, stmt.col_offset), (stmt.end_lineno, stmt.end_col_offset)))
    return spans


def normalized(text: str) -> str:
    """Python source as its tokens, one per line, with indentation as INDENT/DEDENT marks and
    without comments, blank lines, line breaks inside brackets, docstrings and presentation
    attributes.  Text that is not Python (a k6 script) is kept as it is, with ``\\n`` ends."""
    try:
        tree = ast.parse(text)
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (SyntaxError, tokenize.TokenError, IndentationError, ValueError):
        return "\n".join(text.splitlines())
    spans = _spans_left_out(tree, presentation=True)
    out: list[str] = []
    skipping_newline = False
    for tok in tokens:
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER):
            continue
        if any(a <= tok.start and tok.end <= b for a, b in spans):
            skipping_newline = True       # the statement's own NEWLINE goes with it
            continue
        if tok.type == tokenize.NEWLINE:
            if skipping_newline:
                skipping_newline = False
                continue
            out.append("NEWLINE")
        elif tok.type == tokenize.INDENT:
            out.append("INDENT")
        elif tok.type == tokenize.DEDENT:
            out.append("DEDENT")
        else:
            skipping_newline = False
            out.append(tok.string)
    # a class or function whose body was only a docstring or presentation keeps its INDENT/DEDENT
    return "\n".join(out)


def key_of(srcs: dict[str, str]) -> str:
    blob = json.dumps({name: normalized(text) for name, text in srcs.items()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def code_key(exp) -> str:
    return key_of(sources(exp))


def _legacy() -> dict[str, dict[str, str]]:
    if not LEGACY_FILE.is_file():
        return {}
    return json.loads(LEGACY_FILE.read_text())["keys"]


LEGACY = _legacy()


def canonical(experiment: str, stored: str) -> str:
    """The key ``stored`` stands for: a text key of :data:`LEGACY` becomes the token key of the
    same code; any other key is itself."""
    return (LEGACY.get(experiment) or {}).get(stored, stored)


def same_code(experiment: str, stored: str, now: str) -> bool:
    return bool(stored) and canonical(experiment, stored) == now
