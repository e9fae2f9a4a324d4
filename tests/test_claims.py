"""data/reference/claims.csv: every published claim of the five documents as data, every row of
every reference table part of a claim or explained as context, every claim answered."""
import ast
import math
from pathlib import Path

import pandas as pd
import pytest

from gillab.measure import campaigns
from gillab.judge import claims, verdicts, results
from gillab.measure import experiments

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts" / "gillab"


def test_every_claim_row_is_complete_and_well_formed():
    t = claims.table()
    assert len(t) > 100
    for _, c in t.iterrows():
        cid = c["claim_id"]
        assert c["document"] in {"000", "001", "002", "003", "004"}, cid
        assert verdicts.document_of(c["experiment"]) == c["document"], cid   # a registered experiment of that document
        assert cid.startswith(c["experiment"] + "/"), cid
        assert c["kind"] in claims.KINDS and c["comparison"] in claims.COMPARISONS, cid
        for col in ("section", "quote", "statistic", "point", "value_source", "interpreter", "machine"):
            assert c[col].strip(), (cid, col)
        if c["comparison"] == "about":
            assert c["band"] >= 0 and c["band_reason"].strip(), cid        # every band says why
        if c["comparison"] == "not testable":
            assert len(c["band_reason"]) > 20, cid                         # and why not
        elif math.isnan(c["published"]):
            # no value: only where the chapter computes it from the document's own listings
            assert "median" in c["value_source"] or "listing" in c["value_source"], cid


def test_every_document_has_claims():
    t = claims.table()
    assert set(t["document"]) == {"000", "001", "002", "003", "004"}
    # PEP 779's "roughly 5-10%" and Backblaze's version claims are claims too, not only the tables
    assert {"st_loop/pep779_penalty", "b2_download/history/3.11_over_3.6"} <= set(t["claim_id"])


def test_a_derived_value_is_the_documents_own_table():
    # the 2-thread countdown claim is the table's 2-thread time over its 1-thread time
    t1 = results.reference("pbts13_t1_countdown_threads").set_index("threads")["time_s_best_of_3"]
    assert claims.value("countdown/threads=2") == pytest.approx(t1[2] / t1[1])
    assert claims.value("countdown/threads=1") == pytest.approx(t1[1])


def test_every_row_of_every_reference_table_is_a_claim_or_context():
    cover = claims.coverage()
    assert set(cover) == set(claims.tables())
    bare = [(table, i) for table, rows in cover.items() for i, who in rows.items() if not who]
    assert not bare, f"rows that are neither part of a claim nor context: {bare}"
    for reason in claims.context()["reason"]:
        assert len(reason) > 15
    # each table's row count is what coverage walked (a selector never reaches past a table)
    for table, rows in cover.items():
        assert sorted(rows) == list(range(len(results.reference(table)))), table


@pytest.mark.parametrize("ref, words", [
    ("pbts13_t1_countdown_threads[threads=3].time_s_best_of_3", "no row"),
    ("pbts13_t1_countdown_threads[threads=1].seconds", "no column 'seconds'"),
    ("pbts13_t1_countdown_threads[cores=1].time_s_best_of_3", "no column 'cores'"),
    ("pbts13_t1_countdown_threads[#9].time_s_best_of_3", "has 4 rows"),
    ("no_such_table[#1].value", "does not exist"),
])
def test_a_bad_reference_is_refused_with_the_reason(ref, words):
    with pytest.raises(KeyError, match=words):
        claims.cell(ref)


def test_every_judged_row_names_its_threads_and_how_more_than_two_are_read():
    t = claims.table()
    judged = t[t["about"].isin(["mechanism", "cores"]) & (t["comparison"] != "not testable")]
    assert (judged["threads"].str.strip() != "").all()
    many = judged[judged["threads"].str.contains("cpu_count") | judged["threads"].str.extract(r"^(\d+)")[0]
                  .astype(float).gt(claims.FEWEST_CORES)]
    assert len(many) and many["threads"].str.endswith((" pinned", " bound")).all(), many["threads"]


@pytest.mark.parametrize("threads, about, words", [
    ("", "mechanism", "names the threads"),
    ("4", "mechanism", "pinned to the document's or read as a bound"),
    ("cpu_count", "cores", "pinned to the document's or read as a bound"),
    ("four", "mechanism", "not a count"),
    ("2 maybe", "mechanism", "not a count"),
])
def test_a_row_whose_threads_are_unsaid_is_refused(threads, about, words):
    row = {"threads": threads, "about": about, "comparison": "about"}
    assert words in claims.threads_problem(row)
    assert claims.threads_problem(row | {"threads": "4 pinned"}) == ""
    assert claims.threads_problem(row | {"about": "machine", "threads": ""}) == ""


