"""The book's first screen: one figure of the verdicts' outcomes (agrees, higher or lower,
inconclusive) by document and build family, and a handful of findings, each a sentence a chapter checks
against its data (:mod:`gillab.judge.prose`), computed when the book builds from the campaign shown
(the reader's where there is one, else the reference) and linking to its chapter.

Nothing here is typed: the figure counts the verdict rows (:func:`gillab.judge.verdicts.flat`), and a
finding is the chapter's own :class:`~gillab.judge.prose.Check`, picked by the key its chapter
lists in ``HEADLINE`` (:attr:`gillab.judge.analysis.Analysis.headline`), never by its words: a
reworded sentence stays on the first screen.

Why it is long: the first screen's account of the reader's run is checked sentence by sentence
against the campaign (what was measured, on which builds, what is borrowed and why, whose traces,
the sizes, steady and alone), and each sentence's reading lives beside the words that print it.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import pandas as pd

from ..judge import verdicts
from ..judge.verdicts import profile_config

# a verdict row's outcome, in the verdicts' own words (the one vocabulary of the book: a row that
# is not judged because its setting was not in force, or its control failed, is inconclusive here)
AGREES, DIFFERS, INCONCLUSIVE = "agrees", "higher or lower", "inconclusive"
CLASSES = {"agrees": AGREES, "higher": DIFFERS, "lower": DIFFERS, "inconclusive": INCONCLUSIVE,
           "not in force here": INCONCLUSIVE, "control failed": INCONCLUSIVE,
           "not testable here": "not testable here", "not measured": "not measured in this run"}
COLOURS = {AGREES: "#1b9e77", DIFFERS: "#d95f02", INCONCLUSIVE: "#bdbdbd",
           "not testable here": "#eeeeee", "not measured in this run": "#ffffff"}


def counts(flat: pd.DataFrame) -> pd.DataFrame:
    """Per document and build family: how many claims agree, are higher or lower, or inconclusive,
    each claim counted once (:func:`gillab.judge.verdicts.claim_tally`: its rows on the document's
    own interpreter, outcomes combined), over the claims the headline counts; and per document the
    claims not testable here or not measured in this run."""
    cols = ["document", "family", *COLOURS]
    if flat.empty:
        return pd.DataFrame(columns=cols)
    tally = verdicts.claim_tally(verdicts.judged(flat))
    rows = []
    for (doc, fam), g in tally.groupby(["document", "family"], sort=True):
        c = g["outcome"].map(CLASSES).value_counts()
        rows.append({"document": doc, "family": fam, **{k: int(c.get(k, 0)) for k in COLOURS}})
    missing = flat[flat["condition"] == "-"]
    for doc, g in missing.groupby("document", sort=True):
        c = g["outcome"].map(CLASSES).value_counts()
        rows.append({"document": doc, "family": "no build", **{k: int(c.get(k, 0)) for k in COLOURS}})
    return pd.DataFrame(rows, columns=cols).sort_values(["document", "family"], kind="stable").reset_index(drop=True)


def figure(panels: dict[str, pd.DataFrame], titles: dict[str, str] | None = None):
    """Horizontal stacked bars, one per document and build family: claims x builds that agree, are
    higher or lower, are inconclusive; one panel per campaign (``panels``: label -> flat rows),
    stacked one above the other on one x scale (the counts are compared), at a size whose text
    reads at 10 px or more when the page shows the figure at its content width (about 800 px)."""
    import matplotlib.pyplot as plt

    tables = {k: counts(v) for k, v in panels.items()}
    keys = sorted({(d, f) for t in tables.values() for d, f in zip(t["document"], t["family"])})
    if not keys:
        return None
    n = len(tables)
    fig, axes = plt.subplots(n, 1, figsize=(8.0, n * (0.28 * len(keys) + 0.9) + 0.6), sharex=True, squeeze=False)
    y = {k: i for i, k in enumerate(reversed(keys))}
    for ax, (label, t) in zip(axes[:, 0], tables.items()):
        left = pd.Series(0.0, index=range(len(t)))
        for cls, colour in COLOURS.items():
            ax.barh([y[(d, f)] for d, f in zip(t["document"], t["family"])], t[cls], left=left, color=colour,
                    edgecolor="#999999", linewidth=0.4, label=cls)
            left = left + t[cls]
        absent = set(keys) - set(zip(t["document"], t["family"]))
        for k in absent:       # a row the other panel has: this campaign did not measure it
            ax.text(0.3, y[k], "none judged in this campaign (another profile or chapter measures them)", fontsize=9,
                    color="0.45", va="center")
        ax.set_title((titles or {}).get(label, label), fontsize=11, loc="left")
        ax.set_yticks(list(y.values()), [f"doc {d}: {f}" for d, f in y])
        ax.set_ylim(-0.6, len(keys) - 0.4)
        ax.tick_params(labelsize=10)
        ax.grid(axis="y", visible=False)
    axes[-1, 0].set_xlabel("claims (each once, on the document's own interpreter)", fontsize=10)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=10, loc="upper center", ncol=3, frameon=False, bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.55 / fig.get_figheight()))
    return fig


def alt_text(flat: pd.DataFrame) -> str:
    """The figure in words (its alt text): per document, how many claims agree, are higher or
    lower, and are inconclusive."""
    t = counts(flat)
    if t.empty:
        return "No verdicts yet."
    parts = []
    for doc, g in t.groupby("document", sort=True):
        s = g[list(COLOURS)].sum()
        parts.append(f"document {doc}: {int(s[AGREES])} agree, {int(s[DIFFERS])} higher or lower, "
                     f"{int(s[INCONCLUSIVE])} inconclusive")
    return "Claims by outcome, each counted once on the document's own interpreter. " + "; ".join(parts) + "."


class Finding(NamedTuple):
    """One sentence of the first screen: its chapter, the chapter's checked sentence, and the
    campaign whose samples it was computed on."""
    chapter: str
    check: object
    campaign: str


def findings(campaign: str | None = None, profile: str = "default") -> list[Finding]:
    """A :class:`Finding` for each sentence a chapter names in its ``HEADLINE`` (by key, in the
    book's order, then the chapter's) that can be computed, on the samples its chapter reads:
    ``campaign``'s, or where it holds none of that chapter (a timed run left it out), the
    reference's, as the chapter itself reads them (:func:`findings_markdown` says so).  A sentence
    that rests on a number not measured (a nan in its evidence: a build or point the profile left
    out) or on fewer than two runs is left to its chapter, which says why: the first screen prints
    none."""
    from ..chapters import of as reading
    from ..judge import prose, results
    from ..measure import experiments

    out = []
    for name in experiments.names():
        keys = reading(name).headline
        if not keys:
            continue
        try:
            df = results.samples_as_chapter(name, campaign, profile_config(name, profile))
        except results.NoData:
            continue
        by_key = {c.key: c for c in reading(name).prose(df)
                  if c.key and not prose.missing(c) and not prose.too_few(c)}
        out += [Finding(name, by_key[k], df.attrs.get("campaign", campaign)) for k in keys if k in by_key]
    return out


def findings_markdown(found: list[Finding], link, shown: str | None = None) -> str:
    """The findings in two groups: those computed from ``shown`` (the campaign the first screen
    shows: the reader's run, or the reference alone), then those borrowed from another campaign
    because the run shown did not measure their chapter, under a heading that names that campaign
    and its machine; in a borrowed sentence "this machine" is that campaign's machine, and says
    so.  Each bullet links to its chapter; a sentence the data no longer bear out is struck and
    marked, as in its chapter."""
    from ..judge import prose
    from ..measure import campaigns
    from ..measure.campaigns import reference_id
    from ..measure.experiments import get

    ref = reference_id()
    own = [f for f in found if shown is None or f.campaign == shown]
    lent = [f for f in found if shown is not None and f.campaign != shown]

    def bullet(f, machine_of=None):
        text = prose.markdown([f.check])[2:]
        if machine_of:
            text = text.replace("this machine", machine_of)
        return f"- {text} [{get(f.chapter).title}]({link(f.chapter)})"

    whose = "the reference campaign" if shown == ref else "your run"
    lines = []
    if own:
        lines += [f"**What {whose} found** (campaign `{shown}`, computed when this book was built; each sentence is "
                  "checked against its chapter's samples, with the numbers that bear it out):", ""]
        lines += [bullet(f) for f in own]
    elif shown is not None:
        lines += [f"**What {whose} found** (campaign `{shown}`): none of the first screen's sentences rests on "
                  "enough runs of its chapters for a 95% interval; each chapter says what its runs show."]
    for camp in sorted({f.campaign for f in lent}):
        try:
            words = machine_words(campaigns.load(camp))
        except campaigns.NoCampaign:
            words = "its machine"
        which = "the reference campaign" if camp == ref else "campaign"
        lines += ["", f"**Borrowed from {which} `{camp}`** (measured on {words}; your run holds no samples of these "
                  "chapters at today's configuration, so these sentences are about that machine, not yours):", ""]
        lines += [bullet(f, "the reference's machine" if camp == ref else "that machine")
                  for f in lent if f.campaign == camp]
    return "\n".join(lines)


def share(flat: pd.DataFrame) -> dict[str, float]:
    """Of the headline claims (each once) with a definite outcome, the share that agrees (for a
    sentence under the figure)."""
    t = counts(flat)
    held, failed = int(t[AGREES].sum()), int(t[DIFFERS].sum())
    return {"held": held, "failed": failed, "open": int(t[INCONCLUSIVE].sum()),
            "share": held / (held + failed) if held + failed else math.nan}


def beside_reference(yours: pd.DataFrame, ref: pd.DataFrame) -> dict:
    """The reader's headline rows (claims judged on the builds they speak of) set beside the
    reference's, claim x build by claim x build, counted with the one definition every page uses
    (:func:`gillab.judge.across.pair_outcome`): of those judged in both, *the same* (one definite
    outcome in both), *different* (definite in both, not equal) and *open* (inconclusive in one
    or both); and the rows that differ."""
    from ..judge import across

    mine, theirs = verdicts.headline(yours), verdicts.headline(ref)
    both = across.beside(mine, theirs)
    counted = both[both["compared"] != across.NOT_BOTH]
    differ = [{"claim_id": r.claim_id, "condition": r.condition, "yours": r.a, "reference": r.b}
              for r in counted[counted["compared"] == across.DIFFERENT].itertuples()]
    # the reader's rows the comparison cannot read: a build the reference did not measure (it ran
    # the retired 3.9.10 where today's runs run 3.9.2), or a claim it did not judge
    col = "build" if "build" in mine.columns and "build" in theirs.columns else "condition"
    own_builds = set(theirs[col]) if len(theirs) else set()
    apart = mine[~mine[col].isin(own_builds)] if len(mine) else mine
    return across.pair_counts(counted, "compared") | {
        "differ": differ, "rows": len(mine),
        "other_builds": {b: int(n) for b, n in apart[col].value_counts().items() if b != "-"} if len(apart) else {},
        "reference_builds": sorted(own_builds - {"-"} - set(mine[col] if len(mine) else []))}


def beside_reference_sentence(yours: pd.DataFrame, ref: pd.DataFrame) -> str:
    """One sentence for the first screen: how much of the reader's run agrees with the reference,
    in the words the verdicts and machines pages count with."""
    from ..judge import across

    r = beside_reference(yours, ref)
    if not r["both"]:
        return "Your campaign and the reference judge no claim x build in common yet."
    n = len(r["differ"])
    which = "; ".join(f"`{c['claim_id']}` on {c['condition']}: outcome {c['yours']} in yours, {c['reference']} in the reference"
                      for c in r["differ"][:3])
    more = f" and {n - 3} more" if n > 3 else ""
    gap = ""
    if r["other_builds"]:
        rows = sum(r["other_builds"].values())
        gap = (f" Of your run's {r['rows']} rows, {rows} are on builds the reference did not measure ("
               + ", ".join(f"{b}: {k}" for b, k in r["other_builds"].items()) + ")"
               + (f"; it measured {', '.join(r['reference_builds'])} instead" if r["reference_builds"] else "")
               + ", so they are not compared until the reference is measured again.")
    return ("**Your run beside the reference** (the claims judged on the builds they speak of and the "
            "document's own interpreter, claim x build by claim x build): "
            + across.counts_sentence(r) + "."
            + (f" Different: {which}{more}." if n else "") + gap
            + " The [verdicts](generated/99_verdicts) and [across machines](generated/98_machines) pages use the "
              "same three words over other rows (every row of a claim, the authors' machine numbers included, and "
              "every campaign), so their counts are larger; the across-machines page also leaves out a chapter "
              "measured with other measuring code than this checkout's.")


def vocabulary_markdown() -> str:
    """The book's words, defined once (the introduction shows them): an outcome for a verdict, a
    comparison for two campaigns' outcomes, and what a checked sentence is marked with; each word
    is the constant the code writes, so a page cannot use one this list does not define."""
    from ..judge import claims, pairs, prose

    same, different, open_ = (pairs.PAIR_WORDS[k].split(" (", 1)[1].rstrip(")") for k in pairs.PAIR_OUTCOMES)
    return "\n".join([
        "**The words.** Every page uses these, and no others, for what a result is:",
        "",
        "- A **verdict** (one claim of a document, on one build, judged on one campaign's runs) has an "
        "**outcome**: *agrees* when the whole 95% interval lies where the document's words put the value (in "
        "its band, or past its threshold); *higher* or *lower* when it lies wholly outside, above or below; "
        f"*inconclusive* when the interval reaches across an edge of the band, the runs are too few for an "
        f"interval, the setting was not applied (*{claims.NOT_IN_FORCE}*) or a control failed "
        f"(*{claims.CONTROL_FAILED}*). *Not testable here* and *not measured* are no judgement.",
        f"- Two campaigns' outcomes for one claim x build are **compared**: *{pairs.SAME}* ({same}), "
        f"*{pairs.DIFFERENT}* ({different}), *{pairs.OPEN}* ({open_}).",
        "- A chapter's **checked sentence** is shown as found when its data bear it out; marked "
        f"*{prose.NOT_SHOWN}* when an interval does not settle it; marked *{prose.NOT_MEASURED}* when a number "
        f"it rests on was not measured (the profile's grid left that build or point out); struck and marked "
        f"*{prose.NOT_TRUE}* when the data contradict it.",
        "- A **campaign** is one machine's measurements, kept under `data/results/`: *the reference campaign* "
        "(committed, the one the report is read against), *your run* (the campaign this book shows first: your "
        "newest on this machine, or the one the book was built for with `--campaign`; a chapter calls it *your "
        "campaign*, or *contributed* where it was imported from another machine) and the other *contributed* "
        "campaigns (the machines page).",
        ""])


# -- the reader's run, on the first screen ---------------------------------------------------------
def reader_campaign(campaign: str | None = None):
    """The campaign whose run the book shows as the reader's: ``campaign`` if named (not the
    reference), else the reader's newest campaign on this machine that holds samples; None when
    the book shows the reference alone."""
    from ..measure import campaigns

    if campaign:
        c = campaigns.load(campaign)
        return None if c.is_reference else c
    mine = [c for c in campaigns.own() if c.experiments()]
    return mine[-1] if mine else None


def run_record(c):
    """The newest record of a whole ``gillab reproduce`` run kept in campaign ``c``'s folder (a
    :class:`gillab.record.RunRecord`: its plan, pace, chapters left out, load, steal), if the
    campaign was measured by one."""
    from ..measure import campaigns

    recs = campaigns.whole_runs(c)
    default = [r for r in recs if r.profile == "default"]   # the run the book's pages show
    return (default or recs or [None])[-1]


def machine_words(c) -> str:
    """A campaign's machine in a few words: CPU model with vendor family / model, cores, memory."""
    m = c.machine_record
    cpu = m.get("cpu") or {}
    fm = f" (family {cpu.get('family')}, model {cpu.get('model')})" if cpu.get("family") is not None else ""
    return (f"{m.get('cpu_model') or 'an unrecorded CPU'}{fm}, {m.get('cpu_count') or '?'} cores, "
            f"{round((m.get('memory_bytes') or 0) / 2 ** 30)} GiB")


