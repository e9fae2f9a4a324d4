"""Which measuring code every committed campaign's chapters were measured with, and the guard
that no change of the code silently orphans the reference.

A chapter of a campaign is *this code* where every sample the book reads (the newest resume key
of each configuration and build, :func:`gillab.judge.results.current_rows`) was measured with the code
key of this checkout (:mod:`gillab.measure.codekey`), *other code* where none was, and *partly this code*
in between.  A chapter of the reference campaign that is not this code is shown apart by every
page, so the reference would silently lose it: :func:`problems` allows it only where
``data/results/MEASURE_AGAIN.toml`` declares it, naming the chapter, the reference, the code key
it changed to and why::

    [[chapter]]
    name = "convoy"
    reference = "amd-epyc-2c-20261125-sitting3"
    code_key = "342282cfda9ad544"     # `gillab codekeys` prints this checkout's keys
    reason = "the echo client's watchdog now ..."

A declaration goes stale, and the guard fails again, when the code changes once more (another
key), when the reference changes, and when the chapter is measured again with this code: the
list is empty whenever the reference is re-measured.  The commit that declared an entry is read
from git (the first commit whose list holds its key); ``make test`` runs the guard
(``gillab codekeys --check``), and the method chapter shows the table and the list.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import across
from ..measure import campaigns
from ..measure.campaigns import MEASURE_AGAIN_FILE, Declared, declared, declared_path  # noqa: F401 - the list, here
from ..measure.profiles import ParameterError  # noqa: F401 - what a list that cannot be read raises

THIS, OTHER, PARTLY, NONE = "this code", "other code", "partly this code", "not measured"


@dataclass(frozen=True)
class Status:
    """One chapter of one campaign: its samples' groups (configuration x build) measured with
    this code, out of all groups, and the code keys they were measured with (as today's
    definition reads them)."""
    this: int
    groups: int
    keys: tuple[str, ...]

    @property
    def word(self) -> str:
        if not self.groups:
            return NONE
        return THIS if self.this == self.groups else OTHER if not self.this else PARTLY

    @property
    def short(self) -> str:
        return {THIS: "this", OTHER: "other", NONE: "-"}.get(self.word, f"{self.this}/{self.groups}")


def status(c: campaigns.Campaign, experiment: str, now: str) -> Status:
    """Which code measured ``experiment``'s samples in campaign ``c`` (``now``: this code's key)."""
    from .results import code_key_rows

    cur = code_key_rows(c, experiment)
    if cur.empty:
        return Status(0, 0, ())
    per_group = (cur["key"] == now).groupby([cur["config"], cur["condition"]]).all()
    return Status(int(per_group.sum()), len(per_group), tuple(sorted(set(cur["key"]))))


def table(cs: list[campaigns.Campaign] | None = None, now: dict[str, str] | None = None) -> dict[str, dict[str, Status]]:
    """Per chapter (the registry's order), per campaign id: its :class:`Status`; ``now``: this
    checkout's code keys (:func:`gillab.judge.across.code_keys_now`), where the caller has them."""
    cs = campaigns.all_campaigns() if cs is None else cs
    now = across.code_keys_now() if now is None else now
    return {name: {c.id: status(c, name, key) for c in cs} for name, key in now.items()}


def problems(tab: dict[str, dict[str, Status]] | None = None, decl: list[Declared] | None = None,
             reference: str | None = None, now: dict[str, str] | None = None) -> list[str]:
    """Why the guard fails, one line each (none: it passes): a chapter of the reference not
    measured with this code and not declared, and every declaration that no longer holds."""
    reference = campaigns.reference_id() if reference is None else reference
    if not reference:
        return []
    now = across.code_keys_now() if now is None else now
    tab = table([campaigns.load(reference)], now) if tab is None else tab
    decl = declared() if decl is None else decl
    by_name: dict[str, Declared] = {}
    out = []
    for d in decl:
        if d.chapter in by_name:
            out.append(f"{d.chapter}: declared twice in {MEASURE_AGAIN_FILE}; keep one entry")
        by_name[d.chapter] = d
        if d.chapter not in tab:
            out.append(f"{d.chapter}: declared in {MEASURE_AGAIN_FILE}, but no chapter has that name")
    for name, per_campaign in tab.items():
        st = per_campaign.get(reference, Status(0, 0, ()))
        key = now[name]
        d = by_name.get(name)
        if st.word == THIS:
            if d is not None:
                out.append(f"{name}: the reference {reference} holds it measured with this code; remove its entry "
                           f"from {MEASURE_AGAIN_FILE}")
            continue
        what = (f"{name}: the reference {reference} holds it as {st.word}"
                + (f" ({st.this} of {st.groups} configuration x build groups with this code)" if st.word == PARTLY else "")
                + (f" (stored key {', '.join(st.keys)}; this code's key is {key})" if st.keys else ""))
        if d is None and st.word == NONE:       # no sample at all: a chapter the reference never measured
            out.append(f"{name}: the reference {reference} has no samples of it (a new chapter): measure it into "
                       f"the reference, or declare it in data/results/{MEASURE_AGAIN_FILE} (name, reference, "
                       f"code_key = {key!r}, reason) until the reference's next sitting")
        elif d is None:
            out.append(f"{what}: a change of its measuring code orphaned it; undo the change, or declare the chapter "
                       f"in data/results/{MEASURE_AGAIN_FILE} (name, reference, code_key = {key!r}, reason)")
        elif d.reference != reference:
            out.append(f"{name}: declared for the reference {d.reference}, but the reference is {reference}; a new "
                       f"reference starts with an empty {MEASURE_AGAIN_FILE}")
        elif d.code_key != key:
            out.append(f"{what}: declared for code key {d.code_key}, but the code changed again; declare {key!r}")
    return out


def markdown(tab: dict[str, dict[str, Status]] | None = None, decl: list[Declared] | None = None,
             now: dict[str, str] | None = None) -> str:
    """For the method chapter: the chapters to be measured again (or that there are none), then
    which code measured every campaign's chapters."""
    cs = campaigns.all_campaigns()
    now = across.code_keys_now() if now is None else now
    tab = table(cs, now) if tab is None else tab
    decl = declared() if decl is None else decl
    ref = campaigns.reference_id()
    lines = []
    if decl:
        from . import tables

        rows = ["| chapter | why | changed in |", "|---|---|---|"]
        for d in decl:
            rows.append(f"| {d.chapter} | {d.reason.replace('|', '/')} | {d.commit() or 'not committed yet'} |")
        lines += [f"Chapters of the reference campaign `{ref}` to be measured again (`data/results/"
                  f"{MEASURE_AGAIN_FILE}`): {', '.join(d.chapter for d in decl)}. Their measuring code changed "
                  "since it measured them, so every page shows their reference samples apart until they are "
                  "measured again.", "",
                  tables.details_md(f"Why each of the {len(decl)} changed, and in which commit", "\n".join(rows))]
    else:
        lines.append(f"No chapter of the reference campaign `{ref}` waits to be measured again: every one was "
                     "measured with this checkout's measuring code (`data/results/"
                     f"{MEASURE_AGAIN_FILE}` lists none).")
    lines += ["", "Which code measured each campaign's chapters: *this* code (this checkout's code key), "
              "*other* code, *k/n* of its configuration x build groups with this code, or not measured (-).", "",
              "| chapter | this code's key | " + " | ".join(f"`{c.id}` ({c.role})" for c in cs) + " |",
              "|---|---|" + "---|" * len(cs)]
    for name, per_campaign in tab.items():
        lines.append(f"| {name} | `{now[name]}` | " + " | ".join(per_campaign[c.id].short for c in cs) + " |")
    return "\n".join(lines) + "\n"
