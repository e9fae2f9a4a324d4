"""Data to take away: every figure's CSV holds exactly what it plots, and its alt text says what
it shows; the line under a figure links to the files the book serves."""
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from gillab.present import plots  # noqa: E402
from gillab.present.page import source_line  # noqa: E402


def test_the_csv_of_a_figure_is_what_it_draws():
    fig, (a, b) = plt.subplots(1, 2)
    a.errorbar([1, 2], [10.0, 20.0], yerr=[[1.0, 2.0], [3.0, 4.0]], fmt="o", label="3.13.5")
    a.plot([1, 2], [5.0, 6.0], label="published")
    a.scatter([1.1, 1.9], [9.0, 21.0], label="runs")
    a.set_title("single file")
    a.set_xlabel("threads")
    a.set_ylabel("MB/s")
    b.bar([0, 1], [3, 4], label="holds")
    b.set_xticks([0, 1], ["doc 000", "doc 001"])
    t = plots.tidy(fig)
    plt.close(fig)
    err = t[t["mark"] == "errorbar"]
    assert err[["x", "y", "y_low", "y_high"]].to_numpy().tolist() == [[1, 10, 9, 13], [2, 20, 18, 24]]
    assert set(err["series"]) == {"3.13.5"} and set(err["panel"]) == {"single file"}
    assert t[t["mark"] == "line"][["x", "y"]].to_numpy().tolist() == [[1, 5], [2, 6]]
    assert t[t["mark"] == "points"]["y"].tolist() == [9, 21]
    bars = t[t["mark"] == "bar"]
    assert bars["y"].tolist() == [3, 4] and bars["x_label"].tolist() == ["doc 000", "doc 001"]
    assert (t.loc[t["panel"] == "single file", "y_axis"] == "MB/s").all()


def test_a_point_whose_interval_is_not_a_number_keeps_its_row_without_ends():
    """One run gives no interval: matplotlib draws that point's bar as an empty segment (the file
    I/O chapter of a fresh run with one run of a GIL-on twin); the CSV keeps the point, no ends."""
    fig, ax = plt.subplots()
    ax.errorbar([0, 1], [1.0, 2.0], yerr=[[np.nan, 0.1], [np.nan, 0.2]], fmt="o", label="b")
    t = plots.tidy(fig)
    plt.close(fig)
    err = t[t["mark"] == "errorbar"].sort_values("x")
    assert err["y"].tolist() == [1.0, 2.0]
    assert np.isnan(err["y_low"].iloc[0]) and np.isnan(err["y_high"].iloc[0])
    assert err[["y_low", "y_high"]].iloc[1].tolist() == pytest.approx([1.9, 2.2])


@pytest.mark.parametrize("with_legend", [True, False])
def test_alt_text_names_the_panels_axes_and_series(with_legend):
    fig, ax = plt.subplots()
    ax.plot(np.arange(3), np.arange(3), label="3.13.5t")
    ax.set_title("countdown over threads")
    ax.set_xlabel("threads")
    ax.set_ylabel("seconds")
    if with_legend:
        ax.legend()
    text = plots.describe(fig)
    plt.close(fig)
    assert "countdown over threads" in text and "seconds against threads" in text
    assert ("3.13.5t" in text) == with_legend


def test_alt_text_reads_a_wrapped_label_as_one_line():
    fig, ax = plt.subplots()
    ax.plot(np.arange(3), np.arange(3))
    ax.set_title("policy")
    ax.set_ylabel("one-way time, ms\n(dot: median)")
    text = plots.describe(fig)
    plt.close(fig)
    assert "\n" not in text and "one-way time, ms (dot: median) against categories" in text


def test_the_line_under_a_figure_links_to_the_served_files():
    html = source_line(plots.tidy, ["data/results/c/countdown/samples.csv", "data/results/c/countdown/runs/*.json"],
                       plotted="figures/countdown/figure.csv").data
    assert '<a href="../../files/data/results/c/countdown/samples.csv">' in html
    assert '<a href="../../files/data/results/c/countdown/runs/">' in html   # a pattern links to its folder
    assert '<a href="../../figures/countdown/figure.csv">' in html


