"""The live explorer: one for every chapter, driven by a kernel (``make live``).

It re-plots the chapter's main figure from stored samples as its controls move: any campaign
that holds the experiment (the reference's and the reader's), any configuration measured there,
any subset of its builds.  And it measures one small sweep on request ("measure now": the
``smoke`` profile with the values typed in, the builds chosen, a few repeats) through the same
code as ``gillab measure``, into the reader's campaign, with a progress bar; the new samples
are then what the figure shows.  Every value is checked before anything is measured, and a bad
one is shown in the page (in red), not raised into the notebook.

The measurement runs inside the button's callback: the kernel is busy for exactly as long as it
measures (seconds, at smoke sizes), and the bar's updates reach the page while it runs.
"""
from __future__ import annotations

import ast
import html
import time
from dataclasses import dataclass

import ipywidgets as W
import pandas as pd

from ..measure import campaigns, interpreters, sweep
from ..measure import experiments
from . import plots
from .. import chapters
from ..judge import results
from ..measure.protocol import NOT_CONFIG
from ..measure.profiles import profile_values

PROFILE = "smoke"          # what "measure now" measures: seconds, not minutes
ALWAYS = ("switch_interval",)   # offered for every experiment (the GIL's own knob)


@dataclass(frozen=True)
class Dataset:
    """The samples of one configuration in one campaign."""
    campaign: str
    config: str
    profile: str
    n: int
    reference: bool

    @property
    def key(self) -> str:
        return f"{self.campaign}/{self.config}"

    @property
    def label(self) -> str:
        whose = "reference" if self.reference else "yours"
        return f"{whose} · {self.campaign} · {self.profile} · config {self.config} · {self.n} samples"


def datasets(name: str) -> list[Dataset]:
    """Every (campaign, configuration) holding successful samples of ``name``: the reader's
    campaigns first (newest first), then the reference campaign."""
    found = []
    for c in campaigns.all_campaigns():
        if not c.has(name):
            continue
        df = c.store(name).frame()
        if df.empty or "status" not in df.columns:
            continue
        ok = df[df["status"] == "ok"]
        for cfg, g in ok.groupby("config", sort=False):
            profile = g["profile"].mode().iloc[0] if "profile" in g.columns else "?"
            found.append(Dataset(c.id, str(cfg), str(profile), len(g), c.is_reference))
    yours = [d for d in found if not d.reference][::-1]
    return yours + [d for d in found if d.reference]


def _text(value) -> str:
    """A profile value as the reader types it: lists as ``1, 2``; None as empty."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def parse_text(text: str):
    """What a text box holds: empty means "the profile's value" (None); a Python literal
    (``0.001``, ``[1, 2]``, ``1, 2``, ``False``) is that value; anything else is the string,
    which the parameter's own parser then checks."""
    text = text.strip()
    if not text:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return list(value) if isinstance(value, tuple) else value


def measure_params(name: str) -> dict[str, object]:
    """The parameters "measure now" offers, with the smoke profile's values: those the profile
    sets (not how long or how often to measure), and the switch interval."""
    exp = experiments.get(name)
    values = profile_values(name, PROFILE)
    out = {k: v for k, v in values.items() if k not in NOT_CONFIG and k in exp.params}
    for k in ALWAYS:
        out.setdefault(k, values.get(k))
    return out


def check(name: str, builds: str, texts: dict[str, str]) -> dict:
    """The overrides a "measure now" would use, checked as ``gillab measure`` checks them (the
    parameters, then the builds: known and available here).  Raises with the reason."""
    overrides = {k: v for k, v in ((k, parse_text(t)) for k, t in texts.items()) if v is not None}
    builds = builds.strip()
    if not builds:
        raise ValueError("choose at least one build to measure (e.g. 3.13.5, 3.13.5t)")
    overrides["conditions"] = builds
    sweep.plan(name, PROFILE, overrides)   # every check of a measurement, nothing written
    return overrides


def _message(text: str, error: bool = False) -> str:
    style = "color:#b00020;font-weight:bold" if error else "color:#1b5e20"
    return f"<span style='{style}'>{html.escape(text)}</span>"


