"""Figures read at the page's width: every chapter's figures, drawn from the reference's samples,
fit the book's column (688 px at a 1280-px window, the theme's) or are shrunk to it, and every
text on them is at least 10 px as shown (issue 78: a legend of 5 px, "10⁰" read as "10⁶")."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from gillab import chapters  # noqa: E402
from gillab.judge import results  # noqa: E402
from gillab.measure import campaigns, experiments  # noqa: E402
from gillab.present import page  # noqa: E402

COLUMN_PX = 688          # the book's text column at a 1280-px window
DPI = 100                # show_figure's
SMALLEST_PX = 10


def shown_px(fig) -> tuple[float, str]:
    """The smallest text of ``fig`` in pixels as the page shows it (an image wider than the
    column is shrunk to it), and that text."""
    width = fig.get_size_inches()[0] * DPI
    scale = min(1.0, COLUMN_PX / width)
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    if not texts:
        return float("inf"), ""
    t = min(texts, key=lambda t: t.get_fontsize())
    return t.get_fontsize() * DPI / 72 * scale, t.get_text()


@pytest.mark.parametrize("name", experiments.names())
def test_every_figure_of_a_chapter_has_text_of_ten_pixels_at_least_as_shown(name):
    an = chapters.of(name)
    try:
        df = results.samples_as_chapter(name, campaigns.reference_id(), results.profile_config(name))
    except results.NoData:
        pytest.skip(f"the reference holds no samples of {name}")
    small = []
    for fn in sorted(a for a in dir(an) if a.endswith("figure") and callable(getattr(an, a))):
        fig = page.as_figure(getattr(an, fn)(df))
        if fig is None:
            continue
        px, text = shown_px(fig)
        if px < SMALLEST_PX:
            small.append(f"{fn}: {text[:30]!r} at {px:.1f} px")
        plt.close(fig)
    assert not small, small