def holds(c, name: str, profile: str = "default") -> bool:
    """Whether campaign ``c`` holds successful samples of ``name`` at the configuration ``profile``
    measures today: what a chapter's page shows as the campaign's own (a campaign that measured the
    chapter at other sizes or with other measuring code, another configuration, is passed over
    there, and here)."""
    if c is None or not c.has(name):
        return False
    cfg = profile_config(name, profile)
    return cfg is None or bool(c.store(name).measured(cfg))


def sources(yours, ref, names: list[str], profile: str = "default") -> dict[str, str]:
    """Chapter -> whose samples the book shows for it: ``"yours"`` (the reader's campaign holds
    today's configuration of it), ``"reference"`` (it does not: borrowed) or ``"none"``."""
    out = {}
    for name in names:
        if holds(yours, name, profile):
            out[name] = "yours"
        elif ref is not None and ref.has(name):
            out[name] = "reference"
        else:
            out[name] = "none"
    return out


def builds_measured(c, names: list[str], profile: str = "default") -> list[str]:
    """The builds whose successful samples campaign ``c`` holds at today's configurations of
    ``names``, in builds.toml's order."""
    from ..measure import interpreters, provision

    seen = set()
    for name in names:
        cfg = profile_config(name, profile)
        if cfg is not None and c.has(name):
            seen |= {cond for cond, _, _ in c.store(name).measured(cfg)}
    builds = {spec.build_id for spec in provision.all_specs()} | set(provision.retired()) | _gil_twins()
    # a Python build, not a tool a chapter measures beside them (the download's curl)
    return interpreters.display_order(c for c in seen if c in builds or c.startswith(("python", "host")))