class LiveExplorer:
    """The widgets and what they do; ``box`` is what a notebook displays."""

    def __init__(self, name: str, campaign: str | None = None, config: str | None = None):
        self.name = name
        self.exp = experiments.get(name)
        self.analysis = chapters.of(name)
        plots.setup()
        self.sets = datasets(name)
        keys = [d.key for d in self.sets]
        start = f"{campaign}/{config}" if campaign and config else None
        first = start if start in keys else (keys[0] if keys else None)
        self.data = W.Dropdown(options=[(d.label, d.key) for d in self.sets], value=first,
                               description="data", layout=W.Layout(width="95%"))
        self.builds = W.SelectMultiple(description="builds", rows=6, layout=W.Layout(width="300px"))
        self.image = W.Image(format="png", layout=W.Layout(max_width="100%", height="auto"))
        self.figure_note = W.HTML()
        self.frame: pd.DataFrame | None = None

        known = {c.id for c in interpreters.discover()}
        self.params = {k: W.Text(value=_text(v), description=k, continuous_update=False,
                                 style={"description_width": "initial"}, layout=W.Layout(width="300px"))
                       for k, v in measure_params(name).items()}
        self.measure_builds = W.Text(description="builds to measure", style={"description_width": "initial"},
                                     layout=W.Layout(width="420px"))
        self.button = W.Button(description="measure now", button_style="primary", icon="play")
        self.progress = W.IntProgress(value=0, min=0, max=1, description="", layout=W.Layout(width="300px"))
        self.progress_text = W.Label()
        self.status = W.HTML()
        self._known = known

        self.data.observe(self._on_data, names="value")
        self._quiet = False
        self.builds.observe(lambda _: self._quiet or self.redraw(), names="value")
        self.button.on_click(lambda _: self.measure())
        self._on_data()

        head = W.HTML(f"<b>Live explorer: {html.escape(self.exp.title)}</b> — re-plots from stored samples as "
                      "the controls move; <i>measure now</i> measures a small sweep (the smoke profile with the "
                      "values below) into your campaign.")
        wrap = W.Layout(display="flex", flex_flow="row wrap")
        measure = W.VBox([
            W.HTML(f"<b>Measure now</b> (profile <code>{PROFILE}</code>; an empty box keeps the profile's value)"),
            W.Box(list(self.params.values()) + [self.measure_builds], layout=wrap),
            W.HBox([self.button, self.progress, self.progress_text]),
            self.status,
        ])
        self.box = W.VBox([head, W.HBox([self.data]), W.HBox([self.builds, self.image]), self.figure_note,
                           measure])
        self.box.add_class("gillab-live")

    # -- reading -----------------------------------------------------------------------------
    def _dataset(self) -> Dataset | None:
        return next((d for d in self.sets if d.key == self.data.value), None)

    def _on_data(self, *_):
        d = self._dataset()
        if d is None:
            self.frame = None
            self.builds.options = ()
            self.figure_note.value = _message(
                f"No stored samples of {self.name} in any campaign: measure some below or with "
                f"`gillab measure {self.name}`.", error=True)
            self.image.value = b""
            return
        self.frame = results.samples(self.name, d.campaign, d.config)
        conds = interpreters.display_order(self.frame["condition"].unique())
        self._quiet = True          # one redraw for the new data, not one per trait change
        try:
            self.builds.options = conds
            self.builds.value = tuple(conds)
        finally:
            self._quiet = False
        if not self.measure_builds.value:
            here = [c for c in conds if c in self._known]
            self.measure_builds.value = ", ".join(here[:2] or interpreters.today_pair())
        self.redraw()

    def redraw(self) -> None:
        if self.frame is None:
            return
        chosen = list(self.builds.value) or list(self.builds.options)
        df = self.frame[self.frame["condition"].isin(chosen)]
        try:
            fig = self.analysis.figure(df)
        except Exception as exc:   # a subset the figure cannot draw: said, and the last figure kept
            self.figure_note.value = _message(f"cannot draw this selection: {type(exc).__name__}: {exc}", True)
            return
        self.image.value = plots.to_png(fig)
        d = self._dataset()
        self.figure_note.value = (f"<small>{len(df)} samples of {', '.join(chosen)} from campaign "
                                  f"<code>{d.campaign}</code>, configuration <code>{d.config}</code> "
                                  f"(profile {d.profile}).</small>")

    # -- measuring ---------------------------------------------------------------------------
    def _report(self, done: int, total: int, what: str) -> None:
        self.progress.max = max(total, 1)
        self.progress.value = done
        self.progress_text.value = f"{done}/{total} samples" + (f" · {what}" if what else "")

    def measure(self) -> bool:
        """Check, then measure, then show the new samples.  False (and a red message) when a
        value is refused; nothing is measured then."""
        try:
            overrides = check(self.name, self.measure_builds.value, {k: w.value for k, w in self.params.items()})
        except Exception as exc:
            self.status.value = _message(f"not measured: {exc}", error=True)
            return False
        self.button.disabled = True
        self.status.value = _message("measuring ...")
        t0 = time.perf_counter()
        try:
            res = sweep.measure(self.name, PROFILE, overrides, progress=self._report)
        except Exception as exc:
            self.status.value = _message(f"failed: {type(exc).__name__}: {exc}", error=True)
            return False
        finally:
            self.button.disabled = False
        took = time.perf_counter() - t0
        self.sets = datasets(self.name)
        key = f"{res.campaign}/{res.config_id}"
        self.data.options = [(d.label, d.key) for d in self.sets]
        if self.data.value == key:
            self._on_data()
        else:
            self.data.value = key        # redraws through the observer
        failed = f", {res.failed} failed" if res.failed else ""
        self.status.value = _message(
            f"measured {res.measured} samples ({res.skipped} already stored{failed}) in {took:.1f} s into your "
            f"campaign {res.campaign}, configuration {res.config_id}; the figure now shows them.",
            error=bool(res.failed))
        return True


