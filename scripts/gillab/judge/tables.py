"""Tables for the book: how claims, comparisons and any frame are shown (presentation only;
the numbers come from :mod:`gillab.judge.verdicts` and the experiments' analyses).

Why it is long: every table the chapters and the verdicts page print is shaped here, one function each, so that
no chapter formats a table of its own; they share the column rules (units, intervals, folding)."""
from __future__ import annotations

import contextlib
import math

import pandas as pd

from ..measure.interpreters import display_order


# Every table of the book carries its own cell padding (the book's theme gives an output table's
# cells a pixel, which runs a build id into the number beside it: "3.13.50.001"), in the table's
# own <style>, so that it holds in the book, in JupyterLab and in a folded <details> alike.
TABLE_CLASS = "gillab-table"
TABLE_CSS = "font-size: 0.9em; border-collapse: collapse"
CELL_CSS = "padding: 0.15em 0.5em; vertical-align: top"
CELL_STYLE = [{"selector": "", "props": TABLE_CSS}, {"selector": "td, th", "props": CELL_CSS},
              {"selector": "tbody tr", "props": "border-top: 1px solid #ddd"}]


def styled(st):
    """A pandas Styler with the book's table class and cell padding."""
    return st.set_table_attributes(f'class="{TABLE_CLASS}"').set_table_styles(CELL_STYLE, overwrite=False)


def table(df: pd.DataFrame, precision: int = 3):
    """A table for the book: no row numbers, numbers rounded for reading (the data keep all digits)."""
    return styled(df.style.hide(axis="index").format(precision=precision, na_rep="-"))


def _count(x) -> str:
    return "-" if pd.isna(x) else f"{x:,.0f}"


# how a chapter's table of what its settings achieved reads: each known column as a reader reads
# it (an interval in seconds as written, counts whole, in force as yes or no), named in words
SETTINGS_VIEW = {
    "condition": ("build", str),
    "switch_interval": ("interval", lambda x: f"{x:g} s"),
    "cpu_threads": ("CPU threads", str),
    "hand-offs a second": ("hand-offs a second", _count),
    "least hand-offs a second": ("in force from (a second)", _count),
    "interval achieved (s)": ("interval achieved", lambda x: "-" if pd.isna(x) else f"{x:.2g} s"),
    "intervals a run held": ("intervals a run held", lambda x: "-" if pd.isna(x) else f"{x:,.1f}"),
    "slack in force (ns)": ("timer slack in force", lambda x: "not recorded" if pd.isna(x) else f"{x:,.0f} ns"),
    "requests a window": ("requests a window", _count),
    "in force": ("in force", lambda x: "yes" if x else "no"),
}


def settings_view(df: pd.DataFrame) -> pd.DataFrame:
    """A chapter's table of what its settings achieved (``settings_table``), as the page shows it:
    the columns of :data:`SETTINGS_VIEW` formatted and named in words, the others as they are, a
    column of reasons left to the rows that read "not in force here"."""
    out = df.drop(columns=[c for c in ("why", "judged") if c in df.columns])
    for col, (name, fmt) in SETTINGS_VIEW.items():
        if col in out.columns:
            out[col] = out[col].map(fmt)
    return out.rename(columns={c: n for c, (n, _) in SETTINGS_VIEW.items()})


def fit(df: pd.DataFrame, precision: int = 3, size: str = "0.875em"):
    """:func:`table` for a page whose tables must fit its content column (about 690 px at a
    1280 px wide browser): a smaller type, and every cell's text at its top, so that a cell of
    several lines reads beside its neighbours.  The columns must still be breakable (words, not
    one long token: :func:`claim_cell` lets an id break after its slashes)."""
    return table(df, precision).set_table_attributes(f'class="{TABLE_CLASS}" style="font-size: {size}"').set_table_styles(
        [{"selector": "td", "props": [("vertical-align", "top")]}], overwrite=False)


