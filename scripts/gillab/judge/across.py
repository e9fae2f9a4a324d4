"""Every claim on every machine: each campaign judged alone, then counted, never pooled.

Which campaigns count:

* the committed reference campaign, every contributed campaign (``gillab import``), and the
  reader's newest campaign on this machine (an older one of theirs is superseded by it);
* per experiment, only a campaign whose samples were measured with this harness's measuring
  code (its code key, see :mod:`gillab.measure.codekey`): one measured with other code is shown
  apart, marked, and left out of the counts.

Each campaign's samples are judged on their own (:func:`gillab.judge.verdicts.verdicts`), exactly as its
chapter judges them; the outcomes are then counted.  Campaigns are grouped by machine kind (the
fingerprint of CPU identity, cores, memory and hypervisor, :func:`gillab.measure.metadata.fingerprint`):
"k of n machines" counts kinds, not campaigns.  Two campaigns of one kind are two sittings of the
same kind of machine: where their outcomes are the same, that is the kind's outcome; where they
differ, the kind's outcome is *differs between sittings*, and where one is definite and the other
definite on another side (agrees / higher / lower) the row *flips*: not yet a result on that kind
of machine, whatever either sitting says.

Sittings are never pooled into one sample: runs of one sitting share its state (a VM's
neighbours, its host), so a pooled interval would be narrower than the spread between sittings.
Instead the kind's interval is the hull of its sittings' intervals (:func:`kind_interval`), judged
against the same band: the spread between sittings widens the interval, never the band.  Judged
so, the hull gives the kind's outcome above (``tests/test_exchange.py`` checks that the two agree).

Coarser than a kind, a *CPU group* (:func:`cpu_groups`) holds the campaigns whose CPU has one model
name, vendor family and model, and cache: every campaign is in exactly one, and each pair of groups
is compared on the judged rows both decide (:func:`across_cpus`), a group's outcome being the one
definite outcome its campaigns give (:func:`group_outcome`).
"""
from __future__ import annotations

import pandas as pd

from ..measure import campaigns, sweep
from ..measure import experiments
from . import verdicts

from .pairs import (DEFINITE, paired, judged_rows, DIFFERENT, JUDGED, NOT_BOTH, OPEN, PAIR_OUTCOMES, PAIR_WORDS, SAME,  # noqa: F401
                    beside, counts_sentence, outcomes_compared, pair_counts, pair_outcome)

DIFFERS = "differs between sittings"
KIND_OUTCOMES = (*DEFINITE, "inconclusive", DIFFERS)


def counted() -> list[campaigns.Campaign]:
    """The campaigns the across-machines comparison reads: the reference, every contributed
    campaign, the reader's newest campaign here (oldest first)."""
    out = [c for c in campaigns.all_campaigns() if c.is_reference or c.is_contributed]
    mine = [c for c in campaigns.own() if c.experiments()]
    return out + mine[-1:]


def shared_boots(cs: list[campaigns.Campaign]) -> list[tuple[str, str, list[str]]]:
    """Pairs of campaigns of one machine kind with runs of one experiment measured in one boot of
    one machine, and those experiments: two sittings that share a boot share more of its state
    than two boots would, so their agreement there says less about the drift between boots (the
    machines chapter says which, and for which chapters: a chapter measured again into a campaign
    later, in another sitting's boot, shares that boot alone)."""
    boots = {c.id: campaigns.boots_by_experiment(c) for c in cs}
    out = []
    for i, a in enumerate(cs):
        for b in cs[i + 1:]:
            if a.fingerprint and a.fingerprint == b.fingerprint:
                shared = [e for e, bs in boots[a.id].items() if bs & boots[b.id].get(e, set())]
                if shared:
                    out.append((a.id, b.id, shared))
    return out


def code_keys_now() -> dict[str, str]:
    return {name: sweep.code_key(experiments.get(name)) for name in experiments.names()}


def measured_with_this_code(flat: pd.DataFrame, now: dict[str, str] | None = None) -> list[bool]:
    """Per verdict row, whether its samples were measured with this harness's measuring code
    (its one code key is the chapter's key now; ``now``: :func:`code_keys_now`, computed if not
    given)."""
    now = code_keys_now() if now is None else now
    return [list(k or []) == [now.get(e)] for k, e in zip(flat["code_keys"], flat["experiment"])]


