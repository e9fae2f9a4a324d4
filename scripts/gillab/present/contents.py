"""Every list of the chapters, made from the registry: the table of contents (``_toc.yml``), the
README's chapter table and the introduction's list (``book/intro.md``).

The registry (:data:`gillab.measure.experiments.NAMES`) is read from the notebooks' numbers, and
what a list says of a chapter from its text notebook: its title (the first ``# `` heading) and its
tagline, the ``tagline`` of the ``gillab`` table in its front matter.  The README and the
introduction hold their list between two marks (:data:`BLOCKS`); ``gillab notebooks`` and
``gillab book`` rewrite what lies between them, and ``_toc.yml`` whole (:func:`write`), and the
tests check the committed files are what :func:`expected` makes, so no list of chapters is ever
typed.
"""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Callable, NamedTuple

from ..measure import experiments
from ..paths import notebooks_dir, repo_root
from .execute import APPENDIX

README = "README.md"
INTRO = "book/intro.md"
TOC = "_toc.yml"
WIDTH = 100        # the introduction's lines, as its text is wrapped


class Entry(NamedTuple):
    """What a list says of one chapter (or appendix page)."""
    name: str
    stem: str          # its notebook's name without .md (01_countdown): the book's page too
    title: str         # its notebook's first heading
    tagline: str       # its notebook's front matter: gillab: tagline:
    document: str      # its document's number (000 ...), or "all" for the appendix


def front_matter(path: Path) -> dict:
    """The YAML front matter of the text notebook at ``path`` (jupytext's header, and the
    chapter's ``gillab`` table); {} without one."""
    import yaml

    text = Path(path).read_text()
    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---\n", 3)
    return (yaml.safe_load(text[4:end]) or {}) if end > 0 else {}


def title(path: Path) -> str:
    """The first ``# `` heading of the text notebook at ``path``."""
    return next((line[2:].strip() for line in Path(path).read_text().splitlines() if line.startswith("# ")), "")


def entry(name: str, notebook: str, document: str) -> Entry:
    path = notebooks_dir() / notebook
    tagline = str((front_matter(path).get("gillab") or {}).get("tagline", "")).strip()
    if not tagline:
        raise ValueError(f"notebooks/{notebook} has no tagline: its front matter needs `gillab:` with `tagline:`, "
                         "the line the README and the introduction give the chapter")
    return Entry(name, Path(notebook).stem, title(path), tagline, document)


def entries(appendix: bool = True) -> list[Entry]:
    """Every chapter in the book's order, then (``appendix``) the appendix's pages."""
    out = [entry(n, experiments.notebook(n), experiments.get(n).document[:3]) for n in experiments.names()]
    return out + ([entry(n, nb, "all") for n, nb in APPENDIX.items()] if appendix else [])


def toc_text() -> str:
    """``_toc.yml``, from the registry: the method chapter, one part per document with its
    chapters in order, the appendix: verdicts, machines, what changed between references."""
    lines = ["# Table of contents, generated from the registry (gillab.measure.experiments.NAMES: the notebooks'",
             "# numbers) by `gillab notebooks` and `gillab book` (do not edit).",
             "# Experiment chapters are the papermill outputs in book/generated/.",
             "format: jb-book", "root: book/intro", "parts:",
             "  - caption: The report", "    chapters:", "      - file: book/method"]
    part = None
    for name in experiments.names():
        doc = experiments.get(name).document[:3]
        if doc != part:
            lines += [f"  - caption: \"{experiments.DOCUMENTS[doc]}\"", "    chapters:"]
            part = doc
        lines.append(f"      - file: book/generated/{Path(experiments.notebook(name)).stem}")
    lines += ["  - caption: Appendix", "    chapters:"]
    lines += [f"      - file: book/generated/{Path(f).stem}" for f in APPENDIX.values()]
    lines.append("      - file: book/changes")
    return "\n".join(lines) + "\n"


def readme_table() -> str:
    """The README's chapter table: each notebook, its tagline and its document."""
    lines = ["| notebook | experiment | document |", "|---|---|---|"]
    lines += [f"| `{e.stem}` | {e.tagline} | {e.document} |" for e in entries()]
    return "\n".join(lines) + "\n"


def intro_list() -> str:
    """The introduction's list of the chapters: per document (a part of the book, as the table of
    contents groups them), each chapter's title, linked to its page, and its tagline."""
    lines: list[str] = []
    part = None
    for e in entries(appendix=False):
        if e.document != part:
            lines += ([""] if lines else []) + [f"**{experiments.DOCUMENTS[e.document]}**", ""]
            part = e.document
        lines += textwrap.wrap(f"- [{e.title}](generated/{e.stem}): {e.tagline}", width=WIDTH, subsequent_indent="  ",
                               break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines) + "\n"


class Block(NamedTuple):
    """A generated part of a hand-written file: the lines between ``start`` and ``end``."""
    start: str
    end: str
    make: Callable[[], str]


BLOCKS = {
    README: Block("<!-- the chapters: generated from the notebooks by `gillab notebooks` (do not edit) -->",
                  "<!-- end of the chapters -->", readme_table),
    INTRO: Block("% the chapters: generated from the notebooks by `gillab notebooks` (do not edit)",
                 "% end of the chapters", intro_list),
}


def with_block(text: str, block: Block, where: str = "the file") -> str:
    """``text`` with what lies between ``block``'s marks made anew."""
    i, j = text.find(block.start + "\n"), text.find("\n" + block.end)
    if i < 0 or j < i:
        raise ValueError(f"{where} lacks the marks of its generated chapters: {block.start!r} ... {block.end!r}")
    head = text[:i + len(block.start) + 1]
    return head + "\n" + block.make() + "\n" + text[j + 1:]


def expected(root: Path | None = None) -> dict[Path, str]:
    """Each file that lists the chapters -> the text it should hold (its hand-written parts as they
    are in ``root``, the checkout by default; a staged book has no README, and it is left out)."""
    root = Path(root or repo_root())
    out = {root / TOC: toc_text()}
    for rel, block in BLOCKS.items():
        if (root / rel).is_file():
            out[root / rel] = with_block((root / rel).read_text(), block, rel)
    return out


def write(root: Path | None = None) -> list[Path]:
    """Rewrite the files of :func:`expected` that differ from it; returns those it rewrote."""
    changed = []
    for path, text in expected(root).items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            changed.append(path)
    return changed