def image(fig, alt: str, dpi: int = 90) -> str:
    """``fig`` as an HTML image embedded in the page (a PNG) with ``alt`` as its alt text; the
    figure is closed."""
    import base64
    import io
    from html import escape

    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode()
    return f'<img src="data:image/png;base64,{data}" alt="{escape(alt)}" style="max-width: 100%; height: auto">'


def collapsed(summary: str, *objs, alt: str = ""):
    """Tables and figures inside a closed ``<details>`` headed by ``summary``: a long page stays
    short, and the reader opens what they want (in the static book, no kernel needed).  A figure
    is embedded as a PNG with ``alt`` as its alt text."""
    from html import escape

    from IPython.display import HTML

    parts = []
    for o in objs:
        if hasattr(o, "savefig"):
            parts.append(image(o, alt))
        elif hasattr(o, "to_html"):
            parts.append(o.to_html())
        else:
            parts.append(f"<p>{escape(str(o))}</p>")
    return HTML(details(summary, "".join(parts)))


def details(summary: str, html: str) -> str:
    """``html`` inside a closed ``<details>`` headed by ``summary`` (plain text)."""
    from html import escape

    return (f'<details class="gillab-collapsed" style="margin: 0.6em 0"><summary style="cursor: pointer">'
            f"{escape(summary)}</summary>{html}</details>")


def details_md(summary: str, markdown: str) -> str:
    """``markdown`` inside a closed ``<details>`` headed by ``summary`` (plain text), for a page
    written in Markdown (the method chapter's generated parts): the blank lines around it end the
    HTML block, so MyST reads what is inside as Markdown."""
    from html import escape

    return (f'<details class="gillab-collapsed" style="margin: 0.6em 0"><summary style="cursor: pointer">'
            f"{escape(summary)}</summary>\n\n{markdown.strip()}\n\n</details>\n")


@contextlib.contextmanager
def folded(title: str):
    """What the block displays, from its first table or figure on (tables, figures as images,
    Markdown, the lines under them, printed text), inside one closed ``<details>`` whose summary
    counts what it holds: ``'<title>: 2 tables, 28 rows (96 cells not measured)'``.  The words
    before it (what introduces and counts) stay shown; a block without a table or figure is shown
    as it was, and what cannot be folded into HTML (a widget) is displayed after the fold.  A
    block that displays nothing is an error (a value on its last line is not displayed inside a
    ``with``)."""
    from html import escape

    from IPython.display import HTML, display
    from IPython.utils.capture import capture_output
    from markdown_it import MarkdownIt

    with capture_output(stdout=True, stderr=False, display=True) as cap:
        yield
    if not cap.outputs and not cap.stdout:
        # a value left as the block's last line is shown only at a cell's top level, never inside
        # a ``with``: a block that shows nothing is a table the page would silently lose
        raise ValueError(f"folded({title!r}) displayed nothing: display() the table or figure inside it")
    md = MarkdownIt("commonmark").enable("table")

    def as_html(o) -> str | None:
        if "text/html" in o.data:
            return o.data["text/html"]
        return md.render(o.data["text/markdown"]) if "text/markdown" in o.data else None

    outs = [(o, as_html(o)) for o in cap.outputs]
    first = next((i for i, (_, h) in enumerate(outs) if h is not None and contents(h) != "text"), None)
    if first is None:
        for o, _ in outs:
            o.display()
        print(cap.stdout, end="")
        return
    for o, _ in outs[:first]:
        o.display()
    inside = "".join(h for _, h in outs[first:] if h is not None)
    inside += f"<pre>{escape(cap.stdout)}</pre>" if cap.stdout else ""
    display(HTML(details(f"{title}: {contents(inside)}", inside)))
    for o, h in outs[first:]:
        if h is None:
            o.display()


