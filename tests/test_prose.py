"""Sentences about results are checked against the data: on the committed reference data every
one of them holds, and one the data do not bear out is struck through and marked."""
import re

import pytest

from gillab.measure import campaigns
from gillab.measure import experiments
from gillab import chapters
from gillab.judge import prose, verdicts, results


def _reference(name):
    """The reference campaign's samples of the default profile (it also holds seed runs)."""
    return results.samples(name, campaigns.reference_id(), verdicts.profile_config(name))


def _with_prose():
    """The chapters whose analysis states its own sentences (an analysis module's ``prose``)."""
    return [n for n in experiments.names() if "prose" in vars(chapters.of(n))]


@pytest.mark.parametrize("name", _with_prose())
def test_every_sentence_holds_on_the_committed_reference_data(name):
    df = _reference(name)
    checks = chapters.of(name).prose(df)
    assert checks, name
    # a sentence whose interval does not settle it on the reference is said so ("not shown"), not failed
    false = [c.text for c in checks if prose.state(c) == "not true"]
    assert not false, f"{name}: the reference data no longer bear out: {false}"
    for c in checks:
        assert c.evidence and any(ch.isdigit() for ch in c.evidence), c.text   # numbers, computed


# a replacement field left unformatted: "{name}", "{x.at[1, 'col']:.2f}" (a plain string among f-strings)
FORMAT_FIELD = re.compile(r"\{[A-Za-z_][^{}]*\}")


@pytest.mark.parametrize("name", experiments.names())
def test_what_a_chapter_prints_about_its_data_holds_numbers_not_format_fields(name):
    """The findings and the checked sentences, computed from the committed reference data, hold
    no replacement field that was never formatted."""
    df = _reference(name)
    a = chapters.of(name)
    texts = [a.findings(df)]
    if "prose" in vars(a):
        texts += [f"{c.text} {c.evidence} {c.why}" for c in a.prose(df)]
    left = [m.group(0) for t in texts for m in FORMAT_FIELD.finditer(t or "")]
    assert not left, f"{name} prints unformatted fields: {left}"


def test_a_sentence_the_data_do_not_bear_out_is_struck_through_and_marked():
    text = prose.markdown([prose.Check("The rate doubles", True, "1,000 → 2,000 RPS", "Because."),
                           prose.Check("The rate halves", False, "1,000 → 2,000 RPS")])
    first, second = text.splitlines()
    assert first == "- The rate doubles (1,000 → 2,000 RPS). Because."
    assert second.startswith(f'- <del class="gillab-struck">The rate halves.</del> **{prose.NOT_TRUE}:** 1,000 → 2,000 RPS.')
    assert "~~" not in text   # Markdown strikethrough prints as tildes in the book: HTML <del> renders everywhere


def test_a_sentence_its_interval_does_not_settle_is_neither_stated_nor_struck():
    """An interval that reaches across what a sentence says (or too few runs for one) leaves it
    open: printed with its evidence under "not shown by this run", never as found, never struck."""
    c = prose.Check("Eight threads cost more than one", False, "3.9.10 1.09 [0.97, 1.71], n = 8", open=True)
    (line,) = prose.markdown([c]).splitlines()
    assert prose.state(c) == "not shown" and prose.NOT_SHOWN in line and "<del" not in line
    # the mark comes first, so that the sentence is not read as a finding before it
    assert line.startswith(f"- **{prose.NOT_SHOWN}:** ") and "Eight threads cost more than one." in line
    assert "[0.97, 1.71]" in line


def test_a_sentence_holds_or_is_struck_only_on_its_whole_interval():
    """"Above 1" holds only when the whole 95% interval is above 1, is struck only when the whole
    interval is at or below it, and is left open when the interval reaches across 1 or the runs
    are too few for a 95% interval (then never struck, whatever the runs show); the evidence prints
    each median with its interval, and n once where every interval shares it."""
    from gillab import stats

    def m(lo, hi, n=8):
        return {"median": (lo + hi) / 2, "ci_lo": lo, "ci_hi": hi, "n": n, "method": stats.MEDIAN}
    above = (lambda lo, hi: lo > 1, lambda lo, hi: hi <= 1)
    held, struck, left = ({"holds": True, "open": False}, {"holds": False, "open": False}, {"holds": False, "open": True})
    assert prose.settle([m(1.1, 1.3)], *above) == held
    assert prose.settle([m(0.9, 1.3)], *above) == left
    assert prose.settle([m(0.7, 0.9)], *above) == struck
    assert prose.settle([m(1.1, 1.3, n=1)], *above) == left and prose.settle([m(0.7, 0.9, n=1)], *above) == left
    assert prose.settle([m(1.1, 1.3), m(0.9, 1.3)], *above) == left
    assert prose.settle([m(1.1, 1.3), m(0.7, 0.9)], *above) == struck
    assert prose.together(held, left) == left and prose.together(held, struck) == struck
    assert prose.listed("T(2)/T(1)", [("a", m(1.1, 1.3)), ("b", m(1.2, 1.4))]) == \
        "T(2)/T(1), n = 8 runs each: a 1.20 [1.10, 1.30]; b 1.30 [1.20, 1.40]"
    assert prose.interval(m(1.1, 1.3, n=1)) == "1.20 (n = 1: too few runs for a 95% interval)"
    assert prose.inverted(m(0.5, 2.0))["ci_lo"] == 0.5 and prose.inverted(m(0.5, 2.0))["ci_hi"] == 2.0


