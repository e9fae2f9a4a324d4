"""Every published claim of the five documents, as data: ``data/reference/claims.csv``.

One row per claim: its id (the verdicts' ``claim_id``), document, experiment, the section and
words it was published in, what kind of statement it is, the statistic and point of ours that
answers it, the statistic the document computed its number with (``doc_statistic``: best of 3, a
tool's mean, a count in a window, one run, or not stated; the verdict computes that statistic on
trials shaped like the document's, :data:`DOC_STATISTICS`), how it is compared (*about* a value
with a band, *at least*, *at most*, or *not testable* here, with the reason), the value and
where it comes from, the band and why, and the document's interpreter and machine as far as it
says.

A claim's value is either typed in the ``value`` column (a number the document states in words:
"about 95%", "stays about the same") or derived from the document's own tables by ``derive``:
``table[selector].column``, optionally divided by a second such cell, where the selector is
``column=value`` (``;``-separated, matched on the cell as written) or ``#n`` (the table's n-th
data row), or ``mean(table[selector].column)`` over the rows it selects; ``... ** p`` raises
the result to a power.  Where the value is typed from the document's words, ``own`` holds the
document's own number for that cell (typed or derived the same way), which the claim must let
through (``tests/test_own_numbers.py``).  ``threads`` is the threads (pool workers, processes) a
row's reading runs: a count, or the machine's ``cpu_count``; where that may be more than the
judging machine's cores, *pinned* to the document's count or read as a *bound* (``cpus`` is the
logical CPUs a *cores* reading needs).  ``rests_on`` names the
other rows a claim rests on, so that every row of every table in ``data/reference`` is either
part of a claim or listed in ``context.csv`` with the reason it is not one.  The verdict code
reads the value, band and comparison from here: no published number is typed into Python.

What a claim is *about* decides whether it is judged here: a *mechanism* (a ratio, shape or
ordering within one machine, expected on any machine) is; a *machine* number (a number of the
author's machine, OS, core count or release: an absolute that would change with its CPU speed, a
ratio whose size is its core count, its disk or its OS's locks) is context, set beside ours and
never counted, with a direction or ordering row for the sentence the document draws from it; a
*cores* claim needs ``cpus`` logical CPUs (``=N``: exactly N, where the document's reading rests
on having no more) and is judged only on a machine that has them; *not testable* says why.
``builds`` is the family of builds the claim speaks of, resolved per sample from the GIL state it
recorded at run time (:func:`family`), or the builds.toml ids it names (``ids:``): a claim's
verdict counts on those builds only, and the other builds' results are findings beside it.  A
family is of stock builds: the GIL-on twin of a free-threaded build (builds.toml ``gil_twin``)
carries that build's costs, so it counts only where a row names it by id.

Each compared row names the phrase of the document's it rests on (``phrase``), and its comparison,
value and band are that phrase's in ``lexicon.csv`` (:mod:`gillab.judge.lexicon`; ``printed``:
the numbers a printed number's band is read from).  ``role`` is *claim*, or *control* for a row
that only noise can fail, or for a fact no build can change (shown with its outcome, never
tallied); a control may name the rows it guards (``guards``), which read "control failed" on a
build where it fails.  ``quantity`` names the row whose quantity a row reads where two sentences
speak of one statistic at one point: the tallies count it once.  ``premise`` states what a row
that needs more CPUs than ours (or is context for its core count) takes the judging machine to
show, as ``at least|at most X on N CPUs``, which the tests read against the reference.

Why it is long: reading claims.csv, checking it, the band each of the documents' words means and comparing a
measurement with a claim are one vocabulary that the tests read whole.
"""
from __future__ import annotations

import fnmatch
import functools
import math
import re

import pandas as pd

from .. import stats
from . import lexicon, results
from ..paths import reference_dir

COMPARISONS = ("about", "at least", "at most", "not testable")
KINDS = ("absolute", "ratio", "ordering", "shape", "qualitative")
ABOUT = ("mechanism", "machine", "cores", "not testable")
# the families a build's samples resolve to (their GIL state at run time), and the build families
# a claim can speak of: one family, any GIL build, a pair (a GIL build against a build without it,
# "A vs B" conditions), the document's own builds (builds.toml [sets] docNNN), or every build
FAMILIES = ("old GIL", "new GIL", "no GIL")
# "default vs free-threaded" is a pair of builds.toml [pairs]: a GIL build against the free-threaded
# build of its source (3.13.5 vs 3.13.5t), never the free-threaded binary with its GIL turned on
# against itself (3.13.5t-gil vs 3.13.5t), which carries the free-threaded build's costs on both sides
# every family is of stock builds: the free-threaded binary with its GIL turned on (builds.toml
# ``gil_twin``) is in none of them, only where a row names it.  ``ids:A vs B`` or ``ids:a,b,...``
# names builds.toml ids exactly (a retired build's too: its samples in earlier campaigns): a claim
# about one pair of builds or about a set of releases, on those builds and no other
BUILDS = ("GIL", "old GIL", "new GIL", "no GIL", "GIL vs no GIL", "default vs free-threaded", "new GIL vs old GIL",
          "own", "any")
# a row's role: a claim of the document's, or a control that only noise can fail (never tallied)
CLAIM_ROLES = ("claim", "control")
# what a row needing more CPUs than ours takes a machine with N CPUs to show
_PREMISE = re.compile(r"^(?P<comparison>at least|at most) (?P<value>[\d.]+) on (?P<cpus>\d+) CPUs$")
IDS = "ids:"
# the statistic a document computed its number with (claims.csv ``doc_statistic``), and how many of
# our independent runs make one trial of it: a best of 3 is the smallest of three runs, so three
# of our interleaved repeats (3j..3j+2) make one trial and the verdict's interval is over trials;
# every other statistic is one run's (a tool's mean over one run's pings, a count in one run's
# window), and "not stated" is read as one run
DOC_STATISTICS = {"best of 3": 3, "tool's mean": 1, "count in a window": 1, "one run": 1, "not stated": 1}
COLUMNS = ("claim_id", "document", "experiment", "section", "quote", "kind", "statistic", "doc_statistic",
           "doc_statistic_words", "point", "comparison",
           "value", "unit", "derive", "value_source", "band", "band_reason", "phrase", "printed", "interpreter", "machine",
           "rests_on", "about", "about_reason", "role", "premise", "builds", "builds_reason", "cpus", "threads", "own",
           "guards", "quantity")