def contents(html: str) -> str:
    """What a piece of the book's HTML holds, counted: '2 tables, 28 rows (96 cells not
    measured), 1 figure'; 'text' where it holds neither."""
    import re

    n_tables = len(re.findall(r"<table\b", html))
    rows = sum(len(re.findall(r"<tr\b", body)) for body in re.findall(r"<tbody>(.*?)</tbody>", html, re.S))
    empty = len(re.findall(r"<td\b[^>]*>\s*not measured\s*</td>", html))
    figures = len(re.findall(r"<img\b", html))
    out = []
    if n_tables:
        out.append(f"{n_tables} table{'s' if n_tables != 1 else ''}, {rows} row{'s' if rows != 1 else ''}"
                   + (f" ({empty} cell{'s' if empty != 1 else ''} not measured)" if empty else ""))
    if figures:
        out.append(f"{figures} figure{'s' if figures != 1 else ''}")
    return ", ".join(out) or "text"


def published(df: pd.DataFrame):
    """A document's table as it printed it: every number written as a reader wants it (a switch
    interval of 0.0001 s stays 0.0001, not 0.00 at a fixed precision)."""
    return styled(df.style.hide(axis="index").format(lambda v: fmt(v) if isinstance(v, (int, float)) else v,
                                                     na_rep="-"))


