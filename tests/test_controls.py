"""Controls stop a reading: a control outside its band voids the rows it guards on that build, a
conclusion that would pool two points of one round (or two placements) is refused, and no
committed campaign measured with today's code has a failed control."""
from __future__ import annotations

import pandas as pd
import pytest

from gillab import chapters
from gillab.judge import claims, verdicts
from gillab.measure import codekey
from gillab.measure.experiments import get
from gillab.paths import results_dir

ROUNDS = 9


def _switch_interval_frame(one_thread_at_1us: float) -> pd.DataFrame:
    """Two threads against one at 5 ms and at 1 us, nine rounds; the one-thread time at 1 us is
    ``one_thread_at_1us`` times the one at 5 ms (1.0: the control holds)."""
    rows = []
    for rep in range(ROUNDS):
        wobble = 1 + 0.002 * (rep % 3)
        for si, one in ((0.005, 1.0), (1e-06, one_thread_at_1us)):
            t1 = one * wobble
            rows += [{"condition": "b", "switch_interval": si, "threads": 1, "seconds": t1, "repeat": rep,
                      "run_id": "r"},
                     {"condition": "b", "switch_interval": si, "threads": 2, "seconds": t1 * 1.2, "repeat": rep,
                      "run_id": "r"}]
    return pd.DataFrame(rows).assign(gil_enabled=True, status="ok")


def _flat(df: pd.DataFrame) -> pd.DataFrame:
    rows = chapters.of("switch_interval").claims(df)
    for r in rows:
        r.update(families={"b": "new GIL"}, cpus_here=2)
    return verdicts.flat(rows).set_index("claim_id")


def test_a_control_broken_on_purpose_voids_the_rows_it_guards_and_no_other():
    broken = _flat(_switch_interval_frame(1.5))       # one thread 50% slower at 1 us: not "the same"
    control = broken.loc["switch_interval/si=1e-06/threads=1"]
    assert control["outcome"] == "higher"
    for cid in ("switch_interval/si=1e-06/threads=2", "switch_interval/conclusion/slowdown/si=1e-06"):
        assert broken.loc[cid, "outcome"] == claims.CONTROL_FAILED, cid
        assert "switch_interval/si=1e-06/threads=1" in broken.loc[cid, "why"]
        assert f"{control['measured']:.3g}" in broken.loc[cid, "why"]
    # the 5 ms rows rest on their own control, which holds
    assert broken.loc["switch_interval/si=0.005/threads=2", "outcome"] != claims.CONTROL_FAILED
    held = _flat(_switch_interval_frame(1.0))
    assert held.loc["switch_interval/si=1e-06/threads=1", "outcome"] == "agrees"
    assert claims.CONTROL_FAILED not in set(held["outcome"])


def _entry(verdict, median=1.0, lo=0.9, hi=1.1):
    return {"verdict": verdict, "median": median, "ci_lo": lo, "ci_hi": hi}


def test_an_inconclusive_control_voids_nothing():
    rows = [{"claim_id": "switch_interval/si=1e-06/threads=1", "measured": {"b": _entry("inconclusive", 1.2, 0.8, 1.6)}},
            {"claim_id": "switch_interval/si=1e-06/threads=2", "measured": {"b": _entry("lower")}}]
    assert claims.void_by_controls(rows) == []
    assert rows[1]["measured"]["b"]["verdict"] == "lower"


def test_a_failed_control_voids_a_pair_that_names_its_build_and_only_the_rows_it_guards():
    rows = [{"claim_id": "convoy/conclusion/interval_irrelevant_alone",
             "measured": {"3.13.5": _entry("lower", 0.45, 0.4, 0.5), "3.13.5t": _entry("agrees")}},
            {"claim_id": "convoy/conclusion/saturation",
             "measured": {"3.13.5 vs 3.13.5t": _entry("agrees"), "3.13.5t": _entry("agrees")}},
            {"claim_id": "convoy/conclusion/collapse", "measured": {"3.13.5": _entry("agrees")}}]
    assert claims.void_by_controls(rows) == [("convoy/conclusion/saturation", "3.13.5 vs 3.13.5t")]
    assert rows[1]["measured"]["3.13.5 vs 3.13.5t"]["why_void"] == (
        "the control convoy/conclusion/interval_irrelevant_alone read 0.45 [0.4, 0.5] on 3.13.5: lower than its "
        "band allows")
    assert rows[1]["measured"]["3.13.5t"]["verdict"] == "agrees"      # the control held on that build
    assert rows[2]["measured"]["3.13.5"]["verdict"] == "agrees"       # not a row the control guards