def test_the_single_thread_cost_follows_the_paired_interval():
    """st_loop's "pays a single-thread cost" on doctored reference samples: the free-threaded build
    made a third slower than its GIL twin in every repeat holds; made a fifth faster, is struck."""
    df = _reference("st_loop")
    gil = df[df["condition"] == "3.13.5"].set_index("repeat")["seconds"]
    free = df["condition"] == "3.13.5t"
    for factor, state in ((4 / 3, "holds"), (0.8, "not true")):
        fake = df.copy()
        fake.loc[free, "seconds"] = fake.loc[free, "repeat"].map(gil).to_numpy() * factor
        assert prose.state(_check("st_loop", fake, "The free-threaded build pays")) == state, factor


def test_missing_data_is_not_a_contradiction():
    """A sentence that fails because a number it rests on was not measured (NaN) says so, with how
    to measure it, and is not struck; one that fails on numbers all measured is struck."""
    gone = prose.Check("The rate halves", False, "3.13.5 nan vs nan RPS; 3.9.10 11,616 vs nan")
    wrong = prose.Check("The rate halves", False, "3.13.5 1,000 vs 2,000 RPS (nanoseconds aside)")
    first, second = prose.markdown([gone, wrong]).splitlines()
    assert prose.NOT_MEASURED in first and "~~" not in first and prose.NOT_TRUE not in first
    assert "full_grid=all" in first and "11,616 vs nan" in first
    assert second.startswith('- <del class="gillab-struck">The rate halves.</del>') and prose.NOT_TRUE in second
    assert prose.missing(gone) and not prose.missing(wrong)


def test_the_convoy_sentences_follow_the_data():
    """The same checks on doctored samples: a server that answers as fast with a CPU thread as
    alone makes "the GIL builds show the convoy" false, and says so."""
    df = _reference("convoy")
    gil = df["gil_enabled"].fillna(False).astype(bool)
    at5 = (df["switch_interval"] - 0.005).abs() < 1e-12
    alone = df[gil & at5 & (df["cpu_threads"] == 0) & (df["cpu_processes"] == 0)]
    fake = df.copy()
    one = gil & at5 & (df["cpu_threads"] == 1) & (df["cpu_processes"] == 0)
    fake.loc[one, "rps"] = float(alone["rps"].median())
    checks = {c.text.split(".")[0]: c for c in chapters.of("convoy").prose(fake)}
    convoy = checks["**The GIL builds show the convoy"]
    assert not convoy.holds and "→" in convoy.evidence
    assert prose.NOT_TRUE in prose.markdown([convoy])


def _check(name, df, starts):
    (c,) = [c for c in chapters.of(name).prose(df) if c.text.startswith(starts)]
    return c


def _stall_waiting(df, share):
    """``df`` with every SIGINT's KeyboardInterrupt arriving ``share`` of the way from the signal
    to the end its repeat's scan without a signal took."""
    sig = df["signal"].astype(str).str.lower().eq("true")
    plain = df[~sig].set_index(["condition", "n", "repeat"])["in_s"]
    out = df.copy()
    for i in out.index[sig]:
        r = out.loc[i]
        after = float(r["sigint_after_s"])
        out.loc[i, "interrupt_s"] = after + share * (plain[(r["condition"], r["n"], r["repeat"])] - after)
    return out


@pytest.mark.parametrize("share", [0.3, 0.7, 1.0])
def test_the_stall_sentences_read_the_line_of_the_claim_they_restate(share):
    """"Ctrl-C waits for the scan" says what claim stall-ctrl-c says, so it holds exactly where
    that claim's row agrees (its line half-way, claims.csv), and the words print the line."""
    from conftest import runs_more_than_once

    # a build the plan ran once leaves its row and an "every build" sentence open, whatever its value
    df = _stall_waiting(runs_more_than_once(_reference("stall")), share)
    check = _check("stall", df, "Ctrl-C waits")
    (row,) = [r for r in chapters.of("stall").claims(df) if r["claim_id"] == "stall/stall-ctrl-c"]
    assert {m["verdict"] for m in row["measured"].values()} == {"agrees" if share > 0.5 else "lower"}
    assert check.holds is (share > 0.5)
    assert "from 50%" in check.evidence