# the threads (or pool workers, processes) a row's reading runs: a count or the machine's
# cpu_count, "pinned" to the document's count or read as a "bound" where that is more than the
# judging machine's cores may be (more than 2: every machine of this project has 2)
_THREADS = re.compile(r"^(?P<n>\d+|cpu_count)(?: (?P<as>pinned|bound))?$")
FEWEST_CORES = 2
_CELL = re.compile(r"^\s*(?P<table>[\w]+)\[(?P<sel>[^\]]*)\](?:\.(?P<col>[\w]+))?\s*$")
_MEAN = re.compile(r"^\s*mean\((?P<ref>.*)\)\s*$")


@functools.lru_cache(maxsize=None)
def _raw(table: str) -> pd.DataFrame:
    path = reference_dir() / f"{table}.csv"
    if not path.exists():
        raise KeyError(f"claims.csv names a table data/reference/{table}.csv that does not exist")
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def select(ref: str) -> tuple[str, list[int], str | None]:
    """``table[selector]`` or ``table[selector].column`` -> (table, matching row positions, column).
    ``[*]`` selects every row."""
    m = _CELL.match(ref)
    if not m:
        raise ValueError(f"not a reference to a table's rows: {ref!r} (want table[column=value].column)")
    table, sel, col = m["table"], m["sel"].strip(), m["col"]
    t = _raw(table)
    if sel == "*":
        rows = list(range(len(t)))
    elif sel.startswith("#"):
        n = int(sel[1:])
        if not 1 <= n <= len(t):
            raise KeyError(f"{ref}: {table}.csv has {len(t)} rows")
        rows = [n - 1]
    else:
        keep = pd.Series(True, index=t.index)
        for part in sel.split(";"):
            k, _, v = part.partition("=")
            if k.strip() not in t.columns:
                raise KeyError(f"{ref}: {table}.csv has no column {k.strip()!r}")
            keep &= t[k.strip()] == v.strip()
        rows = [int(i) for i in t.index[keep]]
    if not rows:
        raise KeyError(f"{ref}: no row of {table}.csv matches")
    if col is not None and col not in t.columns:
        raise KeyError(f"{ref}: {table}.csv has no column {col!r}")
    return table, rows, col


def cell(ref: str) -> float:
    """The number in one cell, ``table[selector].column``, or the mean of the cells
    ``mean(table[selector].column)`` selects."""
    m = _MEAN.match(ref)
    if m:
        table, rows, col = select(m["ref"])
        if col is None:
            raise KeyError(f"{ref}: a mean needs a column")
        return float(pd.to_numeric(_raw(table).iloc[rows][col]).mean())
    table, rows, col = select(ref)
    if col is None or len(rows) != 1:
        raise KeyError(f"{ref}: names {len(rows)} rows{'' if col else ' and no column'}; a value needs one cell")
    return float(_raw(table).iloc[rows[0]][col])


def derived(expr: str) -> float:
    """``cell`` or ``cell / cell``, optionally raised to a power (``... ** 0.2``: a ratio over
    five steps read as the ratio of one step)."""
    if " ** " in expr:
        base, power = expr.rsplit(" ** ", 1)
        return derived(base) ** float(power)
    parts = expr.split(" / ")
    if len(parts) == 1:
        return cell(parts[0])
    if len(parts) == 2:
        return cell(parts[0]) / cell(parts[1])
    raise ValueError(f"derive: one cell or one cell / another, got {expr!r}")


def _refs(c) -> list[str]:
    out = [p for p in str(c["derive"]).split(" ** ")[0].split(" / ") if p.strip()] if c["derive"] else []
    out = [(_MEAN.match(p)["ref"] if _MEAN.match(p) else p) for p in out]
    return out + re.findall(r"\w+\[[^\]]*\]", str(c["rests_on"]))


@functools.lru_cache(maxsize=None)
def _table() -> pd.DataFrame:
    t = results.keyed("claims.csv", COLUMNS, "claim_id")
    published, own = [], []
    for _, c in t.iterrows():
        why = row_problem(c)
        if why:
            raise ValueError(f"claims.csv, {c['claim_id']}: {why}")
        published.append(float(c["value"]) if c["value"] else derived(c["derive"]) if c["derive"] else math.nan)
        own.append(_own(c))
    t["published"] = published
    t["own_value"] = own
    t["band"] = pd.to_numeric(t["band"].replace("", math.nan))
    t["cpus_exact"] = t["cpus"].str.startswith("=")
    t["cpus"] = pd.to_numeric(t["cpus"].str.lstrip("=").replace("", math.nan))
    return t.set_index("claim_id", drop=False)


def row_problem(c) -> str:
    """What is wrong with one claims row ('' where nothing is): a vocabulary it does not use, a value
    both typed and derived, a reason missing, CPUs or threads it does not state as it must."""
    if c["comparison"] not in COMPARISONS:
        return f"comparison {c['comparison']!r} is not one of {COMPARISONS}"
    if c["value"] and c["derive"]:
        return "both a typed value and a derivation"
    if c["about"] not in ABOUT:
        return f"about {c['about']!r} is not one of {ABOUT}"
    if c["doc_statistic"] not in DOC_STATISTICS:
        return f"doc_statistic {c['doc_statistic']!r} is not one of {tuple(DOC_STATISTICS)}"
    if not c["doc_statistic_words"].strip():
        return "doc_statistic_words says where the document gives its statistic, or that it does not"
    if c["builds"] not in BUILDS and not c["builds"].startswith(IDS):
        return f"builds {c['builds']!r} is not one of {BUILDS} nor {IDS}<build ids>"
    if not c["about_reason"].strip() or not c["builds_reason"].strip():
        return "about and builds each need a reason"
    unknown = set(named_ids(c["builds"])) - set(_expected_family()) if c["builds"].startswith(IDS) else set()
    if unknown:
        return f"builds names ids builds.toml lacks: {sorted(unknown)}"
    if not re.fullmatch(r"(=?\d+)?", c["cpus"].strip()):
        return f"cpus {c['cpus']!r} is a count (at least), or =N (exactly)"
    if (c["about"] == "cores") != bool(c["cpus"].strip()):
        return "a cores claim names the logical CPUs it needs (cpus), no other claim does"
    if (c["about"] == "not testable") != (c["comparison"] == "not testable"):
        return "about and comparison disagree on 'not testable'"
    if c["role"] not in CLAIM_ROLES:
        return f"role {c['role']!r} is not one of {CLAIM_ROLES}"
    if c["premise"].strip() and premise(c["premise"]) is None:
        return f"premise {c['premise']!r} is not 'at least|at most X on N CPUs'"
    if c["about"] == "cores" and int(c["cpus"].lstrip("=")) > FEWEST_CORES and not c["premise"].strip():
        return f"a row that needs more than {FEWEST_CORES} CPUs states what {FEWEST_CORES} would show (premise)"
    return guards_problem(c) or lexicon.problem(c) or threads_problem(c)


