"""The guard against orphaning the reference (gillab.judge.keyguard): which code measured each
committed campaign's chapters, and `gillab codekeys --check` red on a change of measuring code
until it is declared, green on a change of words."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gillab.measure import campaigns, codekey, sweep
from gillab.measure import experiments
from gillab.judge import keyguard

ROOT = Path(__file__).resolve().parents[1]

GILLAB = "import sys; sys.path.insert(0, sys.argv[1]); from gillab.cli import main; sys.exit(main(sys.argv[2:]))"


def test_every_chapter_of_the_committed_reference_is_this_code_or_declared():
    assert keyguard.problems() == []


def test_the_table_names_every_committed_campaign_and_chapter():
    cs = campaigns.all_campaigns()
    tab = keyguard.table(cs)
    assert list(tab) == experiments.names()
    assert all(set(row) == {c.id for c in cs} for row in tab.values())
    ref = campaigns.reference_id()
    declared = {d.chapter for d in keyguard.declared()}
    assert all(row[ref].word == keyguard.THIS for name, row in tab.items() if name not in declared)
    # the committed campaigns hold chapters of other code too (measured before a change): the
    # table says so, and so does the code key each of them was measured with
    other = [(cid, name) for name, row in tab.items() for cid, s in row.items() if s.word == keyguard.OTHER]
    assert other
    for cid, name in other:
        assert sweep.code_key(experiments.get(name)) not in tab[name][cid].keys


def test_the_method_chapter_shows_the_list_and_the_table():
    md = keyguard.markdown()
    assert "waits to be measured again" in md or "to be measured again" in md
    decl = keyguard.declared()
    if decl:        # the chapters named in the sentence, why each changed folded under it
        sentence, fold = md.split("<details", 1)
        assert all(d.chapter in sentence.splitlines()[0] for d in decl)
        assert all(f"| {d.chapter} |" in fold.split("</details>")[0] for d in decl)
    for name in experiments.names():
        assert f"| {name} | `{sweep.code_key(experiments.get(name))}` |" in md


def _checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of this package and a data folder with the committed reference in it (linked, not
    copied: nothing here writes to it)."""
    scripts = tmp_path / "scripts"
    shutil.copytree(ROOT / "scripts" / "gillab", scripts / "gillab", ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("builds.toml", "profiles.toml"):
        shutil.copy2(ROOT / f, tmp_path / f)
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns("*.ipynb"))  # the registry
    results = tmp_path / "data" / "results"
    results.mkdir(parents=True)
    ref = (ROOT / "data" / "results" / "REFERENCE").read_text().strip()
    (results / ref).symlink_to(ROOT / "data" / "results" / ref, target_is_directory=True)
    (results / "REFERENCE").write_text(ref + "\n")
    declared = ROOT / "data" / "results" / keyguard.MEASURE_AGAIN_FILE     # what this checkout declares
    if declared.exists():
        shutil.copy2(declared, results / keyguard.MEASURE_AGAIN_FILE)
    return scripts, results