def _gil_twins() -> set[str]:
    """The ids of builds that are another build's binary with its GIL turned on at run time."""
    from ..measure import provision

    return ({spec.gil_twin[0] for spec in provision.all_specs() if spec.gil_twin}
            | {r.build_id for r in provision.retired().values() if r.twin})      # an earlier campaign's


def traces_shown(yours, names: list[str]) -> dict[str, str]:
    """Chapter -> the campaign whose GIL traces its page shows (the reader's where it holds them,
    else the newest that does: :func:`gillab.present.trace_view.campaign_for`), for the chapters
    with traces anywhere."""
    from . import trace_view

    out = {}
    for name in names:
        if name in trace_view.CHAPTERS:
            c = trace_view.campaign_for(name, yours.id if yours is not None else None)
            if c is not None:
                out[name] = c.id
    return out


def parts_shown(yours, names: list[str]) -> list[tuple[str, str, str]]:
    """(what, chapter, campaign) for each part a chapter's page reads from another campaign than
    the reader's run ``yours``: a part another profile measures (:data:`gillab.present.parts.
    PROFILE_PARTS`, read by :func:`gillab.present.parts.part_samples`) and the second witness
    (:func:`gillab.present.witness_view.campaign_for`), as the pages choose them."""
    from ..measure import experiments
    from . import parts, witness_view

    out = []
    for name, (profile, what) in parts.PROFILE_PARTS.items():
        if name in names:
            exp = experiments.get(name)
            c, _ = parts.part_samples(name, exp.config_id(exp.resolve(profile)), yours)
            if c is not None and c.id != yours.id:
                out.append((f"{what} (the `{profile}` profile)", name, c.id))
    for name in names:
        c = witness_view.campaign_for(name, yours.id)
        if c is not None and c.id != yours.id:
            out.append(("the second witness", name, c.id))
    return out