def campaign_verdicts(cs: list[campaigns.Campaign] | None = None, profile: str | None = "default",
                      experiments: list[str] | None = None) -> pd.DataFrame:
    """One flat verdict row per campaign, claim and condition (conditions actually measured),
    each with its campaign's role and machine kind, and whether its samples were measured with
    this harness's code; of ``experiments`` only, where given (a campaign that measured none of
    them is not judged)."""
    cs = counted() if cs is None else cs
    now = code_keys_now()
    frames = []
    for c in cs:
        if experiments is not None and not set(experiments) & set(c.experiments()):
            continue
        flat = verdicts.flat(verdicts.verdicts(c.id, experiments=experiments, profile=profile))
        if flat.empty:
            continue
        flat = flat[flat["condition"] != "-"].copy()
        if flat.empty:       # nothing measured that a claim reads (a campaign of GIL builds, for pairs):
            continue         # an empty frame would make the concatenated flags objects, and ~True -2
        flat["claim_role"] = flat["role"]      # judged, machine, other builds ... (verdicts.flat)
        flat["role"] = c.role
        flat["fingerprint"] = c.fingerprint or "not recorded"
        flat["this_code"] = measured_with_this_code(flat, now)
        frames.append(flat)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def kind_names(a: str, b: str) -> tuple[str, str]:
    """Two kinds of CPU (groups: "name, family / model ..., cache ...") as short as tells them
    apart: their names where those differ, else their names with as many parts more as it takes
    (two Intel Xeon models share the name "Intel(R) Xeon(R) Processor")."""
    pa, pb = [x.strip() for x in a.split(",")], [x.strip() for x in b.split(",")]
    k = next((i + 1 for i, (x, y) in enumerate(zip(pa, pb)) if x != y), max(len(pa), len(pb)))
    return ", ".join(pa[:k]), ", ".join(pb[:k])


def kind_outcome(outcomes: list[str]) -> tuple[str, bool]:
    """A machine kind's outcome from its sittings' outcomes, and whether they contradict (two
    definite outcomes on different sides)."""
    distinct = list(dict.fromkeys(outcomes))
    if len(distinct) == 1:
        return distinct[0], False
    return DIFFERS, len(set(distinct) & set(DEFINITE)) > 1


def kind_interval(lows, highs) -> tuple[float, float]:
    """A machine kind's interval over its sittings: the hull [lowest low, highest high] of the
    sittings' intervals.  It holds each sitting's own value whenever that sitting's interval does,
    so its coverage of any one sitting is at least that sitting's; judged against the claim's band
    it agrees (higher, lower) only where every sitting does."""
    lows, highs = [float(x) for x in lows], [float(x) for x in highs]
    if not lows or any(x != x for x in lows + highs):
        return (float("nan"), float("nan"))
    return (min(lows), max(highs))