def fmt(v) -> str:
    """A number as a reader wants it: 30,000 not 3e+04; 0.546; 1e-06."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def band_words(claim_id: str, value, unit: str = "") -> str:
    """The published value with its comparison and band in words, from claims.csv: ``about 6.52 s
    ±10% (5.87 to 7.17)`` (the band relative to the value, as the verdict reads it: agrees when the
    whole interval lies between the two ends), ``at least 2``, ``at most 1.1``; the value alone
    for a row that is no claim of claims.csv.  A unit *ratio* is left out (the number says it)."""
    from . import claims

    u = "" if unit in (None, "", "ratio") else f" {unit}"
    if unit == "runs" and value == 1:        # a count of one
        u = " run"
    base = f"{fmt(value)}{u}"
    try:
        c = claims.get(claim_id)
    except KeyError:
        return base
    if c["comparison"] == "about" and c["band"] == c["band"]:
        try:
            lo, hi = sorted((float(value) * (1 - c["band"]), float(value) * (1 + c["band"])))
        except (TypeError, ValueError):
            return f"about {base} ±{c['band']:.0%}"
        return f"about {base} ±{c['band']:.0%} ({fmt(lo)} to {fmt(hi)})"
    if c["comparison"] == "not testable":
        return "not testable" if fmt(value) == "-" else f"{base} (not testable)"
    return f"{c['comparison']} {base}"


def published_cell(claim_id: str, value, unit: str) -> str:
    """The published value as the verdict reads it (:func:`band_words`): ``about 1.01 ±10% (0.909
    to 1.11)``, ``at least 0.99``, ``not testable``."""
    return band_words(claim_id, value, unit)


def short(text: str, limit: int = 80) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, with an ellipsis where it
    was cut; never reworded."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip(" ,;:.") + "…"


def said(claim_ids, limit: int = 80) -> str:
    """The document's words for a claim (claims.csv ``quote``), or for several claims (a
    document's table, one claim per point) each distinct quote in its own quotation marks, as
    many as fit in ``limit`` characters; shortened by :func:`short`, never reworded.  '' for an
    id that is no claim of claims.csv."""
    from . import claims

    ids = [claim_ids] if isinstance(claim_ids, str) else list(claim_ids)
    quotes = []
    for cid in ids:
        try:
            q = " ".join(str(claims.get(cid)["quote"]).split())
        except KeyError:
            continue
        if q and q not in quotes:
            quotes.append(q)
    if not quotes:
        return ""
    if len(quotes) == 1:
        return f"“{short(quotes[0], limit - 2)}”"
    out = f"“{short(quotes[0], limit - 2)}”"
    for q in quotes[1:]:
        nxt = f"{out}, “{q}”"
        if len(nxt) > limit - 3:
            return out + ", …"
        out = nxt
    return out


def claim_cell(claim_ids, label: str = "", ours: str = "", limit: int = 80) -> str:
    """A claim named by its document's words (:func:`said`), for an HTML table: the quote, then
    (smaller) what ours measures where ``ours`` is given, then in grey the claim's id or
    ``label`` (a pattern of ids: ``countdown/threads=… (3 points)``).  Falls back to ``ours``, then
    to the id, where claims.csv has no words for it."""
    from html import escape

    ids = [claim_ids] if isinstance(claim_ids, str) else list(claim_ids)
    label = label or (ids[0] if len(ids) == 1 else f"{len(ids)} claims")
    words = said(ids, limit)
    head = escape(words) if words else escape(short(ours, limit) if ours else label)
    parts = [head]
    if ours and words:
        parts.append(f'<span style="font-size: 0.85em">ours: {escape(ours)}</span>')
    if words or ours:
        # the id may break after a slash, so it never widens its column
        parts.append('<span style="font-size: 0.8em; color: #6c757d">'
                     + escape(label).replace("/", "/<wbr>") + "</span>")
    # a quote's long token (2_io_bound_single_thread:) may break too, so the cell never widens its table
    return '<div style="overflow-wrap: anywhere; min-width: 9em">' + "<br>".join(parts) + "</div>"


def named(df: pd.DataFrame, ours: str | None = None, id_col: str = "claim_id", at: int = 0) -> pd.DataFrame:
    """``df`` with its claims named by the documents' words: a column ``claim`` of
    :func:`claim_cell` (the quote, what ours measures from column ``ours`` where given, the id in
    grey) put at position ``at``, empty where the row above names the same claim; the id column
    and ``ours`` are dropped."""
    out = df.copy()
    cells = [claim_cell(i, ours=str(o) if ours else "") for i, o in
             zip(out[id_col], out[ours] if ours else [""] * len(out))]
    repeat = out[id_col].eq(out[id_col].shift())
    cells = ["" if r else c for c, r in zip(cells, repeat)]
    out = out.drop(columns=[c for c in {id_col, ours, "claim"} if c and c in out.columns])
    out.insert(min(at, len(out.columns)), "claim", cells)
    return out


def estimate_text(value, lo, hi, coverage=None, n=None, method: str | None = None) -> str:
    """An estimate as every table prints it: 'value [low, high]' where [low, high] is a 95%
    interval; where it covers less (too few runs), its coverage, computed from its estimand and n,
    inside the brackets: '1.2 [1.1, 1.4; 75%, n = 3]'; where there is none at all (coverage 0: one
    run), no brackets: '61,484 (n = 1: no interval)', never a range of one run printed as if it
    were one.  An exact count (coverage unknown, bounds equal) keeps its brackets.

    With the interval's ``method`` (:data:`gillab.stats.METHODS`), an interval that covers 95% at
    a fixed n but on which no verdict may rest (:func:`gillab.stats.conclusive`: the range of 6
    runs, while a sweep that may add runs needs 7) says so inside its brackets, as the verdicts do:
    '1.2 [1.1, 1.4; 97%, n = 6, too few for a verdict]'."""
    from .. import stats

    if value is None or value != value:
        return "not measured"
    # n = 0 beside a value: no complete trial, the value a fallback its row's note names (the
    # median of the runs there are), so no count that reads as if the value stood on nothing
    runs = (f"n = {int(n)}" if n is not None and n == n and not isinstance(n, (tuple, list)) and n else
            f"n = {int(n[0])} and {int(n[1])}" if isinstance(n, (tuple, list)) and len(n) == 2 else "")
    none = (lo is None or hi is None or lo != lo or hi != hi
            or (coverage is not None and coverage == coverage and coverage <= 0))
    if none:
        return f"{fmt(value)} ({runs + ': ' if runs else ''}no interval)"
    if coverage is not None and coverage == coverage and coverage < stats.LEVEL:
        return f"{fmt(value)} [{fmt(lo)}, {fmt(hi)}; {coverage:.0%}{', ' + runs if runs else ''}]"
    if method and n is not None and coverage is not None and not stats.conclusive(method, n):
        return f"{fmt(value)} [{fmt(lo)}, {fmt(hi)}; {coverage:.0%}{', ' + runs if runs else ''}, too few for a verdict]"
    return f"{fmt(value)} [{fmt(lo)}, {fmt(hi)}]"


def estimate_over_runs(value, lo, hi, runs) -> str:
    """:func:`estimate_text` of a median over ``runs`` runs, its coverage computed from them."""
    from .. import stats

    return estimate_text(value, lo, hi, stats.coverage(stats.MEDIAN, int(runs)), runs, stats.MEDIAN)


def stat_text(d, value: str = "ratio") -> str:
    """:func:`estimate_text` of a :mod:`gillab.stats` result (``summarize``, ``ratio_of_medians``,
    ``paired_ratio``: a dict or a row holding its ``value``, ``ci_lo``, ``ci_hi``, ``coverage``,
    ``n`` (``n_num`` and ``n_den`` for a ratio of medians) and ``method``)."""
    get = d.get if hasattr(d, "get") else (lambda k, default=None: getattr(d, k, default))
    method = get("method")
    n = (get("n_num"), get("n_den")) if get("n_num") is not None and get("n_den") is not None else get("n")
    return estimate_text(get(value), get("ci_lo"), get("ci_hi"), get("coverage"), n, method or None)


def flat_texts(flat, prefix: str = "") -> list[str]:
    """:func:`estimate_text` of every row of flat verdict rows (:func:`gillab.judge.verdicts.flat`),
    or of the columns named ``prefix`` + measured, ci_low, ... (``"default "``: the verdicts page's
    `seed` beside `default`): each with its coverage, runs and estimand, so that one run, or an
    interval no verdict may rest on, never reads as a 95% interval."""
    def col(name):
        key = prefix + name
        return list(flat[key]) if key in flat.columns else [None] * len(flat)

    out = []
    for m, lo, hi, cov, n, each, est in zip(col("measured"), col("ci_low"), col("ci_high"), col("coverage"),
                                            col("n"), col("n_each"), col("estimand")):
        runs = each if isinstance(each, (tuple, list)) else n
        out.append(estimate_text(m, lo, hi, cov, runs, est or None))
    return out


def ratio_texts(flat) -> list[str]:
    """:func:`flat_texts` of the rows' ours / published with its interval (the verdicts page's
    authors' machine numbers and machine-speed factors)."""
    return flat_texts(flat.assign(measured=flat["ours_over_published"], ci_low=flat["ratio_low"],
                                  ci_high=flat["ratio_high"]))