def _codekeys(scripts: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GILLAB_DATA": str(scripts.parent / "data")}
    return subprocess.run([sys.executable, "-c", GILLAB, str(scripts), "codekeys", *args], capture_output=True,
                          text=True, env=env, cwd=scripts.parent, timeout=300)


def test_a_change_of_words_keeps_the_guard_green_and_a_change_of_code_turns_it_red_until_declared(tmp_path):
    scripts, results = _checkout(tmp_path)
    ref = (results / "REFERENCE").read_text().strip()
    # words: a help text and an error message of the countdown chapter
    mod = scripts / "gillab" / "measure" / "experiments" / "countdown.py"
    text = mod.read_text()
    words = (text.replace('"thread counts to sweep, e.g. [1, 2, 4, 8]"', '"how many threads, e.g. [1, 2, 4]"')
             .replace("some threads would have nothing to do", "a thread would count nothing"))
    assert words.count("how many threads") == 1 and "count nothing" in words
    mod.write_text(words)
    green = _codekeys(scripts, "--check")
    assert green.returncode == 0, green.stdout + green.stderr

    # code: a literal of the countdown workload, which the switch-interval chapter runs too
    wl = scripts / "gillab" / "measure" / "workloads" / "countdown.py"
    assert wl.read_text().count("while n > 0:") == 1
    wl.write_text(wl.read_text().replace("while n > 0:", "while n > 1:"))
    red = _codekeys(scripts, "--check")
    assert red.returncode == 1
    orphaned = {line.split(":")[0].removeprefix("[guard] ") for line in red.stdout.splitlines()
                if line.startswith("[guard] ")}
    assert orphaned == {"countdown", "switch_interval"}, red.stdout
    # undeclared: "declare the chapter"; declared for the code before this change: "declare" its new key
    assert "declare the chapter" in red.stdout or "the code changed again; declare" in red.stdout
    keys = json.loads(_codekeys(scripts, "--json").stdout)["code_keys"]

    # declared: green; each declaration names the reference, the key it changed to and why
    entry = '[[chapter]]\nname = "{}"\nreference = "{}"\ncode_key = "{}"\nreason = "the loop stops at 1"\n\n'
    before = (results / keyguard.MEASURE_AGAIN_FILE).read_text() if (results / keyguard.MEASURE_AGAIN_FILE).exists() else ""
    # this checkout's own entries for the chapters changed here are replaced by the test's
    head, *blocks = before.split("[[chapter]]")
    before = head + "".join("[[chapter]]" + b for b in blocks
                            if not any(f'name = "{n}"' in b for n in ("countdown", "switch_interval", "sha256")))
    (results / keyguard.MEASURE_AGAIN_FILE).write_text(
        before + "\n" + "".join(entry.format(n, ref, keys[n]) for n in ("countdown", "switch_interval")))
    declared = _codekeys(scripts, "--check")
    assert declared.returncode == 0, declared.stdout
    assert "to be measured again: countdown" in declared.stdout

    # a declaration that no longer holds is red: another change of the code, another reference,
    # and a chapter that is this code again (the list is emptied when the reference is measured again)
    (results / keyguard.MEASURE_AGAIN_FILE).write_text(
        before + "\n" + entry.format("countdown", ref, "0" * 16)
        + entry.format("switch_interval", "another-reference", keys["switch_interval"])
        + entry.format("sha256", ref, keys["sha256"]))
    stale = _codekeys(scripts, "--check")
    assert stale.returncode == 1
    assert "the code changed again" in stale.stdout
    assert "a new reference starts with an empty" in stale.stdout
    assert "sha256: the reference" in stale.stdout and "remove its entry" in stale.stdout


def test_a_list_with_an_entry_that_lacks_a_field_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GILLAB_DATA", str(tmp_path))
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / keyguard.MEASURE_AGAIN_FILE).write_text('[[chapter]]\nname = "countdown"\n')
    with pytest.raises(keyguard.ParameterError, match="lacks reference, code_key, reason"):
        keyguard.declared()


def test_the_commit_that_declared_an_entry_is_read_from_git():
    """The first commit whose file holds the entry's key: tried on the code-key map, whose first
    era's keys came in the commit that made token keys (b29c9ac)."""
    assert keyguard.Declared("countdown", "ref", "no-such-key-0000", "why").commit() == ""
    if subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", "b29c9ac"], capture_output=True).returncode != 0:
        pytest.skip("not a git checkout with the project's history")
    (old, _), = codekey.LEGACY[0]["keys"]["countdown"].items()
    d = keyguard.Declared("countdown", "ref", old, "why")
    assert d.commit("scripts/gillab/codekey_legacy.json").startswith("b29c9ac")


def test_a_chapter_the_reference_never_measured_is_named_new_not_orphaned():
    """A chapter added since the reference (no sample of it there) is not a change that orphaned
    it: the guard says it is new and how to make it green."""
    from gillab.judge.keyguard import Declared, Status, problems

    ref, now = "ref-campaign", {"countdown": "k1", "toy": "k2"}
    tab = {"countdown": {ref: Status(3, 3, ("k1",))}, "toy": {ref: Status(0, 0, ())}}
    (line,) = problems(tab, [], reference=ref, now=now)
    assert line.startswith("toy: the reference ref-campaign has no samples of it (a new chapter)")
    assert "orphaned" not in line and "code_key = 'k2'" in line
    assert problems(tab, [Declared("toy", ref, "k2", "a new chapter")], reference=ref, now=now) == []