def guards_problem(c) -> str:
    """What is wrong with a row's ``guards`` or ``quantity`` ('' where nothing): a control may name
    the rows it guards, each pattern matching another row (a fact no build can change guards
    none); no claim guards anything; a row that reads another row's quantity names a row of the
    same experiment and point."""
    if c["guards"].strip() and c["role"] != "control":
        return "only a control names the rows it guards (guards)"
    q = c.get("quantity", "").strip()
    if q:
        t = _as_written()
        if q not in t.index or q == c["claim_id"]:
            return f"quantity {q!r} names no other row"
        if (t.loc[q, "experiment"], t.loc[q, "point"]) != (c["experiment"], c["point"]):
            return f"quantity {q!r} is another experiment's or point's: one quantity is one point's statistic"
    if c["guards"].strip() and not all(any(fnmatch.fnmatchcase(i, g) for i in _ids() if i != c["claim_id"])
                                       for g in _guard_patterns(c["guards"])):
        return f"guards {c['guards']!r}: a pattern matches no other row"
    return ""


def _guard_patterns(text: str) -> list[str]:
    return [g.strip() for g in text.split(";") if g.strip()]


@functools.lru_cache(maxsize=None)
def _as_written() -> pd.DataFrame:
    """claims.csv as text, by claim id, before its rows are checked (what a row's check reads of
    the other rows)."""
    return results.keyed("claims.csv", COLUMNS, "claim_id").set_index("claim_id", drop=False)


def _ids() -> tuple[str, ...]:
    return tuple(_as_written().index)


def quantity(claim_id: str) -> str:
    """The quantity a row reads (claims.csv ``quantity``; its own id where empty, and for an id
    claims.csv does not list): rows of two sentences about one statistic at one point read one
    quantity, which the tallies count once."""
    t = _table()
    q = str(t.at[claim_id, "quantity"]).strip() if claim_id in t.index else ""
    return q or claim_id


def combined(outcomes) -> str:
    """One outcome for a claim (or quantity) judged in several rows on the document's own builds:
    contrary where any row is (higher or lower: the one more rows have, lower on a tie), agrees
    where every row does, inconclusive where none is contrary and some row is, else the rows' one
    outcome that is no verdict (a control failed, a setting not in force)."""
    outs = list(outcomes)
    contrary = [o for o in outs if o in ("higher", "lower")]
    if contrary:
        return "higher" if contrary.count("higher") > contrary.count("lower") else "lower"
    if outs and all(o == "agrees" for o in outs):
        return "agrees"
    if "inconclusive" in outs or "agrees" in outs:
        return "inconclusive"
    return outs[0] if outs else "not measured"


def guards(control_id: str, claim_id: str) -> bool:
    """Whether the control ``control_id`` guards the row ``claim_id`` (claims.csv ``guards``:
    ``;``-separated patterns of claim ids, ``*`` any text): a control that fails on a build voids
    the rows it guards on that build (:func:`gillab.judge.verdicts.flat`)."""
    if control_id == claim_id:
        return False
    return any(fnmatch.fnmatchcase(claim_id, g) for g in _guard_patterns(get(control_id)["guards"]))


CONTROL_FAILED = "control failed"       # a row a failed control guards: never judged
NOT_IN_FORCE = "not in force here"      # a row whose setting the machine did not apply: never judged
VOID = (CONTROL_FAILED, NOT_IN_FORCE)     # outcomes that are no verdict, with the reason (``why_void``)


def _build_names(condition: str) -> list[str]:
    """The builds a verdict's condition names: ``3.9.2 (2 processes)`` -> [3.9.2], a pair
    ``3.13.5 vs 3.13.5t`` -> both."""
    return condition.split(" (", 1)[0].split(" vs ")


def _controls_where(rows: list[dict], pick) -> dict[str, list[tuple[str, dict]]]:
    """Per condition, the controls (``role`` control) among an experiment's verdict rows whose entry
    on it ``pick(control_id, entry)`` chooses, as (control id, entry)."""
    found: dict[str, list[tuple[str, dict]]] = {}
    for r in rows:
        if r["claim_id"] in _table().index and get(r["claim_id"])["role"] == "control":
            for cond, m in r["measured"].items():
                if pick(r["claim_id"], m):
                    found.setdefault(cond, []).append((r["claim_id"], m))
    return found


def _guarded_by(found: dict, claim_id: str, cond: str, itself: bool = False):
    """The first (build, control id, its entry) of ``found`` (:func:`_controls_where`) on a build the
    condition ``cond`` names whose control guards ``claim_id`` (``itself``: or is that row); None."""
    return next(((b, cid, cm) for b in _build_names(cond) for cid, cm in found.get(b, [])
                 if (itself and cid == claim_id) or guards(cid, claim_id)), None)


def void_by_controls(rows: list[dict]) -> list[tuple[str, str]]:
    """An experiment's verdict rows (each with ``measured``: condition -> entry), where a control
    (``role`` control) came out definite outside its band on a build: every row it guards
    (``guards``) reads "control failed" on that build, with ``why_void`` naming the control and its
    reading.  A control only noise can fail; a failed one says the experiment did not run as the
    document's did, so the rows resting on it are not read until the cause is found.  Returns
    the (claim, condition) pairs voided."""
    failed = _controls_where(rows, lambda cid, m: m.get("verdict") in ("higher", "lower"))
    voided = []
    for r in rows if failed else []:
        for cond, m in r["measured"].items():
            hit = _guarded_by(failed, r["claim_id"], cond)
            if hit:
                b, cid, cm = hit
                m["verdict"] = CONTROL_FAILED
                m["why_void"] = (f"the control {cid} read {cm['median']:.3g} [{cm['ci_lo']:.3g}, {cm['ci_hi']:.3g}] "
                                 f"on {b}: {cm['verdict']} than its band allows")
                voided.append((r["claim_id"], cond))
    return voided


