"""The code key: which measuring code produced a sample.

A sample is resumed, and a campaign counted as "measured with this code", only where its stored
code key equals the key of the code here (:mod:`gillab.measure.sweep`, :mod:`gillab.judge.across`).  The key
covers the code that shapes a sample: the runner, the workloads' common start-up, the experiment's
workload programs, its class (points, parameters, ``run_sample``) and the helpers it names in
``measuring_code``; not the analysis, so a new figure keeps the samples.

The key is taken over what the code *does*, read from its tokens, so that words and layout,
which cannot change a sample, never change the key:

* comments, blank lines, line breaks inside brackets and the width of indentation;
* docstrings (of modules, classes and functions);
* a class's presentation attributes (:data:`PRESENTATION`: the chapter's title, notebook and
  document, and the names of its workload programs, each program's text being keyed by its
  place, so renaming ``race.py`` to ``data_race.py`` keeps the key);
* messages (:func:`_words`): the words an exception is raised with (``raise
  ParameterError("...")``: its type still counts), a parameter's help text (``Param``'s third
  argument, any ``help=``) and the reason :data:`REASONS` functions return;
* how a class spells its ``measuring_code`` (:data:`BY_VALUE`): the helpers it names are keyed
  by what they are (each one's text, a ``code:`` entry, and each named text, a ``text:`` entry),
  so ``measuring_code = Convoy.measuring_code`` and the same tuple named in a family module key
  alike;
* import aliases and the package's own layout: ``from .echo import intervals as _intervals``
  keys as ``from <package> import intervals``, and every use of a name an import binds keys as
  the name imported (``_intervals`` and ``intervals`` alike as ``import:intervals``), in a
  module's text and in the classes and helpers read from a module that imports it
  (:func:`module_imports`); the module a class or function lives in is never part of it.

Anything else (a name, a number, a string a workload uses, an operator, a statement) changes the
key.  ``tests/test_codekey.py`` edits each kind of word in every experiment and checks the key is
kept, and edits a workload literal, a parameter default and a statement of ``run_sample`` and
checks it changes.

Samples stored with an earlier definition of the key resume through :data:`LEGACY`, kept in
``codekey_legacy.json`` beside this module: one map per earlier definition ("era"), each from the
key the code of one commit had under that definition to the key of the same code under the next
(the current one for the last era).  :func:`canonical` follows the eras in order, so a stored key
stands for today's key only if its code was still the code of every later era's commit; any other
stays what it was, "other code".  ``tests/test_codekey.py`` recomputes every era from its
commit's own files (``git archive``), so the map cannot claim two codes equal that were not.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import io
import json
import sys
import tokenize
from pathlib import Path
from typing import NamedTuple

HARNESS_FILES = ("runner.py", "procs.py", "workloads/_common.py")
PRESENTATION = ("title", "notebook", "document", "workload", "workloads")
BY_VALUE = ("measuring_code",)   # class attributes keyed by what they hold (sources()), not their text
HELP_ARG = {"Param": 2}          # calls whose positional argument at this index is a help text
REASONS = ("applies",)           # functions whose returned strings are a reason shown to a reader
WORDS = "<words>"                # what a message keys as: its words never, that there is one, yes
PACKAGE = "<package>"            # what a relative import's module keys as
LEGACY_FILE = Path(__file__).with_name("codekey_legacy.json")


class Source(NamedTuple):
    """A text the key reads, with the names the module it was read from imports (a class or
    helper's text does not hold its module's imports): each bound name -> the name imported."""
    text: str
    imports: dict[str, str] = {}


def module_imports(obj) -> dict[str, str]:
    """The names the module ``obj`` lives in binds by import (:func:`_imports`)."""
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    try:
        text = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        return {}
    return dict(_imports_of(text))


@functools.lru_cache(maxsize=256)
def _imports_of(text: str) -> tuple[tuple[str, str], ...]:
    try:
        return tuple(_imports(list(ast.walk(ast.parse(text)))).items())
    except SyntaxError:
        return ()


def _imports(nodes: list[ast.AST]) -> dict[str, str]:
    """Each name an import among ``nodes`` binds -> the name it imports: ``y`` -> ``x`` for ``from m
    import x as y``, ``x`` -> ``x`` for ``from m import x``, ``c`` -> ``a.b`` for ``import a.b as
    c``, ``a`` -> ``a`` for ``import a.b``."""
    out = {}
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name == "*":
                    continue
                if a.asname:
                    out[a.asname] = a.name
                else:
                    first = a.name.split(".")[0]
                    out[first] = first
    return out


def sources(exp, *, pkg: Path | None = None, workload_path=None, base: type | None = None) -> dict[str, Source]:
    """The code that shapes a sample of ``exp``, by role: ``file:`` the harness files and the
    workload programs (``file:workload[i]``, by their place in ``exp.workloads``), ``class:``
    the experiment's classes (its own and every base that is an experiment), ``code:`` the
    helpers of ``measuring_code`` (by qualified name, without their module), ``text:`` texts it
    names (a k6 script, an nginx.conf).

    ``pkg``, ``workload_path`` and ``base`` default to this package's; the test passes another
    commit's, to recompute its keys."""
    if pkg is None or workload_path is None or base is None:
        from . import runner
        from .protocol import Experiment
        pkg = pkg or Path(__file__).resolve().parent
        workload_path = workload_path or runner.workload_path
        base = base or Experiment
    out = {f"file:{name}": Source((pkg / name).read_text()) for name in HARNESS_FILES}
    for i, w in enumerate(exp.workloads or (exp.workload,)):
        out[f"file:workload[{i}]"] = Source(Path(workload_path(w)).read_text())
    for cls in type(exp).__mro__:
        if isinstance(cls, type) and issubclass(cls, base):
            out[f"class:{cls.__qualname__}"] = Source(inspect.getsource(cls), module_imports(cls))
    for obj in exp.measuring_code:   # a function or class, or a (name, text) pair
        if isinstance(obj, tuple):
            out[f"text:{obj[0]}"] = Source(obj[1])
        else:
            out[f"code:{obj.__qualname__}"] = Source(inspect.getsource(obj), module_imports(obj))
    return out