def rows(cs: list[campaigns.Campaign] | None = None, profile: str | None = "default",
         verdicts: pd.DataFrame | None = None) -> list[dict]:
    """Per claim x condition: every campaign's outcome and ours / published with its interval;
    every machine kind's outcome from its counted campaigns; k of n machines per outcome; the
    counted campaigns' outcomes compared (``compared``: :func:`outcomes_compared`, the same,
    different, open, or not judged in two); and whether two sittings of one machine kind flip
    (``flips``: definite on different sides) (what ``gillab verdicts --machines --json`` prints)."""
    v = campaign_verdicts(cs, profile) if verdicts is None else verdicts
    if v.empty:
        return []
    out = []
    for (doc, exp, cid, cond), g in v.groupby(["document", "experiment", "claim_id", "condition"], sort=True):
        first = g.iloc[0]
        per_campaign = {}
        for _, r in g.iterrows():
            per_campaign[r["campaign"]] = {
                "role": r["role"], "machine": r["fingerprint"], "outcome": r["outcome"], "measured": r["measured"],
                "ci_low": r["ci_low"], "ci_high": r["ci_high"], "n": r["n"],
                "n_each": r.get("n_each"), "coverage": r.get("coverage"),
                "ours_over_published": r["ours_over_published"], "ratio_low": r["ratio_low"],
                "ratio_high": r["ratio_high"], "measured_with_this_code": bool(r["this_code"])}
        kinds, hulls, flips = {}, {}, False
        for fp, k in g[g["this_code"]].groupby("fingerprint", sort=True):
            kinds[fp], flip = kind_outcome(list(k["outcome"]))
            hulls[fp] = kind_interval(k["ci_low"], k["ci_high"])
            flips |= flip
        counts = {o: sum(1 for x in kinds.values() if x == o) for o in KIND_OUTCOMES}
        same = len(set(g.loc[g["this_code"], "outcome"])) == 1 and int(g["this_code"].sum()) > 1
        compared = outcomes_compared(list(g.loc[g["this_code"], "outcome"]))
        out.append({
            "document": doc, "experiment": exp, "claim_id": cid, "claim": first["claim"], "condition": cond,
            "claim_role": first.get("claim_role", "judged"),
            "build": first["build"], "published": first["published"], "unit": first["unit"],
            "campaigns": per_campaign, "machines": kinds, "machine_intervals": hulls, "n_machines": len(kinds),
            "n_campaigns": int(g["this_code"].sum()), "flips": flips, "compared": compared,
            "same_everywhere": same, "definite_everywhere": same and g.loc[g["this_code"], "outcome"].iloc[0] in DEFINITE,
            **counts})
    return out


def sittings_of_kind(campaign_id: str, profile: str | None = "default") -> dict | None:
    """The headline rows of ``campaign_id`` (mechanism claims on their own builds) set beside
    every other counted campaign of its machine kind (its other sittings): of its rows judged in
    at least one other sitting (a sitting may have measured other chapters), the outcomes of every
    sitting that judged them compared (:func:`outcomes_compared`) and counted as
    :func:`pair_counts` counts (``counts``: both, the same, different, open), with the rows that
    are *different*, which **flip** (two sittings of one kind definite on different sides: not yet
    a result on this kind); the sittings are those that judged any row (a campaign of traces alone
    judges none).  None where the campaign is the only sitting of its kind here."""
    cs = counted()
    me = next((c for c in cs if c.id == campaign_id), None)
    if me is None or not me.fingerprint:
        return None
    kind = [c for c in cs if c.fingerprint == me.fingerprint]
    if len(kind) < 2:
        return None
    v = campaign_verdicts(kind, profile)
    if v.empty:
        return None
    v = v[v["this_code"] & (v["claim_role"] == "judged")]      # the headline's rows (verdicts.headline)
    v = v[v["outcome"].isin(JUDGED)]                           # a sitting judges what it measured
    kind = [c for c in kind if c.id in set(v["campaign"])]
    if len(kind) < 2 or campaign_id not in set(v["campaign"]):
        return None
    words, flips = [], []
    for (cid, cond), x in v.groupby(["claim_id", "condition"]):
        if campaign_id not in set(x["campaign"]) or x["campaign"].nunique() < 2:   # this row in one sitting only
            continue
        words.append(outcomes_compared(list(x["outcome"])))
        if words[-1] == DIFFERENT:
            flips.append({"claim_id": cid, "condition": cond, **dict(zip(x["campaign"], x["outcome"]))})
    boots = set().union(*(campaigns.boots(c) for c in kind))
    return {"fingerprint": me.fingerprint, "sittings": [c.id for c in kind], "boots": len(boots),
            "counts": pair_counts(pd.DataFrame({"compared": words}), "compared"), "flips": flips}


def summary(table: list[dict]) -> pd.DataFrame:
    """Per document: the claim x condition rows judged on two or more counted campaigns, their
    outcomes compared (:func:`outcomes_compared`: the same, different, open), and how many of the
    different ones flip between two sittings of one machine kind."""
    df = pd.DataFrame(table)
    if df.empty:
        return df
    both = df[df["compared"] != NOT_BOTH]
    if both.empty:
        return pd.DataFrame()
    g = both.groupby("document")
    return pd.DataFrame({
        "judged on 2+ campaigns": g.size(),
        **{w: g["compared"].apply(lambda s, w=w: int((s == w).sum())) for w in PAIR_OUTCOMES},
        "of the different, flip within one kind": g["flips"].sum().astype(int),
    }).reset_index()


