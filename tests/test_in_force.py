"""A setting asked for is judged only where it was in force: the countdown counts the GIL's own
hand-offs and the timer slack each thread had, a switch-interval row whose interval the machine
did not apply (too few hand-offs, too few intervals in a run) reads "not in force here" with what
it achieved, and a convoy row whose windows counted a handful of requests does too."""
from __future__ import annotations

import pandas as pd
import pytest

from gillab import chapters
from gillab.judge import claims
from gillab.measure import runner
from gillab.measure.experiments import get
from gillab.measure.experiments.convoy import window
from gillab.measure.experiments.switch_interval import decrements

ROUNDS = 9


def test_the_countdown_counts_the_gils_hand_offs_and_the_slack_each_thread_had(builds):
    two = runner.run(builds["3.13.5"], "countdown", {"threads": 2, "total_decrements": 2_000_000,
                                                    "timer_slack_ns": 1}, switch_interval=0.001, timeout=60)
    r = two.result
    assert r["timer_slack_ns_min"] == r["timer_slack_ns_max"] == 1
    assert two.runtime["switch_interval"] == pytest.approx(0.001)     # the probe put the interval back
    # two threads hand the GIL over at most about once an interval (the wake-up adds to it), plus
    # their start and end; how often they do is the scheduler's (a busy machine leaves a waiting
    # thread off the CPU), but the second thread took the GIL at least once
    assert 0 < r["gil_switches"] <= 1.5 * r["seconds"] / 0.001 + 20
    one = runner.run(builds["3.13.5"], "countdown", {"threads": 1, "total_decrements": 2_000_000},
                     switch_interval=0.001, timeout=60)
    assert one.result["timer_slack_ns_min"] > 1          # not set: the OS's own
    assert one.result["gil_switches"] < 20               # the main thread and the one worker, no contention


def test_a_free_threaded_build_hands_nothing_over(builds):
    r = runner.run(builds["3.13.5t"], "countdown", {"threads": 2, "total_decrements": 2_000_000},
                   switch_interval=0.001, timeout=60).result
    assert r["gil_switches"] in (None, 0)


def _frame(points: dict) -> pd.DataFrame:
    """Switch-interval samples: ``points`` maps (interval, threads) to (seconds, hand-offs a
    second); nine rounds, the smallest slack."""
    rows = []
    for rep in range(ROUNDS):
        for (si, k), (sec, rate) in points.items():
            t = sec * (1 + 0.002 * (rep % 3))
            rows.append({"condition": "b", "switch_interval": si, "threads": k, "seconds": t, "repeat": rep,
                         "run_id": "r", "timer_slack_ns": 1, "timer_slack_ns_min": 1, "timer_slack_ns_max": 1,
                         "gil_switches": round(rate * t), "ctx_voluntary": 10, "ctx_involuntary": 1})
    return pd.DataFrame(rows).assign(gil_enabled=True, status="ok")


def _rows(df):
    rows = {r["claim_id"]: r for r in chapters.of("switch_interval").claims(df)}
    return {cid: r["measured"].get("b") for cid, r in rows.items()}


def test_an_interval_the_threads_did_not_apply_reads_not_in_force_with_what_they_achieved():
    df = _frame({(0.001, 1): (0.2, 0), (0.001, 2): (0.2, 700),        # 700 of 1,000 a second: in force
                 (1e-06, 1): (0.2, 0), (1e-06, 2): (0.3, 20_000),     # 20,000 of 1,000,000: not
                 (0.005, 1): (0.2, 0), (0.005, 2): (0.2, 190)})       # 40 intervals a run: not
    got = _rows(df)
    assert got["switch_interval/si=0.001/threads=2"]["verdict"] in ("agrees", "higher", "lower")
    small = got["switch_interval/si=1e-06/threads=2"]
    assert small["verdict"] == claims.NOT_IN_FORCE
    assert "20,000 times a second" in small["why_void"] and "an interval of 5e-05 s" in small["why_void"]
    short = got["switch_interval/si=0.005/threads=2"]
    assert short["verdict"] == claims.NOT_IN_FORCE and "a run held 40.1 intervals" in short["why_void"]
    # the conclusions read the same points: the slowdown at 1 us is not judged either
    assert got["switch_interval/conclusion/slowdown/si=1e-06"]["verdict"] == claims.NOT_IN_FORCE
    # the control (one thread) needs no hand-offs: it is judged
    assert got["switch_interval/si=1e-06/threads=1"]["verdict"] == "agrees"