# -- what the key leaves out -----------------------------------------------------------------------
Span = tuple[tuple[int, int], tuple[int, int]]


def _span(node: ast.AST) -> Span:
    return (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)


def _is_words(node: ast.AST | None) -> bool:
    """A string built of words: a literal, an f-string, a sum with one (``"..." + ", ".join(x)``),
    ``"..." % x`` or ``"...".format(...)``."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return (_is_words(node.left) and isinstance(node.op, (ast.Add, ast.Mod))
                or isinstance(node.op, ast.Add) and _is_words(node.right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _is_words(node.func.value)
    return False


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _words(nodes: list[ast.AST]) -> list[ast.AST]:
    """The messages among ``nodes``: the string arguments of a raised exception, help texts (the
    whole argument, whatever builds it), and the strings a :data:`REASONS` function returns."""
    out = []
    for node in nodes:
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            out += [a for a in [*node.exc.args, *(k.value for k in node.exc.keywords)] if _is_words(a)]
        elif isinstance(node, ast.Call):
            i = HELP_ARG.get(_call_name(node))
            if i is not None and len(node.args) > i:
                out.append(node.args[i])
            out += [k.value for k in node.keywords if k.arg == "help"]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in REASONS:
            out += [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and _is_words(r.value)]
    return out


def _left_out(nodes: list[ast.AST]) -> list[Span]:
    """Every docstring among ``nodes``, and the presentation attributes and those keyed by value
    (:data:`BY_VALUE`) assigned in a class body."""
    spans = []
    for node in nodes:
        body = getattr(node, "body", None)
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) or not body:
            continue
        first = body[0]
        if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)):
            spans.append(_span(first))
        if isinstance(node, ast.ClassDef):
            for stmt in body:
                targets = (stmt.targets if isinstance(stmt, ast.Assign)
                           else [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id in PRESENTATION + BY_VALUE:
                    spans.append(_span(stmt))
    return spans


def _alias_tails(nodes: list[ast.AST]) -> list[Span]:
    """The ``as name`` of every aliased import (from the end of the imported name to the end of
    the alias)."""
    out = []
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.asname:
                    # the alias node spans ``name as asname``; its name ends where the text of the name does
                    start = (a.lineno, a.col_offset)
                    out.append(((start[0], start[1] + len(a.name.encode())), (a.end_lineno, a.end_col_offset)))
    return out


def _relative_froms(nodes: list[ast.AST]) -> set[int]:
    """The lines of ``from .x import y`` statements: their module is the package's layout."""
    return {n.lineno for n in nodes if isinstance(n, ast.ImportFrom) and n.level}


def _import_statements(nodes: list[ast.AST]) -> list[Span]:
    return [_span(n) for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))]


def _char_col(lines: list[str], row: int, col: int) -> int:
    """ast's column (UTF-8 bytes) as tokenize's (characters)."""
    line = lines[row - 1] if 0 < row <= len(lines) else ""
    return len(line.encode()[:col].decode(errors="ignore"))


def normalized(text: str | Source) -> str:
    """Python source as its tokens, one per line, with indentation as INDENT/DEDENT marks and
    without comments, blank lines, line breaks inside brackets, docstrings, presentation
    attributes and import aliases; each message as :data:`WORDS`, each use of an imported name as
    the name imported.  Text that is not Python (a k6 script) is kept as it is, with ``\\n``
    ends."""
    src = text if isinstance(text, Source) else Source(text)
    return _normalized(src.text, tuple(sorted(src.imports.items())))


