"""Summaries and verdicts across experiments and campaigns, as plain data (what ``gillab
results/verdicts`` print), and the reader's campaign beside the reference, claim by claim.

Why it is long: one verdict row's shape (:func:`flat`) and every view of it the book prints (headline,
roles, families, sizes, era against today) stay together, so a column renamed is renamed once."""
from __future__ import annotations

import contextlib
import re

from . import results as store_results
from ..measure import codekey
from .. import stats
from ..chapters import of as reading
from ..measure.experiments import get, names
from .results import profile_config
from .claims import CONTROL_FAILED, NOT_IN_FORCE, VOID
from .tables import band_words, estimate_text, value_cell


def results(experiment: str, campaign: str | None = None, profile: str | None = "default") -> dict:
    """The summary of one configuration's samples: ``profile``'s (a campaign may hold several, e.g.
    the reference's default and seed runs; None: every sample stored)."""
    cfg = profile_config(experiment, profile) if profile else None
    df = store_results.samples_as_chapter(experiment, campaign, cfg)
    return {
        "experiment": experiment,
        "campaign": df.attrs["campaign"],
        "note": df.attrs.get("note"),
        "profile": profile,
        "conditions": store_results.conditions_seen(experiment, df.attrs["campaign"]),
        "summary": reading(experiment).summary(df).to_dict(orient="records"),
    }


def verdicts(campaign: str | None = None, experiments: list[str] | None = None,
             profile: str | None = "default", notes: list | None = None, as_chapter: bool = False) -> list[dict]:
    """Every claim's verdict, from ``campaign`` (default: yours if you have one, else the
    reference), on the samples of ``profile``'s configuration (None: every sample stored).  Every
    claim of ``data/reference/claims.csv`` whose experiment has samples gets a row: the claims the
    experiment's verdicts do not answer are listed as not testable here or not measured, with
    the reason.  With ``as_chapter`` (the command line), the samples are those the chapter reads
    (:func:`gillab.judge.results.samples_as_chapter`): where the reader's campaign holds none of this
    configuration the reference's are judged, and a line saying so is added to ``notes``; without
    it, only ``campaign``'s own samples (each campaign judged alone).

    One experiment's rows are judged once per process for the same files (:func:`_remembered`):
    the book, the method chapter's tables and the appendix ask for the same campaign's verdicts
    again and again."""
    rows = []
    for name in experiments or experiment_names():
        judged, note, read = _remembered(name, campaign, profile, as_chapter)
        for path in read:   # what a figure or table made from these rows was made from (results.recording)
            store_results._read(path)
        if judged is None:
            continue
        if note and notes is not None:
            notes.append(note)
        rows += judged
    return rows


_JUDGED: dict = {}        # (experiment, campaigns, configurations, as_chapter) + the digest of their files -> rows
_JUDGED_MAX = 512


@contextlib.contextmanager
def judged_apart():
    """Inside the block every verdict is judged anew, and nothing judged there is remembered after
    it (what was remembered before is again): for a test that swaps a function the judging calls."""
    before = dict(_JUDGED)
    _JUDGED.clear()
    try:
        yield
    finally:
        _JUDGED.clear()
        _JUDGED.update(before)


def _inputs_digest(paths: list) -> str:
    """The sha256 of every file under ``paths`` (names and bytes): a file rewritten within the
    clock's granularity, to the same size, still changes it."""
    import hashlib

    h = hashlib.sha256()
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.name != ".lock") if path.is_dir() else \
            [path] if path.is_file() else []
        for f in files:
            h.update(str(f).encode() + b"\0")
            try:
                h.update(f.read_bytes())
            except OSError:
                h.update(b"unreadable")
    return h.hexdigest()


def _remembered(name: str, campaign: str | None, profile: str | None, as_chapter: bool):
    """(rows, note, files read) of :func:`_judge`, rows None where the experiment has no samples to
    judge; remembered under the campaigns it reads, the configurations asked and the bytes of
    every file the judging reads (the campaigns' folders of this experiment, the published
    tables, profiles.toml and builds.toml), and handed out as copies."""
    import copy

    from . import claims
    from ..measure import campaigns
    from ..paths import repo_root, results_dir

    cfg = profile_config(name, profile) if profile else None
    try:
        if as_chapter:
            read = [c.id for c in campaigns.for_reading(name, campaign) if c is not None]
        else:
            read = [store_results.pick_campaign(name, campaign)]
    except store_results.NoData:
        return None, None, []
    others = {o: profile_config(name, o) for o in reading(name).claims_from_profile} if profile else {}
    res = results_dir()
    digest = _inputs_digest([res / "REFERENCE", *(res / c / "campaign.json" for c in read),
                             *(res / c / name for c in read),
                             *sorted({store_results.reference_dir(), claims.reference_dir()}),
                             repo_root() / "profiles.toml", repo_root() / "builds.toml"])
    key = (name, str(res), tuple(read), campaign, profile, cfg, tuple(sorted(others.items())),
           profile_config(name, "default") if others else None, as_chapter, digest)
    if key not in _JUDGED:
        with store_results.recording() as files:
            try:
                judged, note = _judge(name, campaign, profile, cfg, as_chapter)
            except store_results.NoData:
                judged, note = None, None
        while len(_JUDGED) >= _JUDGED_MAX:
            _JUDGED.pop(next(iter(_JUDGED)))
        _JUDGED[key] = (judged, note, list(files))
    return copy.deepcopy(_JUDGED[key])


