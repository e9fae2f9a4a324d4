import csv
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from gillab import experiments, results
from gillab.profiles import ParameterError
from gillab.store import ExperimentStore, StoreBusy

SMALL = {"conditions": "3.13.5,3.13.5t", "threads": [1, 2], "total_decrements": 20_000, "repeats": 2}


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_append_is_atomic_and_keeps_every_row(tmp_path):
    store = ExperimentStore("x", "m", root=tmp_path)
    store.append({"run_id": "r", "condition": "a", "point": "p", "repeat": 0, "status": "ok", "config": "c"})
    store.append({"run_id": "r", "condition": "b", "point": "p", "repeat": 0, "status": "ok", "config": "c",
                  "new_column": 1.5})
    rows = read_rows(store.samples_path)
    assert [r["condition"] for r in rows] == ["a", "b"] and rows[1]["new_column"] == "1.5"
    assert not list(store.dir.glob(".samples.csv.*"))  # no temporary file left behind
    again = ExperimentStore("x", "m", root=tmp_path)
    assert again.done("c") == {("a", "p", 0), ("b", "p", 0)}


def test_a_second_writer_is_refused(tmp_path):
    a, b = ExperimentStore("x", "m", root=tmp_path), ExperimentStore("x", "m", root=tmp_path)
    with a.lock():
        with pytest.raises(StoreBusy):
            with b.lock():
                pass


def test_samples_and_metadata_are_stored(builds, data_dir):
    res = experiments.measure("countdown", "smoke", SMALL, progress=False)
    assert res.measured == 8 and res.failed == 0 and res.status == "complete"
    store = ExperimentStore("countdown", "test-machine")
    rows = read_rows(store.samples_path)
    assert len(rows) == 8
    assert {r["condition"] for r in rows} == {"3.13.5", "3.13.5t"}
    # interleaved: the two conditions alternate
    assert [r["condition"] for r in rows[:4]] == ["3.13.5", "3.13.5t", "3.13.5", "3.13.5t"]
    for r in rows:
        assert float(r["seconds"]) > 0 and r["status"] == "ok"
        assert r["gil_enabled"] == ("True" if r["condition"] == "3.13.5" else "False")
        assert float(r["switch_interval_runtime"]) == pytest.approx(0.005)
        assert r["affinity_runtime"] and r["loadavg_1m"] != ""
    text = next(store.runs_dir.glob("*.json")).read_text()
    assert os.path.expanduser("~") + "/" not in text  # paths are written relative to ~ and <repo>
    meta = json.loads(text)
    for key in ("machine", "harness", "params", "conditions", "loadavg_start", "loadavg_end",
                "started", "finished", "config_id"):
        assert key in meta, key
    assert meta["machine"]["cpu_count"] == os.cpu_count() and meta["machine"]["cpu_model"]
    assert meta["conditions"]["3.13.5t"]["py_gil_disabled"] == 1
    assert meta["conditions"]["3.13.5t"]["build_record"]["configure_flags"][-1] == "--disable-gil"
    assert meta["harness"]["commit"] is None or len(meta["harness"]["commit"]) == 40
    assert meta["status"] == "complete" and meta["measured"] == 8


def test_rerun_resumes_and_more_repeats_measure_only_the_rest(builds, data_dir):
    experiments.measure("countdown", "smoke", SMALL, progress=False)
    again = experiments.measure("countdown", "smoke", SMALL, progress=False)
    assert again.measured == 0 and again.skipped == 8
    more = experiments.measure("countdown", "smoke", {**SMALL, "repeats": 3}, progress=False)
    assert more.measured == 4 and more.skipped == 8
    df = results.samples("countdown", config_id=more.config_id)
    assert len(df) == 12 and df.groupby(["condition", "threads"]).size().eq(3).all()


def test_a_failed_run_loses_nothing(builds, data_dir):
    experiments.measure("countdown", "smoke", SMALL, progress=False)
    path = ExperimentStore("countdown", "test-machine").samples_path
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(ParameterError):
        experiments.measure("countdown", "smoke", {**SMALL, "threads": [0]})
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_a_failing_sample_is_recorded_as_failed_not_as_a_number(builds, data_dir):
    res = experiments.measure("countdown", "smoke", {**SMALL, "conditions": "3.13.5", "threads": [1],
                                                      "repeats": 1, "total_decrements": 10**12,
                                                      "timeout": 0.5}, progress=False)
    assert res.failed == 1 and res.measured == 0
    rows = read_rows(ExperimentStore("countdown", "test-machine").samples_path)
    assert rows[-1]["status"] == "failed" and "timed out" in rows[-1]["error"] and rows[-1].get("seconds", "") == ""


def test_killed_sweep_keeps_its_samples_and_resumes(builds, data_dir):
    """Kill a sweep halfway, as a reader would with Ctrl-C, then run it again."""
    params = ["-p", "conditions=3.13.5,3.13.5t", "-p", "threads=[1,2]", "-p", "total_decrements=3000000",
              "-p", "repeats=4"]
    cmd = [sys.executable, "-m", "gillab", "measure", "countdown", "-P", "smoke", *params]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = ExperimentStore("countdown", "test-machine").samples_path
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and len(read_rows(path)) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    kept = read_rows(path)
    assert 3 <= len(kept) < 16
    meta = [json.loads(p.read_text()) for p in path.parent.glob("runs/*.json")]
    assert meta[0]["status"].startswith("interrupted")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["measured"] == 16 - len(kept) and summary["skipped"] == len(kept)
    rows = read_rows(path)
    assert rows[: len(kept)] == kept  # the samples measured before the kill are untouched
    keys = [(r["condition"], r["point"], r["repeat"]) for r in rows]
    assert len(keys) == len(set(keys)) == 16