def value_cell(m: dict | None) -> str:
    """A verdict's estimate as the tables print it (:func:`estimate_text`); 'not measured'
    without one."""
    if not m:
        return "not measured"
    cov = m.get("coverage") if m.get("estimand") else None
    return estimate_text(m["median"], m["ci_lo"], m["ci_hi"], cov, m.get("n_each", m.get("n")), m.get("estimand"))


def outcome_words(m: dict) -> str:
    """The outcome, and why where it is inconclusive for want of runs ('inconclusive (n too
    small: 3 runs; a 95% interval needs 7)') or no verdict at all (a control failed, a setting
    not in force here)."""
    from .claims import VOID

    why = (m.get("why_void") if m.get("verdict") in VOID else m.get("why_inconclusive")) or ""
    return f"{m['verdict']} ({why})" if m.get("verdict") in ("inconclusive", *VOID) and why else m.get("verdict", "")


_ROLE_NOTE = {"machine": "the author's machine: context", "other builds": "a build the claim does not speak of: "
              "a finding", "not testable": "not testable here"}


def cell_words(claim_id: str, cond: str, m: dict | None, c, fams: dict | None, cpus: int | None) -> dict:
    """One claim x condition in words: its value with interval, its outcome, what the cell is
    where it is not a verdict on the claim (context, a finding on another build, too few cores;
    '' for a verdict) and the analysis's note on it.  ``c``: the claim's row of claims.csv (None
    for a claim it lacks)."""
    from . import claims

    role = claims.role(claim_id, cond, fams, cpus) if fams is not None and c is not None else "judged"
    why = (f"needs {'exactly ' if c['cpus_exact'] else ''}{int(c['cpus'])} CPUs: not judged" if role == "needs cores"
           else _ROLE_NOTE.get(role, ""))
    return {"value": value_cell(m), "outcome": outcome_words(m or {}), "role": why, "note": (m or {}).get("note") or ""}