MACHINE_PACE = "identical runs spread wider than the band"   # how :func:`explain_by_controls`'s words begin


def too_wide(control_id: str, m: dict) -> bool:
    """Whether a control's entry ``m`` (one build) has runs enough for its 95% interval and that
    interval is wider than the control's whole band: runs of identical work spread more than the
    band allows, and the rows it guards, read at that grain, carry the machine's spread, not the GIL's.
    A control without a band (a bound) is never too wide."""
    c = get(control_id)
    band = c["band"]
    if not isinstance(band, (int, float)) or not math.isfinite(band) or band <= 0:
        return False
    if m.get("why_inconclusive") or m.get("verdict") in VOID:
        return False
    lo, hi = m.get("ci_lo", math.nan), m.get("ci_hi", math.nan)
    pub = value(control_id)
    if not math.isfinite(pub):          # a published value the chapter computed: estimate / ratio
        r = m.get("ratio_to_published", math.nan)
        pub = m.get("median", math.nan) / r if r else math.nan
    if not all(math.isfinite(x) for x in (lo, hi, pub)) or pub == 0:
        return False
    return (hi - lo) > 2 * band * abs(pub)


def explain_by_controls(rows: list[dict]) -> list[tuple[str, str]]:
    """An experiment's verdict rows (each with ``measured``: condition -> entry), where a control
    (``role`` control) is :func:`too_wide` on a build: it and every row it guards that is still
    inconclusive with runs enough on that build say why (``why_inconclusive``): runs of identical
    work spread wider than the band: the machine's pace at the grain of a run, not the GIL, keeps them
    open (more runs narrow their intervals only as the square root of their number).
    Such a control has not failed (its interval holds its published value), so nothing is voided;
    the rows stand as measured.  Returns the (claim, condition) pairs explained."""
    wide = _controls_where(rows, lambda cid, m: m.get("verdict") == "inconclusive" and too_wide(cid, m))
    out = []
    for r in rows if wide else []:
        for cond, m in r["measured"].items():
            if m.get("verdict") != "inconclusive" or m.get("why_inconclusive"):
                continue
            hit = _guarded_by(wide, r["claim_id"], cond, itself=True)
            if hit:
                b, cid, cm = hit
                c = get(cid)
                which = ("" if cid == r["claim_id"] else   # the control's own row shows its interval
                         f": the control {cid} reads [{cm['ci_lo']:.3g}, {cm['ci_hi']:.3g}] on {b}")
                m["why_inconclusive"] = (f"{MACHINE_PACE}{which}, its band ±{c['band']:.0%} (the machine's pace "
                                         "from run to run, not the GIL)")
                out.append((r["claim_id"], cond))
    return out


def not_in_force(entry: dict, why: str) -> dict:
    """A verdict entry whose setting the machine did not apply (``why``: what was asked and what
    was achieved): it reads "not in force here", never agrees, higher or lower."""
    return entry | {"verdict": NOT_IN_FORCE, "why_void": why}


def mark_not_in_force(rows: list[dict], reasons) -> list[tuple[str, str]]:
    """Each row's build whose setting was not in force, read so: ``reasons(claim_id, selectors,
    condition)`` (the row's :func:`point_selectors`) gives the words of what was achieved at the
    points it reads, none where every setting was in force; a row already void keeps its reading.
    Returns the (claim, condition) pairs marked."""
    out = []
    for r in rows:
        try:
            sels = point_selectors(r["claim_id"])
        except KeyError:
            continue
        for cond, m in r["measured"].items():
            if m.get("verdict") in VOID:
                continue
            whys = list(dict.fromkeys(reasons(r["claim_id"], sels, cond)))
            if whys:
                r["measured"][cond] = not_in_force(m, "; ".join(whys))
                out.append((r["claim_id"], cond))
    return out


def premise(text: str) -> dict | None:
    """A row's premise (``at least 0.5 on 2 CPUs``) as {comparison, value, cpus}; None where the
    text is not one."""
    m = _PREMISE.match(text.strip())
    return None if m is None else {"comparison": m["comparison"], "value": float(m["value"]), "cpus": int(m["cpus"])}


def named_ids(builds: str) -> list[str]:
    """The builds.toml ids an ``ids:`` value names, in its order (a pair: as its verdicts name it)."""
    body = builds[len(IDS):]
    return [b.strip() for b in (body.split(" vs ") if " vs " in body else body.split(","))]


@functools.lru_cache(maxsize=None)
def _expected_family() -> dict[str, str]:
    """The family each builds.toml id (its GIL-on twins too: every id a claim may name) runs as
    when nothing turns its GIL on or off: a build configured without the GIL (or the nogil fork)
    has none, its GIL-on twin the new GIL, and the others the GIL of their version (:func:`family`)."""
    from ..measure import provision

    out = {}
    for spec in provision.all_specs():
        free = spec.disable_gil or spec.nogil_fork
        out[spec.build_id] = "no GIL" if free else family(spec.version, True)
        if spec.gil_twin:
            out[spec.gil_twin[0]] = family(spec.version, True)
    for r in provision.retired().values():     # earlier campaigns' builds: read as what they were
        out[r.build_id] = "no GIL" if r.gil_free else family(r.version, True)
    return out


@functools.lru_cache(maxsize=None)
def twins() -> frozenset[str]:
    """The GIL-on twins of the free-threaded builds (builds.toml ``gil_twin``, and the retired
    ``nogil fork, GIL on``): in no family."""
    from ..measure import provision

    return frozenset([*(spec.gil_twin[0] for spec in provision.all_specs() if spec.gil_twin),
                      *(r.build_id for r in provision.retired().values() if r.twin)])