def _judge(name: str, campaign: str | None, profile: str | None, cfg: str | None, as_chapter: bool):
    """One experiment's verdict rows (see :func:`verdicts`) and the note its samples carry."""
    from . import claims

    load = store_results.samples_as_chapter if as_chapter else store_results.samples
    df = load(name, campaign, cfg)
    an = reading(name)
    answered = an.claims(df)
    frames = [df]
    for other, prefix in an.claims_from_profile.items():
        # claims that only another profile measures (document 004's version sweep), judged on
        # that configuration's samples of the same campaign, whichever default-like profile is asked
        if profile in (None, other) or cfg != profile_config(name, "default"):
            continue
        try:
            odf = store_results.samples(name, df.attrs["campaign"], profile_config(name, other))
        except store_results.NoData:
            continue
        answered = [r for r in answered if not r["claim_id"].startswith(prefix)]
        answered += [r for r in an.claims(odf) if r["claim_id"].startswith(prefix)]
        frames.append(odf)
    keys = sorted({codekey.canonical(name, k) for f in frames if "code_key" in f.columns
                   for k in f["code_key"].astype(str)} - {""})
    fams, cpus = {}, _cpus(name, df.attrs["campaign"])
    for f in frames:
        fams |= claims.families(f)
    rows = [row | {"campaign": df.attrs["campaign"], "code_keys": keys, "families": fams, "cpus_here": cpus}
            for row in answered + claims.unanswered(name, {r["claim_id"] for r in answered})]
    return rows, df.attrs.get("note")


def _cpus(experiment: str, campaign: str | None) -> int | None:
    """The logical CPUs of the machine that measured ``experiment`` in ``campaign`` (the fewest,
    should its runs disagree): what a *cores* claim is judged against."""
    try:
        counts = [int(r["machine"]["cpu_count"]) for r in store_results.runs(experiment, campaign)
                  if (r.get("machine") or {}).get("cpu_count")]
    except (store_results.NoData, KeyError, TypeError, ValueError):
        return None
    return min(counts) if counts else None


def campaign_verdicts(experiments: list[str] | None = None, campaign: str | None = None,
                      profile: str | None = "default") -> tuple[list[dict], list[dict]]:
    """(yours, reference): the verdict rows of the reader's campaign (empty without one) and of
    the committed reference campaign."""
    from ..measure import campaigns

    yours, ref = [], []
    for name in experiments or experiment_names():
        mine, reference = campaigns.for_reading(name, campaign)
        if mine is not None:
            yours += verdicts(mine.id, [name], profile)
        if reference is not None:
            ref += verdicts(reference.id, [name], profile)
    return yours, ref


def reference_grids() -> str | None:
    """What the reference campaign measured of ``default``'s grids, from its run files: ``"all"``
    where every chapter whose ``default`` has a small grid has a run that measured every build at
    every point (no ``full_grid`` recorded, or ``all``: a later ``-p full_grid=all`` completes an
    earlier run), ``"profile"`` where no such chapter has one, else None (mixed, or no reference)."""
    from ..measure import campaigns

    rid = campaigns.reference_id()
    if rid is None:
        return None
    # only chapters whose default measures some builds on a small grid tell anything here
    gridded = {n for n in names() if get(n).resolve("default", {}).get("full_grid") not in (None, "all")}
    everything: dict[str, bool] = {}
    for r in campaigns.runs(campaigns.load(rid)):
        if r.get("profile") in ("default", "verdicts") and r.get("experiment") in gridded:
            fg = (r.get("params") or {}).get("full_grid")
            everything[r["experiment"]] = everything.get(r["experiment"], False) or fg in (None, "all")
    kinds = {"all" if v else "profile" for v in everything.values()}
    return kinds.pop() if len(kinds) == 1 else None


# yours / reference from the two campaigns' intervals: each side misses only where one of the two
# intervals misses its value on the matching side, so two 95% intervals (at most 2.5% a side each)
# give at most 5% a side: at least 90% in all
RATIO_CI_LEVEL = 1 - 2 * (2 * stats.SIDE)


