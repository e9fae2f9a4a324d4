"""The experiments of document 000 beyond the first countdown: workloads, servers, bounds,
and the published cells each one answers."""
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from gillab.measure import campaigns, interpreters, runner, servers, sweep
from gillab.judge import verdicts, results
from gillab.chapters import convoy
from gillab.measure.experiments.echo import echo_sample
from gillab.measure.profiles import ParameterError

REPO = Path(__file__).resolve().parents[1]
ECHO = {"warmup_s": 0.2, "windows": 2, "window_s": 0.5}


def test_sha256_workload_hashes_the_split_work(builds):
    s = runner.run(builds["3.13.5"], "sha256", {"threads": 2, "messages": 4, "message_bytes": 1 << 20})
    assert s.result["messages_per_thread"] == 2 and s.result["seconds"] > 0


@pytest.mark.parametrize("name,overrides,match", [
    ("sha256", {"threads": [3]}, "cannot be split evenly"),
    ("convoy", {"switch_intervals": [0]}, "switch_intervals.*must be a number > 0"),
    ("convoy", {"cpu_threads": [-1]}, "counts must be >= 0"),
    ("convoy", {"switch_interval": 0.001}, "use switch_intervals"),
    ("affinity", {"server_cpu": 97}, "server_cpu 97 is not one of"),
    ("affinity", {"client": ["middle"]}, "client placements must be among"),
    ("data_race", {"switch_intervals": ["fast"]}, "switch_intervals.*not valid"),
    ("switch_interval", {"threads": [2, 4]}, "must include 1"),
])
def test_bad_parameters_of_doc000_experiments(name, overrides, match, data_dir):
    with pytest.raises(ParameterError, match=match):
        sweep.measure(name, "smoke", overrides)
    assert not data_dir.exists()


def test_server_listens_on_loopback_and_is_always_stopped(builds):
    with pytest.raises(RuntimeError, match="boom"):
        with servers.workload_server(builds["3.13.5"], "echo_server", {"cpu_threads": 2}) as srv:
            proc = srv.proc
            conns = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout
            assert f"127.0.0.1:{srv.port}" in conns
            raise RuntimeError("boom")
    assert proc.poll() is not None  # stopped, CPU threads and all


def test_server_that_cannot_start_is_a_clear_error(builds):
    from gillab.measure.interpreters import Condition

    with pytest.raises(runner.WorkloadError, match="not found"):
        with servers.workload_server(Condition("ghost", "/nonexistent/python", "test"), "echo_server", {}):
            pass


def test_echo_sample_counts_windows_and_records_conditions(builds):
    s = echo_sample(ECHO, builds["3.13.5t-gil"], cpu_threads=1, cpu_processes=0, switch=0.001)
    rows = s.result["rows"]
    assert [r["window"] for r in rows] == [0, 1]
    assert all(r["rps"] == r["requests"] / 0.5 for r in rows)
    assert s.result["client_condition"] == "3.13.5"          # the fixed client
    assert s.runtime["switch_interval"] == pytest.approx(0.001)  # the server's, read back
    assert s.runtime["gil_enabled"] is True and s.runtime["py_gil_disabled"] == 1
    assert s.result["requests_served"] >= sum(r["requests"] for r in rows)
    assert s.result["handler_ctx_voluntary"] > 0 and s.result["cpu_threads_cpu_s"] > 0


def test_client_is_bounded_in_time_even_when_the_server_stalls(builds):
    """A server slowed to a crawl (4 CPU threads, 100 ms switch interval) cannot hold the client:
    its watchdog ends the loop, so the sample returns (the test's own timeout is the bound), having
    run its whole span and counted exactly its windows.  No wall-clock slack is asserted: on a busy
    machine the watchdog's signal is delivered late, and that is not this test's subject."""
    s = echo_sample(ECHO, builds["3.13.5"], cpu_threads=4, cpu_processes=0, switch=0.1)
    assert s.result["client_wall_s"] >= 0.2 + 2 * 0.5           # ended by the watchdog, not by an error
    assert [r["window"] for r in s.result["rows"]] == [0, 1]


