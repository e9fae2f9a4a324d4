"""Explorers that work in the static book *and* live in Jupyter.

Static (no kernel): every figure of the parameter grid is drawn in advance and shown in a
``widgets.Stack``; the controls are tied to the stacks' ``selected_index`` with
``widgets.jslink``, which runs in the browser, so moving a slider in the rendered page really
changes the figure.  Two parameters nest two levels of stacks.

The live explorer (a kernel) is :mod:`gillab.present.live`.
"""
from __future__ import annotations

from typing import Callable, Sequence

import ipywidgets as W

from .plots import to_png


def _image(fig) -> W.Image:
    return W.Image(value=to_png(fig), format="png", layout=W.Layout(max_width="100%", height="auto"))


def stack_explorer(
    draw: Callable[[object, object], object],
    outer: tuple[str, Sequence, Sequence[str]],
    inner: tuple[str, Sequence, Sequence[str]],
    title: str = "",
) -> W.VBox:
    """A kernel-free explorer over two parameters.

    ``outer`` and ``inner`` are ``(description, values, labels)``; the outer one is a dropdown,
    the inner one a selection slider.  ``draw(outer_value, inner_value)`` returns a matplotlib
    figure (not laid out: the explorer lays out the first and gives the others its margins),
    rendered once per combination.
    """
    o_desc, o_vals, o_labels = outer
    i_desc, i_vals, i_labels = inner
    slider = W.SelectionSlider(options=list(i_labels), value=i_labels[0], description=i_desc,
                               continuous_update=True, layout=W.Layout(width="420px"),
                               style={"description_width": "initial"})
    dropdown = W.Dropdown(options=list(o_labels), value=o_labels[0], description=o_desc,
                          style={"description_width": "initial"})
    layout = {}

    def drawn(ov, iv):
        # Every figure of an explorer has one size and one arrangement: the first is laid out
        # (tight_layout), the others take its margins, which saves a full draw of each.
        fig = draw(ov, iv)
        if not layout:
            fig.tight_layout()
            sp = fig.subplotpars
            layout.update(left=sp.left, right=sp.right, top=sp.top, bottom=sp.bottom, wspace=sp.wspace,
                          hspace=sp.hspace)
        else:
            fig.subplots_adjust(**layout)
        return fig

    inner_stacks = []
    for ov in o_vals:
        stack = W.Stack([_image(drawn(ov, iv)) for iv in i_vals], selected_index=0)
        W.jslink((slider, "index"), (stack, "selected_index"))
        inner_stacks.append(stack)
    outer_stack = W.Stack(inner_stacks, selected_index=0)
    W.jslink((dropdown, "index"), (outer_stack, "selected_index"))
    header = [W.HTML(f"<b>{title}</b>")] if title else []
    box = W.VBox(header + [W.HBox([dropdown, slider]), outer_stack])
    box.add_class("gillab-explorer")
    return box
