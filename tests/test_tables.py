"""How the book's tables read: a chapter's judged claims shown and the others folded, each kind
counted; a folded block that keeps its words and counts what it holds; cells kept apart."""
import re

import pandas as pd
import pytest

from gillab.judge import claims, tables

FAMILIES = {"3.9.10": "new GIL", "3.13.5": "new GIL", "3.13.5t": "no GIL"}


def _value(v: float, verdict: str, note: str = "") -> dict:
    return {"median": v, "ci_lo": v * 0.9, "ci_hi": v * 1.1, "verdict": verdict, "note": note}


def _row(claim_id: str, measured: dict) -> dict:
    c = claims.get(claim_id)
    return {"experiment": c["experiment"], "claim_id": claim_id, "claim": f"the words of {claim_id}",
            "published": claims.value(claim_id), "unit": c["unit"], "measured": measured}


def test_a_chapter_shows_its_judged_claims_and_folds_the_others_counted():
    rows = [_row("convoy/si=0.1/cpu_threads=0", {"3.9.10": _value(15_000, "lower", "8 rounds")}),   # about the machine
            _row("convoy/conclusion/process_mild", {"3.9.10 (2 processes)": _value(3.6, "agrees", "8 rounds"),
                                                    "3.13.5": _value(3.7, "agrees", "8 rounds")}),
            _row("convoy/mechanism/si=0.1/cpu_threads=1", {}),
            _row("countdown/gilectomy_overhead", {"3.13.5t": _value(1.0, "not testable here")})]
    parts = tables.verdict_parts(rows, FAMILIES, cpus=2)
    assert list(parts) == ["judged", "machine", "not testable here", "not measured"]
    assert [len(p) for p in parts.values()] == [1, 1, 1, 1]
    judged = parts["judged"].lines
    assert list(judged["build"]) == ["3.13.5", "3.9.10 (2 processes)"] and list(judged["outcome"]) == ["agrees"] * 2
    assert set(judged["missing"]) == {"3.13.5t"}      # the build without a value (3.9.10 has one), named once
    pair = tables.verdict_lines([_row("convoy/conclusion/process_mild", {"3.13.5t vs 3.9.10": _value(1.0, "agrees")})],
                                FAMILIES, 2)
    assert list(pair["missing"]) == ["3.13.5"]
    html = parts["judged"].to_html()
    assert "Every value: 8 rounds." in html and html.count("8 rounds") == 1    # a note every value shares, said once
    assert "the words of convoy/conclusion/process_mild" in html and "not measured" in html
    assert "not measured" in parts["not measured"].to_html()
    assert tables.folded_summary("machine", 1, 2).startswith("1 claim about the author's machine")
    assert tables.folded_summary("not measured", 3).startswith("3 claims not measured")
    # the matrix the verdicts page shows is unchanged: one column per condition
    matrix = tables.verdict_table(rows, FAMILIES, 2)
    assert matrix.loc[1, "3.13.5"].startswith("3.7 [3.33, 4.07]: agrees") and matrix.loc[1, "3.9.10"] == "not measured"


def test_a_folded_block_keeps_its_words_and_counts_what_it_holds():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import Markdown, display
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    df = pd.DataFrame({"build": ["3.13.5", "3.9.10"], "value": ["1.2 [1.1, 1.4]", "not measured"]})
    with capture_output() as cap:
        with tables.folded("The table beside ours"):
            display(Markdown("What the table holds."))
            display(tables.table(df))
            display(Markdown("*the line under it*"))
    words, fold = cap.outputs
    assert words.data["text/markdown"] == "What the table holds."
    html = fold.data["text/html"]
    assert html.startswith("<details") and "<summary" in html
    assert "The table beside ours: 1 table, 2 rows (1 cell not measured)" in html
    assert "<em>the line under it</em>" in html and "3.13.5" in html
    with capture_output() as cap:      # nothing to fold: shown as it was
        with tables.folded("Words only"):
            display(Markdown("Only words."))
    assert [o.data.get("text/markdown") for o in cap.outputs] == ["Only words."]


