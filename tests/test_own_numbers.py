"""Every judged claims row fed the document's own numbers: runs drawn at the value plus or minus
twice the band must be judged higher or lower (for a one-sided row, on the side it can fail on);
a row that no data could fail (a band around 0, a statistic without an interval) fails here with
its id.  Runs drawn around the document's own value, with a spread of a quarter of the band, at
the run count the row's plan takes, should agree: where they do not, the document's own numbers
miss what its own words mean (the row's band is the lexicon's, never widened to let them through),
and the row is reported by name as a finding about the document (a :class:`DocumentMiss` warning),
not failed.

The runs are the typical sample of their distribution (normal quantiles at (i - 0.5) / n, no
random draws): what any run of that spread looks like, the same on every machine.  The judging
is the verdicts' own (:func:`gillab.judge.claims.compare` on the interval each method computes)."""
import math
import warnings
from functools import lru_cache
from statistics import NormalDist

import pytest

from gillab.measure import campaigns
from gillab.judge import claims, verdicts
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


@lru_cache(maxsize=None)
def _plan(campaign: str | None = None, profile: str | None = "default",
          experiment: str | None = None) -> dict[str, tuple[str, int, float]]:
    """Per judged claim (and control, which is read the same way and only never tallied): the
    interval method its chapter computes, the number of runs (pairs, trials) the reference's
    default + verdicts plan gave it (or ``campaign``'s), and the chapter's published value (the
    document's own number, also where the chapter computes it from the document's listings).
    With ``experiment``, that chapter's claims only: each chapter's rows are judged on their own
    (:func:`gillab.judge.verdicts.verdicts`), so they are the same as among every chapter's."""
    flat = verdicts.flat(verdicts.verdicts(campaign or campaigns.reference_id(), profile=profile,
                                           experiments=[experiment] if experiment else None))
    if flat.empty:
        return {}
    flat = flat[flat["role"].isin(["judged", "control"])]
    out = {}
    for cid, g in flat.groupby("claim_id"):
        measured = g[g["n"].notna() & (g["estimand"].astype(str) != "")]
        if len(measured):
            out[cid] = (str(measured["estimand"].iloc[0]), int(measured["n"].max()),
                        float(measured["published"].iloc[0]))
    return out


def plan_of(cid: str):
    """The reference's plan of ``cid``; for a row the reference has not measured with this code
    (a chapter declared to be measured again), or measured at one run only because its builds
    changed since (the nogil rows' today's pair stands in for the retired fork: the reference's
    profile gave that pair one run), the newest committed campaign's that judged it, on every
    sample it holds."""
    if cid in _plan() and _plan()[cid][1] > 1:
        return _plan()[cid]
    experiment = cid.split("/")[0]
    held = [c.id for c in campaigns.all_campaigns() if c.id != campaigns.reference_id()
            and (c.dir / experiment).is_dir()]
    for profile in ("default", None):       # else every sample it holds: an earlier configuration's
        for camp in reversed(held):         # only the row's chapter judged in each (every chapter's: minutes)
            got = _plan(camp, profile, experiment)
            if cid in got and got[cid][1] > 1:
                return got[cid]
    return _plan().get(cid)


class DocumentMiss(UserWarning):
    """A document's own number that its own words, read by the lexicon, do not let through."""


def _rows():
    t = claims.table()
    t = t[t["about"].isin(JUDGED) & (t["comparison"] != "not testable")]
    return list(t["claim_id"])


@pytest.mark.parametrize("cid", _rows())
def test_a_judged_row_can_fail_and_reports_where_its_document_misses_it(cid):
    c = claims.get(cid)
    plan = plan_of(cid)
    if plan is None:
        pytest.skip(f"{cid}: the reference judged no build of it (a cores row on too few CPUs, or not measured)")
    method, n, published = plan
    v = published if not math.isnan(published) else float(c["published"])
    miss = check(cid, c, method, n, v)
    if miss:
        warnings.warn(DocumentMiss(miss))
    # the arithmetic register the book shows holds every row whose own number lies outside its reading
    if cid in set(claims.own_misses()["claim_id"]):
        assert miss, f"{cid}: the book names it a miss, the runs around its own number agree"


