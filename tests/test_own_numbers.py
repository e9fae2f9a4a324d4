"""Every judged claims row fed the document's own numbers: runs drawn around the document's own
value, with a spread of a quarter of the band, at the run count the row's plan takes, must
agree; runs drawn at the value plus or minus twice the band must be judged higher or lower (for
a one-sided row, on the side it can fail on).  A row that rejects its own document, or that no
data could fail (a band around 0, a statistic without an interval), fails here with its id.

The runs are the typical sample of their distribution (normal quantiles at (i - 0.5) / n, no
random draws): what any run of that spread looks like, the same on every machine.  The judging
is the verdicts' own (:func:`gillab.judge.claims.compare` on the interval each method computes)."""
import math
from functools import lru_cache
from statistics import NormalDist

import pytest

from gillab.measure import campaigns
from gillab.judge import claims, report
from gillab import stats
from gillab.measure import experiments

JUDGED = ("mechanism", "cores")
SIMULATED = (stats.MEDIAN, stats.PAIRED, stats.TRIALS, stats.PAIRED_TRIALS, stats.RATIO)


def typical(center: float, spread: float, n: int) -> list[float]:
    """n values around ``center`` with a relative standard deviation ``spread``."""
    return [center * (1 + spread * NormalDist().inv_cdf((i + 0.5) / n)) for i in range(n)]


def interval(method: str, center: float, spread: float, n: int) -> tuple[float, float, object]:
    """The interval ``method`` gives on n typical runs around ``center`` (a ratio of medians: n
    runs a side, the denominator's around 1), and the n the verdict reads."""
    if method == stats.RATIO:
        r = stats.ratio_of_medians(typical(center, spread, n), typical(1.0, spread, n))
        return r["ci_lo"], r["ci_hi"], (n, n)
    lo, hi = stats.median_interval(typical(center, spread, n))
    return lo, hi, n


@lru_cache(maxsize=1)
def _plan() -> dict[str, tuple[str, int, float]]:
    """Per judged claim: the interval method its chapter computes, the number of runs (pairs,
    trials) the reference's default + verdicts plan gave it, and the chapter's published value
    (the document's own number, also where the chapter computes it from the document's listings)."""
    flat = report.flat(report.verdicts(campaigns.reference_id()))
    flat = flat[flat["role"] == "judged"]
    out = {}
    for cid, g in flat.groupby("claim_id"):
        measured = g[g["n"].notna()]
        if len(measured):
            out[cid] = (str(measured["estimand"].iloc[0]), int(measured["n"].max()),
                        float(measured["published"].iloc[0]))
    return out


# The rows that fail today, each with why: a strict register (a row that starts passing fails
# here too, so that its entry is removed), emptied by the second reading of the claims (issue
# "The documents' mechanisms, judged") and by paired rounds (issue "Your run can say yes or no").
KNOWN: dict[str, str] = {}


def _rows():
    t = claims.table()
    t = t[t["about"].isin(JUDGED) & (t["comparison"] != "not testable")]
    return [pytest.param(cid, marks=pytest.mark.xfail(strict=True, reason=KNOWN[cid])) if cid in KNOWN else cid
            for cid in t["claim_id"]]


@pytest.mark.parametrize("cid", _rows())
def test_a_judged_row_agrees_with_its_document_and_can_fail(cid):
    c = claims.get(cid)
    plan = _plan().get(cid)
    if plan is None:
        pytest.skip(f"{cid}: the reference judged no build of it (a cores row on too few CPUs, or not measured)")
    method, n, published = plan
    v = published if not math.isnan(published) else float(c["published"])
    check(cid, c, method, n, v)


def check(cid: str, c, method: str, n: int, v: float) -> None:
    """The row ``c`` (a claims row) with value ``v``, judged by ``method`` over ``n`` runs: it lets
    the document's own number through and can fail (AssertionError naming ``cid`` otherwise)."""
    assert method in SIMULATED + (stats.COUNT, stats.PROPORTION), f"{cid}: {method}: no interval, so no data can fail it"
    if method not in SIMULATED:
        return      # a count of the runs, read as it is, not estimated
    # the document's own number: ``own`` where the row's value is typed from its words, else the
    # value itself where it is derived from the document's tables (or the chapter's listings)
    own = float(c["own_value"]) if not math.isnan(c["own_value"]) else v if not c["value"] else math.nan
    if c["comparison"] == "about":
        b = float(c["band"])
        assert v != 0 and b > 0, f"{cid}: a band around {v} cannot be failed"
        if not math.isnan(own):
            assert claims.compare("about", v, b, *interval(method, own, b / 4, n), method=method) == "agrees", (
                f"{cid}: the document's own {own:.4g} is not judged to agree with {v:.4g} +- {b:.0%}")
        assert claims.compare("about", v, b, *interval(method, v * (1 + 2 * b), b / 4, n), method=method) == "higher", cid
        if v * (1 - 2 * b) > 0:
            assert claims.compare("about", v, b, *interval(method, v * (1 - 2 * b), b / 4, n), method=method) == "lower", cid
        return
    # one-sided: the margin is how far the document's own number clears the threshold (10%, the
    # precision the report reads the documents with, where the document gives no number)
    if math.isnan(own):
        margin = 0.10
    else:
        margin = own / v - 1 if c["comparison"] == "at least" else 1 - own / v
        assert margin > 0, f"{cid}: the document's own {own:.4g} does not clear {c['comparison']} {v:.4g}"
        spread = min(margin, 1.0) / 4
        assert claims.compare(c["comparison"], v, None, *interval(method, own, spread, n), method=method) == "agrees", (
            f"{cid}: the document's own {own:.4g} is not judged {c['comparison']} {v:.4g}")
    spread = min(margin, 1.0) / 4
    fail_at = v * (1 - 2 * min(margin, 0.45)) if c["comparison"] == "at least" else v * (1 + 2 * margin)
    assert claims.compare(c["comparison"], v, None, *interval(method, fail_at, spread, n), method=method) in (
        "lower", "higher"), f"{cid}: runs at {fail_at:.4g} do not fail {c['comparison']} {v:.4g}"


def _row(**kw):
    base = {"comparison": "about", "band": 0.1, "value": "1.0", "own_value": math.nan}
    return base | kw


@pytest.mark.parametrize("broken, words", [
    (dict(band=0.1, own_value=1.3), "is not judged to agree"),                  # rejects its own document
    (dict(comparison="at least", band=math.nan, own_value=0.9), "does not clear"),   # so does a threshold
    (dict(band=0.0), "cannot be failed"),                                       # a band around the value
    (dict(band=0.1, value="0", own_value=0.0), "cannot be failed"),             # a value of 0
])
def test_the_check_fails_a_row_broken_each_way(broken, words):
    row = _row(**broken)
    v = float(row["value"])
    with pytest.raises(AssertionError, match=words):
        check("broken", row, stats.MEDIAN, 8, v)
    with pytest.raises(AssertionError, match="no interval"):
        check("broken", _row(), stats.NO_INTERVAL, 8, 1.0)
    check("sound", _row(own_value=1.02), stats.MEDIAN, 8, 1.0)        # a sound row passes


def test_the_typical_sample_is_what_its_name_says():
    xs = typical(10.0, 0.1, 1001)
    assert abs(sorted(xs)[500] - 10.0) < 1e-9
    assert abs(sum((x - 10.0) ** 2 for x in xs) / 1001 - 1.0) < 0.02
    assert experiments.names()
