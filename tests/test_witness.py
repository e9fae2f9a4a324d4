"""The second witness: CPython 3.15's own sampler beside our trace (gillab.measure.witness,
gillab.present.witness_view) and the build's effect table (gillab.judge.flags)."""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from conftest import need_builds
from gillab import stats
from gillab.judge import flags
from gillab.measure import interpreters, trace_file, witness
from gillab.present import witness_view
from test_traces import raw, W, T, F, R

BITS = {"has_gil": 2, "gil_requested": 8, "on_cpu": 1, "main": 32, "unknown": 4}


def sampled(states_a, states_b, main=100, a=7, b=8, length_ms=100.0) -> dict:
    """A witness file: the main thread joined (flagged main), two workers in the states given."""
    return {"bits": BITS, "window_ms": [0, length_ms], "failed": {"RuntimeError": 1}, "stopped": "window closed",
            "samples": [[i * 1000, [[main, 32], [a, sa], [b, sb]]] for i, (sa, sb) in enumerate(zip(states_a, states_b))]}


def test_the_sampler_reads_shares_of_the_workers_never_of_the_main_thread():
    # worker a holds 3 of 4 samples and waits (asked, not holding) the fourth; b the other way
    # round; a sample that found b between its drop and its request (0) counts as neither
    d = sampled([3, 3, 3, 8], [8, 8, 0, 3])
    s = witness_view.sampled_shares(d)
    assert list(s["roles"]) == [witness_view.EACH] and s["samples"] == 4 and s["failed"] == 1
    each = s["roles"][witness_view.EACH]
    assert each["threads"] == 2
    assert each["held"] == pytest.approx((3 / 4 + 1 / 4) / 2)
    assert each["waited"] == pytest.approx((1 / 4 + 2 / 4) / 2)
    assert s["rate_hz"] == pytest.approx(40.0)


def test_threads_the_workload_names_are_read_by_their_role():
    # the echo server names its handler and its CPU thread: each is read alone
    d = sampled([8, 8, 3, 0], [3, 3, 8, 3])
    d["meta"] = {"roles": {"7": "handler", "8": "CPU thread", "100": "main (accepts)"}}
    r = witness_view.sampled_shares(d)["roles"]
    assert set(r) == {"handler", "CPU thread"}
    assert r["handler"]["waited"] == pytest.approx(0.5) and r["CPU thread"]["held"] == pytest.approx(0.75)


MS = 1_000_000
# two workers (7, 8) of process 100 hand the GIL over every 5 ms for 20 ms: 7 holds 0-5 and 10-15,
# 8 holds 5-10 and 15-20; each waits while the other holds
HANDOVERS = [(0, 7, W), (0, 7, T), (0, 8, W), (5 * MS, 8, R), (5 * MS, 7, F), (5 * MS, 8, T), (5 * MS, 7, W),
             (10 * MS, 7, R), (10 * MS, 8, F), (10 * MS, 7, T), (10 * MS, 8, W), (15 * MS, 8, R), (15 * MS, 7, F),
             (15 * MS, 8, T), (15 * MS, 7, W), (20 * MS, 7, R), (20 * MS, 8, F)]


def test_the_trace_reads_the_same_shares_from_every_hold_and_wait():
    tr = trace_file.parse(raw(HANDOVERS, pid=100))
    each = witness_view.traced_shares(tr)["roles"][witness_view.EACH]
    assert each["threads"] == 2
    assert each["held"] == pytest.approx(0.5) and each["waited"] == pytest.approx(0.5 - 0.25 / 2)


def frame(sampler, trace):
    rows = [{"observer": witness_view.SAMPLER, "build": "debian-3.15", "round": k, "role": witness_view.EACH,
             "threads": 2, "held": 1 - v, "waited": v, "samples": 400, "failed": 0, "rate_hz": 1000.0}
            for k, v in enumerate(sampler)]
    rows += [{"observer": witness_view.TRACE, "build": "3.13.5", "round": k, "role": witness_view.EACH,
              "threads": 2, "held": 1 - v, "waited": v, "samples": 300, "failed": 0, "rate_hz": np.nan}
             for k, v in enumerate(trace)]
    import pandas as pd
    return pd.DataFrame(rows)


