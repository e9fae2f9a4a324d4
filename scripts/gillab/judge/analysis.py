"""How an experiment's samples are read: one interface for every chapter.

Each experiment has two modules of one name: :mod:`gillab.measure.experiments` holds its
:class:`~gillab.measure.protocol.Experiment` (what a sample is, its parameters and sweep: the
measuring side, part of the resume key) and :mod:`gillab.chapters` its :class:`Analysis` (what
the chapter shows: never part of the resume key, so a new figure keeps the samples).  A chapter
(:class:`gillab.present.page.Chapter`) calls only these methods; the verdicts page and
``gillab verdicts`` call :meth:`Analysis.claims`.
"""
from __future__ import annotations

import functools
import inspect
import sys
import weakref

import pandas as pd

from . import results

INTERFACE = ("summary", "claims", "figure", "side_by_side", "findings", "explorer")
OPTIONAL = ("published", "published_table", "prose")


def frame_cached(fn):
    """Remember ``fn(df, ...)`` for as long as that very frame lives, and hand out copies: a
    chapter's figures, tables, claims and findings all start from one summary of one frame,
    computed once (the frames a chapter reads are not changed after loading)."""
    cache: dict = {}

    @functools.wraps(fn)
    def wrapper(df, *args, **kwargs):
        key = (id(df), args, tuple(sorted(kwargs.items())))
        hit = cache.get(key)
        if hit is None or hit[0]() is not df:
            for k in [k for k, (ref, _) in cache.items() if ref() is None]:
                del cache[k]
            hit = cache[key] = (weakref.ref(df), fn(df, *args, **kwargs))
        return hit[1].copy()
    return wrapper


class Analysis:
    experiment: str = ""
    table: str = ""          # data/reference/<table>.csv: the document's numbers, as data
    reads: tuple = ()        # other experiments whose samples the chapter reads too
    headline: tuple = ()     # the keys of its checked sentences the book's first screen shows (a
                             # module's HEADLINE), in order: chosen by key, never by their words
    # claims another profile's configuration answers: {profile: claim id prefix} (document 004's
    # version sweep is measured by `history`, never by `default`)
    claims_from_profile: dict = {}

    @staticmethod
    def conclusion_samples(df: pd.DataFrame) -> pd.DataFrame:
        """The part of the samples the chapter's conclusions read (all, unless the chapter says)."""
        return df

    @property
    def size_note(self) -> str:
        """Why the document's own sizes (`seed`) may judge a claim otherwise than `default`'s: the
        chapter's reason, in words (the verdicts page sets it beside the outcomes that changed),
        from its text's words cell (``size-note``); '' for an experiment outside the registry."""
        from ..measure import experiments
        from .prose import words

        return words(self.experiment).get("size-note", "") if self.experiment in experiments.NAMES else ""

    def published(self) -> pd.DataFrame:
        """The document's numbers (``data/reference/<table>.csv``)."""
        return results.reference(self.table)

    def published_table(self) -> pd.DataFrame:
        """The document's numbers as it printed them (default: the reference file)."""
        return self.published().drop(columns=["source"], errors="ignore")

    def summary(self, df: pd.DataFrame) -> pd.DataFrame:
        """Per condition and point: the statistics the chapter reports."""
        raise NotImplementedError

    def claims(self, df: pd.DataFrame) -> list[dict]:
        """One row per published claim this experiment answers: ``claim_id``, ``claim``,
        ``published``, ``unit``, and per condition in ``measured`` the median, interval, best,
        n and the verdict."""
        raise NotImplementedError

    def figure(self, df: pd.DataFrame):
        """The chapter's main figure (samples, medians with CIs, the published values)."""
        raise NotImplementedError

    def side_by_side(self, df: pd.DataFrame) -> pd.DataFrame:
        """The published numbers with ours beside them, in the document's shape."""
        raise NotImplementedError

    def findings(self, df: pd.DataFrame) -> str:
        """The verdict in words (Markdown), every number computed from ``df``."""
        raise NotImplementedError

    def explorer(self, df: pd.DataFrame):
        """A kernel-free explorer (every figure drawn in advance, switched in the browser)."""
        raise NotImplementedError

    def prose(self, df: pd.DataFrame) -> list:
        """The chapter's sentences about its results, each checked against ``df``
        (:class:`gillab.judge.prose.Check`); none by default."""
        return []



