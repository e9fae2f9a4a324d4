"""The book's first screen: a figure counted from the verdicts, and findings that are the chapters'
own checked sentences, each linking to its chapter."""
import re

import pandas as pd
import pytest

from gillab.measure import campaigns
from gillab.present import landing
from gillab.judge import verdicts


def _flat(rows):
    """Verdict rows, each of its own claim (the tally counts claims: one row a claim here)."""
    return pd.DataFrame([{"document": d, "family": f, "role": role, "condition": c, "build": c, "outcome": o,
                          "claim_id": f"test/claim-{i}"} for i, (d, f, role, c, o) in enumerate(rows)])


def test_the_figure_counts_claims_by_document_and_build_family():
    flat = _flat([
        ("000", "new GIL", "judged", "3.9.10", "agrees"),
        ("000", "new GIL", "judged", "3.13.5", "lower"),
        ("000", "new GIL vs no GIL", "judged", "3.9.10 vs nogil-3.9.10", "inconclusive"),
        ("000", "no GIL", "other builds", "3.13.5t", "higher"),          # a finding beside the claim: not counted
        ("000", "new GIL", "machine", "3.9.10", "higher"),                # an author's machine number: context
        ("004", "-", "not testable", "-", "not testable here"),
    ])
    t = landing.counts(flat).set_index(["document", "family"])
    assert t.loc[("000", "new GIL"), "agrees"] == 1 and t.loc[("000", "new GIL"), "higher or lower"] == 1
    assert t.loc[("000", "GIL vs no GIL"), "inconclusive"] == 1
    assert t.loc[("004", "no build"), "not testable here"] == 1
    assert int(t[list(landing.COLOURS)].to_numpy().sum()) == 4
    assert landing.share(flat) == {"held": 1, "failed": 1, "open": 1, "share": 0.5}
    assert "document 000: 1 agree, 1 higher or lower, 1 inconclusive" in landing.alt_text(flat)
    fig = landing.figure({"reference": flat})
    assert fig is not None and len(fig.axes) == 1


def test_the_findings_are_the_chapters_checks_on_the_reference_and_none_is_struck():
    ref = campaigns.reference_id()
    found = landing.findings(ref)
    # every sentence a chapter lists for the first screen, in the book's order, and only those
    from gillab.chapters import of as reading
    from gillab.measure import experiments

    listed = [(n, k) for n in experiments.names() for k in reading(n).headline]
    assert [(f.chapter, f.check.key) for f in found] == listed and len(listed) >= 6
    assert {f.campaign for f in found} == {ref}
    # on the reference a finding holds, or its interval does not settle it and it says so; never struck
    from gillab.judge import prose

    states = {f.check.text: prose.state(f.check) for f in found}
    assert set(states.values()) <= {"holds", "not shown"}, states
    assert sum(s == "holds" for s in states.values()) >= len(found) - 2, states
    text = landing.findings_markdown(found, lambda n: f"generated/{n}", ref)
    assert text.count("\n- ") == len(found) and "(generated/data_race)" in text
    assert text.startswith("**What the reference campaign found**")
    assert "your run did not measure" not in text
    # each is its chapter's own sentence, computed from that chapter's samples
    from gillab.judge import results
    from gillab.chapters import of as analysis

    name, check, _ = found[0]
    df = results.samples_as_chapter(name, ref, verdicts.profile_config(name))
    assert check in analysis(name).prose(df)


def test_a_finding_from_a_chapter_the_readers_run_left_out_names_the_campaign_it_is_from(data_dir):
    """A timed run on a slow machine leaves chapters out; their findings are computed on the
    reference's samples, as the chapters are, and the first screen says so beside each."""
    from conftest import short_run
    from gillab.chapters import of as reading
    from gillab.measure import experiments

    names = {name for name in experiments.names() if reading(name).headline}
    short = campaigns.load(short_run(data_dir, without=("countdown", "stall")))
    assert short.is_contributed and {"countdown", "stall"} <= names
    found = landing.findings(short.id)
    borrowed = [f for f in found if f.campaign != short.id]
    assert borrowed and all(not short.has(f.chapter) for f in borrowed)
    assert all(short.has(f.chapter) for f in found if f.campaign == short.id)
    text = landing.findings_markdown(found, lambda n: f"generated/{n}", short.id)
    own, lent = text.split(f"**Borrowed from the reference campaign `{campaigns.reference_id()}`**")
    assert own.startswith("**What your run found**") and own.count("\n- ") == len(found) - len(borrowed)
    assert "your run holds no samples of these chapters at today's configuration" in lent and lent.count("\n- ") == len(borrowed)
    # a borrowed sentence about "this machine" is about the reference's, and says so
    assert "this machine" not in lent and ("the reference's machine" in lent) == any(
        "this machine" in f.check.text for f in borrowed)