def verdict_matrix(rows: list[dict], fams: dict | None = None, cpus: int | None = None):
    """One line per published claim, one column per condition: 'value [CI] verdict'.  With the
    conditions' families (``claims.families``) and the machine's logical CPUs, each line says what
    the claim is about and on which builds, and a cell that is not a verdict on the claim says
    what it is instead (context, a finding on another build, too few cores)."""
    from . import claims

    out = []
    for r in rows:
        line = {"experiment": r["experiment"], "claim": r["claim"],
                "published": published_cell(r["claim_id"], r["published"], r["unit"])}
        try:
            c = claims.get(r["claim_id"])
        except KeyError:
            c = None
        if c is not None:
            line["document's statistic"] = c["doc_statistic"]
        if fams is not None and c is not None:
            line["about"] = f"{c['about']}, {c['builds']} builds" if c["builds"] != "any" else f"{c['about']}, any build"
        for cond, m in r["measured"].items():   # columns are put in display order below
            w = cell_words(r["claim_id"], cond, m, c, fams, cpus)
            line[cond] = (f"{w['value']}: {w['outcome']}" + (f" [{w['role']}]" if w["role"] else "")
                          + (f" ({w['note']})" if w["note"] else ""))
        out.append(line)
    df = pd.DataFrame(out).fillna("not measured")
    fixed = [c for c in ("experiment", "claim", "published", "document's statistic", "about") if c in df.columns]
    return df[fixed + display_order([c for c in df.columns if c not in fixed])]


def verdict_table(rows: list[dict], fams: dict | None = None, cpus: int | None = None):
    """The matrix of one experiment's verdicts, as a chapter shows it."""
    return verdict_matrix(rows, fams, cpus).drop(columns=["experiment"])


# what a claim's row of a chapter's verdict table is, by the roles of its measured cells
# (:func:`gillab.judge.claims.role`): the judged rows are shown, the others folded, each kind counted
ROW_KINDS = ("judged", "machine", "not testable here", "not measured")


def row_kind(r: dict, fams: dict | None, cpus: int | None) -> str:
    """*judged*: a cell of the row is a verdict (judged or a control) or a finding on another
    build; *machine*: every measured cell is context beside the author's machine's number;
    *not testable here*: the claim cannot be tested, or needs more CPUs than this machine has;
    *not measured*: no build has a value for it in this run."""
    from . import claims

    measured = [c for c, m in r["measured"].items() if m and m.get("verdict") not in (None, "not measured")]
    try:
        claims.get(r["claim_id"])
    except KeyError:
        return "judged" if measured else "not measured"
    roles = {claims.role(r["claim_id"], c, fams or {}, cpus) for c in (measured or ["-"])}
    if roles <= {"not testable", "needs cores"}:
        return "not testable here"
    if not measured:
        return "not measured"
    return "machine" if roles <= {"machine", "not testable", "needs cores"} else "judged"