def test_the_book_names_the_documents_own_misses():
    misses = claims.own_misses()
    assert len(misses) and (misses["phrase"] != "").all()
    assert "sha256/beyond_cores/threads=4" in set(misses["claim_id"])      # 'doesn't help much' of 0.893


def check(cid: str, c, method: str, n: int, v: float) -> str:
    """The row ``c`` (a claims row) with value ``v``, judged by ``method`` over ``n`` runs: it can
    fail (AssertionError naming ``cid`` otherwise); returns why its document's own number is not
    let through ('' where it is)."""
    assert method in SIMULATED + (stats.COUNT, stats.PROPORTION), f"{cid}: {method}: no interval, so no data can fail it"
    if method not in SIMULATED:
        return ""   # a count of the runs, read as it is, not estimated
    # the document's own number: ``own`` where the row's value is typed from its words, else the
    # value itself where it is derived from the document's tables (or the chapter's listings)
    own = float(c["own_value"]) if not math.isnan(c["own_value"]) else v if not c["value"] else math.nan
    miss = ""
    if c["comparison"] == "about":
        b = float(c["band"])
        assert v != 0 and b > 0, f"{cid}: a band around {v} cannot be failed"
        if not math.isnan(own) and claims.compare("about", v, b, *interval(method, own, b / 4, n),
                                                  method=method) != "agrees":
            miss = f"{cid}: the document's own {own:.4g} is not judged to agree with {v:.4g} +- {b:.0%}"
        assert claims.compare("about", v, b, *interval(method, v * (1 + 2 * b), b / 4, n), method=method) == "higher", cid
        if v * (1 - 2 * b) > 0:
            assert claims.compare("about", v, b, *interval(method, v * (1 - 2 * b), b / 4, n), method=method) == "lower", cid
        return miss
    # one-sided: the margin is how far the document's own number clears the threshold (10%, the
    # precision the report reads the documents with, where the document gives no number)
    if math.isnan(own):
        margin = 0.10
    else:
        margin = own / v - 1 if c["comparison"] == "at least" else 1 - own / v
        if margin <= 0:
            miss = f"{cid}: the document's own {own:.4g} does not clear {c['comparison']} {v:.4g}"
            margin = 0.10
        elif claims.compare(c["comparison"], v, None, *interval(method, own, min(margin, 1.0) / 4, n),
                            method=method) != "agrees":
            miss = f"{cid}: the document's own {own:.4g} is not judged {c['comparison']} {v:.4g}"
    spread = min(margin, 1.0) / 4
    fail_at = v * (1 - 2 * min(margin, 0.45)) if c["comparison"] == "at least" else v * (1 + 2 * margin)
    assert claims.compare(c["comparison"], v, None, *interval(method, fail_at, spread, n), method=method) in (
        "lower", "higher"), f"{cid}: runs at {fail_at:.4g} do not fail {c['comparison']} {v:.4g}"
    return miss


def _row(**kw):
    base = {"comparison": "about", "band": 0.1, "value": "1.0", "own_value": math.nan}
    return base | kw


@pytest.mark.parametrize("broken, words", [
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
    assert check("sound", _row(own_value=1.02), stats.MEDIAN, 8, 1.0) == ""        # a sound row passes


@pytest.mark.parametrize("missed, words", [
    (dict(band=0.1, own_value=1.3), "is not judged to agree"),                  # its words reject its own number
    (dict(comparison="at least", band=math.nan, own_value=0.9), "does not clear"),   # so does a threshold
])
def test_a_document_that_misses_its_own_words_is_reported_not_failed(missed, words):
    row = _row(**missed)
    assert words in check("missed", row, stats.MEDIAN, 8, float(row["value"]))


def test_the_typical_sample_is_what_its_name_says():
    xs = typical(10.0, 0.1, 1001)
    assert abs(sorted(xs)[500] - 10.0) < 1e-9
    assert abs(sum((x - 10.0) ** 2 for x in xs) / 1001 - 1.0) < 0.02
    assert experiments.names()