def _row(**kw):
    base = {"claim_id": "x", "comparison": "at least", "value": "1", "derive": "", "about": "mechanism",
            "doc_statistic": "one run", "doc_statistic_words": "one run", "builds": "new GIL", "about_reason": "why",
            "builds_reason": "why", "cpus": "", "threads": "1", "role": "claim", "premise": "",
            "phrase": "either-or", "printed": "", "band": "", "unit": "", "guards": ""}
    return base | kw


@pytest.mark.parametrize("change, words", [
    ({"builds": "ids:3.9.10 vs nogil-3.9.99"}, "ids builds.toml lacks: ['nogil-3.9.99']"),
    ({"builds": "stock GIL"}, "is not one of"),
    ({"about": "cores", "cpus": "two"}, "a count (at least), or =N (exactly)"),
    ({"about": "cores", "cpus": ""}, "a cores claim names the logical CPUs"),
    ({"cpus": "=2"}, "a cores claim names the logical CPUs"),
    ({"role": "noise"}, "role 'noise' is not one of"),
    ({"about": "cores", "cpus": "4"}, "states what 2 would show (premise)"),
    ({"about": "cores", "cpus": "4", "premise": "about 0.5 on 2 CPUs"}, "is not 'at least|at most X on N CPUs'"),
    ({"phrase": "quite a lot"}, "is not in lexicon.csv"),
    ({"guards": "convoy/si=*"}, "only a control names the rows it guards"),
    ({"role": "control", "guards": "convoy/nowhere/*"}, "a pattern matches no other row"),
    ({"quantity": "countdown/threads=2", "experiment": "convoy", "point": "x"}, "another experiment's or point's"),
    ({"quantity": "nowhere/at-all"}, "names no other row"),
])
def test_a_row_with_builds_or_cpus_outside_the_vocabulary_is_refused(change, words):
    assert claims.row_problem(_row()) == ""
    assert claims.row_problem(_row(about="cores", cpus="=2")) == ""
    assert claims.row_problem(_row(builds="ids:3.6.12,3.11.2")) == ""
    assert claims.row_problem(_row(about="cores", cpus="3", premise="at least 0.5 on 2 CPUs")) == ""
    assert claims.row_problem(_row(role="control", guards="convoy/si=*;convoy/conclusion/saturation")) == ""
    assert claims.row_problem(_row(role="control")) == ""           # a fact no build can change guards nothing
    assert claims.row_problem(_row(quantity="countdown/threads=2", experiment="countdown", point="threads=2")) == ""
    assert words in claims.row_problem(_row(**change))


def test_builds_named_by_id_are_those_builds_and_no_other(monkeypatch):
    """``ids:A vs B``: that pair, in that order, and never the twin or today's pair; ``ids:a,b``:
    one of those builds; ``new GIL vs old GIL``: a stock new-GIL build (not a GIL-on twin of a
    free-threaded build), against the old GIL."""
    fams = {"3.9.10": "new GIL", "nogil-3.9.10": "no GIL", "nogil-3.9.10-gil": "new GIL", "3.13.5": "new GIL",
            "3.13.5t": "no GIL", "3.13.5t-gil": "new GIL", "2.7.18": "old GIL", "3.6.12": "new GIL"}
    pair = pd.Series({"builds": "ids:3.9.10 vs nogil-3.9.10", "claim_id": "p"})
    some = pd.Series({"builds": "ids:3.6.12,3.9.10", "claim_id": "s"})
    stock = pd.Series({"builds": "new GIL vs old GIL", "claim_id": "o"})
    rows = {"p": pair, "s": some, "o": stock}
    monkeypatch.setattr(claims, "get", lambda cid: rows[cid])
    assert claims.applies("p", "3.9.10 vs nogil-3.9.10 (10 threads)", fams)
    for other in ("nogil-3.9.10 vs 3.9.10", "nogil-3.9.10-gil vs nogil-3.9.10", "3.13.5 vs 3.13.5t", "3.9.10"):
        assert not claims.applies("p", other, fams), other
    assert claims.applies("s", "3.6.12", fams) and claims.applies("s", "3.9.10 (many)", fams)
    assert not claims.applies("s", "3.13.5", fams) and not claims.applies("s", "3.6.12 vs 3.9.10", fams)
    assert claims.applies("o", "3.9.10 vs 2.7.18 (pi)", fams) and claims.applies("o", "3.13.5 vs 2.7.18", fams)
    assert not claims.applies("o", "3.13.5t-gil vs 2.7.18", fams)      # carries the free-threaded build's costs
    assert not claims.applies("o", "nogil-3.9.10-gil vs 2.7.18", fams)
    assert not claims.applies("o", "3.13.5t vs 2.7.18", fams)          # no GIL at all
    # a build whose samples did not record one GIL state counts for no claim, nor one whose GIL was
    # turned on where its build has none (PYTHONGIL=1)
    assert not claims.applies("p", "3.9.10 vs nogil-3.9.10", fams | {"nogil-3.9.10": "mixed"})
    assert not claims.applies("p", "3.9.10 vs nogil-3.9.10", fams | {"nogil-3.9.10": "new GIL"})
    assert not claims.applies("s", "3.6.12", fams | {"3.6.12": "no GIL"})