def threads_problem(c) -> str:
    """What is wrong with a row's ``threads`` ('' where nothing is): a judged row names the
    threads its reading runs, and one that reads more than :data:`FEWEST_CORES` (or the machine's
    cpu_count) says whether that count is pinned to the document's or read as a bound."""
    text = c["threads"].strip()
    judged = c["about"] in ("mechanism", "cores") and c["comparison"] != "not testable"
    if not text:
        return "a judged row names the threads its reading runs (threads)" if judged else ""
    m = _THREADS.match(text)
    if not m:
        return f"threads {text!r} is not a count or cpu_count, optionally 'pinned' or 'bound'"
    many = m["n"] == "cpu_count" or int(m["n"]) > FEWEST_CORES
    if many and not m["as"]:
        return (f"threads {text!r} is more than {FEWEST_CORES} cores may run at once: say whether the count is "
                "pinned to the document's or read as a bound")
    return ""


def _own(c) -> float:
    """The document's own number for a row whose value is typed from its words (``own``: a number,
    or a derivation from its tables like ``derive``), which the row must let through; NaN where
    the value is itself the document's number, or where the document gives none."""
    text = c["own"].strip()
    if not text:
        return math.nan
    if c["comparison"] == "not testable":
        raise ValueError(f"claims.csv, {c['claim_id']}: a row that is not testable has no own number to let through")
    try:
        return float(text)
    except ValueError:
        return derived(text)


def table() -> pd.DataFrame:
    """claims.csv with ``published``: the value, typed or derived (NaN where the document's
    listings give it and the chapter computes it, or where there is none)."""
    return _table().copy()


def get(claim_id: str) -> pd.Series:
    t = _table()
    if claim_id not in t.index:
        raise KeyError(f"no claim {claim_id!r} in data/reference/claims.csv")
    return t.loc[claim_id]


def of(experiment: str) -> pd.DataFrame:
    """The claims ``experiment`` answers, in the table's order."""
    t = _table()
    return t[t["experiment"] == experiment].reset_index(drop=True)


def value(claim_id: str) -> float:
    v = get(claim_id)["published"]
    if math.isnan(v):
        raise KeyError(f"claims.csv, {claim_id}: no value (neither typed nor derived)")
    return float(v)


def trial_size(claim_id: str) -> int:
    """How many of our runs make one trial of the document's statistic (best of 3: 3)."""
    return DOC_STATISTICS[get(claim_id)["doc_statistic"]]


def band(claim_id: str) -> float | None:
    c = get(claim_id)
    return float(c["band"]) if c["comparison"] == "about" else None


def line(claim_id: str, published: float | None = None) -> tuple[float, float]:
    """Where a measured interval must lie for the claim's row to agree, as (low, high): value x
    (1 -+ band) for an *about* row, [value, inf) for *at least*, (-inf, value] for *at most*
    (:func:`compare`).  A chapter's sentence that says what the claim says is checked here, never
    at a line of its own.  ``published`` stands for the value where the chapter computes it."""
    c = get(claim_id)
    v = float(published) if published is not None else value(claim_id)
    if c["comparison"] == "about":
        return tuple(sorted((v * (1 - float(c["band"])), v * (1 + float(c["band"])))))
    if c["comparison"] == "at least":
        return (v, math.inf)
    if c["comparison"] == "at most":
        return (-math.inf, v)
    raise ValueError(f"claims.csv, {claim_id}: a {c['comparison']!r} row draws no line")


def compare(comparison: str, value: float, band: float | None, lo: float, hi: float, n, *, method: str) -> str:
    """The outcome of a measured interval [lo, hi] of ``method`` (:data:`stats.METHODS`) over
    ``n`` runs (pairs; for a ratio of medians, the pair of group sizes): *about*: agrees when the
    whole interval lies in value x (1 +- band), higher / lower when wholly outside, inconclusive
    otherwise; *at least* / *at most*: agrees when the whole interval is on the claimed side, lower
    / higher when wholly on the other; *not testable*: said so.  An interval whose coverage,
    computed from ``method`` and ``n`` (:func:`stats.coverage`), is below 95% is inconclusive
    whatever it shows (``n`` None: unknown, so inconclusive too)."""
    if comparison == "not testable":
        return "not testable here"
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return "not measured"
    if comparison == "about":
        return stats.verdict(value, lo, hi, float(band), method=method, n=n)
    if comparison == "at least":
        out = "agrees" if lo >= value else "lower" if hi < value else "inconclusive"
    elif comparison == "at most":
        out = "agrees" if hi <= value else "higher" if lo > value else "inconclusive"
    else:
        raise ValueError(f"comparison {comparison!r} is not one of {COMPARISONS}")
    return out if stats.conclusive(method, n) else "inconclusive"


def judge(claim_id: str, lo: float, hi: float, n, *, method: str, published: float | None = None) -> str:
    """:func:`compare` with the claim's comparison, value and band.  ``published`` stands for
    the value where the chapter computes it from the document's listings."""
    c = get(claim_id)
    if c["comparison"] == "not testable":
        return "not testable here"
    v = float(published) if published is not None else value(claim_id)
    return compare(c["comparison"], v, c["band"], lo, hi, n, method=method)


def _n_of(r: dict):
    return (r["n_num"], r["n_den"]) if r.get("method") == stats.RATIO and "n_num" in r else r.get("n")


def judged(claim_id: str, estimate: float, r: dict, *, published: float | None = None, **more) -> dict:
    """:func:`entry` with the verdict of ``claim_id`` on ``r``'s interval and ours / published."""
    v = float(published) if published is not None else value(claim_id)
    return entry(estimate, r, ratio_to_published=estimate / v if v else math.nan,
                 verdict=judge(claim_id, r["ci_lo"], r["ci_hi"], _n_of(r), method=r["method"], published=v),
                 **more)


def entry(estimate: float, r: dict, **more) -> dict:
    """One condition's entry of a verdict row's ``measured`` from an interval of :mod:`stats`
    (``r``: ci_lo, ci_hi, n, method, and n_num / n_den for a ratio of medians): the estimate, the
    interval, n (runs or pairs; the smaller group of a ratio, both in ``n_each``), the estimand,
    its coverage and, where it cannot carry a verdict, why."""
    n = _n_of(r)
    return {"median": estimate, "ci_lo": r["ci_lo"], "ci_hi": r["ci_hi"], "best": math.nan,
            "n": (min(n) if isinstance(n, tuple) else n), "n_each": n, "estimand": r["method"],
            "coverage": stats.coverage(r["method"], n), "why_inconclusive": stats.why_inconclusive(r["method"], n),
            **more}