def verdict_lines(rows: list[dict], fams: dict | None = None, cpus: int | None = None) -> pd.DataFrame:
    """A chapter's verdicts one line per claim x build that has a value (a claim without any: one
    line, "not measured"), the builds in display order: ``claim_id``, the claim's words
    (``claim``, ``published``, ``document's statistic``, ``about``, as :func:`verdict_matrix` has
    them), ``build``, ``value``, ``outcome``, ``role`` (what the cell is where it is not a verdict
    on the claim) and ``note``; and ``missing``: the chapter's builds (``fams``) the claim has no
    value for."""
    from . import claims

    head = verdict_matrix(rows, fams, cpus)
    fixed = [c for c in ("claim", "published", "document's statistic", "about") if c in head.columns]
    out = []
    for r, (_, h) in zip(rows, head.iterrows()):
        try:
            c = claims.get(r["claim_id"])
        except KeyError:
            c = None
        have = {k: m for k, m in r["measured"].items() if m and m.get("verdict") not in (None, "not measured")}
        # a build with a value in a pair or a variant ("3.9.2 vs 2.7.18", "3.9.2 (2 processes)") is not missing
        named = {b for k in have for b in claims.builds_in(k)}
        missing = ", ".join(display_order([k for k in (fams or {}) if k not in named]))
        base = {"claim_id": r["claim_id"], **{k: h[k] for k in fixed}, "missing": missing if have else ""}
        for cond in display_order(list(have)):
            out.append({**base, "build": cond, **cell_words(r["claim_id"], cond, have[cond], c, fams, cpus)})
        if not have:
            out.append({**base, "build": "-", "value": "not measured", "outcome": "", "role": "", "note": ""})
    return pd.DataFrame(out, columns=["claim_id", *fixed, "build", "value", "outcome", "role", "note", "missing"])


def verdict_lines_html(lines: pd.DataFrame) -> str:
    """:func:`verdict_lines` as an HTML table: a claim's words once (the published value, the
    document's statistic and what the claim is about under them), beside all its builds' lines
    (a cell spanning them), then the builds it has no value for on one line; a note that every
    value shares is said once above the table instead of in every cell."""
    from html import escape

    valued = lines[lines["value"] != "not measured"]
    common, role = ("", "")
    if len(valued):
        common, role = (valued[k].iloc[0] if valued[k].nunique() == 1 else "" for k in ("note", "role"))
    said = "; ".join(f"{what}: {escape(x)}" for what, x in (("every value", common), ("every line", role)) if x)
    line = "border-top: 1px solid #bbb"
    span_two = ' colspan="2"'

    def td(text: str, *css: str, attrs: str = "") -> str:
        return f'<td{attrs} style="{"; ".join([CELL_CSS, *css])}">{text}</td>'

    html = [f'<table class="{TABLE_CLASS}" style="{TABLE_CSS}">']
    if said:
        html.append(f'<caption style="caption-side: top; text-align: left">{said[0].upper() + said[1:]}.</caption>')
    html.append("<thead><tr>" + "".join(f'<th style="{CELL_CSS}; text-align: left">{h}</th>' for h in
                                       ("claim", "build", "ours [interval]", "outcome")) + "</tr></thead><tbody>")
    for _, g in lines.groupby("claim_id", sort=False):
        first = g.iloc[0]
        missing = first["missing"]
        about = " · ".join(f"{k}: {first[k]}" for k in ("published", "document's statistic", "about") if k in g)
        claim = td(f'{escape(str(first["claim"]))}<br><span style="font-size: 0.9em; color: #555">{escape(about)}</span>',
                   line, attrs=f' rowspan="{len(g) + bool(missing)}"')
        for i, (_, ln) in enumerate(g.iterrows()):
            words = ln["outcome"] + (f" [{ln['role']}]" if ln["role"] and ln["role"] != role else "") + (
                f" ({ln['note']})" if ln["note"] and ln["note"] != common else "")
            top = [line] if i == 0 else []
            html.append(f"<tr>{claim if i == 0 else ''}{td(escape(ln['build']), *top)}"
                        f"{td(escape(ln['value']), *top)}{td(escape(words), *top)}</tr>")
        if missing:
            html.append(f"<tr>{td('not measured')}{td(escape(missing), attrs=span_two)}</tr>")
    html.append("</tbody></table>")
    return "".join(html)