def against(table: list[dict], base: str) -> pd.DataFrame:
    """Every other campaign of :func:`rows` beside ``base`` (the reference): its judged claim x
    condition rows (a machine row is context, never counted) judged in both with this checkout's
    code (:func:`paired`) counted by :func:`pair_counts`, and how many more are judged in both but
    measured with other code (not counted)."""
    others = sorted({c for r in table for c in r["campaigns"]} - {base})
    table = judged_rows(table)
    rows = [{"campaign": o, **pair_counts([(a["outcome"], b["outcome"]) for a, b in paired(table, base, o)]),
             "other code": len(paired(table, base, o, this_code=False))} for o in others]
    return pd.DataFrame(rows, columns=["campaign", "both", *PAIR_OUTCOMES, "other code"])


def apart(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The campaigns x experiments measured with other measuring code than this harness's: shown
    apart, not counted."""
    if verdicts.empty:
        return pd.DataFrame()
    other = verdicts[~verdicts["this_code"]]
    if other.empty:
        return pd.DataFrame()
    now = code_keys_now()
    return (other.groupby(["campaign", "experiment"])
            .agg(rows=("claim_id", "size"), code_keys=("code_keys", lambda s: ", ".join(sorted({k for ks in s for k in ks}))))
            .reset_index()
            .assign(this_harness=lambda d: d["experiment"].map(now)))


# -- machines grouped by CPU ----------------------------------------------------------------------
# A machine kind (the fingerprint) also tells apart memory, flags and hypervisor; a CPU group is
# coarser: the CPU's model name, its vendor family and model, and its cache, as each campaign's
# run metadata records them (:func:`gillab.measure.metadata.cpu_details`).
NO_CPU = "CPU not recorded"


def cpu_of(c: campaigns.Campaign) -> dict[str, str]:
    """A campaign's CPU as its machine record says: model name, family / model, cache (the
    ``cache size`` of /proc/cpuinfo, else its L2 and L3); empty where not recorded."""
    m = c.machine_record
    cpu = m.get("cpu") or {}
    caches = cpu.get("caches") or {}
    cache = cpu.get("cache_per_core") or " ".join(f"{k} {caches[k]}" for k in ("L2", "L3") if k in caches)
    out = {"model name": m.get("cpu_model") or "",
           "family / model": (f"{cpu['family']} / {cpu['model']}" if cpu.get("family") is not None else ""),
           "cache": cache or ""}
    return out if any(out.values()) else {}


def cpu_group(c: campaigns.Campaign) -> str:
    """The name of a campaign's CPU group: 'AMD EPYC, family / model 25 / 17, cache 1024 KB'
    (a field not recorded says so), or :data:`NO_CPU`."""
    cpu = cpu_of(c)
    if not cpu:
        return NO_CPU
    return (f"{cpu['model name'] or 'model name not recorded'}, family / model {cpu['family / model'] or 'not recorded'}, "
            f"cache {cpu['cache'] or 'not recorded'}")


def cpu_groups(cs: list[campaigns.Campaign] | None = None) -> dict[str, list[str]]:
    """Every campaign (of :func:`counted`, unless given) in exactly one CPU group: group name ->
    its campaigns' ids; the reference's group first, then by name, a CPU not recorded last."""
    cs = counted() if cs is None else cs
    out: dict[str, list[str]] = {}
    for c in cs:
        out.setdefault(cpu_group(c), []).append(c.id)
    ref = campaigns.reference_id()
    return dict(sorted(out.items(), key=lambda kv: (ref not in kv[1], kv[0] == NO_CPU, kv[0])))


def group_outcome(outcomes) -> str | None:
    """A CPU group's outcome for one claim x build from its campaigns' outcomes: the one definite
    outcome where every definite one agrees (an inconclusive campaign says nothing either way);
    :data:`DIFFERS` where two of its campaigns are definite on different sides (the group has no
    outcome there); ``"inconclusive"`` where some judged it and none is definite; None where none
    judged it."""
    judged = [o for o in outcomes if o in JUDGED]
    if not judged:
        return None
    definite = set(judged) & set(DEFINITE)
    return DIFFERS if len(definite) > 1 else next(iter(definite)) if definite else "inconclusive"


def within_group(outcomes) -> str:
    """One CPU group's campaigns compared with each other for one claim x build, as
    :func:`group_outcome` reads them (an inconclusive campaign says nothing either way): *the same*
    where two or more are definite and all of those agree, *different* where two definite ones
    differ, *open* where fewer than two are definite; :data:`NOT_BOTH` where fewer than two of its
    campaigns judged it."""
    judged = [o for o in outcomes if o in JUDGED]
    if len(judged) < 2:
        return NOT_BOTH
    definite = [o for o in judged if o in DEFINITE]
    return OPEN if len(definite) < 2 else DIFFERENT if len(set(definite)) > 1 else SAME


def _judged(v: pd.DataFrame, this_code: bool = True, role: str = "judged") -> pd.DataFrame:
    """The judged rows (claims on the builds they speak of, controls apart) with an outcome of a
    judgement; measured with this checkout's code only, unless ``this_code`` is False.  With
    ``role`` "machine": the rows of the author's machine's numbers instead, judged the same way."""
    if v.empty:
        return v
    return v[(v["this_code"] | (not this_code)) & (v["claim_role"] == role) & v["outcome"].isin(JUDGED)]


def _outcomes_by_group(v: pd.DataFrame, of: dict[str, str], this_code: bool = True) -> dict[str, dict]:
    """Group -> (claim_id, condition) -> its campaigns' outcomes, of :func:`_judged`'s rows."""
    j = _judged(v, this_code)
    out: dict[str, dict] = {g: {} for g in dict.fromkeys(of.values())}
    for _, r in j.iterrows():
        if r["campaign"] in of:
            out[of[r["campaign"]]].setdefault((r["claim_id"], r["condition"]), []).append(r["outcome"])
    return out


def across_cpus(v: pd.DataFrame, cs: list[campaigns.Campaign] | None = None) -> pd.DataFrame:
    """For each pair of CPU groups (:func:`cpu_groups`), their judged rows measured with this
    checkout's code compared: each group's outcome (:func:`group_outcome`; one whose campaigns
    differ is not definite) set beside the other's by :func:`pair_outcome` and counted by
    :func:`pair_counts` (judged in both, the same, different, open) with the rows definite in both,
    and the rows judged in both but measured with other code in one (not counted); then each group
    with itself: the rows judged in two or more of its campaigns, compared by :func:`within_group`.
    ``v``: :func:`campaign_verdicts` of the same campaigns."""
    groups = cpu_groups(cs)
    of = {cid: g for g, ids in groups.items() for cid in ids}
    per, anycode = _outcomes_by_group(v, of), _outcomes_by_group(v, of, this_code=False)
    names = list(groups)
    rows = []
    for i, a in enumerate(names):
        for b in names[i:]:
            if a == b:
                c = pair_counts(pd.DataFrame({"w": [within_group(o) for o in per[a].values()]}), "w")
                other = sum(within_group(o) != NOT_BOTH for o in anycode[a].values()) - c["both"]
            else:
                both = set(per[a]) & set(per[b])
                c = pair_counts([tuple("inconclusive" if o == DIFFERS else o
                                       for o in (group_outcome(per[a][k]), group_outcome(per[b][k]))) for k in both])
                other = len(set(anycode[a]) & set(anycode[b])) - len(both)
            rows.append({"group": a, "beside": "itself (its campaigns)" if a == b else b,
                         "campaigns": f"{len(groups[a])}" + ("" if a == b else f" and {len(groups[b])}"),
                         "judged in both": c["both"], "definite in both": c[SAME] + c[DIFFERENT],
                         SAME: c[SAME], DIFFERENT: c[DIFFERENT], OPEN: c[OPEN], "other code (not counted)": other})
    return pd.DataFrame(rows, columns=["group", "beside", "campaigns", "judged in both", "definite in both",
                                       SAME, DIFFERENT, OPEN, "other code (not counted)"])


def cpu_group_table(cs: list[campaigns.Campaign] | None = None) -> pd.DataFrame:
    """The CPU groups (:func:`cpu_groups`), one row each: model name, family / model, cache, and
    its campaigns."""
    cs = counted() if cs is None else cs
    by_id = {c.id: c for c in cs}
    rows = []
    for g, ids in cpu_groups(cs).items():
        cpu = cpu_of(by_id[ids[0]])
        rows.append({"CPU group": g, **{k: cpu.get(k) or "not recorded" for k in ("model name", "family / model", "cache")},
                     "campaigns": ", ".join(ids), "how many": len(ids)})
    return pd.DataFrame(rows)


def contradictions(v: pd.DataFrame, cs: list[campaigns.Campaign] | None = None, role: str = "judged") -> pd.DataFrame:
    """Every judged row (measured with this checkout's code) definite in two CPU groups on
    different sides, one line per row and pair of groups: each group's outcome and its campaigns'
    values, and what decides the row where a cause is known (:mod:`gillab.judge.causes`: its
    phrase, its words, its witness), else ``cause`` empty.  ``v``: :func:`campaign_verdicts` of
    the same campaigns.  With ``role`` "machine": the machine rows that differ so, each with what
    decides it (shown, never counted)."""
    from . import causes

    cols = ["document", "experiment", "claim_id", "claim", "condition", "group", "outcome", "values", "beside",
            "beside_outcome", "beside_values", "cause", "why", "witness"]
    groups = cpu_groups(cs)
    of = {cid: g for g, ids in groups.items() for cid in ids}
    j = _judged(v, role=role)
    if j.empty or len(groups) < 2:
        return pd.DataFrame(columns=cols)
    j = j.assign(group=j["campaign"].map(of)).dropna(subset=["group"])
    known = causes.load()
    rows = []
    for (cid, cond), g in j.groupby(["claim_id", "condition"], sort=True):
        per = {grp: group_outcome(list(x["outcome"])) for grp, x in g.groupby("group", sort=False)}
        names = [n for n in groups if per.get(n) in DEFINITE]
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if per[a] == per[b]:
                    continue
                cause = causes.of(cid, known)
                first = g.iloc[0]
                rows.append({"document": first["document"], "experiment": first["experiment"], "claim_id": cid,
                             "claim": first["claim"], "condition": cond, "group": a, "outcome": per[a],
                             "values": causes.values_text(g[g["group"] == a]), "beside": b,
                             "beside_outcome": per[b], "beside_values": causes.values_text(g[g["group"] == b]),
                             "cause": cause.decided_by if cause else "", "why": cause.why if cause else "",
                             "witness": cause.witness if cause else ""})
    return pd.DataFrame(rows, columns=cols)


def contradiction_count(v: pd.DataFrame, cs: list[campaigns.Campaign] | None = None) -> dict:
    """Over every pair of CPU groups (:func:`across_cpus`): the rows definite in both, how many of
    them contradict, and how many of those have a known cause."""
    pairs = across_cpus(v, cs)
    pairs = pairs[pairs["beside"] != "itself (its campaigns)"]
    c = contradictions(v, cs)
    return {"definite in both": int(pairs["definite in both"].sum()), "contradict": int(pairs[DIFFERENT].sum()),
            "with a cause": int((c["cause"] != "").sum()), "without": int((c["cause"] == "").sum())}


def _measured_with(c: campaigns.Campaign, experiment: str, now: str) -> bool:
    """Whether any of ``c``'s analysed samples of ``experiment`` were measured with the code whose
    key is ``now`` (:func:`gillab.judge.results.code_key_rows`: the samples file's key columns
    alone, nothing judged; the codekeys table reads the same rows)."""
    from .results import code_key_rows

    return bool((code_key_rows(c, experiment)["key"] == now).any())


def flips(experiment: str, profile: str | None = "default") -> pd.DataFrame:
    """:func:`contradictions` of one chapter over the counted campaigns that measured it with this
    checkout's code: empty, with nothing judged, where those campaigns ran on fewer than two
    kinds of CPU (what a chapter marks under its verdicts)."""
    now = code_keys_now().get(experiment)
    cs = [c for c in counted() if now and _measured_with(c, experiment, now)]
    if len(cpu_groups(cs)) < 2:
        return contradictions(pd.DataFrame(), cs)
    return contradictions(campaign_verdicts(cs, profile, experiments=[experiment]), cs)