def _adaptive_metric(name: str) -> str | None:
    """The sample column the experiment ``name`` judges its runs by, where it is a registered
    experiment (a module outside the registry, e.g. a test's, has none)."""
    from ..measure import experiments

    return getattr(experiments.get(name), "adaptive_metric", None) if name in experiments.NAMES else None


class ModuleAnalysis(Analysis):
    """An analysis written as functions of the chapter's module with the interface's names
    (``summary(df)``, ``claims(df)``, ...; ``published()`` and ``published_table()`` where it
    has them; the live explorer is one for all, :mod:`gillab.present.live`, drawing ``figure``).  A
    function the module lacks comes from ``shared``, the module of a family of experiments
    (:mod:`~gillab.chapters.over_threads`, :mod:`~gillab.chapters.doc002`), whose functions
    take the experiment's ``bound`` arguments by keyword (``spec=``, ``experiment=``).  ``extras`` names further figures a
    chapter draws with ``Chapter.figure(name)``.  A missing function is an error when the module
    is imported, not when a chapter runs."""

    def __init__(self, module: str, *, shared=None, extras: tuple[str, ...] = (), **bound):
        mod = sys.modules[module]
        self.experiment = module.rsplit(".", 1)[-1]
        self.table = bound.pop("table", "")
        self.reads = tuple(bound.pop("reads", ()))
        self.claims_from_profile = dict(getattr(mod, "CLAIMS_FROM_PROFILE", {}))
        self.headline = tuple(getattr(mod, "HEADLINE", ()))
        if getattr(mod, "conclusion_samples", None) is not None:     # else all (Analysis's)
            self.conclusion_samples = mod.conclusion_samples
        bound.setdefault("experiment", self.experiment)
        missing = []
        for name in INTERFACE + OPTIONAL + tuple(extras):
            fn = getattr(mod, name, None) or getattr(shared, name, None)
            if fn is None:
                if name not in OPTIONAL:
                    missing.append(name)
                continue
            params = inspect.signature(fn).parameters
            given = {k: v for k, v in bound.items() if k in params}
            setattr(self, name, functools.partial(fn, **given) if given else fn)
        if missing:
            raise TypeError(f"{module}: the analysis lacks {', '.join(missing)}")
        self.claims = self._with_conclusions(self.claims, getattr(mod, "run_values", None) or getattr(shared, "run_values", None),
                                             _adaptive_metric(self.experiment), getattr(mod, "conclusion_samples", None),
                                             getattr(mod, "settings_in_force", None))

    def _with_conclusions(self, claims, run_values, metric, samples=None, in_force=None):
        """``claims`` followed by the documents' conclusions this experiment answers
        (claims.csv ``<experiment>/conclusion/...``), each a ratio of two points of the samples:
        one value per independent run from the module's ``run_values(frame)``, else each sample's
        ``adaptive_metric``.  ``samples`` (the module's ``conclusion_samples(frame)``) is the part
        of the samples the conclusions read, where a chapter measures one point two ways (the
        convoy: pinned on purpose, and where the OS put the threads as in the document's runs).
        ``in_force`` (the module's ``settings_in_force(frame, rows)``) marks the rows whose setting
        the machine did not apply "not in force here"; then a failed control voids the rows it
        guards, and one whose identical runs spread wider than its band says so in the rows it
        guards that are still open."""
        experiment = self.experiment

        def values(g):
            if run_values is not None:
                return run_values(g)
            return g[metric].dropna().astype(float)

        def with_conclusions(df):
            """The chapter's rows, the conclusions, and the rows a failed control voids."""
            from . import claims as published_claims

            rows = claims(df) + published_claims.conclusions(experiment, samples(df) if samples else df, values)
            if in_force is not None:
                in_force(df, rows)
            published_claims.void_by_controls(rows)
            published_claims.explain_by_controls(rows)
            return rows
        with_conclusions.__wrapped__ = claims   # what the book names as the function that judged
        return with_conclusions
