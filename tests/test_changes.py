"""The history of reference campaigns and what changed in the verdicts from one to the next: the
committed history matches REFERENCE and git, each row's change is told by its two outcomes, and
the appendix's counts are those of the rows it compares."""
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from gillab.measure import campaigns
from gillab.judge import changes
from gillab.paths import results_dir

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("before, after, kind", [
    ("agrees", "agrees", "the same"), ("lower", "lower", "the same"),
    ("agrees", "higher", "different"), ("lower", "higher", "different"),
    ("inconclusive", "agrees", "decided"), ("not measured", "lower", "decided"),
    ("higher", "inconclusive", "no longer decided"), ("inconclusive", "inconclusive", "open"),
    ("inconclusive", "not measured", "open"),
    (float("nan"), "agrees", "new"), ("agrees", float("nan"), "gone"),
])
def test_a_rows_change_is_told_by_its_two_outcomes(before, after, kind):
    assert changes.kind(before, after) == kind


def _rows(*rows):
    return pd.DataFrame([dict(zip(changes.COLUMNS, r)) for r in rows], columns=changes.COLUMNS)


def test_compare_keeps_every_row_judged_in_either_campaign():
    before = _rows(("a", "a/1", "3.9.10", "agrees", 1.0, 0.9, 1.1, True),
                   ("a", "a/1", "3.13.5", "inconclusive", 1.0, 0.5, 1.5, True),
                   ("a", "a/2", "3.9.10", "lower", 0.5, 0.4, 0.6, False))
    after = _rows(("a", "a/1", "3.9.10", "higher", 2.0, 1.8, 2.2, True),
                  ("a", "a/1", "3.13.5", "agrees", 1.0, 0.95, 1.05, True),
                  ("b", "b/1", "3.13.5", "agrees", 1.0, 0.95, 1.05, True))
    cmp = changes.compare(before, after)
    assert dict(zip(cmp["claim_id"] + "@" + cmp["condition"], cmp["change"])) == {
        "a/1@3.9.10": "different", "a/1@3.13.5": "decided", "a/2@3.9.10": "gone", "b/1@3.13.5": "new"}
    (flip,) = changes.different(cmp)[2:]
    assert "`a/1`" in flip and "agrees: 1" in flip and "higher: 2" in flip and "[1.8, 2.2]" in flip
    table = changes.table(cmp)
    assert table[-1].startswith("| all | 0 | 1 | 1 | 0 | 0 | 1 | 1 |")
    assert "| `a` |" in table[2] and table[2].endswith("| both | this |")   # a/2 was other code before


def test_the_committed_history_ends_at_the_reference_and_names_campaigns_that_are_here():
    refs = changes.history()
    assert refs and refs[-1].campaign == campaigns.reference_id()
    for r in refs:
        assert (results_dir() / r.campaign / campaigns.CAMPAIGN_FILE).is_file(), r.campaign
        assert r.why and not re.search(r"\d+(\.\d+)? ?(min|s|%|x)\b", r.why), r.why   # words, no measured numbers
    assert len({r.campaign for r in refs}) == len(refs)


def test_the_history_is_the_order_in_which_git_saw_reference_named():
    log = subprocess.run(["git", "-C", str(ROOT), "log", "--reverse", "--format=%H", "--",
                          "data/results/REFERENCE"], capture_output=True, text=True, check=False)
    if log.returncode != 0:
        pytest.skip("not a git checkout: REFERENCE's history cannot be read")
    named = []
    for commit in log.stdout.split():
        shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:data/results/REFERENCE"],
                               capture_output=True, text=True, check=False)
        if shown.returncode == 0 and (not named or named[-1] != shown.stdout.strip()):
            named.append(shown.stdout.strip())
    assert [r.campaign for r in changes.history()] == named


@pytest.mark.parametrize("text, words", [
    ('[[reference]]\ncampaign = "a"\nsince = "2026-01-02"\n', "lacks why"),
    ('[[reference]]\ncampaign = "a"\nsince = "2026-01-02"\nwhy = "x"\n'
     '[[reference]]\ncampaign = "b"\nsince = "2026-01-01"\nwhy = "y"\n', "order of their days"),
    ('[[reference]\n', "REFERENCES.toml"),
])
def test_a_history_that_cannot_be_read_says_why(tmp_path, text, words):
    path = tmp_path / "REFERENCES.toml"
    path.write_text(text)
    with pytest.raises(changes.BadHistory, match=words):
        changes.history(path)


def test_the_appendix_counts_the_rows_it_compares_on_the_committed_references():
    refs = changes.history()[-2:]
    if len(refs) < 2:
        pytest.skip("one reference so far")
    rows = {r.campaign: changes.judged_rows(r.campaign) for r in refs}
    cmp = changes.compare(rows[refs[0].campaign], rows[refs[1].campaign])
    text = changes.markdown(refs, rows=rows.__getitem__)
    n = cmp["change"].value_counts()
    assert f"Of the {len(cmp)} claims x builds judged in either" in text
    assert f"**{int(n.get('different', 0))} different**" in text
    assert "flipped" not in text and "undecided" not in text          # the pair words (issue 78)
    total = [line for line in text.splitlines() if line.startswith("| all |")][0]
    assert [int(x) for x in total.split("|")[2:2 + len(changes.KINDS)]] == [int(n.get(k, 0)) for k in changes.KINDS]
    assert refs[1].why in text


def test_a_data_folder_without_the_history_or_its_campaigns_says_so(tmp_path, monkeypatch):
    """A book built from another data folder (a test's, a reader's $GILLAB_DATA) that lacks the
    history, or the campaigns it names, says so in the page instead of failing the build."""
    monkeypatch.setenv("GILLAB_DATA", str(tmp_path))
    (tmp_path / "results").mkdir()
    text = changes.markdown()
    assert text.startswith("The history of the reference campaigns cannot be read here") and str(tmp_path) not in text
    refs = [changes.Reference("a", "2026-01-01", "First."), changes.Reference("b", "2026-01-02", "Second.")]
    text = changes.markdown(refs)
    assert "Nothing is compared here: this data folder does not hold `a` or `b`." in text and "Second." in text


def test_each_reference_is_a_section_under_the_pages_title():
    """The page (book/changes.md) has one title; each reference is a section below it, a heading
    one level down, never two (Sphinx warns of a skipped level)."""
    import re

    text = changes.markdown()
    levels = [len(m.group(1)) for m in re.finditer(r"^(#+) ", text, flags=re.M)]
    assert levels and levels[0] == 2 and all(a + 1 >= b for a, b in zip([1] + levels, levels))
