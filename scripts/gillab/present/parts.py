"""The parts of a chapter another profile measures (document 004's version chart: the ``history``
profile), and which campaign a page reads each from: the chapters' pages
(:meth:`gillab.present.page.Page.profile_part`) and the first screen
(:func:`gillab.present.landing.parts_shown`) choose alike."""
from __future__ import annotations

import pandas as pd

from ..judge import results
from ..measure import campaigns


# the parts of a chapter another profile measures, each read by Page.profile_part: chapter ->
# (profile, what the first screen calls it)
PROFILE_PARTS = {"b2_download": ("history", "the version chart")}


def part_samples(experiment: str, config: str, yours=None) -> tuple[object, pd.DataFrame | None]:
    """Where a part of a chapter another profile measures (document 004's version chart) is read
    from: the reader's campaign ``yours``, else the reference, else the newest contributed campaign
    that holds samples of ``config``; (that campaign, its samples), or (None, None).  The first
    screen names the campaign where it is not the reader's (:func:`gillab.present.landing.parts_shown`)."""
    ref = campaigns.load(campaigns.reference_id()) if campaigns.reference_id() else None
    contributed = [c for c in reversed(campaigns.all_campaigns()) if c.is_contributed]
    for c in (yours, ref, *contributed):
        if c is None:
            continue
        try:
            return c, results.samples(experiment, c.id, config)
        except results.NoData:
            continue
    return None, None
