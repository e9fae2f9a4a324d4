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
