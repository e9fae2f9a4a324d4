"""The record of one whole run (``gillab reproduce``): its schema, written in one place, and the one
loader every reader goes through.

A whole run writes ``reproduce-<started>.json`` into its campaign's folder after every chapter
(so a run cut short keeps what it did), and a committed run's copy lives in ``data/timing/``.  The
file is :meth:`RunRecord.as_dict` as JSON; :func:`load` (a path) and :meth:`RunRecord.of` (a
dict already read) read every version back, filling what an older record lacks with its empty
value, so that no reader guesses at a key.

Schema (version :data:`VERSION`; a record without ``version`` is version 1, the same keys less
those marked *2*):

========================  =====================================================================
``version``               *2*: this schema's number
``profile``               the profile measured (``default``, ``verdicts``, ...)
``campaign``              the campaign measured into
``started``, ``finished``  ISO times, UTC; ``seconds``: wall time of the measuring
``git``                   the commit measured with
``machine``               :func:`gillab.measure.metadata.machine` (CPU model, cores, ...)
``status``                ``running``, ``complete``, ``complete with failures``,
                          ``stopped on time`` or ``interrupted (<exception>)``
``budget_minutes``        the minutes the run may measure (None: untimed)
``speed_factor``, ``speed``  the pace the first plan was made at (this machine's time over the
                          forecast's, from the first probe) and its words
``pace``, ``pace_words``  *2*: the pace every probe of the run measured (the median of their
                          medians), written at its end, and its words
``foreign_limit``         *2*: the foreign CPUs a sample could have beside it and be alone
                          (:func:`gillab.measure.alone.limit`)
``paces``                 *2*: the pace at each chapter's turn, from every probe so far
                          (``before``: the chapter, ``factor``, ``probes``: how many it read,
                          ``correction``: the chapters so far against their forecast)
``forecast``              per chapter: samples, seconds, waits, judged and decided rows,
                          ``too_few`` rows, ``basis``, ``error``, ``fewest_seconds``
``choice``                the rule that chose the chapters (:data:`gillab.judge.budget.CHOICE`)
``claims_first``          whether every chapter's claims came before any figure
``left_out``              chapters the first plan left out, with their judged rows
``fewest``                chapters measured at one run a point, with their judged rows
``fewest_late``           of those, the ones cut when their turn came (not by the first plan)
``restored``              *2*: chapters the first plan cut to one run a point that got their
                          planned runs back at their turn (the machine turned out faster)
``not_reached``           chapters whose turn came with too little time left, with their rows
``figures_not_reached``   chapters whose figures' runs the time did not reach
``experiments``           each chapter's run: experiment, run_id, status, seconds, measured,
                          resumed, failed, ``not_alone`` *2*, ``measured_again`` *2*,
                          missing_conditions, config_id, phase (``plan``, ``figures``,
                          ``rounds``), params
``rounds``                the rounds after the plan: experiment, repeats, straddling and
                          decidable rows before it
``failures``              chapters that failed or could not start, with why
``probes``                the pace probes (:mod:`gillab.judge.steadiness`)
``loadavg_start``/``_end``, ``cpu_times_start``/``_end``, ``cpu_steal_share``  the machine around
                          the run
========================  =====================================================================
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from .paths import portable

VERSION = 2
_MAY_BE_NONE = ("budget_minutes", "speed_factor", "seconds", "cpu_steal_share", "pace", "foreign_limit")


@dataclass
class RunRecord:
    profile: str = ""
    campaign: str = ""
    started: str = ""
    git: str = ""
    machine: dict = field(default_factory=dict)
    status: str = "running"
    budget_minutes: float | None = None
    speed_factor: float | None = None
    speed: str = ""
    paces: list = field(default_factory=list)
    forecast: list = field(default_factory=list)
    choice: str = ""
    claims_first: bool = False
    left_out: dict = field(default_factory=dict)
    fewest: dict = field(default_factory=dict)
    fewest_late: list = field(default_factory=list)
    restored: list = field(default_factory=list)
    not_reached: dict = field(default_factory=dict)
    figures_not_reached: list = field(default_factory=list)
    experiments: list = field(default_factory=list)
    rounds: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    probes: list = field(default_factory=list)
    finished: str = ""
    seconds: float | None = None
    loadavg_start: list = field(default_factory=list)
    loadavg_end: list = field(default_factory=list)
    cpu_times_start: dict = field(default_factory=dict)
    cpu_times_end: dict = field(default_factory=dict)
    cpu_steal_share: float | None = None
    pace: float | None = None           # 2: the pace of every probe of the run, at its end
    foreign_limit: float | None = None  # 2: the foreign CPUs a sample could have and be alone
    pace_words: str = ""
    version: int = VERSION
    path: Path | None = field(default=None, compare=False, repr=False)   # where it was read from

    @classmethod
    def of(cls, data: "dict | RunRecord") -> "RunRecord":
        """A record from its dict (any version); a record is returned as it is."""
        if isinstance(data, RunRecord):
            return data
        names = {f.name for f in dataclasses.fields(cls)} - {"path"}
        # a key an older record wrote as null where this schema has an empty value keeps the empty value
        known = {k: v for k, v in data.items() if k in names and (v is not None or k in _MAY_BE_NONE)}
        return cls(**{**known, "version": data.get("version", 1)})

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "path"}

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(portable(self.as_dict()), indent=1, default=str) + "\n")

    @property
    def file(self) -> str:
        """The name of the file it was read from ('' for one not read from a file)."""
        return self.path.name if self.path is not None else ""

    @property
    def ended(self) -> bool:
        """Whether it ran to its end: every chapter measured (some samples may have failed), or,
        for a run against a budget, stopped by its clock; not interrupted nor still running."""
        return self.status in ("complete", "complete with failures") or (
            self.status == "stopped on time" and bool(self.budget_minutes))

    # what the pages read of it
    def samples_not_alone(self) -> dict[str, int]:
        """Per chapter, the samples this run measured beside foreign load (kept aside)."""
        out: dict[str, int] = {}
        for e in self.experiments:
            if e.get("not_alone"):
                out[e["experiment"]] = out.get(e["experiment"], 0) + e["not_alone"]
        return out


def load(path: Path) -> RunRecord:
    """The one loader of a whole run's record (``reproduce-*.json``)."""
    rec = RunRecord.of(json.loads(Path(path).read_text()))
    rec.path = Path(path)
    return rec