def ratio_ci(a: dict, b: dict) -> tuple[float, float, float]:
    """a/b (two campaigns' values of one claim) and the interval [a_lo / b_hi, a_hi / b_lo], whose
    coverage is at least :data:`RATIO_CI_LEVEL` when both entries carry a 95% interval (their
    ``coverage``); no bounds (NaN) where either does not, or where a value or bound is not
    positive."""
    import math

    try:
        va, la, ha, vb, lb, hb = (float(m[k]) for m in (a, b) for k in ("median", "ci_lo", "ci_hi"))
    except (KeyError, TypeError, ValueError):
        return math.nan, math.nan, math.nan
    r = va / vb if vb > 0 and not math.isnan(va) else math.nan
    weak = any(float(m.get("coverage") or 0.0) < stats.LEVEL for m in (a, b))
    if weak or min(va, la, ha, vb, lb, hb) <= 0 or any(map(math.isnan, (va, la, ha, vb, lb, hb))):
        return r, math.nan, math.nan
    return r, la / hb, ha / lb


def compare(yours: list[dict], ref: list[dict]):
    """Claim by claim and condition by condition: the reference campaign's value and outcome,
    yours, whether the outcome is the same ("yes" / "NO", "-" where one of them did not measure
    it), the two outcomes compared (``compared``: :func:`gillab.judge.across.pair_outcome`, the
    same, different, open or not judged in both: what the pages count), and yours / reference
    with its CI."""
    import pandas as pd

    from ..measure.interpreters import display_order
    from .pairs import pair_outcome

    by_ref = {(r["experiment"], r["claim_id"]): r for r in ref}
    by_you = {(r["experiment"], r["claim_id"]): r for r in yours}
    out = []
    for key in list(by_ref) + [k for k in by_you if k not in by_ref]:
        r, y = by_ref.get(key), by_you.get(key)
        base = r or y
        conds = display_order(set((r or {}).get("measured", {})) | set((y or {}).get("measured", {})))
        for cond in conds:
            mr = (r or {}).get("measured", {}).get(cond)
            my = (y or {}).get("measured", {}).get(cond)
            ratio, lo, hi = ratio_ci(my, mr) if (mr and my) else (float("nan"),) * 3
            out.append({
                "experiment": key[0], "claim_id": key[1], "claim": base["claim"], "condition": cond,
                "published": band_words(key[1], base["published"], base["unit"]),
                "reference": value_cell(mr), "reference outcome": mr["verdict"] if mr else "not measured",
                "yours": value_cell(my), "your outcome": my["verdict"] if my else "not measured",
                "same outcome": ("-" if not (mr and my) else "yes" if mr["verdict"] == my["verdict"] else "NO"),
                "compared": pair_outcome(mr["verdict"] if mr else "not measured",
                                         my["verdict"] if my else "not measured"),
                "yours / reference": "-" if ratio != ratio else
                (f"{ratio:.2f}" + ("" if lo != lo else f" [{lo:.2f}, {hi:.2f}]")),
            })
    return pd.DataFrame(out)


def builds(campaign: str | None = None, experiments: list[str] | None = None):
    """Every condition that produced data, with its build record, from the runs' metadata."""
    import pandas as pd

    seen: dict[str, dict] = {}
    for name in experiments or experiment_names():
        try:
            for run in store_results.runs(name, campaign):
                for cid, ident in run.get("conditions", {}).items():
                    if ident.get("available"):
                        seen[cid] = ident
        except store_results.NoData:
            continue
    rows = []
    for cid, ident in sorted(seen.items()):
        rec = ident.get("build_record") or {}
        rows.append({
            "condition": cid, "kind": ident.get("kind"), "sys.version": (ident.get("version") or "").replace("\n", " "),
            "Py_GIL_DISABLED": ident.get("py_gil_disabled"),
            "environment": " ".join(f"{k}={v}" for k, v in (ident.get("env") or {}).items()),
            "origin": ident.get("origin"),
            "configure flags": " ".join(rec.get("configure_flags", [])) or ident.get("config_args", ""),
            "source": f"{rec.get('source_tarball')} (sha256 {rec.get('source_sha256', '')[:12]}...)" if rec else "",
            "build seconds": rec.get("build_seconds"),
        })
    return pd.DataFrame(rows)


def experiment_names() -> list[str]:
    return sorted(names())


def document_of(experiment: str) -> str:
    """The document number (000 ... 004) an experiment reproduces."""
    return get(experiment).document[:3]


def build_of(condition: str) -> str:
    """The build a verdict's condition names: ``3.13.5t (many, 10 threads)`` -> ``3.13.5t``; a
    pair (``3.13.5 vs 3.13.5t``) keeps both."""
    return condition.split(" (", 1)[0]


