"""The book speaks of the report and the reader's machine, never of the place it was written in
(issue 78: "3.14 ... cannot be downloaded in this workplace" reached a chapter)."""
import re

from gillab.paths import repo_root

# words of the environment the report was developed in, which a reader's book has no use for
LEAKS = re.compile(r"\bworkplace\b|\bsandbox\b|/work/main|/work/shared", re.IGNORECASE)


def test_no_chapter_or_page_text_names_the_place_it_was_written_in():
    root = repo_root()
    texts = [*root.glob("notebooks/*.md"), *root.glob("book/*.md"), root / "README.md",
             *(root / "scripts" / "gillab").rglob("*.py")]
    found = [f"{p.relative_to(root)}:{n}" for p in texts for n, line in enumerate(p.read_text().splitlines(), 1)
             if LEAKS.search(line)]
    assert not found, found