def test_the_same_rows_are_judged_where_the_interval_was_in_force():
    df = _frame({(1e-06, 1): (0.2, 0), (1e-06, 2): (0.3, 400_000),
                 (0.005, 1): (0.4, 0), (0.005, 2): (0.4, 190)})
    got = _rows(df)
    assert got["switch_interval/si=1e-06/threads=2"]["verdict"] != claims.NOT_IN_FORCE
    assert got["switch_interval/si=0.005/threads=2"]["verdict"] != claims.NOT_IN_FORCE


def test_the_os_slack_points_are_a_finding_and_never_a_row():
    df = _frame({(0.0001, 1): (0.2, 0), (0.0001, 2): (0.2, 6000)})
    os_own = _frame({(0.0001, 1): (0.2, 0), (0.0001, 2): (0.25, 3000)}).assign(timer_slack_ns=0,
                                                                                timer_slack_ns_min=50_000)
    both = pd.concat([df, os_own], ignore_index=True)
    ch = chapters.of("switch_interval")
    assert _rows(both)["switch_interval/si=0.0001/threads=2"]["median"] == pytest.approx(1.0)
    t = ch.slack_table(both)
    assert t.iloc[0]["hand-offs a second, OS's own slack"].startswith("3,0")
    assert t.iloc[0]["hand-offs a second, smallest slack"].startswith("6,0")


def test_a_point_grows_to_hold_its_intervals_up_to_the_profiles_bound():
    p = get("switch_interval").resolve("default")
    assert decrements(p, 0.01) * 1.0 / 40e6 >= 0.01 * 50          # 50 intervals on a fast machine
    assert decrements(p, 0.1) == p["max_decrements"]              # bounded: its rows say so
    assert decrements(p, 1e-6) == p["total_decrements"]
    # every grown point shares one size: the one-thread runs compared are of one length
    assert decrements(p, 0.005) == decrements(p, 0.01) == decrements(p, 0.1)
    c = get("convoy").resolve("default")
    assert window(c, {"switch_interval": 0.005, "cpu_threads": 2}) == pytest.approx(1.0)   # 50 x 2 x 2 x 5 ms
    assert window(c, {"switch_interval": 0.1, "cpu_threads": 1}) == c["max_window_s"]
    assert window(c, {"switch_interval": 0.005, "cpu_threads": 0}) == c["window_s"]


def _convoy(requests: dict) -> pd.DataFrame:
    """Convoy windows: ``requests`` maps (interval, CPU threads) to the requests a 0.5-s window
    counted; nine rounds, where the OS put the threads."""
    rows = []
    for rep in range(ROUNDS):
        for (si, n), c in requests.items():
            rows.append({"condition": "b", "run_id": "r", "repeat": rep, "switch_interval": si, "cpu_threads": n,
                         "cpu_processes": 0, "placement": "os", "window": 0, "requests": c, "rps": c / 0.5,
                         "status": "ok", "gil_enabled": True,
                         "point": f"cpu_processes=0,cpu_threads={n},switch_interval={si}"})
    return pd.DataFrame(rows)


def test_a_rate_counted_over_a_handful_of_requests_reads_not_in_force():
    df = _convoy({(0.1, 0): 9000, (0.1, 1): 3, (0.005, 0): 9000, (0.005, 1): 60})
    rows = {r["claim_id"]: r["measured"].get("b") for r in chapters.of("convoy").claims(df)}
    few = rows["convoy/si=0.1/cpu_threads=1"]
    assert few["verdict"] == claims.NOT_IN_FORCE and "a window counted 3 requests" in few["why_void"]
    assert rows["convoy/si=0.005/cpu_threads=1"]["verdict"] != claims.NOT_IN_FORCE
    assert rows["convoy/si=0.1/cpu_threads=0"]["verdict"] != claims.NOT_IN_FORCE


def test_a_flask_endpoint_that_answered_nothing_is_not_read_as_a_ratio():
    """The document's /io answered no request with 200 on the fresh run of this change (k6 counted
    every one failed): a ratio of failures is no reading of the document's app; /io_fixed is read."""
    from gillab.judge import results

    df = results.samples("flask_k6", "amd-epyc-2c-20261129T055408Z")
    assert float(df[df["endpoint"] == "io"]["ok_in_window"].max()) == 0          # the premise, as measured
    rows = {r["claim_id"]: r["measured"] for r in chapters.of("flask_k6").claims(df)}
    io = rows["flask_k6/flask_app_io_bound"]
    assert io["3.13.5 vs 3.13.5t"]["verdict"] == claims.NOT_IN_FORCE
    assert "no request answered 200" in io["3.13.5 vs 3.13.5t"]["why_void"]
    assert io["3.13.5 vs 3.13.5t (io_fixed)"]["verdict"] != claims.NOT_IN_FORCE
    assert rows["flask_k6/flask_app_cpu_bound"]["3.13.5 vs 3.13.5t"]["verdict"] != claims.NOT_IN_FORCE