def flat(rows: list[dict]):
    """The verdict rows as one line per claim and condition: document, experiment, claim,
    condition, published, unit, band (where the claim states one: so far document 003's),
    measured with its interval, n, the document's statistic (``doc_statistic``: what one trial
    is; a best of 3 is judged over trials of three runs), the ``estimand`` the interval is for and its ``coverage``
    (computed from the two, :func:`gillab.stats.coverage`), outcome (and ``why`` an inconclusive
    one is: "n too small: ..." where no 95% interval exists for its n), and ours / published with
    its interval (what the verdicts page
    draws and counts, and ``gillab verdicts --json`` prints); what the claim is ``about`` and the
    ``builds`` it speaks of (claims.csv), the ``family`` the condition's samples resolved to, and
    the row's ``role``: *judged* (counted in the headline), *machine* (context), *needs cores*,
    *other builds* (a finding beside the claim) or *not testable*."""
    import pandas as pd

    nan = float("nan")
    out = []
    for r in rows:
        pub = r["published"]

        def ratio(v):
            return v / pub if pub not in (0, None) and v is not None else nan

        info = _about(r["claim_id"])
        base = {"document": document_of(r["experiment"]), "experiment": r["experiment"], "claim_id": r["claim_id"],
                "claim": r["claim"], "published": pub, "unit": r["unit"], "band": r.get("band"),
                "campaign": r.get("campaign"), "code_keys": r.get("code_keys"), **info}
        fams, cpus = r.get("families") or {}, r.get("cpus_here")

        def where(cond):
            from . import claims

            if not info["about"]:
                return {"family": "", "role": "judged", "own builds": True}
            return {"family": claims.family_of(cond, fams) if cond != "-" else "-",
                    "role": claims.role(r["claim_id"], cond, fams, cpus),
                    "own builds": cond == "-" or claims.applies(r["claim_id"], cond, fams)}
        if not r["measured"]:      # a claim no build answered: not testable here (claims.csv says why), or not measured
            outcome = r.get("unmeasured") or ("not testable here" if _comparison(r["claim_id"]) == "not testable"
                                              else "not measured")
            out.append(base | {"condition": "-", "build": "-", "measured": nan, "ci_low": nan, "ci_high": nan,
                               "n": 0, "n_each": 0, "estimand": "", "coverage": nan, "outcome": outcome, "why": "",
                               "ours_over_published": nan, "ratio_low": nan, "ratio_high": nan} | where("-"))
        for cond, m in r["measured"].items():
            outcome = m["verdict"]
            out.append(base | {"condition": cond, "build": build_of(cond), "measured": m["median"],
                               "ci_low": m["ci_lo"], "ci_high": m["ci_hi"], "n": m.get("n"),
                               "n_each": m.get("n_each", m.get("n")), "estimand": m.get("estimand", ""),
                               "coverage": m.get("coverage", nan),
                               "outcome": outcome,
                               "why": (m.get("why_void", "") if outcome in VOID
                                       else m.get("why_inconclusive", "") if outcome == "inconclusive" else ""),
                               "ours_over_published": ratio(m["median"]), "ratio_low": ratio(m["ci_lo"]),
                               "ratio_high": ratio(m["ci_hi"])} | where(cond))
    return pd.DataFrame(out)



def _about(claim_id: str) -> dict:
    """What claims.csv says a claim is about, which builds it speaks of and the document's own
    statistic (empty for a row that is no claim of claims.csv)."""
    from . import claims

    try:
        c = claims.get(claim_id)
    except KeyError:
        return {"about": "", "builds": "", "doc_statistic": ""}
    return {"about": c["about"], "builds": c["builds"], "doc_statistic": c["doc_statistic"]}


ROLES = ("judged", "control", "then and now", "machine", "needs cores", "other builds", "not testable")


# the machine claim of a document that says how fast the author's machine ran plain Python: one
# thread counting down (document 000's countdown table); ours / theirs on the same build is the
# machine-speed factor the other machine numbers of the document are read against
CALIBRATION = {"000": "countdown/threads=1"}


