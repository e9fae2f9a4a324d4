import os

import pytest

from gillab.measure import runner


def test_countdown_runs_in_a_fresh_process_with_its_conditions(builds):
    s = runner.run(builds["3.13.5"], "countdown", {"threads": 2, "total_decrements": 200_000},
                   switch_interval=0.001, affinity=[0], timeout=60)
    assert s.result["seconds"] > 0 and s.result["decrements_per_thread"] == 100_000
    assert s.runtime["switch_interval"] == pytest.approx(0.001)
    assert s.runtime["affinity"] == [0]
    assert s.runtime["gil_enabled"] is True and s.runtime["pid"] != os.getpid()
    assert s.rusage["ctx_voluntary"] >= 0


def test_gil_state_at_run_time_follows_the_condition(builds, monkeypatch):
    # the caller's own PYTHON_GIL must not leak into a sample
    monkeypatch.setenv("PYTHON_GIL", "1")
    free = runner.run(builds["3.13.5t"], "countdown", {"threads": 1, "total_decrements": 1000})
    forced = runner.run(builds["3.13.5t-gil"], "countdown", {"threads": 1, "total_decrements": 1000})
    assert free.runtime["gil_enabled"] is False and free.runtime["py_gil_disabled"] == 1
    assert forced.runtime["gil_enabled"] is True and forced.runtime["py_gil_disabled"] == 1


def test_timeout_kills_the_workload(builds):
    with pytest.raises(runner.WorkloadError, match="timed out after 0.5 s"):
        runner.run(builds["3.13.5"], "countdown", {"threads": 1, "total_decrements": 10**12}, timeout=0.5)


def test_workload_error_is_reported_with_its_reason(builds):
    with pytest.raises(runner.WorkloadError, match="threads must be >= 1"):
        runner.run(builds["3.13.5"], "countdown", {"threads": 0, "total_decrements": 10})


def test_unknown_workload():
    from gillab.measure.interpreters import Condition

    with pytest.raises(runner.WorkloadError, match="unknown workload 'nope'"):
        runner.run(Condition("x", "/bin/true", "test"), "nope", {})