def sizes_words(names: list[str]) -> str:
    """One phrase: how many chapters ``default`` measures at other sizes than the documents' own
    (the ``seed`` profile's: :func:`gillab.judge.verdicts.size_differences`, a parameter of the
    configuration that differs), with the countdown's as the example, from profiles.toml."""
    from ..measure import experiments

    profile = "default"
    scaled = [name for name in names if verdicts.size_differences(name, "seed")]
    if not scaled:
        return "**Sizes:** every chapter at the documents' own sizes (the `seed` profile's)."
    example = ""
    if "countdown" in scaled:
        c = experiments.get("countdown")
        example = (f"the countdown counts {c.resolve(profile)['total_decrements']:,} decrements where the document "
                   f"counted {c.resolve('seed')['total_decrements']:,}")
    return (f"**Sizes:** `{profile}` runs {len(scaled)} of {len(names)} chapters smaller or shorter than the documents "
            f"did{f' ({example})' if example else ''}; the documents' own sizes are the `seed` profile's (the method "
            "chapter's *Profiles*).")


def pace_words(rec) -> str:
    """A whole run's pace against the reference's time: every probe's (at its end), and the first
    probe's where the plan was made at another (a run before every probe was read: the first's)."""
    if rec is None or rec.speed_factor is None:
        return "not recorded"
    if rec.pace is None:
        return f"{rec.speed_factor:.2f}x the reference's time (its first probe)"
    from ..judge import steadiness

    first = (f"; its first probe {rec.speed_factor:.2f}x" if abs(rec.pace - rec.speed_factor) >= 0.005 else "")
    got = steadiness.medians(rec)
    spread = (f", the slowest {max(got) / min(got):.2f}x the fastest's time" if len(got) > 1 else "")
    return f"{rec.pace:.2f}x the reference's time (the median of its {len(got)} probes{spread}{first})"


