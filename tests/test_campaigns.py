"""Campaigns: a reader's rerun is the reader's own; resume keys; plans; nothing left behind by a
killed sweep.

The kill tests synchronise on events, never on time: a *gate* interpreter (a shell wrapper
around the 3.13.5 build, declared in an interpreters.toml) blocks at the start of each of its
workload samples until the test opens a FIFO, so the test knows exactly which samples are
stored when it sends the signal.
"""
import csv
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gillab.measure import campaigns, interpreters, resume, runner, sweep
from gillab.judge import verdicts, results
from gillab.measure.profiles import ParameterError

from conftest import copy_reference
from proctools import alive, cmdline, descendants, wait_gone

SMALL = {"conditions": "3.13.5,3.13.5t", "threads": [1, 2], "total_decrements": 20_000, "repeats": 2}


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def gillab(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "gillab", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, stdin=subprocess.DEVNULL)


# -- the reference is never the reader's --------------------------------------------------------
def test_plan_on_a_fresh_clone_plans_the_full_sweep_not_zero(builds, data_dir, monkeypatch):
    ref = copy_reference(data_dir)
    env = dict(os.environ, GILLAB_MACHINE=ref)   # same machine id as the reference campaign's
    out = gillab("measure", "countdown", "-P", "default", "--plan", "--json", env=env)
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert plan["campaign_is_new"] and plan["campaign"] == "(a new campaign)"
    # the plan around the judged rows: 21 runs (7 trials of a best of 3) of 1/2/4/8 threads for the
    # build they judge (3.9.2), of 1/2 threads for the old GIL's and today's (2.7.18, 3.13.5: then and
    # now), of 1 thread for Debian's 3.13.5 (beside ours: the build's effect); one run of every other
    # point a build measures (the -gil twin's too), Debian's 3.14 and 3.15 theirs (1 and 2 threads) as
    # a claim tier of one run (measured with the claims)
    full = {"2.7.18", "3.9.2", "3.13.5"}
    latest = {"debian-3.14", "debian-3.15"} & set(plan["conditions"])
    claimed = {c: (1, 2, 4, 8) if c == "3.9.2" else (1, 2) if c in full else (1,) if c == "debian-3.13.5" else ()
               for c in plan["conditions"]}
    runs = {c: [21 if t in claimed[c] else 1 for t in ((1, 2, 4, 8) if c in full else (1, 2))]
            for c in plan["conditions"]}
    n = sum(sum(r) for r in runs.values())
    assert plan["samples_planned"] == plan["samples_total"] == n and plan["samples_resumable"] == 0
    assert plan["samples_adaptive_max"] == 0      # the rounds after the plan are the whole run's (gillab.judge.budget)
    small = 21 * sum(2 for c in plan["conditions"] if c not in full)
    rest = 20 * sum(len(r) - len(claimed[c]) for c, r in runs.items() if c not in latest)
    tier = 20 * 2 * len(latest)
    assert plan["reasons"] == ({resume.NOT_YET: n}
                               | ({next(k for k in plan["reasons"] if "small grid" in k): small} if small else {})
                               | ({next(k for k in plan["reasons"] if "no claim reads" in k): rest} if rest else {})
                               | ({next(k for k in plan["reasons"] if "its claim tier gives it" in k): tier}
                                  if tier else {}))
    assert not [p for p in (data_dir / "results").iterdir() if p.name not in (ref, "REFERENCE")]  # wrote nothing


