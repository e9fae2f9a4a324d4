import csv
import hashlib
import json
import os

import pytest

from gillab import campaigns, results, sweep
from gillab.profiles import ParameterError
from gillab.store import ExperimentStore, StoreBusy

SMALL = {"conditions": "3.13.5,3.13.5t", "threads": [1, 2], "total_decrements": 20_000, "repeats": 2}


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def store_of(experiment):
    """The store of the one campaign a test measured into."""
    (c,) = campaigns.all_campaigns()
    return c.store(experiment)


def test_append_is_atomic_and_keeps_every_row(tmp_path):
    store = ExperimentStore("x", "m", root=tmp_path)
    store.append({"run_id": "r", "condition": "a", "point": "p", "repeat": 0, "status": "ok", "config": "c"})
    store.append({"run_id": "r", "condition": "b", "point": "p", "repeat": 0, "status": "ok", "config": "c",
                  "new_column": 1.5})
    rows = read_rows(store.samples_path)
    assert [r["condition"] for r in rows] == ["a", "b"] and rows[1]["new_column"] == "1.5"
    assert not list(store.dir.glob(".samples.csv.*"))  # no temporary file left behind
    again = ExperimentStore("x", "m", root=tmp_path)
    assert set(again.measured("c")) == {("a", "p", 0), ("b", "p", 0)}


def test_a_second_writer_is_refused(tmp_path):
    a, b = ExperimentStore("x", "m", root=tmp_path), ExperimentStore("x", "m", root=tmp_path)
    with a.lock():
        with pytest.raises(StoreBusy):
            with b.lock():
                pass


def test_samples_and_metadata_are_stored(builds, data_dir):
    res = sweep.measure("countdown", "smoke", SMALL, progress=False)
    assert res.measured == 8 and res.failed == 0 and res.status == "complete"
    store = store_of("countdown")
    assert store.campaign == res.campaign and res.campaign.startswith("test-machine-")
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
        assert len(r["identity_key"]) == 16 and len(r["code_key"]) == 16
    text = next(store.runs_dir.glob("*.json")).read_text()
    assert os.path.expanduser("~") + "/" not in text  # paths are written relative to ~ and <repo>
    meta = json.loads(text)
    for key in ("machine", "harness", "params", "conditions", "loadavg_start", "loadavg_end",
                "started", "finished", "config_id", "campaign", "code_key", "boot_id"):
        assert key in meta, key
    assert meta["machine"]["cpu_count"] == os.cpu_count() and meta["machine"]["cpu_model"]
    cpu = meta["machine"]["cpu"]
    assert {"vendor", "family", "model", "stepping", "flags", "hypervisor", "mhz_now"} <= set(cpu)
    assert len(meta["machine"]["fingerprint"]) == 12
    assert meta["conditions"]["3.13.5t"]["py_gil_disabled"] == 1
    assert meta["conditions"]["3.13.5t"]["build_record"]["configure_flags"][-1] == "--disable-gil"
    assert meta["harness"]["commit"] is None or len(meta["harness"]["commit"]) == 40
    assert meta["status"] == "complete" and meta["measured"] == 8


def test_rerun_resumes_and_more_repeats_measure_only_the_rest(builds, data_dir):
    sweep.measure("countdown", "smoke", SMALL, progress=False)
    again = sweep.measure("countdown", "smoke", SMALL, progress=False)
    assert again.measured == 0 and again.skipped == 8
    more = sweep.measure("countdown", "smoke", {**SMALL, "repeats": 3}, progress=False)
    assert more.measured == 4 and more.skipped == 8
    df = results.samples("countdown", config_id=more.config_id)
    assert len(df) == 12 and df.groupby(["condition", "threads"]).size().eq(3).all()


def test_a_failed_run_loses_nothing(builds, data_dir):
    sweep.measure("countdown", "smoke", SMALL, progress=False)
    path = store_of("countdown").samples_path
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(ParameterError):
        sweep.measure("countdown", "smoke", {**SMALL, "threads": [0]})
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_a_failing_sample_is_recorded_as_failed_not_as_a_number(builds, data_dir):
    res = sweep.measure("countdown", "smoke", {**SMALL, "conditions": "3.13.5", "threads": [1],
                                                      "repeats": 1, "total_decrements": 10**12,
                                                      "timeout": 0.5}, progress=False)
    assert res.failed == 1 and res.measured == 0
    rows = read_rows(store_of("countdown").samples_path)
    assert rows[-1]["status"] == "failed" and "timed out" in rows[-1]["error"] and rows[-1].get("seconds", "") == ""
