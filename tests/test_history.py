"""A history that can be read: every commit since the rule was set has a subject of at most 72
characters in the imperative ("Add", not "Added" or "Adds"), capitalised, without a closing
period, and a body with the detail after a blank line, so that ``git log --oneline`` reads as a
history and ``git log`` says why."""
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the last commit before the rule: every commit after it is checked (the earlier subjects, a line
# each of up to several hundred characters, are left as they were written)
RULE_FROM = "d64d15d847f05007dcf60367d8ac4b2e4753ecdc"
MAX_SUBJECT = 72
# verbs whose plain form ends as a past tense, a gerund or a third person would
PLAIN = {"bring", "embed", "exceed", "feed", "need", "proceed", "seed", "shed", "speed", "string", "succeed",
         "focus", "bias", "alias", "canvas"}


def problems(subject: str, body: str) -> list[str]:
    """What keeps one commit message from the rule, in words (nothing: it keeps it)."""
    out = []
    if len(subject) > MAX_SUBJECT:
        out.append(f"subject of {len(subject)} characters (at most {MAX_SUBJECT})")
    first = subject.split()[0] if subject.split() else ""
    word = re.sub(r"\W", "", first).lower()
    if not first[:1].isupper():
        out.append("subject does not start with a capital letter")
    if word and word not in PLAIN and (word.endswith(("ed", "ing")) or re.search(r"[^su]s$", word)):
        out.append(f"subject's first word {first!r} is not the imperative (write 'Add', not 'Added' or 'Adds')")
    if subject.rstrip().endswith("."):
        out.append("subject ends with a period")
    if not body.strip():
        out.append("no body: say what changed and why after a blank line")
    return out


@pytest.mark.parametrize("subject, body, ok", [
    ("Add the changes page", "Why and how.", True),
    ("Seed the reference's history", "Why.", True),
    ("Focus the convoy figure", "Why.", True),
    ("Pass the budget to the sweep", "Why.", True),
    ("Added the changes page", "Why.", False),
    ("Adds the changes page", "Why.", False),
    ("Adding the changes page", "Why.", False),
    ("add the changes page", "Why.", False),
    ("Add the changes page.", "Why.", False),
    ("Add the changes page", "", False),
    ("Add " + "x" * 69, "Why.", False),
    ("Add " + "x" * 68, "Why.", True),
])
def test_the_rule_tells_a_readable_message_from_one_that_is_not(subject, body, ok):
    assert (problems(subject, body) == []) == ok


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)


def test_every_commit_since_the_rule_has_a_readable_message():
    if _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout: there is no history to read")
    assert _git("cat-file", "-e", f"{RULE_FROM}^{{commit}}").returncode == 0, \
        f"commit {RULE_FROM} is not in this clone's history (a shallow clone?): fetch the whole history"
    log = _git("log", "--no-merges", "--format=%H%x00%s%x00%b%x1e", f"{RULE_FROM}..HEAD")
    assert log.returncode == 0, log.stderr
    bad = []
    for entry in filter(str.strip, log.stdout.split("\x1e")):
        sha, subject, body = entry.strip("\n").split("\x00")
        bad += [f"{sha[:7]} {subject!r}: {p}" for p in problems(subject, body)]
    assert not bad, "commit messages that break the rule (tests/test_history.py):\n" + "\n".join(bad)