def test_a_folded_block_that_shows_nothing_is_an_error_not_a_lost_table():
    """Inside a ``with``, a table left as the last line is never displayed: the switch-interval page
    once lost its settings table so, built without a word; the fold now refuses to be empty."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    df = pd.DataFrame({"build": ["3.13.5"], "value": [1.0]})
    with capture_output(), pytest.raises(ValueError, match="displayed nothing"):
        with tables.folded("What each interval achieved"):
            tables.table(df)


def test_every_table_keeps_its_cells_apart():
    df = pd.DataFrame({"build": ["3.13.5"], "interval (ms)": [0.001]})
    for html in (tables.table(df).to_html(), tables.published(df).to_html(), tables.fit(df).to_html()):
        assert 'class="gillab-table"' in html
        assert re.search(r"\btd \{\s*padding: 0\.\d+em 0\.\d+em;", html)     # the cells' padding, in the table's own style


def test_an_estimate_prints_brackets_only_around_an_interval():
    """A 95% interval in brackets; a smaller one with its coverage and n inside them; none (one
    run) without brackets: a range of one run is never printed as an interval."""
    assert tables.estimate_text(1.2, 1.1, 1.3, 0.951, 20) == "1.2 [1.1, 1.3]"
    assert tables.estimate_text(1.28, 1.19, 1.48, 0.75, 3) == "1.28 [1.19, 1.48; 75%, n = 3]"
    assert tables.estimate_text(61484, 61484, 61484, 0.0, 1) == "61,484 (n = 1: no interval)"
    assert tables.estimate_text(2, 2, 2) == "2 [2, 2]"     # a count of what was seen: exact
    assert tables.estimate_text(0.52, 0.50, 0.55, 0.0, 1) == "0.52 (n = 1: no interval)"
    assert tables.estimate_text(float("nan"), 1, 2) == "not measured"


def test_the_verdicts_and_convoys_tables_print_no_bracket_around_one_run():
    """On the reference, convoy's free-threaded cell next to one CPU thread has one run: its table
    and the verdicts' cell say so instead of '61,484 [61,484, 61,484]'."""
    from gillab import chapters
    from gillab.judge import results, verdicts
    from gillab.measure import campaigns

    df = results.samples("convoy", campaigns.reference_id(), verdicts.profile_config("convoy"))
    cells = chapters.of("convoy").side_by_side(df).astype(str).to_numpy().ravel()
    single = [c for c in cells if re.fullmatch(r"[\d,.]+ \[([\d,.]+), \1\]", c)]
    assert not single and any("no interval" in c for c in cells)


def test_the_chapters_tables_print_one_run_without_brackets():
    """A chapter's table beside the document (flask's, the doc-002 and doc-003 chapters', b2's)
    prints the median of one run without an interval; with the reference's rounds, its interval."""
    from gillab import chapters
    from gillab.judge import results, verdicts
    from gillab.measure import campaigns

    for name, col in (("flask_k6", "completed in window: median [interval]"),
                      ("primes", "3.13.5: median [interval] s"), ("stall", "3.13.5")):
        df = results.samples(name, campaigns.reference_id(), verdicts.profile_config(name))
        one = df[df["repeat"].astype(int) == int(df["repeat"].astype(int).min())]
        many = chapters.of(name).side_by_side(df)[col].astype(str)
        single = chapters.of(name).side_by_side(one)[col].astype(str)
        assert many.str.contains(r"\[").all() and not many.str.contains("no interval").any(), name
        assert single.str.contains("n = 1: no interval").all() and not single.str.contains(r"\[").any(), name


def test_affinitys_and_the_verdicts_context_tables_say_where_one_run_is_all():
    """affinity's builds beside the document's one run a point (3.13.5t, a figure's point), and the
    authors' machine numbers on the verdicts page print no range of one run as an interval."""
    from gillab import chapters
    from gillab.judge import results, verdicts
    from gillab.judge.tables import estimate_text
    from gillab.measure import campaigns

    ref = campaigns.reference_id()
    t = chapters.of("affinity").side_by_side(results.samples("affinity", ref, verdicts.profile_config("affinity")))
    cells = [c for c in t["3.13.5t, client same"].astype(str) if c != "-"]
    assert cells and all(c.endswith("(n = 1: no interval)") for c in cells)
    ctx = verdicts.machine_context(verdicts.flat(verdicts.verdicts(ref, profile="default")))
    shown = [estimate_text(m, lo, hi, cov, n) for m, lo, hi, cov, n in
             zip(ctx["measured"], ctx["ci_low"], ctx["ci_high"], ctx["coverage"], ctx["n"])]
    single = [s for s, n in zip(shown, ctx["n"]) if n == 1]
    assert single and all("no interval" in s and "[" not in s for s in single)