def machine_context(df):
    """The authors' machine numbers on the builds they were measured on: theirs, ours with its
    interval, and ours / theirs, per document with its machine-speed factor where the document
    gives a calibration point.  Context, never a verdict."""
    import pandas as pd

    cols = ["document", "claim_id", "claim", "condition", "published", "unit", "measured", "ci_low", "ci_high",
            "ours_over_published", "ratio_low", "ratio_high", "n", "n_each", "estimand", "coverage"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    m = df[(df["role"] == "machine") & df["own builds"] & (df["condition"] != "-")]
    return m[cols].reset_index(drop=True)


def speed_factors(df) -> list[dict]:
    """Per document with a calibration point measured here: its claim, the build, and ours /
    theirs with its interval (a time: above 1, this machine is slower than the author's)."""
    from .tables import ratio_texts

    m = machine_context(df)
    texts = ratio_texts(m)
    return [{"document": r["document"], "claim": r["claim"], "condition": r["condition"],
             "ours / theirs": r["ours_over_published"], "low": r["ratio_low"], "high": r["ratio_high"], "text": text}
            for (_, r), text in zip(m.iterrows(), texts) if CALIBRATION.get(r["document"]) == r["claim_id"]]


def other_builds(df):
    """Claims x builds the claim does not speak of: findings beside the claim (what a build
    without the GIL does to a claim about GIL builds), never the claim failing."""
    if df.empty:
        return df
    return df[df["role"] == "other builds"].reset_index(drop=True)


def headline(df):
    """The rows the headline counts: mechanism claims (and cores claims on a machine with the
    CPUs) on the builds each speaks of.  Machine numbers are context; other builds, findings."""
    if df.empty:
        return df
    return df[df["role"] == "judged"]


def claim_tally(rows):
    """The headline's rows (:func:`headline`, or :func:`judged`) counted once per claim: one line
    per document, build family and quantity (claims.csv ``quantity``: two sentences about one
    statistic at one point are one claim here), with the outcome of its rows combined
    (:func:`gillab.judge.claims.combined`: contrary where any row is) and whether an inconclusive
    one is so for too few runs."""
    import pandas as pd

    from . import claims

    cols = ["document", "family", "quantity", "claim_ids", "rows", "outcome", "too few runs"]
    if not len(rows):
        return pd.DataFrame(columns=cols)
    q = rows["claim_id"].map(claims.quantity)
    out = []
    for (doc, fam, qty), g in rows.assign(_q=q, _fam=rows["family"].map(family_group)).groupby(
            ["document", "_fam", "_q"], sort=True):
        outcome = claims.combined(g["outcome"])
        few = outcome == "inconclusive" and "why" in g.columns and bool(g["why"].map(stats.too_few_runs).all())
        out.append({"document": doc, "family": fam, "quantity": qty, "claim_ids": sorted(set(g["claim_id"])),
                    "rows": len(g), "outcome": outcome, "too few runs": few})
    return pd.DataFrame(out, columns=cols)


def judged(flat):
    """The claims x builds a verdict counts: :func:`headline`'s rows that a build answered (not the
    claims no build measured, whose condition is '-')."""
    if flat.empty:
        return flat
    rows = headline(flat)
    return rows[rows["condition"] != "-"]


def straddling(rows):
    """Of verdict rows, those inconclusive with the runs an interval needs: their interval straddles
    an edge of the band (not those left inconclusive for too few runs)."""
    from .. import stats

    return rows[(rows["outcome"] == "inconclusive") & ~rows["why"].map(stats.too_few_runs)]


def reference_flat(given=None):
    """The reference campaign's verdict rows on `default`'s configuration, flat (``given`` where the
    caller has them already), or None without a reference campaign."""
    from ..measure import campaigns

    if given is not None:
        return given
    ref = campaigns.reference_id()
    return None if ref is None else flat(verdicts(ref, profile="default"))


def _comparison(claim_id: str) -> str | None:
    from . import claims

    try:
        return claims.get(claim_id)["comparison"]
    except KeyError:
        return None


def profile_beside(other, default):
    """Each claim x condition of ``other`` (the flat verdicts of another profile's samples, e.g.
    ``seed``: the documents' own sizes and repeats) beside the same claim x condition judged on the
    ``default`` profile's samples: both outcomes, default's value and interval, whether default
    measured it at all (``only on seed``: its small grid leaves some builds out), whether the
    outcomes differ and, where they do, why (:func:`size_reason`)."""
    import pandas as pd

    if not len(other):
        return pd.DataFrame()
    cols = ["outcome", "measured", "ci_low", "ci_high", "why", "n", "n_each", "estimand", "coverage"]
    base = (default.drop_duplicates(["claim_id", "condition"]).set_index(["claim_id", "condition"]).reindex(columns=cols)
            if len(default) else pd.DataFrame(columns=cols))
    out = other[other["condition"] != "-"].copy()
    keys = list(zip(out["claim_id"], out["condition"]))
    for c in cols:
        got = [base[c].get(k) if k in base.index else None for k in keys]
        out[f"default {c}"] = [("not measured" if g is None else g) for g in got] if c == "outcome" else got
    # a build default's small grid left out is new on seed, not a changed outcome
    out["only on seed"] = out["default outcome"] == "not measured"
    out["changed"] = (out["outcome"] != out["default outcome"]) & ~out["only on seed"]
    out["reason"] = [size_reason(r) if r["changed"] else "" for _, r in out.iterrows()]
    return out.reset_index(drop=True)


def size_reason(row) -> str:
    """Why one claim x build has another outcome on ``seed`` than on ``default`` (a row of
    :func:`profile_beside`), as far as the numbers say, in a few words (the verdicts page explains
    them): one side has too few runs for an interval; the two intervals are apart (the value itself
    differs at the document's size); or they overlap, and the outcomes sit on either side of the
    band's edge."""
    import math

    if stats.too_few_runs(row.get("why")):
        return "too few runs on seed"
    if stats.too_few_runs(row.get("default why")):
        return "too few runs on default"
    vals = [row.get(k) for k in ("ci_low", "ci_high", "default ci_low", "default ci_high")]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in vals):
        return "no interval on one side"
    lo, hi, dlo, dhi = (float(v) for v in vals)
    if hi < dlo or dhi < lo:
        return "intervals apart"
    return "intervals overlap"