def _run_column(c, rec, role: str) -> dict:
    m = c.machine_record
    cpu = m.get("cpu") or {}
    load = (" → ".join(f"{(getattr(rec, k) or ['-'])[0]}" for k in ("loadavg_start", "loadavg_end"))
            if rec else "not recorded")
    steal = rec.cpu_steal_share if rec else None
    pace = ("1 (the yardstick)" if role == "reference" and (rec is None or rec.speed_factor is None)
            else pace_words(rec))
    return {"CPU": f"{m.get('cpu_model') or 'not recorded'}",
            "vendor, family / model": (f"{cpu.get('vendor')}, {cpu.get('family')} / {cpu.get('model')}"
                                       if cpu.get("family") is not None else "not recorded"),
            "cores": str(m.get("cpu_count") or "not recorded"),
            "memory": f"{round((m.get('memory_bytes') or 0) / 2 ** 30)} GiB",
            "pace (3.13.5's one-thread countdown)": pace,
            "load average, start → end": load,
            "CPU time stolen by the hypervisor": "not recorded" if steal is None else f"{steal:.1%}",
            "measured": (rec.started[:16].replace("T", " ") + " UTC") if rec else c.created[:10],
            "the run's profile": f"`{rec.profile}`" if rec else "no whole-run record"}