def _noisy_frame(spread: float) -> pd.DataFrame:
    """The frame of :func:`_switch_interval_frame` (the control holds on average) with a round in
    three whose runs at 1 us are slower by ``spread``, and another whose runs at 5 ms are: identical
    work, on a machine whose pace moves from run to run."""
    df = _switch_interval_frame(1.0)
    slow = (((df["switch_interval"] == 1e-06) & (df["repeat"] % 3 == 1))
            | ((df["switch_interval"] == 0.005) & (df["repeat"] % 3 == 2)))
    df.loc[slow, "seconds"] *= 1 + spread
    return df


def test_a_control_wider_than_its_band_explains_the_open_rows_it_guards_and_voids_none():
    noisy = _flat(_noisy_frame(0.4))
    control = noisy.loc["switch_interval/si=1e-06/threads=1"]
    assert control["outcome"] == "inconclusive"
    assert control["ci_high"] - control["ci_low"] > 2 * control["band"]     # wider than its whole band
    assert control["why"].startswith(claims.MACHINE_PACE)
    assert "±10%" in control["why"] and "the control" not in control["why"]    # its own interval is beside it
    assert claims.CONTROL_FAILED not in set(noisy["outcome"])
    for cid, r in noisy.iterrows():
        guarded = claims.guards("switch_interval/si=1e-06/threads=1", cid)
        if r["outcome"] == "inconclusive" and guarded:
            assert r["why"].startswith(claims.MACHINE_PACE), cid
        elif not (r["outcome"] == "inconclusive" and cid == control.name):
            assert not str(r["why"]).startswith(claims.MACHINE_PACE), cid     # decided rows, other intervals
    # a spread inside the band: the same control explains nothing
    calm = _flat(_noisy_frame(0.05))
    assert not calm["why"].fillna("").str.startswith(claims.MACHINE_PACE).any()


def test_a_control_with_too_few_runs_or_without_a_band_is_never_too_wide():
    wide = {"verdict": "inconclusive", "median": 1.0, "ci_lo": 0.7, "ci_hi": 1.3, "why_inconclusive": ""}
    assert claims.too_wide("switch_interval/si=1e-06/threads=1", wide)
    few = wide | {"why_inconclusive": "n too small: 3 runs; a 95% interval needs 6"}
    assert not claims.too_wide("switch_interval/si=1e-06/threads=1", few)
    assert not claims.too_wide("switch_interval/si=1e-06/threads=1", wide | {"ci_lo": 0.92, "ci_hi": 1.08})
    assert not claims.too_wide("stall/stall-ctrl-c", wide)              # a bound, no band


def test_the_runs_controls_say_held_wider_or_failed():
    from gillab.judge import steadiness

    assert steadiness.controls_of(_flat(_switch_interval_frame(1.0)).reset_index()).outcome == steadiness.HELD
    noisy = steadiness.controls_of(_flat(_noisy_frame(0.4)).reset_index())
    assert noisy.outcome == steadiness.WIDE and not noisy.held
    assert noisy.wide == [w for w in noisy.wide if w.startswith("switch_interval/si=1e-06/threads=1 on b [")]
    assert len(noisy.wide) == 1 and "1 wider than their band" in noisy.why
    broken = steadiness.controls_of(_flat(_switch_interval_frame(1.5)).reset_index())
    assert broken.outcome == steadiness.FAILED and broken.failed and "1 outside their band" in broken.why
    assert steadiness.controls_of(None).outcome == steadiness.NOT_RECORDED