# -- the convoy and the data race: the slack their threads waited with ---------------------------

def test_the_echo_server_counts_hand_offs_over_its_connection_and_the_slack_of_every_thread(builds):
    from gillab.measure.experiments.echo import echo_sample

    p = {"warmup_s": 0.1, "windows": 1, "window_s": 0.4}
    r = echo_sample(p, builds["3.13.5"], cpu_threads=1, cpu_processes=0, switch=0.001, timer_slack_ns=1).result
    assert r["timer_slack_ns_min"] == r["timer_slack_ns_max"] == 1 and r["timer_slack_ns_asked"] == 1
    # the handler and the CPU thread changed hands: no more often than a forced switch each interval
    # and two voluntary ones a request (the handler gives the GIL up for each recv and send) allow
    assert r["requests_served"] > 0
    assert 0 < r["gil_switches"] <= r["connection_s"] / 0.001 + 2 * r["requests_served"] + 2
    own = echo_sample(p, builds["3.13.5"], cpu_threads=1, cpu_processes=0, switch=0.001).result
    assert own["timer_slack_ns_min"] > 1 and own["timer_slack_ns_asked"] is None      # the OS's own


def test_the_racing_threads_wait_with_the_slack_asked_and_count_their_hand_offs(builds):
    gil = runner.run(builds["3.13.5"], "data_race", {"threads": 4, "iterations": 1000, "timer_slack_ns": 1},
                     switch_interval=1e-06, timeout=60).result
    assert gil["timer_slack_ns_min"] == gil["timer_slack_ns_max"] == 1
    assert gil["gil_switches"] >= 3            # four threads took the GIL in turn at the least
    free = runner.run(builds["3.13.5t"], "data_race", {"threads": 4, "iterations": 1000},
                      switch_interval=1e-06, timeout=60).result
    assert free["gil_switches"] in (None, 0) and free["timer_slack_ns_min"] > 1


def _with_slack(df: pd.DataFrame, ns) -> pd.DataFrame:
    return df.assign(timer_slack_ns_min=ns, timer_slack_ns_max=ns)


def test_a_convoy_interval_shorter_than_its_threads_slack_reads_not_in_force():
    points = {(1e-05, 0): 9000, (1e-05, 1): 4000, (1e-06, 0): 9000, (1e-06, 1): 4000, (0.005, 0): 9000,
              (0.005, 1): 60}

    def rows(df):
        return {r["claim_id"]: r["measured"].get("b") for r in chapters.of("convoy").claims(df)}

    os_own = rows(_with_slack(_convoy(points), 50_000))
    ten = os_own["convoy/si=1e-05/cpu_threads=1"]
    assert ten["verdict"] == claims.NOT_IN_FORCE and "a timer slack of 50 us" in ten["why_void"]
    assert os_own["convoy/conclusion/saturation"]["verdict"] == claims.NOT_IN_FORCE
    # 5 ms is longer than any slack, and the server alone contends with nobody: both judged
    assert os_own["convoy/si=0.005/cpu_threads=1"]["verdict"] != claims.NOT_IN_FORCE
    assert os_own["convoy/conclusion/interval_irrelevant_alone"]["verdict"] != claims.NOT_IN_FORCE
    unrecorded = rows(_convoy(points))["convoy/si=1e-06/cpu_threads=1"]
    assert unrecorded["verdict"] == claims.NOT_IN_FORCE and "no timer slack recorded" in unrecorded["why_void"]
    smallest = rows(_with_slack(_convoy(points), 1))
    assert smallest["convoy/si=1e-05/cpu_threads=1"]["verdict"] != claims.NOT_IN_FORCE
    assert smallest["convoy/conclusion/saturation"]["verdict"] != claims.NOT_IN_FORCE
    # without a GIL there is no wait to stretch
    free = rows(_with_slack(_convoy(points), 50_000).assign(gil_enabled=False))
    assert free["convoy/si=1e-05/cpu_threads=1"]["verdict"] != claims.NOT_IN_FORCE


