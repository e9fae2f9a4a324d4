"""What an experiment measures: its workload, its parameters (declared once, here), the grid of
points a parameter set expands to, and how one sample is taken.  How samples are *read*
(summary, claims, figures, explorers) is the experiment's :class:`gillab.judge.analysis.Analysis`;
how a sweep runs and resumes is :mod:`gillab.measure.sweep`.
"""
from __future__ import annotations

import hashlib
import json

from . import interpreters, runner
from .profiles import RUN_SIZE, Param, ParameterError, resolve  # noqa: F401  (Param, ParameterError: for experiments)

# Parameters that say how much/how long to measure but not *what* a sample is.
# full_grid and small_grid choose which builds are measured at which points, not what a sample is.
NOT_CONFIG = RUN_SIZE       # how much is measured: not part of the configuration id


class Experiment:
    name: str = ""
    workload: str = ""
    title: str = ""
    document: str = ""
    notebook: str = ""                   # notebooks/<notebook>: the chapter that presents it
    params: dict[str, Param] = {}
    point_keys: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ()      # workload programs a sample runs and the workload modules they
                                         # import besides _common (default: (workload,)); part of the key
    measuring_code: tuple = ()           # module functions run_sample calls (part of the resume key)
    also_conditions: tuple[str, ...] = ()  # measured by default besides the document's set
    adaptive_metric: str = ""            # the sample column whose CI decides adaptive repeats

    # grid --------------------------------------------------------------------------------
    def points(self, p: dict) -> list[dict]:
        raise NotImplementedError

    def workload_params(self, p: dict, point: dict) -> dict:
        return {**{k: v for k, v in p.items() if k in self.params and k not in self.point_keys}, **point}

    def run_sample(self, p: dict, point: dict, cond) -> "runner.Sample":
        """Measure one sample of ``point`` under ``cond``: by default one workload process.

        The point may carry its own ``switch_interval`` or ``affinity`` (for experiments that
        sweep them); otherwise the run-wide parameters apply.  A result holding ``rows`` (a
        list of dicts) is stored as one row each, e.g. one per 1-second window of a rate.
        """
        return runner.run(cond, self.workload, self.workload_params(p, point), timeout=p["timeout"],
                          switch_interval=point.get("switch_interval", p["switch_interval"]),
                          affinity=point.get("affinity", p["affinity"]))

    def check(self, p: dict) -> None:
        """Experiment-specific checks across parameters (raise ParameterError)."""

    def applies(self, point: dict, ident) -> str | None:
        """None where ``point`` can be measured under the build ``ident`` (an
        :class:`~gillab.measure.interpreters.Identity`); otherwise why not, and the sweep leaves it out
        (e.g. a check interval on a build with the new GIL)."""
        return None

    @property
    def document_set(self) -> str:
        """The builds.toml set of this experiment's document (doc000 ...): its own era's
        interpreters first, then today's pair."""
        return f"doc{self.document[:3]}" if self.document[:3].isdigit() else ""

    def resolve(self, profile: str = "default", overrides: dict | None = None) -> dict:
        """Profile values and overrides, checked.  ``auto`` among the conditions means the
        document's own builds (its set in builds.toml) plus the free-threaded builds found here."""
        p = resolve(self.name, self.params, profile, overrides)
        tokens = [t.strip() for t in p["conditions"].split(",") if t.strip()]
        if "auto" in tokens and self.document_set in interpreters.sets():
            i = tokens.index("auto")
            tokens[i:i + 1] = [self.document_set, *self.also_conditions, "auto"]
            p["conditions"] = ",".join(tokens)
        if p["max_repeats"] is not None and p["max_repeats"] > p["repeats"] and not self.adaptive_metric:
            raise ParameterError(
                f"{self.name}: max_repeats={p['max_repeats']} asks for adaptive repeats, but {self.name} has no "
                "single statistic to judge its CI by; give repeats only")
        self.check(p)
        return p

    def config(self, p: dict) -> dict:
        return {k: v for k, v in p.items() if k not in NOT_CONFIG}

    def config_id(self, p: dict) -> str:
        blob = json.dumps(self.config(p), sort_keys=True)
        return hashlib.sha1(blob.encode()).hexdigest()[:12]


def point_key(point: dict) -> str:
    return ",".join(f"{k}={point[k]}" for k in sorted(point))