def _convoy_round_frame() -> pd.DataFrame:
    """The convoy's alone point at 5 ms measured twice in each round, pinned and where the OS put
    the threads, beside the alone point at 1 us (unpinned only): pinned runs at half the rate."""
    rows = []
    for rep in range(ROUNDS):
        for si, placement, rps in ((0.005, "os", 20_000.0), (0.005, "pinned", 10_000.0), (1e-06, "os", 20_000.0)):
            point = f"cpu_processes=0,cpu_threads=0,{'placement=pinned,' if placement == 'pinned' else ''}" \
                    f"switch_interval={si}"
            rows.append({"condition": "b", "run_id": "r", "repeat": rep, "point": point, "switch_interval": si,
                         "cpu_threads": 0, "cpu_processes": 0, "placement": placement, "window": 0,
                         "rps": rps * (1 + 0.001 * rep), "status": "ok", "gil_enabled": True})
    return pd.DataFrame(rows)


def test_a_conclusion_that_would_pool_two_points_of_a_round_is_refused():
    df = _convoy_round_frame()
    def values(g):
        return g.groupby(["run_id", "repeat"])["rps"].median()

    with pytest.raises(ValueError, match=r"claims.csv, convoy/conclusion/\w+: the selector .* pools samples of two "
                                         r"placements \(os, pinned\)"):
        claims.conclusions("convoy", df, values)
    assert "2 points of one round" in claims.pooling(df.drop(columns="placement")[df["switch_interval"] == 0.005])


def test_the_convoys_conclusions_read_the_unpinned_runs_only():
    rows = {r["claim_id"]: r for r in chapters.of("convoy").claims(_convoy_round_frame())}
    m = rows["convoy/conclusion/interval_irrelevant_alone"]["measured"]["b"]
    assert m["median"] == pytest.approx(1.0, abs=1e-9)     # pooled with the pinned runs it read 0.75-1.33
    assert m["verdict"] == "agrees"


def _today(experiment: str, campaign) -> bool:
    """Whether ``campaign`` measured ``experiment`` with this checkout's code."""
    path = results_dir() / campaign / experiment / "samples.csv"
    if not path.is_file():
        return False
    keys = pd.read_csv(path, usecols=["code_key"], dtype=str)["code_key"].dropna().unique()
    now = codekey.code_key(get(experiment))
    return any(codekey.same_code(experiment, k, now) for k in keys)


GUARDED = sorted({c.split("/", 1)[0] for c in claims.table().query("role == 'control'")["claim_id"]})


@pytest.mark.parametrize("experiment", GUARDED)
def test_no_committed_campaign_measured_with_todays_code_has_a_failed_control(experiment):
    held = [p.name for p in sorted(results_dir().iterdir()) if p.is_dir() and _today(experiment, p.name)]
    failed = []
    for campaign in held:
        f = verdicts.flat(verdicts.verdicts(campaign, [experiment], profile=None))
        bad = f[(f["role"] == "control") & f["outcome"].isin(["higher", "lower"])]
        failed += [f"{campaign}: {r.claim_id} on {r.build} read {r.measured:.3g} ({r.outcome})"
                   for r in bad.itertuples()]
    assert not failed, "a control failed; its rows are void until the cause is found:\n" + "\n".join(failed)


def test_the_method_chapter_counts_each_campaigns_controls_and_names_the_wide_ones():
    from gillab.present import sittings

    from gillab.judge import steadiness

    def read(df):
        return steadiness.controls_of(_flat(df).reset_index())

    md = sittings.controls_table({"calm": read(_switch_interval_frame(1.0)), "noisy": read(_noisy_frame(0.4))})
    line = {ln.split(" | ")[0].strip("| `"): ln for ln in md.splitlines() if ln.startswith("| `")}
    assert set(line) == {"calm", "noisy"}
    assert line["calm"].endswith(" | 0 | 0 |") and line["noisy"].endswith(" | 1 | 0 |")
    assert "- switch_interval/si=1e-06/threads=1 on b [" in md and "noisy: the controls wider" in md
    assert "calm: the controls" not in md
    from gillab.paths import repo_root

    assert "{include} generated/controls.md" in (repo_root() / "book" / "method.md").read_text()