def test_the_document_003_and_ccbench_sentences_follow_the_data():
    """Doctored reference samples turn a sentence false: a free-threaded heartbeat silenced for
    the whole scan; 3.13.5 crashing in its recursion; the old GIL as slow as the new next to pure
    Python; a free-threaded perf2 that collapses while the long request runs."""
    df = _reference("stall")
    fake = df.assign(silent_fraction=df["silent_fraction"].where(df["condition"] != "3.13.5t", 1.0))
    assert _check("stall", df, "Without a GIL").holds and not _check("stall", fake, "Without a GIL").holds

    df = _reference("thread_memory")
    hit = (df["condition"] == "3.13.5") & (df["mode"] == "recursion")
    fake = df.copy()
    fake.loc[hit, "crashed"], fake.loc[hit, "reached_cap"] = True, False
    assert _check("thread_memory", df, "Builds whose Python").holds
    assert not _check("thread_memory", fake, "Builds whose Python").holds

    df = _reference("ccbench")
    old = (df["condition"] == "2.7.18") & (df["task"] == "regex") & (df["test"] == "latency")
    fake = df.copy()
    fake.loc[old, "rtt_ms"], fake.loc[old, "oneway_ms"] = 1.0, 0.5       # every ping answered at once
    assert _check("ccbench", df, "Next to a regex thread").holds
    assert not _check("ccbench", fake, "Next to a regex thread").holds

    df = _reference("fib_server")
    during = (df["condition"] == "3.13.5t") & (df["kind"] == "thread") & (df["phase"] == "during")
    fake = df.copy()
    fake.loc[during, "rate"] = 0
    assert _check("fib_server", df, "Without a GIL, perf2").holds
    assert not _check("fib_server", fake, "Without a GIL, perf2").holds


# -- the words of the checked sentences live in the chapter's text -----------------------------------
def _keys_used(name: str) -> set[str]:
    """The word keys chapter ``name``'s code reads (``said["key"]``), and ``size-note``, which every
    chapter's analysis reads for the verdicts page."""
    import re

    from gillab.paths import repo_root

    text = (repo_root() / "scripts" / "gillab" / "chapters" / f"{name}.py").read_text()
    return set(re.findall(r'said(?:\[|\.fill\(\s*|\.check\(\s*)"([a-z0-9-]+)"', text))


@pytest.mark.parametrize("name", experiments.names())
def test_every_word_a_chapter_reads_is_in_its_text_and_every_word_there_is_read(name):
    from gillab.judge.prose import words

    said = words(name)
    used = _keys_used(name)
    assert used <= set(said), f"{name}: the code reads words its text lacks: {sorted(used - set(said))}"
    assert set(said) - {"size-note"} <= used, f"{name}: words no code reads: {sorted(set(said) - used)}"
    assert chapters.of(name).size_note == said.get("size-note", "")


def test_a_word_edited_in_the_text_is_what_the_chapter_prints(tmp_path, monkeypatch):
    """The words are read from the chapter's text when the sentences are made: an edit there is
    what the check carries, with no Python changed."""
    import shutil

    from gillab import paths

    for nb in paths.notebooks_dir().glob("*.md"):
        shutil.copy2(nb, tmp_path / nb.name)
    monkeypatch.setattr(paths, "notebooks_dir", lambda: tmp_path)
    text = (tmp_path / "01_countdown.md").read_text()
    said = prose.words("countdown")
    old = {k: said[k] for k in ("why-threads-gain-nothing", "gil-builds-gain-nothing")}   # a why, a sentence
    for words in old.values():
        text = text.replace(words.split()[0] + " ", "EDITED ", 1)
    (tmp_path / "01_countdown.md").write_text(text)
    prose.parse_words.cache_clear()
    checks = {c.key: c for c in chapters.of("countdown").prose(_reference("countdown"))}
    assert checks["gil-builds-gain-nothing"].why.startswith("EDITED ")
    assert checks["gil-builds-gain-nothing"].text.startswith("EDITED ")
    assert not {old["why-threads-gain-nothing"], old["gil-builds-gain-nothing"]} & {checks["gil-builds-gain-nothing"].why,
                                                                                    checks["gil-builds-gain-nothing"].text}


@pytest.mark.parametrize("cell, words", [
    ("**Words of the checked sentences** x\n\n`a`\n: one\n\n`a`\n: two\n", "`a` has words twice"),
    ("**Words of the checked sentences** x\n\n`a`\n\n`b`\n: two\n", "no words for `a`"),
])
def test_a_words_cell_that_cannot_be_read_says_why(cell, words):
    with pytest.raises(ValueError, match=words):
        prose.parse_words(cell, "notebooks/x.md")