def test_the_book_serves_only_the_csvs_its_pages_link_to(tmp_path):
    from gillab.present.book import prune_figures
    from gillab.paths import BOOK_FIGURES

    figures, gen = tmp_path / BOOK_FIGURES, tmp_path / "book" / "generated"
    (figures / "countdown").mkdir(parents=True)
    gen.mkdir(parents=True)
    for name in ("figure-yours.csv", "figure-an-earlier-campaign.csv"):
        (figures / "countdown" / name).write_text("x,y\n1,2\n")
    line = source_line(plots.tidy, ["data/results/c/countdown/samples.csv"],
                       plotted="figures/countdown/figure-yours.csv").data
    (gen / "countdown.ipynb").write_text(json.dumps({"cells": [{"outputs": [{"data": {"text/html": [line]}}]}]}))
    gone = prune_figures(tmp_path)
    assert [p.name for p in gone] == ["figure-an-earlier-campaign.csv"]
    assert [p.name for p in (figures / "countdown").iterdir()] == ["figure-yours.csv"]
    assert prune_figures(tmp_path / "no book here") == []


def test_a_new_build_does_not_keep_what_an_earlier_one_served(tmp_path):
    from gillab.present.book import clear_served

    built = tmp_path / "_build" / "html"
    for part in ("figures/countdown", "files/data", "book/generated"):
        (built / part).mkdir(parents=True)
        (built / part / "x").write_text("1")
    assert sorted(p.name for p in clear_served(tmp_path)) == ["figures", "files"]
    assert sorted(p.name for p in built.iterdir()) == ["book"]   # the pages themselves stay
    assert clear_served(tmp_path) == []


def test_a_figure_drawn_again_from_the_same_samples_is_the_same_image():
    """Strip plots jitter their dots with numpy's global generator: drawn inside
    plots.steady_jitter (as every chapter draws them) the same samples give the same image, and
    the generator is left as it was."""
    from gillab import chapters
    from gillab.judge import verdicts, results
    from gillab.measure import campaigns

    df = results.samples("countdown", campaigns.reference_id(), verdicts.profile_config("countdown"))
    np.random.seed(7)
    before = np.random.get_state()[1].copy()
    images = []
    for _ in range(2):
        with plots.steady_jitter():
            fig = chapters.of("countdown").figure(df)
        images.append(plots.to_png(fig))
        plt.close(fig)
    assert images[0] == images[1]
    assert (np.random.get_state()[1] == before).all()
    unsteady = chapters.of("countdown").figure(df)       # outside it, the dots move (the test can fail)
    assert plots.to_png(unsteady) != images[0]
    plt.close(unsteady)


def test_ccbench_draws_starved_pings_hollow_and_says_so():
    """Where most pings of a point got no answer within the bound (2.7.18 next to regex), their
    times are when the computing thread stopped, not a hand-over: the policy figure draws them
    hollow and its legend says what hollow means; answered points stay filled."""
    from gillab.chapters import ccbench
    from gillab.judge import results, verdicts
    from gillab.measure import campaigns

    df = results.samples("ccbench", campaigns.reference_id(), verdicts.profile_config("ccbench"))
    fig = ccbench.policy_figure(df)
    ax = fig.axes[0]
    lines = [ln for ln in ax.get_lines() if ln.get_marker() == "o" and len(ln.get_xdata())]
    hollow = [ln for ln in lines if ln.get_markerfacecolor() == "none"]
    filled = [ln for ln in lines if ln.get_markerfacecolor() != "none"]
    assert hollow and filled
    assert min(min(ln.get_ydata()) for ln in hollow) > 1000 > max(max(ln.get_ydata()) for ln in filled)
    assert any("starved" in t.get_text() for t in ax.get_legend().get_texts())
    plt.close(fig)


def test_flask_names_the_documents_lines_in_its_legend():
    """The document's counts are drawn as dashed and dotted lines; the legend says which is which
    (the title once spelled the line styles out in characters that a title cannot draw)."""
    from gillab.chapters import flask_k6
    from gillab.judge import results, verdicts
    from gillab.measure import campaigns

    fig = flask_k6.figure(results.samples("flask_k6", campaigns.reference_id(), verdicts.profile_config("flask_k6")))
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "the document's GIL build" in texts and "the document's free-threaded build" in texts
    assert "--" not in fig.axes[0].get_title()
    plt.close(fig)