def test_an_alarm_left_pending_when_the_windows_end_never_escapes_the_echo_client():
    """The watchdog's SIGALRM can arrive just as its timer is cancelled; the interpreter then runs
    the handler later, at its next check for signals (``signal.signal`` itself runs pending
    handlers), outside the ``except`` meant for it.  Seen as a failed convoy sample
    ('echo_client failed: _TimeUp').  Once disarmed, the handler must be a no-op; armed, it ends
    the loop.  The pending signal is made deterministic by blocking it while it is sent."""
    script = (
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(REPO / 'scripts' / 'gillab' / 'measure' / 'workloads')!r})\n"
        "import echo_client as e\n"
        "signal.signal(signal.SIGALRM, e._time_up)\n"
        "e._armed[0] = True\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGALRM)\n"
        "    sys.exit('armed, the alarm did not end the loop')\n"
        "except e._TimeUp:\n"
        "    pass\n"
        "e._armed[0] = False\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
        "os.kill(os.getpid(), signal.SIGALRM)\n"
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})\n"
        "signal.signal(signal.SIGALRM, signal.SIG_DFL)\n"
        "print('no escape')\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "no escape", out.stderr[-800:]


def test_the_watchdog_ends_a_loop_that_never_blocks_without_escaping(builds):
    """CPython looks up the handler of an exception raised by a signal handler at a loop's backward
    jump at the wrong instruction, so it skips every ``try`` of the loop's own frame (gh-108214;
    on 3.13.5 a tight loop inside try/except lets every such alarm escape).  The echo client's
    loop runs in a frame of its own; with a socket whose calls are builtins (no Python frame,
    so the alarm surfaces at the backward jump) every one of 100 watchdog stops is caught, and the
    requests made before them are counted.  A 2 ms window may pass with no request when the
    machine is busy (the alarm is wall-clock time), so the count is checked over all 100 stops,
    never one by one: that a stop is caught does not depend on the clock."""
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(REPO / 'scripts' / 'gillab' / 'measure' / 'workloads')!r})\n"
        "import echo_client as e\n"
        "class Sock: pass\n"
        "s = Sock(); s.sendall = len; s.recv = bytes\n"
        "done_all = counted = 0\n"
        "for _ in range(100):\n"
        "    counts, done, wall = e.timed_loop(s, 0.0, 1, 0.002, 10 ** 12)\n"
        "    assert counts[0] <= done, (counts, done)\n"
        "    done_all, counted = done_all + done, counted + counts[0]\n"
        "assert done_all > 0 and counted > 0, (done_all, counted)\n"
        "print('caught every time')\n")
    out = subprocess.run([str(builds["3.13.5"].executable), "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "caught every time", out.stderr[-800:]


def test_affinity_places_server_and_client(builds, data_dir):
    sweep.measure("affinity", "smoke", {"conditions": "3.13.5", "cpu_threads": [0], "small_grid": {}}, progress=False)
    df = results.samples("affinity")
    same = df[df["client"] == "same"].iloc[0]
    other = df[df["client"] == "other"].iloc[0]
    # the masks as each process read them back, and where the handler thread last ran
    for row in (same, other):
        assert str(row["server_affinity"]) in ("0", "0.0") and int(row["handler_last_cpu"]) == 0
    assert str(same["client_affinity"]) in ("0", "0.0") and str(other["client_affinity"]) in ("1", "1.0")


def test_data_race_counts_are_consistent_and_the_gil_build_loses_nothing(builds):
    gil = runner.run(builds["3.13.5"], "data_race", {"threads": 4, "iterations": 100_000}, switch_interval=1e-6)
    assert gil.result["lost"] == 0 and gil.result["final"] == 400_000  # 3.10+: no switch inside +=
    ft = runner.run(builds["3.13.5t"], "data_race", {"threads": 2, "iterations": 100_000})
    r = ft.result
    assert r["expected"] == 200_000 and r["lost"] == r["expected"] - r["final"] and 0 <= r["lost"] < 200_000


def test_every_published_cell_of_document_000_has_a_verdict():
    """On the committed reference run: a verdict row for every cell of pbts13_t1..t6."""
    rows = verdicts.verdicts(campaigns.reference_id())
    by_table = pd.Series([r["table"] for r in rows]).value_counts()
    # every cell, but the switch-interval table's one thread at 5 ms: the denominator of the other
    # one-thread cells, which judged against itself gave 1.0 by construction
    expected = {
        "pbts13_t1_countdown_threads": 4, "pbts13_t2_sha256_threads": 4,
        "pbts13_t3_echo_rps_vs_switch_interval": 28, "pbts13_t4_countdown_vs_switch_interval": 27,
        "pbts13_t5_echo_rps_cpu_affinity": 5,  # the author's client shared the server's core
    }
    for table, n in expected.items():
        assert by_table.get(table) == n, table
        assert len(results.reference(table)) - ("t4" in table) == n
    # the in-text numbers: every row is part of a claim with a verdict, or context with its reason
    from gillab.judge import claims

    cover = claims.coverage()["pbts13_t6_echo_inline_numbers"]
    on_claims = {c for who in cover.values() for c in who if not c.startswith("context: ")}
    # two derived values, the smallest interval, the default interval (a setting read back, not a claim)
    assert sum(1 for who in cover.values() if any(w.startswith("context: ") for w in who)) == 4
    assert on_claims == {"convoy/inline/no_cpu_thread", "convoy/inline/one_cpu_thread", "convoy/inline/one_cpu_process",
                         "convoy/inline/more_cpu_processes", "convoy/conclusion/collapse",
                         "convoy/conclusion/collapse_direction", "data_race/lost_updates"}
    assert on_claims <= {r["claim_id"] for r in rows if r["measured"]}
    from gillab.measure import experiments

    seen: dict[str, set] = {}
    ref = campaigns.reference_id()
    for r in [r for r in rows if r["table"].startswith("pbts13")]:
        # the builds of the full grid the reference measured at every cell (its `default` run's,
        # today's or a former one's for a chapter declared to be measured again), and every build of
        # the document and of today somewhere in each table
        builds = {verdicts.build_of(c) for c in r["measured"]}
        grids = {run["params"].get("full_grid") for run in results.runs(r["experiment"], ref)
                 if run.get("profile") == "default"}
        full = grids.pop() if len(grids) == 1 else experiments.get(r["experiment"]).resolve("default", {})["full_grid"]
        # a build of today's grid, or the retired build that played its part when the reference was measured
        assert all(set(interpreters.stands_for(b)) & builds for b in full.split(",")), (r["claim_id"], full, builds)
        seen.setdefault(r["table"], set()).update(builds)
    # the document's new GIL (builds.toml [roles], or the retired build that played it) and today's
    # pair (builds.toml [pairs]) in every table
    then = interpreters.role("new_gil_then")
    today = {b for pair in interpreters.pairs()[:1] for b in pair}
    for table, builds in seen.items():
        assert set(interpreters.stands_for(then)) & builds, (table, builds)
        assert today <= builds, (table, builds)


@pytest.mark.parametrize("runs, expected", [       # each list three times over: 15 runs, or 6
    ([29_000, 30_500, 31_000, 29_500, 30_000], "agrees"),        # "about 30k" (band +-17%: one digit)
    ([6_000, 6_500, 5_800, 6_200, 6_100], "lower"),              # this VM alone
    ([9_000, 60_000, 11_000, 58_000, 30_000], "inconclusive"),   # runs flipping between regimes
    ([30_000, 30_100], "inconclusive"),                          # six runs support no verdict (needs 7)
])
def test_the_echo_rate_alone_agrees_differs_or_is_inconclusive(runs, expected):

    df = pd.DataFrame([{"condition": "3.13.5", "switch_interval": 0.005, "cpu_threads": 0, "cpu_processes": 0,
                        "rps": v, "window": 0, "repeat": i, "run_id": "r"} for i, v in enumerate(runs * 3)])
    from gillab.judge import claims

    rows = {r["claim_id"]: r for r in convoy.claims(df)}
    got = rows["convoy/inline/no_cpu_thread"]
    assert got["published"] == claims.value("convoy/inline/no_cpu_thread")     # "about 30k", from the data
    assert got["band"] == claims.band("convoy/inline/no_cpu_thread") == 0.17     # the printed 30,000's digits
    assert got["measured"]["3.13.5"]["verdict"] == expected


def test_the_windows_of_one_server_run_are_not_independent_samples():
    """Seven steady windows of one run are one sample: no verdict; seven runs are seven."""

    def frame(runs, windows):
        return pd.DataFrame([{"condition": "3.13.5", "switch_interval": 0.005, "cpu_threads": 0, "cpu_processes": 0,
                              "rps": 30_000.0 + 10 * w, "window": w, "repeat": r, "run_id": "r",
                              "requests_served": 30_000, "handler_ctx_voluntary": 10, "handler_ctx_involuntary": 1,
                              "client_cpu_share": 0.5, "gil_enabled": True}
                             for r in range(runs) for w in range(windows)])

    def got(df):
        rows = {r["claim_id"]: r for r in convoy.claims(df)}
        return rows["convoy/inline/no_cpu_thread"]["measured"]["3.13.5"]

    one = got(frame(1, 7))
    assert one["n"] == 1 and one["verdict"] == "inconclusive" and one["why_inconclusive"].startswith("n too small")
    seven = got(frame(7, 1))
    assert seven["n"] == 7 and seven["verdict"] == "agrees"
    s = convoy.summary(frame(3, 2))
    assert (s["runs"] == 3).all() and (s["windows"] == 6).all()