class Lines:
    """A chapter's verdict lines as the book shows them (an HTML table; ``lines``: the frame)."""

    def __init__(self, lines: pd.DataFrame):
        self.lines = lines

    def __len__(self) -> int:
        """The claims it holds."""
        return int(self.lines["claim_id"].nunique())

    def to_html(self) -> str:
        return verdict_lines_html(self.lines)

    def _repr_html_(self) -> str:
        return self.to_html()


def verdict_parts(rows: list[dict], fams: dict | None = None, cpus: int | None = None) -> dict:
    """A chapter's verdicts split by :func:`row_kind`: {kind: :class:`Lines`}, in
    :data:`ROW_KINDS` order, only the kinds with rows."""
    kinds = [row_kind(r, fams, cpus) for r in rows]
    out = {}
    for kind in ROW_KINDS:
        part = [r for r, k in zip(rows, kinds) if k == kind]
        if part:
            out[kind] = Lines(verdict_lines(part, fams, cpus))
    return out


def folded_summary(kind: str, n: int, cpus: int | None = None) -> str:
    """The summary line of a folded part of a chapter's verdict table: what its rows are, counted."""
    rows = f"{n} claim{'s' if n != 1 else ''}"
    return {
        "machine": f"{rows} about the author's machine (its absolute numbers): our values beside them are "
                   "context, not verdicts",
        "not testable here": f"{rows} not testable here (not testable at all, or needing more CPUs than "
                             f"{'this machine' if cpus is None else f'the {cpus} of this machine'})",
        "not measured": f"{rows} not measured in this run (no build has a value at their points)",
    }.get(kind, f"{rows}: {kind}")


def compare_view(df, name: str = "yours"):
    """The comparison as a reader scans it: value, interval and outcome in one cell per
    campaign, each claim named once (on its first condition), and the two outcomes compared
    (:func:`gillab.judge.across.pair_outcome`: the same, different, open). ``name`` heads the
    shown campaign's columns ("yours", or "contributed" for a campaign from another machine)."""
    if df.empty:
        return df
    same = df["compared"] if "compared" in df.columns else df["same outcome"]
    if "claim_id" in df.columns:     # named by the document's words, with what ours measures
        first = df["claim_id"].ne(df["claim_id"].shift())
        claim = [claim_cell(i, ours=c) if f else "" for i, c, f in zip(df["claim_id"], df["claim"], first)]
    else:
        first = df["claim"].ne(df["claim"].shift())
        claim = df["claim"].where(first, "")
    out = pd.DataFrame({
        "claim": claim,
        "condition": df["condition"], "published": df["published"].where(first, ""),
        "reference: value [interval], outcome": df["reference"] + " · " + df["reference outcome"],
        name: df["yours"] + " · " + df["your outcome"],
        "same outcome": same, f"{name} / reference [interval]": df["yours / reference"],
    })
    return out


def compare_counts(df):
    """Per experiment: the claims x conditions judged in both campaigns, and how many of them
    are the same, different and open (:func:`gillab.judge.across.pair_counts` of
    :func:`gillab.judge.verdicts.compare`'s ``compared``)."""
    from .pairs import pair_counts

    rows = [{"experiment": e, **pair_counts(g, "compared")} for e, g in df.groupby("experiment", sort=True)]
    out = pd.DataFrame(rows, columns=["experiment", "both", "the same", "different", "open"])
    return out[out["both"] > 0].rename(columns={"both": "judged in both"}).reset_index(drop=True)
