import csv
import hashlib
import json
import os

import pytest

from gillab.measure import campaigns, sweep
from gillab.judge import results
from gillab.measure.profiles import ParameterError
from gillab.measure.store import ExperimentStore, StoreBusy, StoreWriteError

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


def test_a_column_that_never_held_a_value_reads_as_missing_values_not_text(tmp_path):
    """A campaign of 2.7.18 only has a switch interval column with no value at all (schema type
    null): its frame holds NaN there, as it does where some rows have a value and others not, so
    that a page reads it as numbers; text columns stay text."""
    import math

    store = ExperimentStore("x", "m", root=tmp_path)
    for rep in range(2):
        store.append({"run_id": "r", "condition": "2.7.18", "point": "p", "repeat": rep, "status": "ok",
                      "config": "c", "error": None, "switch_interval_runtime": None, "seconds": 1.0 + rep})
    assert json.loads(store.schema_path.read_text()).get("switch_interval_runtime") is None
    df = ExperimentStore("x", "m", root=tmp_path).frame()
    assert df["switch_interval_runtime"].dtype == "float64"
    assert all(math.isnan(v) for v in df["switch_interval_runtime"])
    assert df["switch_interval_runtime"].dropna().empty and df["seconds"].tolist() == [1.0, 2.0]
    assert df["error"].tolist() == ["", ""]


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


# -- damaged files ---------------------------------------------------------------------------------
def _three_rows(tmp_path):
    store = ExperimentStore("x", "m", root=tmp_path)
    for cond, rep, status in (("a", 0, "ok"), ("b", 0, "failed"), ("a", 1, "ok")):
        store.append({"run_id": "r", "config": "c", "condition": cond, "point": "p", "repeat": rep,
                      "status": status, "error": "" if status == "ok" else "boom", "seconds": 1.5 + rep})
    return store


@pytest.mark.parametrize("damage, line, why", [
    # the last row cut to 8 characters (a bad copy, a crash of the machine mid-write)
    (lambda lines: lines[:-1] + [lines[-1][:8]], 4, "fields, not"),
    # the failed row cut before its repeat: failed() once crashed on int(None) here
    (lambda lines: [lines[0], lines[1], lines[2].split(",p,")[0], lines[3]], 3, "fields, not"),
    # a number that is not one (a byte flipped), and an unterminated quote at the end
    (lambda lines: [lines[0], lines[1], lines[2], lines[3].replace(",1,ok,", ",1x,ok,")], 4, "not a whole number"),
    (lambda lines: lines[:-1] + [lines[-1].replace("r,", '"r,', 1)], 4, "not CSV"),
])
def test_a_damaged_row_is_reported_with_its_line_and_the_rest_read_normally(tmp_path, capsys, damage, line, why):
    store = _three_rows(tmp_path)
    lines = store.samples_path.read_text().splitlines()
    store.samples_path.write_text("\n".join(damage(lines)) + "\n")
    again = ExperimentStore("x", "m", root=tmp_path)
    rows = again.rows()
    err = capsys.readouterr().err
    assert f"samples.csv line {line} is damaged" in err and why in err
    assert len(rows) == 2 and [d.line for d in again.damaged] == [line]
    # every whole row reads normally: the good samples stay resumable, the failed one stays failed
    ok = {("a", "p", 0), ("a", "p", 1)} - ({("a", "p", 1)} if line == 4 else set())
    assert set(again.measured("c")) == ok
    assert again.failed("c") == (set() if line == 3 else {("b", "p", 0)})
    assert again.frame()["seconds"].dtype == "float64"


def test_the_next_write_sets_the_damaged_row_aside_and_loses_nothing(tmp_path, capsys):
    store = _three_rows(tmp_path)
    text = store.samples_path.read_text()
    cut = text[: text.rstrip("\n").rfind("\n") + 9]             # the last row cut to 8 characters
    store.samples_path.write_text(cut)
    again = ExperimentStore("x", "m", root=tmp_path)
    again.append({"run_id": "r2", "config": "c", "condition": "a", "point": "p", "repeat": 1, "status": "ok",
                  "error": "", "seconds": 2.5})
    assert "set aside in" in capsys.readouterr().err
    (kept,) = again.set_aside()
    assert kept["line"] == "4" and "fields, not" in kept["reason"] and kept["text"] == cut.splitlines()[-1]
    rows = read_rows(again.samples_path)
    assert [(r["condition"], r["repeat"], r["run_id"]) for r in rows] == [("a", "0", "r"), ("b", "0", "r"), ("a", "1", "r2")]
    # a second damage later is added to the sidecar; the first is still there
    again.samples_path.write_text(again.samples_path.read_text() + "r3,c,a\n")
    third = ExperimentStore("x", "m", root=tmp_path)
    third.append({"run_id": "r4", "config": "c", "condition": "a", "point": "p", "repeat": 2, "status": "ok",
                  "error": "", "seconds": 3.5})
    assert [k["line"] for k in third.set_aside()] == ["4", "5"]
    fourth = ExperimentStore("x", "m", root=tmp_path)
    assert len(fourth.rows()) == 4 and not fourth.damaged