@pytest.mark.parametrize("sampler, trace, outcome", [
    ([0.48, 0.49, 0.5, 0.5, 0.51, 0.52, 0.5], [0.49, 0.5, 0.5, 0.51, 0.5, 0.5, 0.49], "agree"),
    ([0.30, 0.31, 0.32, 0.3, 0.29, 0.31, 0.3], [0.49, 0.5, 0.5, 0.51, 0.5, 0.5, 0.49], "differ"),
    ([0.5, 0.5, 0.5], [0.49, 0.5, 0.5, 0.51, 0.5, 0.5, 0.49], "open"),
])
def test_the_observers_agree_where_their_intervals_meet_and_nowhere_else(sampler, trace, outcome):
    df = frame(sampler, trace)
    ag = witness_view.agreement(df)
    assert ag["outcome"] == outcome
    words = " ".join(witness_view.sentences(df, {}))
    assert {"agree": "observers agree", "differ": "observers differ", "open": "open"}[outcome] in words


def test_a_witness_asked_of_a_machine_without_3_15_stops_before_anything_runs(data_dir, monkeypatch):
    older = [c for c in interpreters.discover() if c.id in ("3.13.5", "3.9.2")]
    monkeypatch.setattr(interpreters, "discover", lambda *a, **k: older)
    with pytest.raises(interpreters.ConditionError, match="debian-3.15"):
        witness.record(campaign="witness-test", progress=lambda m: None)
    assert not (data_dir / "results" / "witness-test").exists()


@pytest.fixture(scope="module")
def py315():
    spec = need_builds(["debian-3.15"], "Debian's builds", "make interpreters")["debian-3.15"]
    return str(spec.executable())


COUNT = """
import threading
def count(n):
    while n > 0:
        n -= 1
ts = [threading.Thread(target=count, args=(30_000_000,)) for _ in range(2)]
[t.start() for t in ts]
[t.join() for t in ts]
import os
print(os.environ.get("GILLAB_GIL_WITNESS"))
"""


def test_the_hook_attaches_the_sampler_before_the_workload_runs_and_waits_for_its_file(py315, tmp_path):
    # the window is far longer than the run: the file is whole only if the hook told the sampler
    # to stop at exit and waited for it
    out = tmp_path / "w.json"
    env = interpreters.clean_env({"PYTHONPATH": str(witness.HOOK),
                                  witness.WITNESS_ENV: f"{witness.SAMPLER},{out},0,600000,1000"})
    r = subprocess.run([py315, "-s", "-B", "-c", COUNT], env=env, check=True, timeout=120, capture_output=True,
                       text=True)
    assert r.stdout.strip() == "None"           # taken out at once: a process it starts is not witnessed
    data = json.loads(out.read_text())
    assert data["stopped"] == "the process exited before the window closed"
    s = witness_view.sampled_shares(data)
    each = s["roles"][witness_view.EACH]
    assert each["threads"] == 2 and s["samples"] > 50
    # two CPU-bound threads under one GIL: each was seen holding it and seen waiting for it
    assert 0 < each["held"] < 1 and 0 < each["waited"] < 1


def test_a_process_not_asked_for_a_witness_starts_none(py315):
    env = interpreters.clean_env({"PYTHONPATH": str(witness.HOOK)})
    r = subprocess.run([py315, "-s", "-B", "-c", "import sitecustomize; print(hasattr(sitecustomize, '_witness'))"],
                       env=env, check=True, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False"


@pytest.mark.parametrize("lo, hi, n, reads", [(0.8, 0.9, 7, "faster"), (1.02, 1.1, 7, "slower"),
                                               (0.97, 1.02, 7, "inconclusive (its interval holds 1)"),
                                               (0.8, 0.9, 3, "inconclusive (too few runs)")])
def test_a_build_effect_reads_faster_or_slower_only_from_its_whole_interval(lo, hi, n, reads):
    assert flags.verdict({"ci_lo": lo, "ci_hi": hi, "n": n, "method": stats.PAIRED}) == reads


def test_the_build_effect_table_says_how_to_measure_it_where_nothing_holds_it(data_dir):
    assert flags.effects().empty
    assert "make interpreters" in flags.markdown()