@functools.lru_cache(maxsize=512)
def _normalized(text: str, module_imports: tuple[tuple[str, str], ...]) -> str:
    try:
        reader = _Reader(text, dict(module_imports))
    except (SyntaxError, tokenize.TokenError, IndentationError, ValueError):
        return "\n".join(text.splitlines())
    # a class or function whose body was only a docstring or presentation keeps its INDENT/DEDENT
    return "\n".join(reader.keyed())


def _inside(tok, spans: list[Span]) -> Span | None:
    return next((s for s in spans if s[0] <= tok.start and tok.end <= s[1]), None)


class _Reader:
    """One Python text's tokens as the key reads them (:func:`normalized`)."""
    LAYOUT = {tokenize.NEWLINE: "NEWLINE", tokenize.INDENT: "INDENT", tokenize.DEDENT: "DEDENT"}
    NOTHING = (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER)

    def __init__(self, text: str, module_imports: dict[str, str]):
        nodes = list(ast.walk(ast.parse(text)))
        self.tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        lines = text.splitlines()

        def chars(span: Span) -> Span:
            (r0, c0), (r1, c1) = span
            return (r0, _char_col(lines, r0, c0)), (r1, _char_col(lines, r1, c1))

        self.dropped = [chars(s) for s in _left_out(nodes)]                 # with their NEWLINE
        self.skipped = [chars(s) for s in _alias_tails(nodes)]              # tokens alone
        self.words = [chars(_span(n)) for n in _words(nodes)]               # one WORDS mark each
        self.imports = {**module_imports, **_imports(nodes)}
        self.statements = [chars(s) for s in _import_statements(nodes)]    # their names are not uses
        self.relative = _relative_froms(nodes)

    def keyed(self) -> list[str]:
        out: list[str] = []
        self.skipping_newline, self.in_module_path, self.prev = False, False, ""
        self.words_done: set = set()
        for tok in self.tokens:
            if tok.type not in self.NOTHING:
                left = self._left_out(tok)
                out += self._kept(tok) if left is None else left
        return out

    def _left_out(self, tok) -> list[str] | None:
        """What a token the key leaves out keys as (nothing, or one WORDS mark for a message's
        first token); None for a token it keeps."""
        if _inside(tok, self.dropped):
            self.skipping_newline = True       # the statement's own NEWLINE goes with it
            return []
        if _inside(tok, self.skipped):
            return []
        w = _inside(tok, self.words)
        if w is None:
            return None
        if w in self.words_done:
            return []
        self.words_done.add(w)
        return [WORDS]

    def _kept(self, tok) -> list[str]:
        if tok.type in self.LAYOUT:
            skip = tok.type == tokenize.NEWLINE and self.skipping_newline
            self.skipping_newline = self.skipping_newline and not skip
            return [] if skip else [self.LAYOUT[tok.type]]
        self.skipping_newline = False
        out = self._name(tok)
        self.prev = tok.string
        return out

    def _name(self, tok) -> list[str]:
        is_name = tok.type == tokenize.NAME
        if is_name and tok.string == "from" and tok.start[0] in self.relative:
            self.in_module_path = True
            return ["from", PACKAGE]
        if self.in_module_path:
            self.in_module_path = not (is_name and tok.string == "import")
            return [] if self.in_module_path else ["import"]
        if is_name and self.prev != "." and tok.string in self.imports and not _inside(tok, self.statements):
            return _imported(self.imports[tok.string])
        return [tok.string]


def _imported(name: str) -> list[str]:
    """The tokens a use of an imported name keys as: ``import:a . b`` for ``a.b``."""
    first, *rest = name.split(".")
    out = [f"import:{first}"]
    for part in rest:
        out += [".", part]
    return out


def key_of(srcs: dict[str, str | Source]) -> str:
    blob = json.dumps({name: normalized(text) for name, text in srcs.items()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def code_key(exp) -> str:
    return key_of(sources(exp))


# -- keys of earlier definitions ----------------------------------------------------------------------
def _legacy() -> list[dict]:
    if not LEGACY_FILE.is_file():
        return []
    return json.loads(LEGACY_FILE.read_text())["eras"]


LEGACY = _legacy()


def canonical(experiment: str, stored: str) -> str:
    """The key ``stored`` stands for under today's definition: followed through each earlier
    era's map in turn (a key of an era's commit becomes the next definition's key of the same
    code); a key no map names is itself."""
    for era in LEGACY:
        stored = (era["keys"].get(experiment) or {}).get(stored, stored)
    return stored


def same_code(experiment: str, stored: str, now: str) -> bool:
    return bool(stored) and canonical(experiment, stored) == now