def test_the_first_screen_says_whose_run_it_shows_and_what_it_borrowed():
    """The reader's machine beside the reference's, with the run's pace, load and steal from its
    record, and which chapters it measured and which the book borrows (with the plan's reason)."""
    from gillab.measure import experiments

    names = experiments.names()
    short = next(c for c in campaigns.all_campaigns() if c.is_contributed and landing.run_record(c)
                 and any(not c.has(n) for n in names))
    ref = campaigns.load(campaigns.reference_id())
    text = landing.run_markdown(short, ref, names)
    rec = landing.run_record(short)
    mine = [n for n in names if landing.holds(short, n)]
    assert f"Measured by your run: {len(mine)} of {len(names)} chapters" in text
    lent = [n for n in names if not landing.holds(short, n) and ref.has(n)]
    assert f"Borrowed from the reference: {len(lent)}" in text
    assert all(experiments.get(n).title in text for n in names)
    assert landing.pace_words(rec) in text and f"{rec.cpu_steal_share:.1%}" in text
    assert f"{rec.speed_factor:.2f}x the reference's time" in text      # a record before every probe was read
    assert str(rec.loadavg_start[0]) in text
    if short.fingerprint != ref.fingerprint:
        assert "**another machine**" in text
    # whether the run was steady and alone, in one line; a run before samples were checked cannot say
    quiet = landing.quiet_words(rec)
    assert quiet in text and ("**Steady and alone.**" in quiet) != ("**Provisional" in quiet)
    left = [n for n in lent if n in rec.left_out]
    assert not left or all(f"`{n}`" in text for n in left) and "budget" in text
    alone = landing.run_markdown(None, ref, names)
    assert "reference campaign" in alone and "no run of yours" in alone


def test_the_counts_of_the_first_screen_say_which_are_the_readers_own():
    """Per document, the counts come from the reader's run where it measured the chapter, else from
    the reference, and each document's line says which."""
    from gillab.present import book

    short = next(c for c in campaigns.all_campaigns() if c.is_contributed and landing.run_record(c))
    yours, ref = verdicts.campaign_verdicts(campaign=short.id)
    mixed = landing.mixed_rows(yours, ref)
    assert set(mixed["source"]) <= {"your run", "reference"}
    assert set(mixed.loc[mixed["source"] == "your run", "experiment"]) == {r["experiment"] for r in yours}
    assert not set(mixed.loc[mixed["source"] == "reference", "experiment"]) & {r["experiment"] for r in yours}
    text = book.verdict_counts(yours, ref)
    docs = sorted(set(verdicts.headline(mixed)["document"]))
    assert all(("*(all from your run)*" in ln or "borrowed from the reference" in ln)
               for ln in text.splitlines() if ln.startswith("- **") and "claim x build" in ln), text
    assert len([ln for ln in text.splitlines() if ln.startswith("- **")]) == len(docs)


def test_the_first_screen_says_how_much_of_the_readers_run_agrees_with_the_reference():
    def flat(outcomes, role="judged"):
        return pd.DataFrame([{"claim_id": c, "condition": b, "role": role, "outcome": o}
                             for (c, b), o in outcomes.items()])
    ref = flat({("a", "3.9.10"): "agrees", ("b", "3.9.10"): "higher", ("c", "3.9.10"): "inconclusive",
                ("d", "3.9.10"): "lower", ("e", "3.13.5"): "agrees"})
    yours = pd.concat([flat({("a", "3.9.10"): "agrees", ("b", "3.9.10"): "lower", ("c", "3.9.10"): "agrees",
                             ("d", "3.9.10"): "lower"}),
                       flat({("e", "3.13.5"): "higher"}, role="other builds")])    # not a headline row of yours
    r = landing.beside_reference(yours, ref)
    # one definition with the verdicts and machines pages: judged in both = the same + different + open
    assert (r["both"], r["the same"], r["different"], r["open"]) == (4, 2, 1, 1)
    assert r["differ"] == [{"claim_id": "b", "condition": "3.9.10", "yours": "lower", "reference": "higher"}]
    text = landing.beside_reference_sentence(yours, ref)
    assert "of **4** claims x builds judged in both, **2** the same, **1** different, **1** open" in text
    assert "Different: `b` on 3.9.10: outcome lower in yours, higher in the reference." in text
    assert "**0** different" in landing.beside_reference_sentence(ref, ref)
    assert "no claim x build in common" in landing.beside_reference_sentence(flat({("z", "x"): "agrees"}), ref)
    # rows on a build the reference did not measure are counted apart and named (its 3.9.10, your 3.9.2)
    later = pd.concat([yours, flat({("a", "3.9.2"): "agrees", ("b", "3.9.2"): "agrees"})])
    text = landing.beside_reference_sentence(later, ref)
    assert "Of your run's 6 rows, 2 are on builds the reference did not measure (3.9.2: 2)" in text


