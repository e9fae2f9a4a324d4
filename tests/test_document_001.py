"""Document 001: ccbench re-written - every task checks itself, a starved latency run ends within
its bound and keeps its starved pings, ccbench's own latency protocol runs on the tool's inputs
and records its window, GIL policies apply only where the build has them, bad input stops before
anything is measured."""
import json
import subprocess
import sys

import pandas as pd
import pytest

from gillab.judge import verdicts, results
from gillab.measure import runner, sweep
from gillab.chapters import ccbench
from gillab.measure.profiles import ParameterError

WORKLOAD = str(runner.workload_path("ccbench"))


def _in(cond, code: str) -> str:
    """Run ``code`` under the build ``cond`` with the workload module importable; its stdout."""
    prelude = f"import sys; sys.path.insert(0, {str(runner.WORKLOADS)!r}); import ccbench as c\n"
    out = subprocess.run([cond.executable, "-B", "-c", prelude + code], capture_output=True, text=True, timeout=120,
                         env=runner.clean_env(cond.env_dict))
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_every_task_checks_its_own_result(builds):
    out = _in(builds["3.13.5"], "for t in sorted(c.TASKS): c.TASKS[t](); print(t)")
    assert out.split() == sorted(ccbench.TASKS)
    # the checks are real: a wrong expectation is caught
    bad = subprocess.run([builds["3.13.5"].executable, "-B", "-c",
                          f"import sys; sys.path.insert(0, {str(runner.WORKLOADS)!r}); import ccbench as c\n"
                          "c.PI_50 = '3' * 50\nc.task_pi()"], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "pi digits wrong" in bad.stderr


def test_the_tasks_run_under_the_old_gil(era):
    out = _in(era["2.7.18"], "for t in sorted(c.TASKS): c.TASKS[t](); print(t)")
    assert out.split() == sorted(ccbench.TASKS)


def test_a_starved_latency_run_ends_within_its_bound_and_keeps_the_starved_pings(builds):
    """A computing thread under a 200 ms switch interval holds the GIL far longer than the 50 ms
    bound: the echo thread cannot answer in time, every such ping is recorded as starved (with
    when its echo came, if it came), and the run still ends: it returns a result, where a run past
    the runner's timeout would raise (no wall-clock slack is asserted)."""
    s = runner.run(builds["3.13.5"], "ccbench", {"test": "latency", "task": "countdown", "workers": "threads",
                                                 "threads": 1, "duration": 0.5, "interval": 0.05, "bound": 0.05,
                                                 "check_interval": None}, switch_interval=0.2, timeout=60)
    rows = s.result["rows"]
    assert s.result["pings"] == len(rows) == 10
    starved = [r for r in rows if r["rtt_ms"] is None]
    assert s.result["starved"] == len(starved) >= 5
    assert all(r["late_echo_ms"] is None or r["late_echo_ms"] > 50 for r in starved)


def test_threads_that_starve_the_echo_thread_stop_by_themselves_soon_after_the_pings(builds):
    """A computing thread that never hands the GIL over (a 100 s switch interval here; the old GIL
    next to a regex thread in the chapter) keeps the echo (main) thread from running, so the main
    thread cannot stop it: the background threads stop by themselves 3 durations, 2 bounds and a
    second after their release (2.9 s here; they once ran 30 s longer, and each of the old GIL's
    runs next to regex lasted 35 s).  Every ping starves, and the main thread reads them once the
    threads stopped: none waited anywhere near those 30 s."""
    s = runner.run(builds["3.13.5"], "ccbench", {"test": "latency", "task": "countdown", "workers": "threads",
                                                 "threads": 1, "duration": 0.3, "interval": 0.03, "bound": 0.5,
                                                 "check_interval": None}, switch_interval=100.0, timeout=120)
    rows = s.result["rows"]
    assert s.result["starved"] == len(rows) == 10
    read = [r["oneway_ms"] for r in rows if r["oneway_ms"] is not None]
    assert read and max(read) < (0.3 * 3 + 0.5 * 2 + 1) * 1000 + 15_000


def test_the_tool_tasks_read_the_tools_inputs_from_the_workloads_own_source(builds):
    """Task B runs inspect's pattern over the first 2,000 characters of the benchmark's own source,
    task C compresses its first 3,000 bytes twice over (ccbench's inputs, with this workload as the
    benchmark's file)."""
    text = open(WORKLOAD, encoding="ascii").read()
    out = json.loads(_in(builds["3.13.5"], "import json\nf, a = c.tool_task('regex'); g, b = c.tool_task('bz2')\n"
                                           "print(json.dumps([a, b.decode('ascii'), len(f(a)), len(g(b)) > 0]))"))
    assert out[0] == text[:2000] and out[1] == text[:3000] * 2
    assert out[2] >= 0 and out[3]      # the pattern ran (its cost is the scan, not the matches) and bz2 made bytes


@pytest.mark.parametrize("threads", [0, 1])
def test_the_tools_latency_protocol_reads_its_twenty_pings_and_records_its_window(builds, threads):
    """ccbench's own test: a ready datagram, then 20 pings 0.1 s apart after a 1 s pause, read (not
    echoed) by the main thread; each row says when the ping was sent and read, relative to the
    release of the background threads, and the run when they stopped."""
    s = runner.run(builds["3.13.5"], "ccbench", {"test": "tool", "task": "regex", "threads": threads, "bound": 5.0,
                                                 "check_interval": None}, timeout=60)
    rows = s.result["rows"]
    assert s.result["pings"] == len(rows) == 20 and [r["seq"] for r in rows] == list(range(20))
    read = [r for r in rows if r["oneway_ms"] is not None]
    assert s.result["answered"] == len(read) and s.result["starved"] == 20 - len(read)
    sent = [r["sent_s"] for r in read]
    assert sent == sorted(sent) and sent[0] >= 1.0          # the client's 1 s pause, then a ping every 0.1 s
    assert all(r["read_s"] >= r["sent_s"] for r in read)
    assert all(abs(r["oneway_ms"] - 1000 * (r["read_s"] - r["sent_s"])) < 0.01 for r in read)
    if threads:
        assert s.result["background_iterations"] > 0 and s.result["bg_stopped_s"] > 0
    else:
        assert s.result["background_iterations"] == 0 and s.result["bg_stopped_s"] is None


def test_read_after_stop_counts_only_pings_sent_while_the_threads_computed():
    rows = [{"condition": "old", "test": "tool", "task": "regex", "threads": 1, "status": "ok", "bg_stopped_s": 3.0,
             "sent_s": sent, "read_s": read} for sent, read in ((1.1, 3.01), (1.2, 3.01), (2.9, 2.95), (3.05, 3.06))]
    assert ccbench.read_after_stop(pd.DataFrame(rows)) == {"old": (2, 3, 3.0)}


def test_policies_apply_only_where_the_build_has_them(builds, data_dir):
    plan = sweep.plan("ccbench", "smoke", {"conditions": "3.13.5", "policies": ["default", "check:1000"]}).as_dict()
    assert plan["reasons"].get("not applicable: the new GIL has no check interval") == 1
    assert all("check:" not in s["point"] for s in plan["samples"])
    assert not data_dir.exists()


@pytest.mark.parametrize("overrides,match", [
    ({"policies": ["switch:0"]}, "not a policy"),
    ({"policies": ["check:-5"]}, "not a policy"),
    ({"bg_threads": [-1]}, "bg_threads"),
    ({"tasks": ["pi", "nope"]}, "tasks must be among"),
    ({"policy_task": "nope"}, "policy_task must be one of"),
    ({"interval": 1.0, "latency_duration": 0.5}, "shorter than latency_duration"),
    ({"bound": 0.01, "interval": 0.05}, "at least one interval"),
    ({"switch_interval": 0.001}, "policies"),
    ({"workers": ["fibers"]}, "workers must be among"),
])
def test_bad_input_is_refused_before_measuring(overrides, match, data_dir):
    with pytest.raises(ParameterError, match=match):
        sweep.measure("ccbench", "smoke", overrides, progress=False)
    assert not data_dir.exists()


def test_smoke_end_to_end_with_claims(builds, data_dir):
    res = sweep.measure("ccbench", "smoke", {"conditions": "3.13.5,3.13.5t", "tasks": ["regex", "countdown"],
                                             "policies": ["default", "switch:0.001", "check:1000"], "small_grid": {}},
                        progress=False)
    assert res.failed == 0 and res.measured == 2 * 10  # 10 points apply to a new-GIL build (one of the tool's)
    df = results.samples("ccbench", res.campaign, res.config_id)
    lat = df[df["test"] == "latency"]
    assert lat["rtt_ms"].notna().any() and set(lat["policy"]) == {"default", "switch:0.001"}
    assert (df.loc[df["policy"] == "switch:0.001", "switch_interval_runtime"] == 0.001).all()
    rows = {r["claim_id"]: r for r in verdicts.verdicts(res.campaign, ["ccbench"], profile=None)}
    assert {"ccbench/latency/regex/old_GIL", "ccbench/latency/regex/new_GIL",
            "ccbench/beazley/countdown/2threads"} <= set(rows)
    for r in rows.values():
        for m in r["measured"].values():
            assert m["verdict"] in ("agrees", "higher", "lower", "inconclusive")
    # which build ran without the GIL is what each sample recorded at run time (whether its echo
    # thread was faster is a finding of the chapter, measured on a quiet machine, not a unit test's)
    assert set(lat.groupby("condition")["gil_enabled"].unique().map(tuple)) == {(True,), (False,)}
    assert not lat.loc[lat["condition"] == "3.13.5t", "gil_enabled"].any()
    out = subprocess.run([sys.executable, "-m", "gillab", "verdicts", "--json", "-P", "any"], capture_output=True,
                         text=True)
    assert out.returncode == 0 and "ccbench/latency" in json.dumps(json.loads(out.stdout))


def _gil_source(tarball) -> str:
    """The GIL's C source inside a CPython source tarball (ceval_gil.h before 3.12, .c after)."""
    import tarfile

    with tarfile.open(tarball) as tf:
        for m in tf.getmembers():
            if m.name.endswith(("/Python/ceval_gil.h", "/Python/ceval_gil.c")):
                return tf.extractfile(m).read().decode()
    raise AssertionError(f"no Python/ceval_gil.* in {tarball}")


def test_what_the_design_claims_say_of_the_builds_is_in_their_sources():
    """pitrou_2009_claims.csv says forced switching shipped and priority requests did not: the
    sources of the new-GIL builds (3.9.2 and 3.13.5, from Debian's source packages, where the gillab
    cache holds them) say so too."""
    from gillab.measure import provision

    rows = results.reference("pitrou_2009_claims").set_index("item")["in_builds"]
    assert rows["forced switching"].startswith("shipped") and rows["priority requests"].startswith("did not ship")
    found = {}
    for spec in provision.all_specs():
        path = provision.cache_root() / "source" / spec.src.get("file", "-")
        if spec.build_id in ("3.9.2", "3.13.5") and path.exists():
            found[spec.build_id] = _gil_source(path)
    if "3.9.2" not in found:
        pytest.skip("the 3.9.2 source is not in the gillab cache yet (gillab provision --set era)")
    for text in found.values():
        assert "#ifdef FORCE_SWITCHING" in text and "switch_cond" in text
        assert "#define DEFAULT_INTERVAL 5000" in text          # the 5 ms switch interval, in microseconds
        assert "priority" not in text.lower()


def _rounds(rows):
    return pd.DataFrame([{"run_id": "r", "status": "ok", "policy": "default", "workers": "threads"} | r for r in rows])


def test_contended_vs_idle_counts_a_ping_never_read_at_the_bound_and_pairs_by_round():
    """A ping the echo thread never read waited at least the bound, so it counts as the bound (a
    lower bound of the mean); each round's contended mean is divided by the same round's idle one."""
    rows = []
    for rep, idle in enumerate([0.1, 0.2] * 5):
        rows += [{"condition": "old", "test": "latency", "task": "regex", "threads": 0, "repeat": rep, "bound": 2.0,
                  "oneway_ms": idle} for _ in range(2)]
        rows += [{"condition": "old", "test": "latency", "task": "regex", "threads": 1, "repeat": rep, "bound": 2.0,
                  "oneway_ms": v} for v in (1000.0, None)]
    m = ccbench._contended_vs_idle(_rounds(rows))["measured"]["old"]
    assert m["estimand"] == "median of paired ratios" and m["n"] == 10
    # the rounds' ratios are 15000 and 7500, five each: their median, not the medians' ratio (10000)
    assert m["median"] == pytest.approx((15000.0 + 7500.0) / 2)
    assert "2 pings never read" not in m["note"] and "10 pings never read" in m["note"]


def test_throughput_ratios_pair_two_points_of_one_build_by_round():
    rows = [{"condition": "b", "test": "throughput", "task": "pi", "threads": n, "repeat": rep, "point": str(n),
             "speed": speed} for rep in range(10) for n, speed in ((1, 100.0 + rep), (2, 50.0 + rep / 2))]
    df = _rounds(rows)
    par = {r["claim_id"]: r for r in ccbench._no_parallelism(df)}
    assert par["ccbench/throughput/no_parallelism/pi"]["measured"]["b"]["median"] == pytest.approx(0.5)
    assert par["ccbench/throughput/no_parallelism/pi"]["measured"]["b"]["verdict"] == "agrees"
    assert par["ccbench/throughput/no_parallelism/regex"]["measured"] == {}


def test_a_run_narrowed_to_the_old_gils_latency_draws_and_judges_what_it_has(era, data_dir):
    """A reader's run of the latency test alone, on the old GIL alone (no throughput run, no build
    with a switch interval): the chapter's figures say what is missing instead of failing, and its
    sentences and verdicts are read from what was measured."""
    res = sweep.measure("ccbench", "smoke", {"conditions": "2.7.18", "tests": ["latency"], "tasks": ["regex"],
                                             "bg_threads": [0, 1], "policies": ["default"], "small_grid": {}},
                        progress=False)
    assert res.failed == 0 and res.measured == 2
    df = results.samples("ccbench", res.campaign, res.config_id)
    for draw in (ccbench.figure, ccbench.throughput_figure, ccbench.policy_figure):
        assert draw(df).axes
    assert ccbench.prose(df) is not None
    rows = {r["claim_id"]: r for r in verdicts.verdicts(res.campaign, ["ccbench"], profile=None)}
    assert "2.7.18" in rows["ccbench/latency/old_GIL/contended_vs_idle"]["measured"]