def _race(lost: list[int], gil: bool, slack) -> pd.DataFrame:
    return pd.DataFrame([{"condition": "b", "run_id": "r", "repeat": i, "threads": 2, "iterations": 1000,
                          "switch_interval": 1e-06, "switch_interval_runtime": 1e-06, "lost": n, "expected": 2000,
                          "lost_fraction": n / 2000, "status": "ok", "gil_enabled": gil, "timer_slack_ns_min": slack,
                          "timer_slack_ns_max": slack, "gil_switches": 40 if gil else 0}
                         for i, n in enumerate(lost)])


def test_the_race_on_a_gil_build_is_read_only_where_its_interval_was_applied():
    def verdict(df):
        (row,) = [r for r in chapters.of("data_race").claims(df) if r["claim_id"] == "data_race/lost_updates"]
        return row["measured"]["b"]

    stretched = verdict(_race([0] * 40, gil=True, slack=50_000))
    assert stretched["verdict"] == claims.NOT_IN_FORCE and "50 us" in stretched["why_void"]
    assert verdict(_race([0] * 40, gil=True, slack=1))["verdict"] == "lower"      # applied: no race seen
    assert verdict(_race([0] * 40, gil=False, slack=50_000))["verdict"] == "lower"


def test_an_affinity_row_is_read_only_where_its_placement_was_recorded_as_asked():
    from gillab.judge import results

    df = results.samples("affinity")
    ch = chapters.of("affinity")

    def void(frame):
        return {(r["claim_id"], c) for r in ch.claims(frame) for c, m in r["measured"].items()
                if m["verdict"] == claims.NOT_IN_FORCE}

    assert void(df) == set()
    spread = df.assign(client_affinity=df["client_affinity"].where(df["client"] != "same", "0,1"))
    got = void(spread)
    assert ("affinity/cpu_threads=1/client=same", "3.13.5") in got
    assert {cid for cid, _ in got} >= {"affinity/conclusion/tolerates_one", "affinity/conclusion/same_core_only"}
    swapped = void(df.assign(client_affinity=df["server_affinity"]))    # the "other" client on the server's core
    assert "affinity/conclusion/same_core_only" in {cid for cid, _ in swapped}
    assert ("affinity/cpu_threads=1/client=same", "3.13.5") not in swapped      # those ran as asked


def test_the_one_thread_control_compares_runs_of_one_length():
    """On a machine that runs slower for a while after it was idle, a 25 M-decrement run counts
    faster per decrement than a 5 M one (16-28% here); the control at 0.1 s compares it with the
    runs of its own size, and passes where the interval changed nothing."""
    rows = []
    for rep in range(ROUNDS):
        for si, k, n, ns in [(0.001, 1, 5_000_000, 50), (0.0001, 1, 5_000_000, 51), (0.001, 2, 2_500_000, 51),
                             (0.1, 1, 25_000_000, 39), (0.01, 1, 25_000_000, 40), (0.1, 2, 12_500_000, 40)]:
            t = n * k * ns * 1e-9 * (1 + 0.003 * (rep % 3))
            rows.append({"condition": "b", "switch_interval": si, "threads": k, "seconds": t, "repeat": rep,
                         "run_id": "r", "decrements_per_thread": n, "timer_slack_ns": 1, "timer_slack_ns_min": 1,
                         "timer_slack_ns_max": 1, "gil_switches": round(t / si), "status": "ok", "gil_enabled": True})
    got = _rows(pd.DataFrame(rows))
    assert got["switch_interval/si=0.1/threads=1"]["median"] == pytest.approx(39 / 39.5, rel=0.01)
    assert got["switch_interval/si=0.1/threads=1"]["verdict"] == "agrees"
    assert got["switch_interval/si=0.001/threads=1"]["median"] == pytest.approx(50 / 50.5, rel=0.01)


def test_the_switch_interval_figure_draws_a_point_not_in_force_hollow():
    """The figure drew every point alike, those the rows read *not in force here* too (issue 78's
    second blind read): each such point is now hollow, and only those."""
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt

    from gillab.chapters import switch_interval as si
    from gillab.judge import results, verdicts

    df = results.samples("switch_interval", "amd-epyc-2c-20261129T172429Z", verdicts.profile_config("switch_interval"))
    t = si.settings_table(si.judged_samples(df))
    off = t[t["judged"] & ~t["in force"].astype(bool)]
    fig = si.figure(df)
    hollow = sum(len(line.get_xdata()) for ax in fig.axes for line in ax.get_lines()
                 if line.get_marker() not in ("D", "None", None, "")
                 and mcolors.to_rgba(line.get_markerfacecolor()) == mcolors.to_rgba("white"))
    plt.close(fig)
    gil = off[off["condition"].isin(set(si.summary(df)["condition"]))]
    assert len(gil) > 0 and hollow == len(gil)