def explorer(name: str, campaign: str | None = None, config: str | None = None) -> W.VBox:
    """``name``'s live explorer, opening on ``campaign``/``config`` where given."""
    return LiveExplorer(name, campaign, config).box


def picker(name: str = "countdown") -> W.VBox:
    """Every chapter's live explorer behind one dropdown (the "Explore live" notebook)."""
    choose = W.Dropdown(options=[(f"{experiments.get(n).title} ({n})", n) for n in experiments.names()],
                        value=name, description="chapter", layout=W.Layout(width="60%"))
    holder = W.VBox([explorer(name)])

    def swap(change):
        holder.children = [W.HTML("<i>loading ...</i>")]
        holder.children = [explorer(change["new"])]

    choose.observe(swap, names="value")
    return W.VBox([choose, holder])


# -- JupyterLab ------------------------------------------------------------------------------
LIVE_NOTEBOOK = "notebooks/explore_live.ipynb"


def check_port(port: int) -> None:
    """Refuse a port that is not a valid TCP port or is already held on 127.0.0.1."""
    import socket

    from ..measure.profiles import ParameterError

    if not 1 <= port <= 65535:
        raise ParameterError(f"port {port} is not a TCP port (1-65535)")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError as exc:
            raise ParameterError(f"port {port} on 127.0.0.1 is in use ({exc.strerror}); choose another with "
                                 "--port (make live PORT=...)") from None


def lab_command(port: int, token: str, root) -> list[str]:
    """JupyterLab on 127.0.0.1:``port`` with ``token``, serving ``root``; no browser opened,
    no announcements or update checks fetched (nothing leaves the machine)."""
    import os
    import sys
    from pathlib import Path

    args = [str(Path(sys.executable).with_name("jupyter")), "lab", "--ip=127.0.0.1", f"--port={port}",
            "--port-retries=0", "--no-browser", f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}", "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--allow-root")
    return args


def lab_url(port: int, token: str, notebook: str = LIVE_NOTEBOOK) -> str:
    return f"http://127.0.0.1:{port}/lab/tree/{notebook}?token={token}"