def test_a_reworded_checked_sentence_keeps_its_first_screen_finding(tmp_path, monkeypatch):
    """The first screen picks a chapter's sentence by its key, never by its words: a writer who
    rewords the sentence in the chapter's text sees the new words there, the finding kept."""
    import shutil

    from gillab import paths
    from gillab.judge import prose

    ref = campaigns.reference_id()
    before = {(f.chapter, f.check.key): f.check for f in landing.findings(ref)}
    key = ("countdown", "old-gil-two-threads-slower")
    assert key in before
    text_dir = tmp_path / "notebooks"
    shutil.copytree(paths.notebooks_dir(), text_dir, ignore=shutil.ignore_patterns("*.ipynb"))
    nb = text_dir / "01_countdown.md"
    old = "**The old GIL of {old}** makes two threads *slower* than one"     # noqa: RUF027 (a template)
    assert old in nb.read_text()
    new = "Under **{old}'s old GIL**, two threads take longer than one"      # noqa: RUF027 (a template)
    nb.write_text(nb.read_text().replace(old, new))
    monkeypatch.setattr(paths, "notebooks_dir", lambda: text_dir)
    prose.parse_words.cache_clear()
    after = {(f.chapter, f.check.key): f.check for f in landing.findings(ref)}
    assert after.keys() == before.keys()
    reworded = after[key]
    assert reworded.text.startswith("Under **2.7.18's old GIL**, two threads take longer than one")
    assert (reworded.holds, reworded.open, reworded.evidence) == (before[key].holds, before[key].open, before[key].evidence)
    # a reworded sentence that drops a number's slot is refused, naming the text and the key
    nb.write_text(nb.read_text().replace(new, "Under the old GIL, two threads take longer than one"))
    prose.parse_words.cache_clear()
    with pytest.raises(KeyError, match="01_countdown.md: the words of `old-gil-two-threads-slower` lack slots for"):
        landing.findings(ref)


def test_the_first_screen_prints_no_number_that_was_not_measured(monkeypatch):
    """A finding resting on a number not measured (a nan: a build or point the profile left out)
    is left to its chapter: the first screen of the reference and of a fresh reader's run on another
    CPU print none (issue 78: its first finding printed 'nan (n = 0)')."""
    from gillab.judge import prose

    for camp in (campaigns.reference_id(), "intel-xeon-2c-20261129T010057Z"):
        found = landing.findings(camp)
        assert found and not any(prose.missing(f.check) for f in found), camp
        text = landing.findings_markdown(found, lambda n: f"generated/{n}", camp)
        assert not prose._NAN.search(text), camp
    # and a chapter whose sentence rests on a nan keeps it off the first screen
    import gillab.chapters as registry

    real_of = registry.of
    key = real_of("countdown").headline[0]

    class Nan:
        headline = (key,)

        @staticmethod
        def prose(df):
            return [prose.Check("a sentence", evidence="T(2)/T(1) nan (n = 0)", key=key, holds=True, open=False)]

    monkeypatch.setattr(registry, "of", lambda name: Nan if name == "countdown" else real_of(name))
    assert [f.chapter for f in landing.findings(campaigns.reference_id())].count("countdown") == 0


def _shown_as_chapter(c, name):
    """Whether the chapter's page reads campaign ``c``'s samples (as :class:`gillab.present.page.Chapter`
    loads them), asked of the samples themselves."""
    from gillab.judge import results

    try:
        results.samples(name, c.id, verdicts.profile_config(name))
    except results.NoData:
        return False
    return True


@pytest.mark.parametrize("cid", ["intel-xeon-2c-20261129T010057Z", "amd-epyc-2c-20261129T172429Z",
                                 "intel-xeon-2c-20261130T054947Z"])
