"""Every read-only command on every profile, for the reference and for the newest contributed
campaign: it answers, or says in one line why it cannot (exit code 2: nothing of that profile is
stored); it never stops on an error nobody foresaw.  `gillab verdicts --json -P history` once
stopped on "The truth value of a Series is ambiguous" from a chapter with no samples of that
profile; nothing else ran the commands on the profiles a reader seldom asks for."""
from __future__ import annotations

import json

import pytest

from gillab import cli
from gillab.measure import campaigns, experiments
from gillab.measure.profiles import PROFILES

pytestmark = pytest.mark.slow                  # a minute and a half on one worker: start it early

READ_PROFILES = [*PROFILES, "any"]


def _campaigns() -> list[str]:
    ref = campaigns.reference_id()
    # the newest contributed whole run (a campaign of one chapter's profile, as a version chart, is not one)
    contributed = [c.id for c in campaigns.all_campaigns() if c.is_contributed and len(c.experiments()) > 10]
    return [ref, contributed[-1]]


@pytest.fixture(autouse=True)
def _unexpected_errors_raise(monkeypatch):
    monkeypatch.setenv("GILLAB_DEBUG", "1")          # an error nobody foresaw raises here


def _ran(argv, capsys) -> str:
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    if rc == 2:                                        # said in one line why, nothing to read
        lines = [ln for ln in err.splitlines() if ln.startswith("gillab: error: ")]
        assert len(lines) == 1, err
        assert "Traceback" not in err
        return ""
    assert rc == 0, (argv, err)
    return out


@pytest.mark.parametrize("campaign", _campaigns())
@pytest.mark.parametrize("profile", READ_PROFILES)
def test_verdicts_answer_on_every_profile(campaign, profile, capsys):
    flat = _ran(["verdicts", "--json", "-P", profile, "--campaign", campaign], capsys)
    rows = json.loads(flat)
    assert isinstance(rows, list)
    assert all(r["profile"] == profile for r in rows if "profile" in r)
    if profile in ("default", "smoke"):           # the other forms, on a profile with rows and on one without
        nested = json.loads(_ran(["verdicts", "--nested", "-P", profile, "--campaign", campaign], capsys))
        assert len(nested) == len({r["claim_id"] for r in rows})
        text = _ran(["verdicts", "-P", profile, "--campaign", campaign], capsys)
        assert text.strip()
        assert ("no claim judged" in text) == (not rows)


@pytest.mark.parametrize("campaign", _campaigns())
@pytest.mark.parametrize("profile", READ_PROFILES)
def test_results_answer_for_every_chapter_on_every_profile(campaign, profile, capsys):
    answered = 0
    for name in experiments.names():
        out = _ran(["results", name, "--json", "-P", profile, "--campaign", campaign], capsys)
        if out:
            json.loads(out)
            answered += 1
    if profile in ("default", "any"):
        assert answered == len(experiments.names()), "every chapter has default samples in both campaigns"


@pytest.mark.parametrize("profile", PROFILES)
def test_timing_answers_on_every_profile(profile, capsys):
    for campaign in _campaigns():
        _ran(["timing", "-P", profile, "--campaign", campaign], capsys)


def test_the_listing_commands_answer(capsys):
    for argv in (["campaigns"], ["codekeys"], *(["trace", "list", "--campaign", c] for c in _campaigns())):
        assert _ran(argv, capsys).strip(), argv
    untraced = [c for c in campaigns.all_campaigns() if not (c.dir / "traces").is_dir()][-1]
    said = _ran(["trace", "list", "--campaign", untraced.id], capsys)
    assert "none: `gillab trace record --campaign" in said
    # `verdicts --machines` reads every campaign (44 s): test_exchange runs it