def context() -> pd.DataFrame:
    """``context.csv``: rows of the reference tables that are no claim, and why."""
    return pd.read_csv(reference_dir() / "context.csv", dtype=str, keep_default_na=False)


def tables() -> list[str]:
    """Every table of published numbers (claims.csv, context.csv and lexicon.csv aside)."""
    return sorted(p.stem for p in reference_dir().glob("*.csv") if p.stem not in ("claims", "context", "lexicon"))


def coverage() -> dict[str, dict[int, list[str]]]:
    """Per table, per row position: the claims that rest on it and the context entries that
    explain it (``context: <reason>``)."""
    out = {name: {i: [] for i in range(len(_raw(name)))} for name in tables()}
    for _, c in _table().iterrows():
        for ref in _refs(c):
            table, rows, _ = select(ref)
            for i in rows:
                out.setdefault(table, {}).setdefault(i, []).append(c["claim_id"])
    for _, x in context().iterrows():
        table, rows, _ = select(x["rows"])
        for i in rows:
            out.setdefault(table, {}).setdefault(i, []).append(f"context: {x['reason']}")
    return out


def unanswered(experiment: str, answered: set[str]) -> list[dict]:
    """The claims of ``experiment`` its verdicts did not answer, as verdict rows without a
    measurement: not testable here (with the reason) or not measured (with the reason)."""
    out = []
    for _, c in of(experiment).iterrows():
        if c["claim_id"] in answered:
            continue
        profile = re.search(r"(?:^|;)profile=(\w+)", str(c["point"]))
        how = (f"measured by the `{profile[1]}` profile (`gillab measure {experiment} -P {profile[1]}`), which this "
               "campaign has not run; " if profile and c["comparison"] != "not testable" else "")
        out.append({"experiment": experiment, "table": "claims", "claim_id": c["claim_id"], "claim": c["quote"],
                    "published": c["published"], "unit": c["unit"], "band": band(c["claim_id"]),
                    "published_as": c["quote"], "measured": {},
                    "unmeasured": "not testable here" if c["comparison"] == "not testable" else "not measured",
                    "note": how + c["band_reason"]})
    return out


def summary() -> pd.DataFrame:
    """Per document: its claims, how many are compared *about* a value, *at least* / *at most*
    one, and how many cannot be tested here."""
    t = _table()
    out = t.groupby("document").agg(claims=("claim_id", "size")).reset_index()
    for comp in COMPARISONS:
        out[comp] = [int(((t["document"] == d) & (t["comparison"] == comp)).sum()) for d in out["document"]]
    return out


def family(python: str, gil_enabled) -> str:
    """The family of one sample's build from what it recorded at run time: *no GIL* when no GIL
    was in force (``sys._is_gil_enabled()``, the nogil fork's flag), else the *old GIL* of
    CPython before 3.2 (a check interval of ticks) or the *new GIL* (a switch interval)."""
    if isinstance(gil_enabled, str):
        gil_enabled = {"true": True, "false": False, "1": True, "0": False}.get(gil_enabled.strip().lower())
    if gil_enabled is None or pd.isna(gil_enabled):
        return "unknown"
    if not bool(gil_enabled):
        return "no GIL"
    try:
        major, minor = (int(x) for x in str(python).split(".")[:2])
    except ValueError:
        return "unknown"
    return "old GIL" if (major, minor) < (3, 2) else "new GIL"


def families(df: pd.DataFrame) -> dict[str, str]:
    """Per condition of a frame of samples: the family its successful samples resolve to
    (*mixed* where they do not agree, e.g. a build that turned its GIL on at run time)."""
    out: dict[str, str] = {}
    if df.empty or "condition" not in df.columns:
        return out
    ok = df[df["status"] == "ok"] if "status" in df.columns else df
    for cond, g in ok.groupby("condition", sort=True):
        python = g["python"] if "python" in g.columns else pd.Series([""] * len(g))
        gil = g["gil_enabled"] if "gil_enabled" in g.columns else pd.Series([None] * len(g))
        seen = {family(p, e) for p, e in zip(python, gil)} - {"unknown"}
        out[str(cond)] = seen.pop() if len(seen) == 1 else "mixed" if seen else "unknown"
    return out


def builds_in(condition: str) -> list[str]:
    """The builds a verdict's condition names: ``3.13.5t (many, 10 threads)`` -> [3.13.5t];
    ``3.13.5 vs 3.13.5t (2 threads)`` -> [3.13.5, 3.13.5t]."""
    return condition.split(" (", 1)[0].split(" vs ")


def family_of(condition: str, fams: dict[str, str]) -> str:
    """A verdict's condition as families: ``new GIL`` or, for a pair, ``new GIL vs no GIL``."""
    return " vs ".join(fams.get(b, "unknown") for b in builds_in(condition))


def applies(claim_id: str, condition: str, fams: dict[str, str]) -> bool:
    """Whether a verdict on ``condition`` is a verdict on the builds the claim speaks of."""
    c = get(claim_id)
    want, fam = c["builds"], family_of(condition, fams).split(" vs ")
    if "unknown" in fam or "mixed" in fam:
        return False
    if want.startswith(IDS):
        # the builds named, each as it runs when nothing turns its GIL on or off (a PYTHONGIL=1 run
        # of nogil-3.9.10 is not the build the claim speaks of)
        named, here = named_ids(want), builds_in(condition)
        if any(_expected_family().get(b) != f for b, f in zip(here, fam)):
            return False
        return here == named if " vs " in want else len(here) == 1 and here[0] in named
    if want not in ("any", "own") and any(b in twins() for b in builds_in(condition)):
        return False        # a family is of stock builds: a GIL-on twin only where a row names it by id
    if want == "any":
        return True
    if want == "own":
        from ..measure.interpreters import sets

        return all(b in sets().get(f"doc{c['document']}", []) for b in builds_in(condition))
    if want == "GIL vs no GIL":
        return len(fam) == 2 and fam[0] in ("old GIL", "new GIL") and fam[1] == "no GIL"
    if want == "default vs free-threaded":
        from ..measure.interpreters import pairs

        return (len(fam) == 2 and fam[0] in ("old GIL", "new GIL") and fam[1] == "no GIL"
                and tuple(builds_in(condition)) in set(pairs()))
    if want == "new GIL vs old GIL":
        return fam == ["new GIL", "old GIL"]
    if len(fam) != 1:
        return False
    if want == "GIL":
        return fam[0] in ("old GIL", "new GIL")
    return fam[0] == want