def run_markdown(yours, ref, names: list[str], controls=None) -> str:
    """The first screen's account of the run shown: the reader's machine beside the reference's
    (CPU, cores, pace, load, steal, from the campaigns' records), which chapters the reader's run
    measured and which the book borrows from the reference (and why, where the run's plan says),
    so that no number below is mistaken for the reader's."""
    from ..measure.experiments import get

    if yours is None:
        if ref is None:
            return ""
        return (f"**Whose numbers.** This book shows the committed **reference campaign** `{ref.id}`, measured on "
                f"{machine_words(ref)}: no run of yours is in `data/results/` yet. `make reproduce` measures every "
                "chapter on your machine within its budget and rebuilds this page from your samples, beside the "
                "reference's.\n")
    src = sources(yours, ref, names)
    rec, ref_rec = run_record(yours), (run_record(ref) if ref is not None else None)
    cols = {f"your run `{yours.id}`": _run_column(yours, rec, "yours")}
    if ref is not None:
        cols[f"the reference `{ref.id}`"] = _run_column(ref, ref_rec, "reference")
    keys = list(next(iter(cols.values())))
    table = ["| | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    table += [f"| {k} | " + " | ".join(str(v[k]) for v in cols.values()) + " |" for k in keys]
    own = [n for n in names if src[n] == "yours"]
    borrowed = [n for n in names if src[n] == "reference"]
    same_kind = ref is not None and yours.fingerprint and yours.fingerprint == ref.fingerprint
    lines = [f"**Your run.** The campaign this book shows first, `{yours.id}`, was measured on "
             f"{machine_words(yours)}"
             + ("" if ref is None else
                (", the same kind of machine as the reference's." if same_kind else
                 f"; the reference campaign `{ref.id}` on {machine_words(ref)}: **another machine**, so "
                 "absolute numbers differ between them and the verdicts are each machine's own.")),
             ""]
    why = []
    other = [n for n in borrowed if yours.has(n)]
    if other:
        why.append(f"your run measured {', '.join(f'`{n}`' for n in other)} at another configuration than "
                   "today's (other sizes or other measuring code), which its pages do not read")
    if rec and rec.left_out:
        left = [n for n in borrowed if n in rec.left_out and n not in other]
        if left:
            why.append(f"its plan left {', '.join(f'`{n}`' for n in left)} out to fit its "
                       f"{rec.budget_minutes or '?'}-minute budget at this machine's pace"
                       + (f" ({rec.speed})" if rec.speed else ""))
    traces = traces_shown(yours, names)
    lent_traces = {n: c for n, c in traces.items() if c != yours.id}
    parts = parts_shown(yours, names)
    builds = builds_measured(yours, own)
    twins = [b for b in builds if b in _gil_twins()]          # the same binary as a build, its GIL on
    lines.append(f"**Measured by your run: {len(own)} of {len(names)} chapters** ("
                 + ", ".join(get(n).title for n in own) + ")"
                 + (f", on {len(builds) - len(twins)} builds" + (f" and {len(twins)} run with its GIL turned on"
                                                                    if twins else "")
                    + ": " + ", ".join(f"`{b}`" for b in builds) if builds else "") + "."
                 + (f" **Borrowed from the reference: {len(borrowed)}** ("
                    + ", ".join(get(n).title for n in borrowed) + "): their pages carry a banner, and every figure, "
                    "table, verdict and finding of theirs below is the reference's, marked as such"
                    + (": " + "; ".join(why) if why else "") + "."
                    if borrowed else "")
                 + (" **GIL traces borrowed** (never counted in a verdict; each page names their campaign): "
                    + "; ".join(f"{', '.join(f'`{n}`' for n in lent_traces if lent_traces[n] == c)} from `{c}`"
                                for c in dict.fromkeys(lent_traces.values()))
                    + (f"; your run's own for {', '.join(f'`{n}`' for n in traces if n not in lent_traces)}"
                       if len(lent_traces) < len(traces) else "") + "."
                    if lent_traces else "")
                 + (" **Other parts borrowed** (each page names their campaign): "
                    + "; ".join(f"{what} of `{n}` from `{c}`" for what, n, c in parts) + "."
                    if parts else "")
                 + ("" if borrowed or lent_traces or parts else " Nothing below is borrowed from the reference."))
    cut = [n for n in (rec.fewest if rec is not None else {}) if n in own]   # one a plan cut, then left out: not measured
    if cut:
        lines += ["", f"**One run a point:** {', '.join(f'`{n}`' for n in cut)}: the runs {'its' if len(cut) == 1 else 'their'} "
                  "claims need did not fit at this machine's pace, so "
                  + ("its" if len(cut) == 1 else "their") + " judged rows have too few runs for a 95% interval "
                  "and read *inconclusive*."]
    lines += ["", sizes_words(names)]
    if rec is not None:
        lines += ["", quiet_words(rec, controls)]
    lines += ["", "The two machines and the two runs (each campaign's newest whole run of the `default` profile, "
              "else of the profile it ran, from its run record; a chapter measured again after it is not in it: the "
              "method chapter's *Steadiness* lists every run):",
              "", *table]
    return "\n".join(lines) + "\n"


def quiet_words(rec, controls=None) -> str:
    """One line: whether the reader's run was steady (:func:`gillab.judge.steadiness.of`) and alone
    (:func:`gillab.judge.steadiness.alone_of`), with what its controls say of its pace from run to
    run (``controls``: :func:`gillab.judge.steadiness.controls_of`, where the verdicts are at hand),
    and what that means for its verdicts."""
    from ..judge import steadiness

    st, al = steadiness.of(rec), steadiness.alone_of(rec)
    ctl = ""
    if controls is not None and controls.outcome in (steadiness.WIDE, steadiness.FAILED):
        ctl = (f"Its controls (rows only noise can fail, such as one thread against one thread): {controls.why}"
               + (". Where identical runs spread wider than the band, the rows those controls guard carry the "
                  "same spread: what keeps them open is the machine's pace from run to run, not the GIL, and each "
                  "such row says so" if controls.wide else "") + ".")
    if st.outcome == steadiness.STEADY and al.outcome == steadiness.ALONE:
        if ctl:
            return (f"**Steady by its probes, not from run to run.** Your run's pace probes {st.why}; {al.why}. "
                    + ctl)
        return (f"**Steady and alone.** Your run's pace probes {st.why}; {al.why}. Its verdicts are this machine's, "
                "as measured.")
    said = [f"steadiness {st.outcome} ({st.why})", f"{al.outcome} ({al.why})"]
    return ("**Provisional: measure again on a quiet machine.** Your run was not both steady and alone: "
            + "; ".join(said) + ". Its verdicts below stand as measured, but a row may read the machine's drift or "
            "another process's load rather than the GIL." + (" " + ctl if ctl else ""))


def mixed_rows(yours_rows: list[dict], ref_rows: list[dict]) -> pd.DataFrame:
    """The verdict rows the book shows per chapter: the reader's where their campaign measured
    the chapter, else the reference's, each with its ``source`` (``"your run"`` or
    ``"reference"``)."""
    mine = verdicts.flat(yours_rows) if yours_rows else pd.DataFrame()
    ref = verdicts.flat(ref_rows) if ref_rows else pd.DataFrame()
    have = set(mine["experiment"]) if len(mine) else set()
    parts = []
    if len(mine):
        parts.append(mine.assign(source="your run"))
    if len(ref):
        parts.append(ref[~ref["experiment"].isin(have)].assign(source="reference"))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