def test_a_damaged_samples_file_is_measured_again_where_it_was_cut(builds, data_dir, capsys):
    """The user's path: a campaign whose last row was cut; --plan says so and plans that sample;
    measuring resumes, measures it again, and keeps the cut row beside the file."""
    first = sweep.measure("countdown", "smoke", SMALL, progress=False)
    path = store_of("countdown").samples_path
    text = path.read_text()
    path.write_text(text[: text.rstrip("\n").rfind("\n") + 41])          # the last row cut to 40 characters
    capsys.readouterr()
    plan = sweep.plan("countdown", "smoke", SMALL)
    assert len(plan.todo) == 1 and plan.resumable == 7
    assert [d["line"] for d in plan.damaged] == [9]
    again = sweep.measure("countdown", "smoke", SMALL, progress=False)
    assert again.measured == 1 and again.skipped == 7 and again.status == "complete"
    store = store_of("countdown")
    assert len(store.set_aside()) == 1 and len(read_rows(store.samples_path)) == 8
    df = results.samples("countdown", config_id=first.config_id)
    assert len(df) == 8 and df.groupby(["condition", "threads"]).size().eq(2).all()


# -- a full disk -----------------------------------------------------------------------------------
def test_a_full_disk_mid_run_fails_that_sample_cleanly_keeps_every_row_and_says_so(builds, small_disk, monkeypatch,
                                                                                   capsys):
    """A real full disk: the data folder on a 2 MiB tmpfs, filled to the last byte right after the
    third sample is stored (the progress callback is the event, no clock)."""
    from conftest import fill

    monkeypatch.setenv("GILLAB_DATA", str(small_disk / "data"))
    monkeypatch.setenv("GILLAB_MACHINE", "test-machine")
    filled = []

    def progress(done, total, what):
        if done == 3 and not filled:
            filled.append(fill(small_disk))

    with pytest.raises(StoreWriteError, match=r"measured but could not be stored \(No space left on device"):
        sweep.measure("countdown", "smoke", SMALL, progress=progress)
    assert filled and filled[0] > 0
    store = store_of("countdown")
    rows = read_rows(store.samples_path)
    assert len(rows) == 3 and all(r["status"] == "ok" for r in rows)       # every stored row kept, whole
    (run,) = store.runs()
    assert run["status"] == "failed" and "No space left on device" in run["failure"] and run["measured"] == 3
    assert not (store.dir / ".reserve").exists() and not list(store.dir.glob(".samples.csv.*"))
    # space again: the sweep resumes where it stopped
    (small_disk / "filler").unlink()
    again = sweep.measure("countdown", "smoke", SMALL, progress=False)
    assert again.measured == 5 and again.skipped == 3 and again.status == "complete"


def test_the_cli_says_a_full_disk_in_one_line(builds, data_dir, monkeypatch, capsys):
    """The same stop through the command line: one line, exit 2, no traceback; the run file says
    failed (a disk that fills is simulated here: every rewrite of samples.csv after the second)."""
    from gillab import cli
    from gillab.measure import store as store_mod

    real, calls = store_mod.atomic_write_text, []

    def full_after_two(path, text):
        if path.name == "samples.csv":
            calls.append(path)
            if len(calls) > 2:
                raise OSError(28, "No space left on device", str(path))
        real(path, text)

    monkeypatch.setattr(store_mod, "atomic_write_text", full_after_two)
    args = ["measure", "countdown", "-P", "smoke"] + [a for k, v in SMALL.items() for a in ("-p", f"{k}={v!r}")]
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("gillab: error: countdown: the sample ") and "No space left on device" in err[-1]
    assert not any("Traceback" in line for line in err)
    store = store_of("countdown")
    assert len(read_rows(store.samples_path)) == 2
    assert store.runs()[0]["status"] == "failed"