def test_every_claim_a_context_row_names_exists():
    """A context row that points at the claim judging its number points at a row of claims.csv."""
    import re

    from gillab.measure import experiments

    ids = set(claims.table()["claim_id"])
    named = re.compile(r"\b(?:" + "|".join(experiments.names()) + r")/[\w.=/-]*\w")
    pointed = [(r["rows"], m) for _, r in claims.context().iterrows() for m in named.findall(r["reason"])]
    assert pointed, "no context row names a claim: the pattern is wrong"
    assert [p for p in pointed if p[1] not in ids] == []


def test_an_unknown_claim_is_a_clear_error():
    with pytest.raises(KeyError, match="no claim 'countdown/threads=3'"):
        claims.value("countdown/threads=3")


@pytest.mark.parametrize("comparison, lo, hi, n, expected", [
    ("about", 0.95, 1.05, 7, "agrees"), ("about", 1.2, 1.3, 7, "higher"), ("about", 0.7, 0.8, 7, "lower"),
    ("about", 0.95, 1.2, 7, "inconclusive"), ("about", 0.99, 1.01, 6, "inconclusive"),
    ("at least", 1.0, 2.0, 7, "agrees"), ("at least", 0.2, 0.5, 7, "lower"), ("at least", 0.5, 2.0, 7, "inconclusive"),
    ("at most", 0.2, 0.9, 7, "agrees"), ("at most", 1.5, 2.0, 7, "higher"), ("at most", 1.5, 2.0, 3, "inconclusive"),
    ("at most", 1.5, 2.0, None, "inconclusive"),          # n unknown: never a definite outcome
    ("not testable", 0.9, 1.1, 9, "not testable here"), ("about", math.nan, math.nan, 0, "not measured"),
])
def test_compare(comparison, lo, hi, n, expected):
    from gillab import stats

    assert claims.compare(comparison, 1.0, 0.10, lo, hi, n, method=stats.MEDIAN) == expected


def test_a_ratio_of_medians_is_judged_on_both_group_sizes():
    from gillab import stats

    assert claims.compare("about", 1.0, 0.10, 1.2, 1.3, (8, 8), method=stats.RATIO) == "higher"
    assert claims.compare("about", 1.0, 0.10, 1.2, 1.3, (8, 3), method=stats.RATIO) == "inconclusive"


def test_every_claim_is_answered_or_marked_on_the_reference():
    """Each claim whose experiment has reference samples gets a verdict row; and no experiment
    judges a claim that claims.csv does not hold."""
    flat = verdicts.flat(verdicts.verdicts(campaigns.reference_id()))
    t = claims.table()
    with_data = set(flat["experiment"])
    assert set(t["experiment"]) <= with_data | {n for n in experiments.names()}
    expected = set(t[t["experiment"].isin(with_data)]["claim_id"])
    assert set(flat["claim_id"]) == expected
    untestable = set(t[t["comparison"] == "not testable"]["claim_id"])
    for _, r in flat.iterrows():
        if r["claim_id"] in untestable:
            assert r["outcome"] == "not testable here", r["claim_id"]
        assert r["outcome"] in verdicts.OUTCOMES, r["claim_id"]


def test_every_definite_verdict_rests_on_a_95_interval_and_agrees_only_inside_its_band():
    """On the committed reference campaign: no outcome agrees / higher / lower whose interval's
    coverage, recomputed here from its estimand and n (never read from the row), is below 95%."""
    from gillab import stats

    flat = verdicts.flat(verdicts.verdicts(campaigns.reference_id()))
    definite = flat[flat["outcome"].isin(["agrees", "higher", "lower"])]
    for _, r in definite.iterrows():
        n = tuple(r["n_each"]) if isinstance(r["n_each"], (tuple, list)) else r["n_each"]
        assert stats.conclusive(r["estimand"], n), (r["claim_id"], r["condition"], r["estimand"], n)
    # the reference's verdicts profile gives every judged claim its runs; the contributed campaigns
    # measured `default` alone, where many have too few: every such row is inconclusive
    others = [c.id for c in campaigns.all_campaigns() if c.is_contributed]
    small = pd.concat([flat] + [verdicts.flat(verdicts.verdicts(c, ["countdown", "sha256"])) for c in others])
    small = small[small["why"].str.startswith("n too small")]
    assert len(small) and set(small["outcome"]) == {"inconclusive"}
    about = definite[(definite["outcome"] == "agrees") & definite["band"].notna()]
    for _, r in about.iterrows():
        lo, hi = sorted((r["published"] * (1 - r["band"]), r["published"] * (1 + r["band"])))
        assert lo <= r["ci_low"] and r["ci_high"] <= hi, (r["claim_id"], r["condition"])