def test_every_sentence_of_the_first_screen_is_true_of_the_run_it_shows(cid):
    """Issue 78: the first screen's account read against the campaign and its run record, sentence
    by sentence: the chapters measured (those whose pages read the run's samples), the builds its
    samples hold, what is borrowed and why (another configuration, the plan), whose GIL traces the
    pages show, the chapters cut to one run a point, the sizes against the documents', and whether
    the run was steady and alone."""
    from gillab.judge import results
    from gillab.measure import experiments
    from gillab.present import trace_view

    names = experiments.names()
    yours, ref = campaigns.load(cid), campaigns.load(campaigns.reference_id())
    text = landing.run_markdown(yours, ref, names)
    rec = landing.run_record(yours)
    paras = {p.split("**")[1]: p for p in text.split("\n\n") if p.startswith("**")}
    measured = next(v for k, v in paras.items() if k.startswith("Measured by your run"))
    mine = [n for n in names if _shown_as_chapter(yours, n)]
    assert f"Measured by your run: {len(mine)} of {len(names)} chapters" in measured
    builds = set()
    for n in mine:
        builds |= set(results.samples(n, yours.id, verdicts.profile_config(n))["condition"])
    said = re.search(r"on (\d+) builds(?: and (\d+) run with its GIL turned on)?: (.*?)\. ", measured)
    named = set(re.findall(r"`([^`]+)`", said.group(3)))
    twins = {b for b in named if b.endswith("-gil")}          # builds.toml's GIL-on twins are named <id>-gil
    assert int(said.group(1)) == len(named) - len(twins) and int(said.group(2) or 0) == len(twins)
    assert named and named <= builds and not {b for b in builds if b.startswith(("2.", "3.", "nogil"))} - named
    lent = [n for n in names if n not in mine]
    if lent:
        assert f"**Borrowed from the reference: {len(lent)}**" in measured
        assert all(experiments.get(n).title in measured for n in lent)
        other = [n for n in lent if yours.has(n)]
        assert all(f"`{n}`" in measured.split("at another configuration")[0] for n in other)
    shown = {n: trace_view.campaign_for(n, cid) for n in trace_view.CHAPTERS}
    borrowed_traces = {n: c.id for n, c in shown.items() if c is not None and c.id != cid}
    if borrowed_traces:
        part = measured.split("**GIL traces borrowed**")[1]
        assert all(f"`{n}`" in part and f"`{c}`" in part for n, c in borrowed_traces.items())
    assert ("Nothing below is borrowed" in measured) == (not lent and not borrowed_traces)
    cut = [n for n in (rec.fewest if rec else {}) if n in mine]     # cut by the plan and measured
    assert ("One run a point:" in paras) == bool(cut)
    assert all(f"`{n}`" in paras["One run a point:"] for n in cut) if cut else True
    count = experiments.get("countdown")
    assert (f"{count.resolve('default')['total_decrements']:,} decrements where the document counted "
            f"{count.resolve('seed')['total_decrements']:,}") in paras["Sizes:"]
    assert landing.quiet_words(rec) in text


def test_the_pace_row_says_how_far_apart_the_probes_ran():
    """'0.94x the reference's time (every probe)' hid a run whose probes ran 1.53x apart (issue 78's
    second blind read): the row names the probes' median and the slowest over the fastest."""
    from gillab.judge import steadiness

    runs = [c for c in campaigns.all_campaigns() if landing.run_record(c) and landing.run_record(c).pace]
    assert runs
    for c in runs:
        rec = landing.run_record(c)
        got = steadiness.medians(rec)
        words = landing.pace_words(rec)
        assert f"the median of its {len(got)} probes" in words
        assert (f"the slowest {max(got) / min(got):.2f}x the fastest's time" in words) == (len(got) > 1)


def test_the_first_screen_names_every_part_a_page_borrows():
    """The version chart and the second witness are read from other campaigns than a reader's
    default run holds; the first screen named only the borrowed traces (issue 78's second blind
    read). It names each part, chapter and campaign, and never a part the run holds itself."""
    from gillab.measure import experiments
    from gillab.present import parts as book_parts

    names = experiments.names()
    ref = campaigns.load(campaigns.reference_id())
    runs = [c for c in campaigns.all_campaigns() if c.is_contributed and c.has("countdown")]
    chart = next(c for c in campaigns.all_campaigns() if c.is_contributed and not c.has("countdown")
                 and c.has("b2_download"))                 # a campaign of the version chart alone
    for c in (runs[-1], chart):
        parts = landing.parts_shown(c, names)
        text = landing.run_markdown(c, ref, names)
        assert all(camp != c.id for _, _, camp in parts)
        assert all(f"{what} of `{n}` from `{camp}`" in text for what, n, camp in parts)
    held = {n for _, n, _ in landing.parts_shown(chart, names) if n in book_parts.PROFILE_PARTS}
    assert "b2_download" not in held                        # the chart campaign's own chart is not borrowed
    assert any(n == "b2_download" for _, n, _ in landing.parts_shown(runs[-1], names))