def test_measuring_never_writes_to_nor_resumes_from_the_reference(builds, data_dir, monkeypatch):
    ref = copy_reference(data_dir)
    monkeypatch.setenv("GILLAB_MACHINE", ref)
    ref_csv = data_dir / "results" / ref / "countdown" / "samples.csv"
    before = ref_csv.read_bytes()
    with pytest.raises(campaigns.ReferenceIsReadOnly):
        sweep.measure("countdown", "smoke", SMALL, campaign=ref, progress=False)
    res = sweep.measure("countdown", "smoke", SMALL, progress=False)
    assert res.campaign != ref and res.measured == 8 and res.skipped == 0
    assert ref_csv.read_bytes() == before
    yours, reference = campaigns.for_reading("countdown")
    assert yours.id == res.campaign and reference.id == ref
    # a second call resumes the reader's campaign; --new-campaign starts another
    assert sweep.measure("countdown", "smoke", SMALL, progress=False).skipped == 8
    new = sweep.measure("countdown", "smoke", SMALL, new_campaign=True, progress=False)
    assert new.campaign not in (ref, res.campaign) and new.measured == 8


def test_campaigns_are_listed_with_their_machine_builds_and_status(builds, data_dir):
    ref = copy_reference(data_dir)
    res = sweep.measure("countdown", "smoke", SMALL, progress=False)
    out = gillab("campaigns", "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["campaign"]: r for r in json.loads(out.stdout)}
    assert rows[ref]["reference"] and not rows[res.campaign]["reference"]
    mine = rows[res.campaign]
    assert mine["this_machine"] and mine["cores"] == os.cpu_count() and mine["samples"] == 8
    assert set(mine["builds"]) == {"3.13.5", "3.13.5t"} and mine["profiles"] == ["smoke"]
    assert mine["status"] == "complete" and mine["cpu"]["family"] is not None and mine["fingerprint"]
    assert "REFERENCE" in gillab("campaigns").stdout


# -- resume keys ---------------------------------------------------------------------------------
def test_a_changed_workload_is_not_resumable_and_the_plan_says_why(builds, data_dir, tmp_path, monkeypatch):
    first = sweep.measure("countdown", "smoke", SMALL, progress=False)
    assert sweep.plan("countdown", "smoke", SMALL).as_dict()["samples_planned"] == 0
    edited = tmp_path / "workloads"
    shutil.copytree(runner.WORKLOADS, edited)
    with open(edited / "countdown.py", "a") as f:
        f.write("# one comment line\n")
    monkeypatch.setattr(runner, "WORKLOADS", edited)
    assert sweep.plan("countdown", "smoke", SMALL).as_dict()["samples_planned"] == 0   # a comment is no change
    with open(edited / "countdown.py", "a") as f:
        f.write("EDITED = True\n")
    plan = sweep.plan("countdown", "smoke", SMALL).as_dict()
    assert plan["campaign"] == first.campaign and plan["samples_planned"] == 8
    assert plan["reasons"] == {resume.CODE_CHANGED: 8}
    assert {s["reason"] for s in plan["samples"]} == {resume.CODE_CHANGED}
    again = sweep.measure("countdown", "smoke", SMALL, progress=False)
    assert again.measured == 8 and again.reasons == {resume.CODE_CHANGED: 8}
    df = results.samples("countdown", first.campaign)
    assert len(df) == 8 and df.attrs["superseded"] == 8 and set(df["run_id"]) == {again.run_id}
    run = json.loads(next(p for p in campaigns.load(first.campaign).store("countdown").runs_dir.glob("*.json")
                          if again.run_id in p.name).read_text())
    assert run["why_measured"] == {resume.CODE_CHANGED: 8}


def test_a_rebuilt_interpreter_is_measured_anew(builds, data_dir, tmp_path, monkeypatch):
    exe = tmp_path / "bin" / "python3.13"
    exe.parent.mkdir()
    shutil.copy2(builds["3.13.5"].executable, exe)   # finds its stdlib through its compiled-in prefix
    toml = tmp_path / "interpreters.toml"
    toml.write_text(f'[interpreters]\nmine = "{exe}"\n')
    monkeypatch.setenv("GILLAB_INTERPRETERS", str(toml))
    params = {**SMALL, "conditions": "mine"}
    assert sweep.measure("countdown", "smoke", params, progress=False).measured == 4
    assert sweep.plan("countdown", "smoke", params).as_dict()["samples_planned"] == 0
    with open(exe, "ab") as f:       # "rebuild": other bytes, same path, same version
        f.write(b"\0")
    plan = sweep.plan("countdown", "smoke", params).as_dict()
    assert plan["reasons"] == {resume.INTERPRETER_CHANGED: 4}


def test_failed_samples_and_older_rows_are_measured_again_with_a_reason():
    row = {"identity_key": "a", "code_key": "b"}
    assert resume.why_not_resumable(row, "a", "b") is None
    assert resume.why_not_resumable(None, "a", "b") == resume.NOT_YET
    assert resume.why_not_resumable({"identity_key": "", "code_key": ""}, "a", "b") == resume.NO_KEY
    assert resume.why_not_resumable(row, "x", "b") == resume.INTERPRETER_CHANGED
    assert resume.why_not_resumable(row, "a", "x") == resume.CODE_CHANGED


def test_bad_campaign_names_are_refused_before_measuring(builds, data_dir):
    with pytest.raises(ParameterError):
        sweep.measure("countdown", "smoke", SMALL, campaign="../elsewhere", progress=False)
    assert not (data_dir / "results").exists() or not list((data_dir / "results").iterdir())


# -- yours beside ours ---------------------------------------------------------------------------
def test_compare_sets_outcomes_side_by_side_with_a_ratio_ci():
    def row(value, lo, hi, verdict):
        return {"experiment": "e", "claim_id": "c", "claim": "a claim", "published": 2.0, "unit": "s",
                "measured": {"x": {"median": value, "ci_lo": lo, "ci_hi": hi, "verdict": verdict}}}

    df = verdicts.compare([row(2.2, 2.0, 2.4, "agrees")], [row(1.1, 1.0, 1.2, "lower")])
    (r,) = df.to_dict(orient="records")
    assert r["same outcome"] == "NO" and r["reference outcome"] == "lower" and r["your outcome"] == "agrees"
    strong = {"coverage": 0.96}
    ratio, lo, hi = verdicts.ratio_ci(row(2.2, 2.0, 2.4, "")["measured"]["x"] | strong,
                                    row(1.1, 1.0, 1.2, "")["measured"]["x"] | strong)
    assert ratio == pytest.approx(2.0) and (lo, hi) == pytest.approx((2.0 / 1.2, 2.4 / 1.0))
    # a value without a 95% interval (no coverage given, or below 95%) gives the ratio alone
    ratio, lo, hi = verdicts.ratio_ci(row(2.2, 2.0, 2.4, "")["measured"]["x"], row(1.1, 1.0, 1.2, "")["measured"]["x"])
    assert ratio == pytest.approx(2.0) and lo != lo and hi != hi
    assert verdicts.ratio_ci({"median": 0, "ci_lo": 0, "ci_hi": 1}, {"median": 1, "ci_lo": 1, "ci_hi": 1})[1] != \
        verdicts.ratio_ci({"median": 0, "ci_lo": 0, "ci_hi": 1}, {"median": 1, "ci_lo": 1, "ci_hi": 1})[1]  # NaN
    same = verdicts.compare([row(1.1, 1.0, 1.2, "lower")], [row(1.1, 1.0, 1.2, "lower")])
    assert list(same["same outcome"]) == ["yes"]


# -- nothing left behind by a killed sweep -------------------------------------------------------
@pytest.fixture
def gate(builds, tmp_path, monkeypatch):
    """An interpreter 'gate': 3.13.5 behind a wrapper that, while gate.on exists, blocks at the
    start of each workload sample in a read of a FIFO until the test opens the FIFO."""
    fifo, on = tmp_path / "gate.fifo", tmp_path / "gate.on"
    os.mkfifo(fifo)
    on.touch()
    wrapper = tmp_path / "gate-python"
    wrapper.write_text(
        "#!/bin/sh\n"
        "case \"$*\" in *workloads/*) if [ -e '%s' ]; then read _ < '%s'; fi;; esac\n"
        "exec '%s' \"$@\"\n" % (on, fifo, builds["3.13.5"].executable))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    toml = tmp_path / "interpreters.toml"
    toml.write_text(f'[interpreters]\ngate = "{wrapper}"\n')
    monkeypatch.setenv("GILLAB_INTERPRETERS", str(toml))
    interpreters.identify.cache_clear()

    class Gate:
        def wait_until_reached(self, proc, timeout=120):
            """Block until a sample of the gate interpreter waits at the gate (an event: the
            wrapper opened the FIFO); hold it there.  Bounded, in case the harness died."""
            deadline = time.monotonic() + timeout
            while True:
                try:
                    self.fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                    return
                except OSError:
                    assert proc.poll() is None, "the harness ended before reaching the gate"
                    assert time.monotonic() < deadline, "the gate was never reached"
                    time.sleep(0.02)

        def open(self):
            on.unlink()
            os.close(self.fd)

    return Gate()


def ended(proc, timeout=120):
    """Wait for a signalled harness to end, reading its output (so that a full pipe cannot hold
    it up); if it does not end, ask it where it is (SIGUSR1: faulthandler) and fail with that."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        try:
            proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        below = {p: cmdline(p) for p in descendants(proc.pid) if alive(p)}
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the harness did not end within {timeout} s; its stacks:\n{err[-6000:]}\nbelow it: {below}")


COUNTDOWN = ["measure", "countdown", "-P", "smoke", "-p", "conditions=3.13.5,gate", "-p", "threads=[1,2]",
             "-p", "total_decrements=20000", "-p", "repeats=2"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_a_killed_sweep_keeps_its_samples_and_resumes(gate, data_dir, sig):
    # SIGINT as a terminal would send it: a test run started in the background (nohup, `&`)
    # inherits SIGINT ignored, and so would the harness
    proc = subprocess.Popen([sys.executable, "-m", "gillab", *COUNTDOWN], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    gate.wait_until_reached(proc)          # sample 2 of 8 (gate, 1 thread, repeat 0) is running
    below = descendants(proc.pid)
    proc.send_signal(sig)
    ended(proc)
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL)
    assert wait_gone(below) == [], "a workload outlived the harness"
    (c,) = campaigns.all_campaigns()
    store = c.store("countdown")
    kept = rows_of(store.samples_path)
    assert [(r["condition"], r["point"], r["repeat"]) for r in kept] == [("3.13.5", "threads=1", "0")]
    (run,) = store.runs()
    assert run["status"] == ("interrupted (KeyboardInterrupt)" if sig == signal.SIGINT else "running")
    gate.open()
    done = subprocess.run([sys.executable, "-m", "gillab", *COUNTDOWN], capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["campaign"] == c.id and summary["measured"] == 7 and summary["skipped"] == 1
    rows = rows_of(store.samples_path)
    assert rows[:1] == kept
    assert len({(r["condition"], r["point"], r["repeat"]) for r in rows}) == len(rows) == 8
    statuses = {r["run_id"]: r["status"] for r in store.runs()}
    assert statuses[run["run_id"]] == ("interrupted (KeyboardInterrupt)" if sig == signal.SIGINT else "killed")
    if sig == signal.SIGKILL:
        assert "killed" in done.stderr


def test_sigkill_of_a_server_experiment_leaves_no_server_and_resumes(builds, data_dir):
    """kill -9 of `gillab measure convoy` while the echo server and its CPU-bound thread run."""
    args = ["measure", "convoy", "-P", "smoke", "-p", "conditions=3.13.5", "-p", "switch_intervals=[0.005]",
            "-p", "cpu_threads=[1]", "-p", "cpu_processes=[1]", "-p", "placements=os", "-p", "windows=30",
            "-p", "window_s=1"]
    proc = subprocess.Popen([sys.executable, "-m", "gillab", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while True:   # wait for the event: the echo server and its client are both running
        below = descendants(proc.pid)
        cmds = [cmdline(p).decode(errors="replace") for p in below if alive(p)]
        if any("echo_server.py" in c for c in cmds) and any("echo_client.py" in c for c in cmds):
            break
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "the server never started"
        time.sleep(0.05)
    below = descendants(proc.pid)   # the server started its CPU process before it said it was ready
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert wait_gone(below) == [], "a server, CPU-bound neighbour or client outlived the harness"
    (c,) = campaigns.all_campaigns()
    (run,) = c.store("convoy").runs()
    assert run["status"] == "running"
    listed = campaigns.describe(c)
    assert listed["status"] == "has killed runs"
    done = subprocess.run([sys.executable, "-m", "gillab", *args[:-4], "-p", "windows=1", "-p", "window_s=0.5"],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["measured"] == 2
    statuses = sorted(r["status"] for r in c.store("convoy").runs())
    assert statuses == ["complete", "killed"]


def group_members(pgid):
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[3]) == pgid:
                    out.append(int(d.name))
            except (OSError, IndexError, ValueError):
                continue
    return out


def test_any_program_dies_with_the_harness_and_a_finished_one_leaves_no_watcher():
    """nginx, k6 and curl are guarded like the workloads: kill -9 of the harness ends them, and
    a command that ends normally leaves nothing once its group is cleared."""
    code = ("import threading; from gillab.measure import procs; "
            "p = procs.popen(['sleep', '300']); print(p.pid, flush=True); threading.Event().wait()")
    harness = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    pid = int(harness.stdout.readline())
    deadline = time.monotonic() + 60
    while not (b"sleep" in cmdline(pid) and len(group_members(pid)) == 2):
        assert time.monotonic() < deadline, "the guarded program and its watcher never both ran"
        time.sleep(0.02)   # polling for the event above, not a timing assumption
    below = group_members(pid)
    harness.kill()
    harness.wait(timeout=30)
    assert wait_gone(below) == [], "the guarded program outlived the harness"
    from gillab.measure import procs

    proc = procs.popen(["true"])
    assert proc.wait(timeout=30) == 0
    assert group_members(proc.pid), "the watcher waits for the harness"
    procs.kill_group(proc)
    assert wait_gone(group_members(proc.pid)) == []
    assert procs.run(["sh", "-c", "exit 3"], timeout=30).returncode == 3


def test_the_cli_reads_what_the_chapter_reads_and_says_which(builds, data_dir):
    """A reader's campaign holding countdown in another configuration (a smoke run): the chapter
    of the default profile shows the reference's samples; `gillab verdicts` and `gillab results`
    judge and summarise those same samples (they once dropped the experiment) and say so."""
    import subprocess
    import sys

    from conftest import copy_reference

    from gillab.present import page

    ref = copy_reference(data_dir)
    mine = sweep.measure("countdown", "smoke", {"conditions": "3.13.5", "threads": [1], "repeats": 1}, progress=False)
    ch = page.Chapter("countdown", {"profile": "default"}, set())
    assert ch.campaign == ref                                      # what the chapter reads
    notes = []
    rows = verdicts.verdicts(experiments=["countdown"], profile="default", notes=notes, as_chapter=True)
    assert rows and {r["campaign"] for r in rows} == {ref}
    assert notes == [f"countdown: campaign {mine.campaign} holds no samples of this configuration "
                     f"({verdicts.profile_config('countdown', 'default')}); the reference campaign's are read, "
                     "as in the chapter"]
    # each campaign judged alone (the across-machines page) never borrows the reference's samples
    assert verdicts.verdicts(mine.campaign, ["countdown"], profile="default") == []
    out = subprocess.run([sys.executable, "-m", "gillab", "verdicts", "--json"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and any(r["experiment"] == "countdown" for r in json.loads(out.stdout))
    assert "holds no samples of this configuration" in out.stderr and f"campaign(s) {ref}" in out.stderr
    out = subprocess.run([sys.executable, "-m", "gillab", "results", "countdown", "--json"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and json.loads(out.stdout)["campaign"] == ref
    assert f"countdown: campaign {ref}, profile default (countdown: campaign {mine.campaign} holds" in out.stderr