def test_an_interval_no_verdict_may_rest_on_says_so_as_the_verdicts_do():
    """The range of 6 runs covers 96.9% at a fixed n, but a sweep that may add runs needs 7 for a
    verdict (the confidence sequence): given its method, the table says so instead of printing a
    plain 95% interval beside a row 'inconclusive (n too small)'."""
    from gillab import stats

    six = stats.coverage(stats.MEDIAN, 6)
    assert six >= stats.LEVEL and not stats.conclusive(stats.MEDIAN, 6)
    assert tables.estimate_text(1.2, 1.1, 1.4, six, 6, stats.MEDIAN) == "1.2 [1.1, 1.4; 97%, n = 6, too few for a verdict]"
    assert tables.estimate_over_runs(1.2, 1.1, 1.4, 6) == "1.2 [1.1, 1.4; 97%, n = 6, too few for a verdict]"
    seven = stats.coverage(stats.MEDIAN, 7)
    assert tables.estimate_text(1.2, 1.1, 1.4, seven, 7, stats.MEDIAN) == "1.2 [1.1, 1.4]"
    assert tables.estimate_over_runs(1.2, 1.1, 1.4, 7) == "1.2 [1.1, 1.4]"
    # a verdict's cell reads its own estimand
    m = {"median": 1.2, "ci_lo": 1.1, "ci_hi": 1.4, "estimand": stats.MEDIAN, "coverage": six, "n": 6}
    assert tables.value_cell(m).endswith("too few for a verdict]")
    assert tables.value_cell(m | {"n": 7, "coverage": seven}) == "1.2 [1.1, 1.4]"


def test_data_races_and_the_countdowns_tables_print_no_range_of_one_run_as_an_interval():
    """data_race's figure points have one run each: their lost updates read 'n = 1: no
    interval', never '0 [0, 0]' beside the claim point's 20 runs; the countdown's and
    switch_interval's tables print their intervals through the same formatter."""
    from gillab import chapters
    from gillab.judge import results, verdicts
    from gillab.measure import campaigns

    ref = campaigns.reference_id()
    t = chapters.of("data_race").side_by_side(results.samples("data_race", ref, verdicts.profile_config("data_race")))
    col = "lost updates: median [interval], max"
    runs = t["runs with a lost update"].str.extract(r"of (\d+)$")[0].astype(int)
    assert (runs == 1).any() and (runs >= 7).any()
    assert t.loc[runs == 1, col].str.contains(r"\(n = 1: no interval\)").all()
    assert not t.loc[runs == 1, col].str.contains(r"\[").any()
    assert t.loc[runs >= 7, col].str.contains(r"\[").all()
    for name in ("countdown", "switch_interval"):
        cells = chapters.of(name).side_by_side(
            results.samples(name, ref, verdicts.profile_config(name))).astype(str).to_numpy().ravel()
        assert not [c for c in cells if re.search(r"\b([\d.]+) / \1 \[\1, \1\]", c)], name


def test_the_verdicts_pages_cells_print_one_run_and_two_groups_honestly():
    """Every verdict row of the reference through flat_texts: a row resting on one run (or a ratio
    of medians over 1 and 10 runs) carries no brackets; a row on enough runs carries them plainly;
    the seed-beside-default columns read the same way."""
    from gillab.judge import verdicts

    flat = verdicts.reference_flat()
    flat = flat[flat["measured"].notna()]
    texts = tables.flat_texts(flat)
    one = [t for t, n in zip(texts, flat["n"]) if n == 1]
    assert one and all("[" not in t and "no interval" in t for t in one)
    # a ratio of medians over one run and many (a build measured once beside one measured whole)
    assert any(int(m[1]) > 1 for t in one if (m := re.search(r"n = 1 and (\d+): no interval", t)))
    enough = [t for t, n, o in zip(texts, flat["n"], flat["outcome"]) if n >= 7 and o in ("agrees", "higher", "lower")]
    assert enough and all(re.search(r"\[[^;\]]+\]$", t) for t in enough)
    beside = verdicts.profile_beside(flat.head(20), flat)
    assert tables.flat_texts(beside, "default ") == tables.flat_texts(beside)


def test_switch_intervals_table_reads_the_documents_ratio_as_the_claims_do():
    """The document's cell beside ours is its ratio over its one-thread time at the same interval,
    the claims' own number (claims.own), not over the mean one-thread time; the one-thread row of
    the two tables is the base of the ratios, no estimate of a time over itself."""
    from gillab import chapters
    from gillab.chapters import switch_interval as si
    from gillab.judge import claims, results, verdicts
    from gillab.measure import campaigns

    ref = campaigns.reference_id()
    df = results.samples("switch_interval", ref, verdicts.profile_config("switch_interval"))
    t = chapters.of("switch_interval").side_by_side(df)
    col = "document: s (x its 1 thread, as the claims read it)"
    cell = t[(t["switch interval (s)"] == "0.1") & (t["threads"] == 4)][col].iloc[0]
    own = float(claims.get("switch_interval/si=0.1/threads=4")["own_value"])
    assert cell.endswith(f"({own:.2f}x)"), (cell, own)
    two = si.two_tables(df, results.samples("countdown", ref, verdicts.profile_config("countdown")))
    first = two[two["threads"] == 1].drop(columns=["threads", "doc table 1 (s)", "doc table 2 at 5 ms (s)",
                                                     "doc: table 2 / table 1"]).iloc[0]
    assert set(first) == {"1 (the base)"}