def role(claim_id: str, condition: str, fams: dict[str, str], cpus_here: int | None) -> str:
    """Where a claim x condition belongs: *judged* (a mechanism, or a cores claim on a machine
    with the CPUs, on the claim's own builds and the document's own interpreter: the only rows the
    headline counts), *control* (such a row that only noise can fail, or a fact no build can
    change: shown with its outcome, never counted), *then and now* (the claim on a build of
    another era than the document's, today's for an older document: shown, never in its tally),
    *machine* (an absolute of the author's machine: context), *needs cores* (this machine has too
    few logical CPUs), *other builds* (a finding beside the claim, never the claim failing), or
    *not testable*."""
    c = get(claim_id)
    if c["about"] == "not testable" or c["comparison"] == "not testable":
        return "not testable"
    if c["about"] == "machine":
        return "machine"
    if c["about"] == "cores" and (cpus_here is None or cpus_here < int(c["cpus"])
                                  or (c["cpus_exact"] and cpus_here != int(c["cpus"]))):
        return "needs cores"
    if condition != "-" and not applies(claim_id, condition, fams):
        return "other builds"
    if c["role"] == "control":
        return "control"
    if condition != "-" and not c["builds"].startswith(IDS) and not own_build(c["document"], condition):
        return "then and now"
    return "judged"


def own_build(document: str, condition: str) -> bool:
    """Whether a verdict's condition is on the document's own builds (builds.toml ``[own]``): each
    build it names is one of them, or the pair it names is a stand-in pair listed there (in either
    order)."""
    from ..measure import interpreters

    own = interpreters.own(document)
    builds = _build_names(condition)
    pairs = [set(o.split(" vs ")) for o in own if " vs " in o]
    return all(b in own for b in builds) or (len(builds) > 1 and set(builds) in pairs)


def about_summary() -> pd.DataFrame:
    """Per document: its claims by what they are about."""
    t = _table()
    out = t.groupby("document").agg(claims=("claim_id", "size")).reset_index()
    for a in ABOUT:
        out[a] = [int(((t["document"] == d) & (t["about"] == a)).sum()) for d in out["document"]]
    return out


def conclusion_ids(experiment: str) -> list[str]:
    """The rows of ``experiment`` that are a document's conclusion drawn from its own numbers
    (``<experiment>/conclusion/...``): a ratio of two points of ours, ``point`` = ``numerator /
    denominator``, each a ``;``-separated ``column=value`` selector over the samples."""
    return [c for c in of(experiment)["claim_id"] if c.startswith(f"{experiment}/conclusion/")]


def point_selectors(claim_id: str) -> list[dict[str, str]]:
    """A row's ``point`` as selectors {column: value}, one a side of its ``/`` (a conclusion has
    two, a row of a table one), each a ``;``-separated ``column=value``."""
    out = []
    for part in (p.strip() for p in str(get(claim_id)["point"]).split(" / ")):
        sel = {}
        for kv in part.split(";"):
            k, _, v = kv.partition("=")
            if not k.strip() or not _:
                raise ValueError(f"claims.csv, {claim_id}: {part!r} is not column=value;...")
            sel[k.strip()] = v.strip()
        out.append(sel)
    return out


