"""The plan of one whole run, made once and handed to every step that measures.

:meth:`Plan.make` does everything a whole run decides before its first sample: every check
(:func:`precheck`), the profile resolved into each chapter's forecast (:func:`gillab.judge.budget.forecast`:
its points, repeats, samples and seconds on this machine), the chapters chosen within the minutes and
their order.  The forecast is kept at the reference's pace (``base``) and scaled to the pace of the
moment (:meth:`Plan.forecast`), so that the plan can be redone, at each chapter's turn, at the pace
every probe so far measured (:meth:`Plan.turn`): a chapter the first plan cut to one run a point
gets its planned runs back when the machine turned out faster, and a chapter planned whole is cut
when it turned out slower.  A whole run (:mod:`gillab.reproduce`) asks the plan; it never plans.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field

from . import budget, speed
from ..measure import experiments
from ..measure.profiles import BUDGET_MINUTES, VERDICTS_MINUTES, ParameterError


def precheck(profile: str = "default", campaign: str | None = None, new_campaign: bool = False,
             resolve=None) -> dict[str, str]:
    """Every check of a whole run before anything is made or measured: the data folder can be
    written, the campaign may be measured into, and each chapter's profile and builds (its
    :func:`gillab.measure.sweep.plan`; ``resolve(name, overrides)`` its parameters, where a plan
    resolves them).  Returns the chapters that cannot start, each with why; raises
    :class:`ParameterError` when none can."""
    from ..measure import campaigns, sweep
    from ..paths import results_dir

    sweep.check_writable(results_dir())
    campaigns.for_measuring(campaign, new=new_campaign, create_new=False)   # the reference is refused here
    cannot = {}
    for name in experiments.names():
        try:
            p = resolve(name, None) if resolve is not None else experiments.get(name).resolve(profile)
            sweep.plan(name, profile, campaign=campaign, new_campaign=new_campaign, params=p)
        except ParameterError as exc:
            cannot[name] = str(exc)
    if len(cannot) == len(experiments.names()):
        raise ParameterError("no chapter can be measured: " + "; ".join(f"{k}: {v}" for k, v in cannot.items()))
    return cannot


def budget_minutes(profile: str) -> float | None:
    """The minutes a whole run of ``profile`` may measure: `default` the report's budget,
    `verdicts` its own; the others (smoke, seed, history) are not timed."""
    return {"default": float(BUDGET_MINUTES), "verdicts": float(VERDICTS_MINUTES)}.get(profile)


@dataclass
class Turn:
    """What the plan, redone at a chapter's turn, says of it."""
    overrides: dict | None      # None: its planned runs; :data:`gillab.judge.budget.FEWEST`: one run a point
    expect: float               # seconds, at the pace of the moment
    reached: bool               # False: no time is left for even one run a point
    change: str = ""            # "restored", "cut" (against the first plan) or ""


@dataclass
class Plan:
    profile: str
    campaign: str | None
    new_campaign: bool
    minutes: float | None                   # None: untimed (every chapter, whole)
    cannot: dict                            # chapter -> why it cannot start
    base: list = field(default_factory=list)     # ChapterForecast at the forecast times' own pace
    factor: float = 1.0                     # the first plan's pace
    speed: str = ""
    chosen: list = field(default_factory=list)   # in the order they are measured
    left_out: list = field(default_factory=list)
    fewest: list = field(default_factory=list)   # the first plan's chapters at one run a point
    claims_first: bool = False
    probe_ref: float | None = None          # the seconds every later probe is read against (the first's yardstick)
    resolved: dict = field(default_factory=dict, repr=False)   # (chapter, overrides) -> parameters

    @classmethod
    def make(cls, profile: str, campaign: str | None, new_campaign: bool, minutes: float | None,
             probes) -> "Plan":
        """The whole run's plan: every check first, then the run's first, warmed-up probe
        (``probes``: :class:`gillab.judge.steadiness.Probes`; nothing is probed when a check fails),
        then the forecast at its pace.  Each chapter's parameters are resolved here, once
        (:meth:`params`), and every step of the run reads them from the plan."""
        plan = cls(profile, campaign, new_campaign, minutes, {})
        plan.cannot = cannot = precheck(profile, campaign, new_campaign, resolve=plan.params)
        probes.take("start")
        if minutes is None:
            plan.chosen = [n for n in experiments.names() if n not in cannot]
            return plan
        plan.factor, plan.speed = probes.pace()
        if not plan.speed.startswith("no "):
            plan.probe_ref = speed.probe_reference(probes.taken[0], plan.factor)
        plan.base = budget.forecast(profile, campaign, new_campaign=new_campaign, factor=1.0, resolve=plan.params)
        now = plan.forecast()
        choice = budget.choose(now, minutes)
        plan.chosen = [n for n in budget.by_yield(now, choice.chosen) if n not in cannot]
        plan.left_out, plan.fewest = choice.left_out, list(choice.fewest)
        plan.claims_first = not budget.whole_fits(now, minutes)
        return plan

    @property
    def timed(self) -> bool:
        return self.minutes is not None

    def params(self, name: str, overrides: dict | None = None) -> dict:
        """``name``'s parameters at this run's profile and ``overrides`` (one run a point, a round's
        repeats), resolved and checked the first time a step asks, then read from the plan; a copy,
        so that no step changes another's."""
        key = (name, json.dumps(overrides or {}, sort_keys=True))
        if key not in self.resolved:
            self.resolved[key] = experiments.get(name).resolve(self.profile, overrides)
        return copy.deepcopy(self.resolved[key])

    def forecast(self, factor: float | None = None) -> list:
        """Every chapter's forecast at ``factor`` (default: the first plan's pace)."""
        f = self.factor if factor is None else factor
        return [copy.deepcopy(c).scale(f) for c in self.base]

    def rows(self, name: str) -> list:
        """The judged rows a chapter's runs decide or leave with too few runs (at any pace)."""
        return next((c.judged + c.short for c in self.base if c.experiment == name), [])

    def describe(self) -> str:
        return budget.describe(self.forecast(), self.chosen, self.minutes, self.fewest)

    def cost(self, c) -> float:
        """What a chapter's runs take in this run: its claims where those come first."""
        return c.claims if self.claims_first else c.seconds

    def turn(self, name: str, factor: float, left: float, done: set[str]) -> Turn:
        """The plan redone at ``name``'s turn: every chosen chapter not yet measured (``done``), at
        the pace of the moment (``factor``), within the ``left`` seconds; ``name`` gets its
        planned runs where they fit beside the others' by the first plan's rule
        (:func:`gillab.judge.budget.choose`), else one run a point, else nothing."""
        if not self.timed:
            return Turn(None, 0.0, True)
        now = {c.experiment: c for c in self.forecast(factor)}
        remaining = [now[n] for n in self.chosen if n not in done and n in now]
        choice = budget.choose(remaining, left / 60)
        first = "fewest" if name in self.fewest else "whole"
        if name in choice.fewest:
            c, over, was = now[name].measured([name]), budget.FEWEST, "fewest"
        elif name in choice.chosen:
            c, over, was = now[name], None, "whole"
        else:
            return Turn(None, self.cost(now[name].measured([name])), False)
        change = "" if was == first else "restored" if was == "whole" else "cut"
        return Turn(over, self.cost(c), True, change)
