"""One colour per build across the book: every figure takes a build's colour from
gillab.present.plots.colour_of, which reads the build's name alone."""
import tomllib

from gillab.paths import repo_root
from gillab.present import plots


def _builds() -> list[str]:
    """Every build builds.toml names (and the GIL twin of each free-threaded one), retired ones too."""
    data = tomllib.loads((repo_root() / "builds.toml").read_text())
    ids = [b["id"] for b in data.get("build", [])] + [b["id"] for b in data.get("retired", [])]
    twins = [f"{b['id']}-gil" for b in data.get("build", []) + data.get("retired", [])
             if (b["id"].endswith("t") or b["id"].startswith("nogil-")) and not b["id"].endswith("-gil")]
    return ids + [t for t in twins if t not in ids]


def test_a_builds_colour_does_not_depend_on_what_stands_beside_it():
    alone = {b: plots.palette([b])[b] for b in _builds()}
    together = plots.palette(_builds() + ["python3.14t", "curl"])
    assert all(together[b] == alone[b] for b in alone)
    # a build no list names (a reader's own) keeps one colour too, from its name
    assert plots.palette(["python3.14t"])["python3.14t"] == plots.palette(["3.13.5", "python3.14t"])["python3.14t"]


def test_every_build_of_the_book_has_a_colour_of_its_own():
    builds = _builds()
    missing = [b for b in builds if b not in plots.MAIN_BUILDS + plots.HISTORY_BUILDS]
    assert not missing, f"builds.toml builds with no place in the palette: {missing}"
    colours = [plots.colour_of(b) for b in builds]
    assert len(set(colours)) == len(colours)


def test_no_figure_picks_build_colours_of_its_own():
    """Every chapter and page module colours builds through plots.palette / colour_of: a palette
    made from the builds a figure happens to show would move a build's colour between chapters."""
    pkg = repo_root() / "scripts" / "gillab"
    offenders = [p.relative_to(pkg).as_posix() for p in [*pkg.glob("chapters/*.py"), *pkg.glob("present/*.py")]
                 if p.name != "plots.py" and "color_palette(" in p.read_text()]
    assert not offenders, offenders


def _lab(rgb) -> tuple:
    """sRGB (0..1) to CIELAB (D65): the space where a distance is how different two colours look."""
    def lin(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = map(lin, rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t):
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_builds_drawn_side_by_side_are_told_apart():
    """The builds a chapter about the GIL draws together (its document's own, today's trio and
    Debian's three) are at least 25 apart in CIELAB, pairwise: 2.7.18's pink and debian-3.14's light
    pink (20.7 apart) were read as one build (issue 78's blind read)."""
    import itertools
    import math

    data = tomllib.loads((repo_root() / "builds.toml").read_text())
    side_by_side = set(data["sets"]["doc001"]) | set(data["sets"]["core"]) | set(data["sets"]["debian"])
    close = [(a, b, round(d, 1)) for a, b in itertools.combinations(sorted(side_by_side), 2)
             if (d := math.dist(_lab(plots.colour_of(a)), _lab(plots.colour_of(b)))) < 25]
    assert not close, close