def asks_as_recorded(entry: dict, profile: str) -> bool:
    """Whether ``profile`` still asks for what a chapter-times record's ``entry`` (one chapter of
    :func:`gillab.present.timing.chapter_times_record`) measured: the same configuration and the
    same runs, grids and builds.  Where the profile now asks for more (a grid that a new claim
    reads), the chapter the record calls complete is not complete any more."""
    import json

    exp = get(entry["experiment"])
    now = exp.resolve(profile)
    asked = json.loads(json.dumps({k: now.get(k) for k in entry.get("params", {})}, default=str))
    return exp.config_id(now) == entry.get("config_id") and asked == entry.get("params")


def sizes_by_chapter(both, record: dict | None = None):
    """The verdicts page's "documents' own sizes" table: per chapter, what its `seed` profile
    measures differently (:func:`size_differences`), how much of it the reference campaign holds
    (``record``: :func:`gillab.present.timing.chapter_times_record`), the claims x builds judged on its
    samples, how many of their outcomes differ from `default`'s (``both``:
    :func:`profile_beside` of the judged rows) and how many claims that is, those `default` did not
    measure, those left inconclusive by too few runs, and the chapter's reason in words (its
    words cell, ``size-note``)."""
    import pandas as pd

    held = {e["experiment"]: e for e in (record or {}).get("experiments", [])}
    rows = []
    for name in names():
        diff = size_differences(name)
        e = held.get(name)
        g = both[both["experiment"] == name] if len(both) else both
        if not diff:
            status = "default's sizes: the verdicts above"
        elif e is None:
            status = "no record" if len(g) else "not measured"
        elif e["to_measure"] == 0 and not asks_as_recorded(e, "seed"):
            status = (f"complete then: {e['stored']:,} samples, {e['seconds'] / 60:.0f} min; the profile now asks "
                      "for more")
        elif e["to_measure"] == 0:
            status = f"complete: {e['stored']:,} samples, {e['seconds'] / 60:.0f} min"
        elif e["stored"] == 0:
            status = f"not measured yet ({e['planned']:,} samples asked)"
        else:
            status = f"not complete: {e['stored']:,} of {e['planned']:,} samples, {e['seconds'] / 60:.0f} min so far"
        changed = g[g["changed"]] if len(g) else g
        short = int(g["why"].map(stats.too_few_runs).sum()) if len(g) and "why" in g else 0
        rows.append({"chapter": name, "default -> seed": diff or "-", "seed as recorded": status,
                     "claims x builds": len(g), "changed": len(changed),
                     "claims changed": changed["claim_id"].nunique() if len(changed) else 0,
                     "only on seed": int(g["only on seed"].sum()) if len(g) else 0,
                     "too few runs": short, "the chapter's reason": reading(name).size_note if diff else ""})
    return pd.DataFrame(rows)


def size_differences(experiment: str, profile: str = "seed") -> str:
    """What ``profile`` measures differently from ``default`` in one chapter, from profiles.toml
    (the parameters that are part of the configuration: what a sample is), e.g.
    "total_decrements 20,000,000 -> 100,000,000"; '' where the configurations are the same."""
    from ..measure.protocol import NOT_CONFIG

    exp = get(experiment)
    a, b = exp.resolve("default"), exp.resolve(profile)

    def show(v):
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)
    return "; ".join(f"{k} {show(a[k])} -> {show(b[k])}" for k in b
                     if k not in NOT_CONFIG and a.get(k) != b[k])


OUTCOMES = ("agrees", "higher", "lower", "inconclusive", NOT_IN_FORCE, CONTROL_FAILED, "not testable here",
            "not measured")