def _numbers(path: Path, only: tuple = ()) -> set:
    """The numeric literals of a module (of its functions named in ``only``, where given)."""
    tree = ast.parse(path.read_text())
    roots = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in only] if only else [tree]
    return {n.value for root in roots for n in ast.walk(root)
            if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)}


VERDICT_CODE = ("claims", "_claim", "_judge", "_value", "_design_claims", "_rate_row", "_measured_rate", "row")


@pytest.mark.parametrize("module, published, only", [
    ("convoy", {30000, 20000, 10030}, ()),          # the echo server's in-text rates and the model's microseconds
    ("b2_download", {2.5, 10, 0.85}, VERDICT_CODE),  # nogil's factors, the multiprocessing.Queue penalty
    ("data_race", {0.005, 1e-6}, ()),               # the default and the race's switch interval
    ("ccbench", {0.5, 1.5}, VERDICT_CODE),          # the latency band, the Beazley effect
    ("doc002", {0.1, 1.075}, VERDICT_CODE),         # the default band, PEP 779's midpoint
    ("over_threads", {0.1}, VERDICT_CODE),
    ("affinity", {0.25, 24000}, VERDICT_CODE),
])
def test_no_published_number_is_typed_into_the_verdict_code(module, published, only):
    files = [f for f in (SCRIPTS / "chapters" / f"{module}.py", SCRIPTS / "measure" / "experiments" / f"{module}.py")
             if f.is_file()]
    assert files and not set().union(*(_numbers(f, only) for f in files)) & published


def test_the_published_values_in_the_verdicts_are_the_claims_tables():
    rows = verdicts.verdicts(campaigns.reference_id())
    t = claims.table()
    for r in rows:
        v = t.loc[r["claim_id"], "published"]
        if isinstance(r["published"], float) and math.isnan(r["published"]):
            assert math.isnan(v) or t.loc[r["claim_id"], "comparison"] == "not testable", r["claim_id"]
        elif not math.isnan(v):
            assert r["published"] == pytest.approx(v), r["claim_id"]


def test_no_reference_table_still_carries_a_role_column():
    # the claim / context mapping lives in claims.csv and context.csv only
    for table in claims.tables():
        assert "role" not in results.reference(table).columns, table
    assert isinstance(claims.context(), pd.DataFrame)


SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


def _plain(text: str) -> str:
    """A document's text or a quote, read as words: quotes, apostrophes and dashes of one kind,
    Markdown's backticks and block-quote markers dropped, whitespace collapsed."""
    import re
    import unicodedata

    text = unicodedata.normalize("NFKC", text).replace("\u00a0", " ")
    text = re.sub(r"(?m)^\s*>\s?", "", text).replace("`", "")
    for kind, one in (("\u2018\u2019\u201a\u201b", "'"), ("\u201c\u201d\u201e\u201f", '"'),
                      ("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-")):
        text = re.sub(f"[{kind}]", one, text)
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the documents (../shared/seeds) are not beside this checkout")
def test_every_quote_is_the_documents_own_words():
    """A claim's quote is the document's words, verbatim: its pieces (" ... " leaves words out,
    " / " joins two passages) in the document, in that order; only a row quoting a table (its
    section names one) describes a cell in words of its own."""
    import re

    docs = {p.name[:3]: _plain(p.read_text(encoding="utf-8")) for p in SEEDS.glob("0*_*.txt")}
    wrong = []
    for _, c in claims.table().iterrows():
        if "table" in c["section"].lower():
            continue
        doc, at = docs[c["document"]], 0
        for piece in (p.strip() for part in re.split(r"\s+/\s+", _plain(c["quote"]))
                      for p in re.split(r"\s*\.\.\.\s*", part) if p.strip()):
            found = doc.find(piece, at)
            if found < 0:
                wrong.append(f"{c['claim_id']}: {piece!r}")
                break
            at = found + len(piece)
    assert not wrong, "quotes that are not the document's words, in its order:\n" + "\n".join(wrong)