def selectors(claim_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """A conclusion's numerator and denominator selectors as {column: value}."""
    parts = str(get(claim_id)["point"]).split(" / ")
    if len(parts) != 2:
        raise ValueError(f"claims.csv, {claim_id}: a conclusion's point is 'selector / selector', "
                         f"got {[p.strip() for p in parts]}")
    num, den = point_selectors(claim_id)
    return num, den


def _pick(df: pd.DataFrame, sel: dict[str, str]) -> pd.DataFrame:
    import numpy as np

    keep = pd.Series(True, index=df.index)
    for k, v in sel.items():
        if k not in df.columns:
            return df.iloc[0:0]
        try:
            keep &= np.isclose(pd.to_numeric(df[k], errors="coerce"), float(v))
        except ValueError:
            keep &= df[k].astype(str) == v
    return df[keep]


ROUND = ("run_id", "repeat")     # one interleaved round of a sweep: every point measured back to back


def by_round(g: pd.DataFrame, column: str) -> pd.Series:
    """One point's ``column`` keyed by the round that measured each run (:data:`ROUND`), so that two
    points' runs pair by round in :func:`round_ratio`; unkeyed where the frame does not say."""
    return g.set_index(list(ROUND))[column] if set(ROUND) <= set(g.columns) else g[column]


OWN_ONE = "one_thread_seconds"   # a paired run's own one-thread time (A-B-B-A in its process)


def own_one_thread(g: pd.DataFrame) -> bool:
    """Whether every run of one point ``g`` timed its own one-thread countdown in its process
    (``paired``: :mod:`gillab.measure.workloads.countdown`), so that a ratio to one thread is each
    run's own; a point of runs from before, or of the document's way (seed), reads the one-thread
    point's runs."""
    return OWN_ONE in g.columns and len(g) > 0 and bool(g[OWN_ONE].notna().all())


def own_ratio(g: pd.DataFrame, column: str = "seconds") -> dict:
    """The ratio of one point's paired runs ``g`` to their own one-thread times: the median of each
    run's ratio, with the order-statistic interval over runs (:func:`stats.paired_ratio`)."""
    r = stats.paired_ratio(g[column].astype(float).reset_index(drop=True),
                           g[OWN_ONE].astype(float).reset_index(drop=True))
    return r | {"note": f"{r['n']} runs, each over its own one-thread countdown (A-B-B-A in one process)"}


def over_own_one(num_sel: dict, den_sel: dict, num: pd.DataFrame) -> bool:
    """Whether a conclusion's ratio is k threads over one thread at an otherwise equal point, and
    every run of the numerator timed its own one-thread countdown (:func:`own_one_thread`)."""
    if set(num_sel) != set(den_sel) or "threads" not in num_sel or str(den_sel["threads"]).strip() != "1":
        return False
    same = all(str(num_sel[k]) == str(den_sel[k]) for k in num_sel if k != "threads")
    return same and str(num_sel["threads"]).strip() != "1" and own_one_thread(num)


def round_ratio(num: pd.Series, den: pd.Series) -> dict:
    """The ratio of two points' run values: where both are keyed by the round that measured them
    (:data:`ROUND`, as ``per_run`` values are) and share the rounds a 95% interval needs, the
    median of per-round ratios (:func:`stats.paired_ratio`: the round's drift cancels); else the
    ratio of medians of the two groups (:func:`stats.ratio_of_medians`)."""
    keyed = all(list(getattr(v.index, "names", [])) == list(ROUND) for v in (num, den))
    if keyed:
        common = num.index.intersection(den.index)
        if len(common) >= (stats.runs_needed(stats.PAIRED) or 1):
            r = stats.paired_ratio(num.loc[common], den.loc[common])
            return r | {"note": f"{r['n']} rounds, each point's runs of one round paired"}
    r = stats.ratio_of_medians(num, den)
    return r | {"note": f"{r['n_num']} / {r['n_den']} runs"}


def pooling(picked: pd.DataFrame) -> str:
    """What a conclusion's selected samples pool that one run value must not ('' where nothing):
    two points of one round (:data:`ROUND`) of one build, or two placements (where the threads
    ran: pinned on purpose or where the OS put them).  A run value is a median over one run's
    samples; two points in it are one number made of two experiments."""
    if picked.empty:
        return ""
    if "placement" in picked.columns and picked["placement"].fillna("os").nunique() > 1:
        return "samples of two placements (" + ", ".join(sorted(picked["placement"].fillna("os").unique())) + ")"
    keys = [k for k in (*ROUND, "condition") if k in picked.columns]
    if "point" in picked.columns and len(keys) == len(ROUND) + 1:
        per = picked.groupby(keys)["point"].nunique()
        if (per > 1).any():
            (run, rep, cond), n = per[per > 1].index[0], int(per.max())
            return f"{n} points of one round ({cond}, round {rep} of run {run})"
    return ""


def conclusions(experiment: str, df: pd.DataFrame, values) -> list[dict]:
    """The verdict rows of ``experiment``'s conclusions: per condition (or for the pair of
    conditions the selectors name), the ratio of the numerator's run values to the
    denominator's (:func:`round_ratio`: paired by round where the runs are keyed by it, else a
    ratio of medians) with its interval, judged like any claim.  ``values`` maps a frame of
    samples to one value per independent run.  Numerator and denominator never share a sample:
    the selectors differ in a column both name; a selector that pools two points of one round or
    two placements (:func:`pooling`) is refused with an error naming the row."""
    out = []
    ok = df[df["status"] == "ok"] if "status" in df.columns else df
    for cid in conclusion_ids(experiment):
        c = get(cid)
        if c["comparison"] == "not testable":        # no point to read: the verdict says why (claims.csv)
            out.append({"experiment": experiment, "table": "claims", "claim_id": cid, "claim": c["quote"],
                        "published": None, "unit": c["unit"], "band": None, "published_as": c["quote"],
                        "measured": {}, "note": c["about_reason"]})
            continue
        num_sel, den_sel = selectors(cid)
        if "condition" in num_sel or "condition" in den_sel:
            groups = [(f"{num_sel.get('condition', '?')} vs {den_sel.get('condition', '?')}", ok)]
        else:
            groups = [(str(k), g) for k, g in ok.groupby("condition", sort=True)]
        measured = {}
        for label, g in groups:
            picked = [_pick(g, num_sel), _pick(g, den_sel)]
            for side, sel in zip(picked, (num_sel, den_sel)):
                pooled = pooling(side)
                if pooled:
                    raise ValueError(f"claims.csv, {cid}: the selector {sel} pools {pooled} on {label}; "
                                     "a conclusion reads one point a round (name the column that tells them apart)")
            num, den = values(picked[0]), values(picked[1])
            if not len(num) or not len(den):
                continue
            # k threads over one at the same point, where each run timed its own one thread: its own ratio,
            # as the chapter's rows read the same point
            r = own_ratio(picked[0]) if over_own_one(num_sel, den_sel, picked[0]) else round_ratio(num, den)
            measured[label] = judged(cid, r["ratio"], r, note=r["note"])
        out.append({"experiment": experiment, "table": "claims", "claim_id": cid, "claim": c["statistic"],
                    "published": value(cid), "unit": c["unit"], "band": band(cid), "published_as": c["quote"],
                    "measured": measured, "note": c["band_reason"]})
    return out


def own_misses() -> pd.DataFrame:
    """The rows whose document's own number falls outside what the row's phrase means: a finding
    about the document (its words say more, or other, than its numbers), never a reason to widen
    the row.  One line a row: id, phrase, the reading, the document's own number, and how far it
    misses.  A row whose own number is the value it reads (a printed number) cannot miss."""
    rows = []
    for _, c in _table().iterrows():
        if c["comparison"] == "not testable":
            continue
        own = c["own_value"] if not math.isnan(c["own_value"]) else c["published"] if not c["value"] else math.nan
        v = c["published"]
        if math.isnan(own) or math.isnan(v):
            continue
        if c["comparison"] == "about":
            lo, hi = v * (1 - c["band"]), v * (1 + c["band"])
            reading = f"about {v:.4g} +-{c['band']:.0%}"
        elif c["comparison"] == "at least":
            lo, hi, reading = v, math.inf, f"at least {v:.4g}"
        else:
            lo, hi, reading = -math.inf, v, f"at most {v:.4g}"
        if lo - 1e-12 <= own <= hi + 1e-12:
            continue
        rows.append({"claim_id": c["claim_id"], "document": c["document"], "phrase": c["phrase"],
                     "reading": reading, "document's own number": own,
                     "outside by": (own / hi - 1) if own > hi else (own / lo - 1)})
    return pd.DataFrame(rows, columns=["claim_id", "document", "phrase", "reading", "document's own number",
                                       "outside by"])