def era_vs_today(df):
    """Each claim judged on the document's own interpreter and on today's counterpart (builds.toml
    ``[today]``: 3.9.2 -> 3.13.5, ...), one line per claim and pair of
    conditions that differ only in the build, with both outcomes compared in the pair words
    (:func:`gillab.judge.pairs.pair_outcome`: the same, different, open): a *different* pair, "true
    of 3.9, no longer of 3.13", is a result; an *open* one says nothing either way.  Only the builds
    of the claim's own document's set count as its era, with the retired builds they replaced (an
    earlier campaign's 3.9.10 for 3.9.2)."""
    import pandas as pd

    from ..measure.interpreters import sets, stands_for, today_of
    from .pairs import pair_outcome

    cols = ["document", "experiment", "claim_id", "claim", "era condition", "era outcome",
            "today condition", "today outcome", "compared"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    groups, today = sets(), today_of()
    out = []
    for (doc, exp, cid), g in df.groupby(["document", "experiment", "claim_id"], sort=True):
        own = {s for b in groups.get(f"doc{doc}", []) for s in stands_for(b)}
        by_cond = dict(zip(g["condition"], g["outcome"]))
        for cond, outcome in by_cond.items():
            era = build_of(cond)                       # a build, or a pair "3.13.5 vs 3.13.5t"
            builds = era.split(" vs ")
            if not all(b in own and b in today for b in builds):
                continue
            now = " vs ".join(today[b] for b in builds) + cond[len(era):]
            if now not in by_cond:
                continue
            out.append({"document": doc, "experiment": exp, "claim_id": cid, "claim": g["claim"].iloc[0],
                        "era condition": cond, "era outcome": outcome, "today condition": now,
                        "today outcome": by_cond[now], "compared": pair_outcome(outcome, by_cond[now])})
    return pd.DataFrame(out, columns=cols)


def family_group(family: str) -> str:
    """A verdict row's build family as the summaries group it: one family, or a pair of builds
    with and without the GIL (the ratio claims), or a pair of GIL builds."""
    parts = [p.strip() for p in str(family).split(" vs ")]
    if len(parts) == 1:
        return parts[0] or "-"
    if "no GIL" in parts and len(set(parts)) == 2:
        return "GIL vs no GIL"
    return "between GIL builds"


# the summary's marks: one character per outcome, explained under the table
MARKS = {"agrees": "✓", "higher": "↑", "lower": "↓", "inconclusive": "?", NOT_IN_FORCE: "~", CONTROL_FAILED: "!",
         "not testable here": "-", "not measured": "-"}


def claim_pattern(claim_id: str) -> str:
    """A claim id with its grid values left out (``convoy/si=0.005/cpu_threads=1`` ->
    ``convoy/si=…/cpu_threads=…``): the claims a document makes once per point of its table."""
    return re.sub(r"=[^/]+", "=…", claim_id)


def summary_by_family(df):
    """The verdicts page's summary, short enough to read in two screens: per document, one line
    per claim judged on its own builds (the claims a document's table makes once per point, one
    line together), and per build family (old GIL, new GIL, no GIL, a GIL build against one
    without) the outcome with ours [interval] where one claim x build answers, or the outcomes
    counted where several do (:data:`MARKS`).  ``claim`` names the line by its ids (a pattern
    for several), ``claim_ids`` lists them (the page names them by the document's words,
    :func:`gillab.judge.tables.claim_cell`), ``published`` is the value with its comparison and
    band in words (:func:`gillab.judge.tables.band_words`)."""
    import pandas as pd

    from .tables import band_words

    empty = pd.DataFrame(columns=["doc", "claim", "claim_ids", "published"])
    if df.empty:
        return empty
    d = df[df["condition"] != "-"].assign(group=lambda x: x["family"].map(family_group),
                                          pattern=lambda x: x["claim_id"].map(claim_pattern))
    if d.empty:             # every row unmeasured (a campaign of GIL builds only, for a chapter of pairs)
        return empty
    groups = [g for g in ("old GIL", "new GIL", "no GIL", "GIL vs no GIL", "between GIL builds") if g in set(d["group"])]
    groups += sorted(set(d["group"]) - set(groups))
    rows = []
    for (doc, pat), g in d.groupby(["document", "pattern"], sort=False):
        n = g["claim_id"].nunique()
        first = g.iloc[0]
        row = {"doc": doc, "claim": pat + (f" ({n} points)" if n > 1 else ""),
               "claim_ids": list(dict.fromkeys(g["claim_id"])),
               "published": band_words(first["claim_id"], first["published"], first.get("unit", ""))
               if n == 1 else "per point"}
        for grp in groups:
            h = g[g["group"] == grp]
            if len(h) == 1:
                r = h.iloc[0]
                row[grp] = f"{MARKS[r['outcome']]} " + estimate_text(r["measured"], r["ci_low"], r["ci_high"],
                                                                   r.get("coverage"), r.get("n_each", r.get("n")),
                                                                   r.get("estimand") or None)
            else:
                c = h["outcome"].value_counts()
                row[grp] = " ".join(f"{MARKS[o]}{c[o]}" for o in OUTCOMES if o in c)
        rows.append(row)
    return pd.DataFrame(rows).sort_values("doc", kind="stable").reset_index(drop=True)


def outcome_counts(df, by: str):
    """Claims x conditions per ``by`` (document or condition) and outcome, with a total."""
    import pandas as pd

    if df.empty:
        return pd.DataFrame()
    t = pd.crosstab(df[by], df["outcome"])
    cols = [o for o in OUTCOMES if o in t.columns] + [c for c in t.columns if c not in OUTCOMES]
    t = t[cols]
    t["total"] = t.sum(axis=1)
    return t.reset_index()


def counts_markdown(df) -> str:
    """The landing page's counts: per document, the mechanism claims judged on the builds each
    speaks of (the headline); then one line each for what is not counted there: the authors'
    machine numbers (context), results on other builds (findings), claims that need more cores."""
    from ..measure import provision
    from ..measure.experiments import DOCUMENTS

    if df.empty:
        return "No verdicts yet: no campaign holds samples of the `default` configurations."
    head = headline(df)
    lines = []
    for doc, g in head.groupby("document", sort=True):
        tally = claim_tally(g)
        c = tally["outcome"].value_counts()
        small = int(tally["too few runs"].sum())
        parts = ", ".join(f"{int(c[o])} {o}" + (f" ({small} of them for too few runs)" if o == "inconclusive" and small
                                                 else "") for o in OUTCOMES if o in c.index)
        caption = DOCUMENTS.get(doc, f"Document {doc}")
        n = len(tally)
        whose = ""
        if "source" in g.columns:        # the first screen: the reader's rows, the reference's where borrowed
            by = g.groupby("source")["experiment"].unique()
            mine, lent = sorted(by.get("your run", [])), sorted(by.get("reference", []))
            whose = (" *(all from your run)*" if not lent else
                     " *(all borrowed from the reference: your run did not measure this document)*" if not mine else
                     f" *(your run: {', '.join(mine)}; borrowed from the reference: {', '.join(lent)})*")
        builds = sorted(set(g["build"]) - {"-"})
        standing = provision.own_words(doc)
        lines.append(f"- **{caption}**: {n} claim{'s' if n != 1 else ''} on the document's own interpreter "
                     f"({', '.join(builds) or 'no build measured'}{', ' + standing if standing else ''}; one count a "
                     f"claim and build family, over {len(g)} "
                     f"claim x build rows): {parts}.{whose}")
    rest = df[df["role"] != "judged"]
    words = {"control": "controls: rows that only noise can fail (one thread, where nothing asks for the GIL), "
                        "shown with their outcome and never counted; one outside its band voids the rows it "
                        "guards on that build (they read \"control failed\")",
             "then and now": "the documents' claims judged on builds of another era than their own (today's "
                             "3.13.5 for a 2009 or 2021 document): shown beside the document's own, never in its "
                             "tally",
             "machine": "absolute numbers of the authors' machines, set beside ours as context and never counted",
             "other builds": "results on builds a claim does not speak of (findings beside the claim, not the claim "
                             "failing)",
             "needs cores": "claims that need more logical CPUs than the machine that measured them has (or "
                            "exactly as many as the document's machine had)",
             "not testable": "claims that cannot be tested here (each with its reason)"}
    extra = []
    for role in ROLES[1:]:
        g = rest[rest["role"] == role]
        if len(g):
            n, m = g["claim_id"].nunique(), int((g["outcome"] != "not measured").sum())
            own = len(machine_context(df)) if role == "machine" else len(g)    # the verdicts page's table
            pairs = (f"{own} claim x build pairs on the builds the numbers were measured on, as the verdicts page "
                     f"shows them, {len(g) - own} on other builds" if own < len(g) else f"{len(g)} claim x build pairs")
            extra.append(f"- {n} claim{'s' if n != 1 else ''} ({pairs}"
                         + (f"; {m} of them measured" if m < len(g) else "") + f"): {words[role]}.")
    camp = ", ".join(f"`{c}`" for c in sorted(set(df["campaign"].dropna())))
    return ("\n".join(lines) + "\n\nNot in these counts:\n\n" + "\n".join(extra)
            + f"\n\nFrom campaign(s) {camp}, profile `default`; the [verdicts page](generated/99_verdicts) has every one.")