def test_a_word_the_text_lacks_names_the_text():
    said = prose.Words("notebooks/x.md", prose.parse_words("**Words of the checked sentences**\n\n`a`\n: one\n  two\n"))
    assert said["a"] == "one two"
    with pytest.raises(KeyError, match="notebooks/x.md has no words for `b`"):
        said["b"]
    assert prose.parse_words("no words cell here") == {}


def test_switch_intervals_page_gives_one_number_per_point():
    """The figure and the table beside the document's (the summary), the findings, the checked
    sentences and the verdicts read one slowdown per build, interval and thread count: the claims'
    (paired by round), never a second statistic of the same point."""
    from gillab.chapters import switch_interval as si

    df = _reference("switch_interval")
    s = si.summary(df).set_index(["condition", "switch_interval", "threads"])
    rows = {r["claim_id"]: r for r in si.claims(df)}
    checked = 0
    for cid, row in rows.items():
        point = dict(kv.split("=") for kv in cid.split("/")[1:])
        k, interval = int(point["threads"]), float(point["si"])
        if k == 1:
            continue
        for cond, m in row["measured"].items():
            got = s.loc[(cond, interval, k)]
            assert got["slowdown"] == pytest.approx(m["median"]), (cid, cond)
            assert (got["slowdown_ci_lo"], got["slowdown_ci_hi"]) == pytest.approx((m["ci_lo"], m["ci_hi"]))
            checked += 1
    assert checked > 10
    findings = si.findings(df)
    for line in findings.splitlines():     # each finding's ratio is the summary's at its point
        cond = line.split("**")[1]
        smallest = s.loc[cond].index.get_level_values(0).min()
        kmax = s.loc[(cond, smallest)].index.max()
        assert f"take {s.loc[(cond, smallest, kmax), 'slowdown']:.2f}x" in line, line
    for c in si.prose(df):
        if c.text.startswith("**With the GIL**"):
            m = rows[f"switch_interval/si={df['switch_interval'].min():g}/threads={int(df['threads'].max())}"]["measured"]
            assert all(f"{cond} {v['median']:.2f} [" in c.evidence for cond, v in m.items() if cond in c.evidence)


def test_a_sentences_bound_reads_as_a_claims_bound():
    """prose.at_least / at_most / within settle a sentence as claims.compare judges a row: wholly
    on the said side holds, wholly on the other is contradicted, across the line is open."""
    def m(lo, hi):
        return {"ci_lo": lo, "ci_hi": hi, "n": 7, "method": "median over runs"}

    assert prose.at_least([m(1.1, 1.3)], 1.1)["holds"]
    assert not prose.at_least([m(0.8, 1.05)], 1.1)["holds"] and not prose.at_least([m(0.8, 1.05)], 1.1)["open"]
    assert prose.at_least([m(1.0, 1.2)], 1.1)["open"]
    assert prose.at_most([m(0.5, 0.9)], 0.9)["holds"] and prose.at_most([m(0.85, 0.95)], 0.9)["open"]
    assert prose.within([m(0.95, 1.05)], 0.9, 1.1)["holds"]
    assert not prose.within([m(1.2, 1.3)], 0.9, 1.1)["open"] and prose.within([m(1.05, 1.2)], 0.9, 1.1)["open"]


def test_evidence_after_a_finished_sentence_starts_one_and_one_run_is_singular():
    """Where a mark ends the sentence (not shown, struck), its evidence begins a sentence of its own
    with a capital; a verdict's words count one run, trial or pair in the singular."""
    from gillab import stats
    from gillab.judge import prose

    c = prose.Check("Two threads beat one", False, "the largest T(2)/T(1): 0.58", open=True)
    text = prose.markdown([c])
    assert "The largest T(2)/T(1): 0.58" in text and ". the largest" not in text
    assert stats.why_inconclusive(stats.MEDIAN, 1).startswith(f"{stats.TOO_FEW}: 1 run;")
    assert stats.why_inconclusive(stats.PAIRED, 1).startswith(f"{stats.TOO_FEW}: 1 pair;")
    assert stats.why_inconclusive(stats.MEDIAN, 3).startswith(f"{stats.TOO_FEW}: 3 runs;")


def test_a_sentence_on_fewer_than_two_runs_is_told_apart():
    from gillab.judge.prose import Check, too_few

    assert too_few(Check("x", True, "3.13.5: 1.20 (n = 1)"))
    assert too_few(Check("x", True, "T(2)/T(1) = nan (n = 0)"))
    assert not too_few(Check("x", True, "1.23 [1.06, 1.33], n = 16 paired trials"))
    assert not too_few(Check("x", True, "n = 10 runs"))
