"""GIL traces: the reader on files it must refuse, and the traced builds themselves.

The traced builds' tests check structure, never the clock: who holds the GIL after whom, what
follows a drop request, which of two intervals gives the shorter holds, what a build without a
GIL records, and that a server stopped with SIGTERM leaves its trace."""
from __future__ import annotations

import dataclasses
import json
import lzma
import os
import signal
import subprocess

import numpy as np
import pytest

from conftest import need_builds
from gillab.measure import provision, trace_file, trace_record

TRACED = ("2.7.18+trace", "3.9.2+trace", "3.13.5+trace", "3.13.5t+trace")


def raw(events, *, impl=2, pid=100, ppid=1, interval=5000, reason=1, lost=0, count=None) -> bytes:
    """A trace file as a traced build writes it (``patches/gil-trace/gillab_gil_trace.h``)."""
    arr = np.zeros(len(events), dtype=trace_file.EVENT)
    for i, (t, tid, ev) in enumerate(events):
        arr[i]["t_ns"], arr[i]["tid"], arr[i]["event"] = t, tid, ev
    head = trace_file.HEADER.pack(trace_file.MAGIC, 1, impl, events[0][0] if events else 0,
                              len(events) if count is None else count, lost, pid, interval, reason, ppid)
    return head + arr.tobytes()


T_ = trace_file
W, T, D, R, F, K = T_.WANT, T_.TAKE, T_.DROP, T_.REQUEST, T_.DROP_FORCED, T_.DROP_TICKS
MS = 1_000_000
# main (100) holds; thread 7 waits, asks after one interval, main drops when asked, 7 takes
TURN = [(0, 100, W), (1, 100, T), (2 * MS, 7, W), (7 * MS, 7, R), (7 * MS + 50, 100, F),
        (7 * MS + 90, 7, T), (7 * MS + 95, 100, W), (9 * MS, 7, D), (9 * MS + 30, 100, T), (10 * MS, 100, D)]


def test_a_trace_reads_back_with_its_holds_waits_and_handoffs():
    assert trace_file.HEADER.size == 64 and trace_file.EVENT.itemsize == 16
    tr = trace_file.parse(raw(TURN))
    assert tr.threads == [100, 7] and tr.label(100) == "main" and tr.label(7) == "thread 1"
    s = trace_file.spans(tr)
    holds = s[s["kind"] == "hold"].set_index(["tid", "start_ns"])
    assert holds.loc[(100, 1), "ended_by"] == "drops when asked"
    assert holds.loc[(7, 7 * MS + 90), "dur_ns"] == 2 * MS - 90
    waits = s[s["kind"] == "wait"]
    assert sorted(waits["dur_ns"]) == [1, 2 * MS - 65, 5 * MS + 90]
    assert trace_file.handoffs(tr) == 2
    summ = trace_file.summary(tr)
    assert summ["threads"]["thread 1"]["holds"] == 1 and summ["events"] == len(TURN)
    assert trace_file.waits_in_intervals(tr, 7)[0] == pytest.approx((5 * MS + 90) / 5e6)


def test_slots_out_of_time_order_are_read_in_time_order():
    # a thread preempted between reading the clock and taking its slot writes an older time later
    late = [TURN[0], TURN[2], TURN[1], *TURN[3:]]
    assert np.array_equal(trace_file.parse(raw(late)).events, trace_file.parse(raw(TURN)).events)


def test_a_slot_still_being_written_when_the_file_was_is_left_out_and_counted():
    tr = trace_file.parse(raw([*TURN[:3], (0, 7, 0), *TURN[3:]]))
    assert tr.unfinished == 1 and len(tr.events) == len(TURN)


@pytest.mark.parametrize("damage, says", [
    (lambda b: b[:40], "shorter than a trace's header"),
    (lambda b: b"NOTTRACE" + b[8:], "not a GIL trace"),
    (lambda b: b[:-5], "cut short"),
    (lambda b: raw(TURN, count=len(TURN) + 1), "cut short"),
    (lambda b: raw([(10 * MS, 1, W), (1, 1, T)]), "outside the trace's run"),
    (lambda b: raw([(1, 1, W), (2 * 86_400 * 10**9, 1, T)]), "outside the trace's run"),
    (lambda b: raw([(1, 1, 9)]), "unknown event codes"),
])
def test_a_damaged_trace_is_refused_saying_why(damage, says):
    with pytest.raises(trace_file.TraceError, match=says):
        trace_file.parse(damage(raw(TURN)))


def test_a_stored_trace_round_trips_and_damage_is_reported_not_read(tmp_path):
    src = tmp_path / "gil-1.trace"
    src.write_bytes(raw(TURN))
    path = trace_file.store(src, tmp_path / "t", "threads=2__3.9.2", {"experiment": "countdown", "condition": "3.9.2"})
    back = trace_file.read(path)
    assert np.array_equal(back.events, trace_file.parse(raw(TURN)).events)
    assert back.meta["condition"] == "3.9.2" and back.meta["events"] == len(TURN)
    (tmp_path / "t" / "x.gtrace.xz").write_bytes(lzma.compress(raw(TURN)[:-3]))
    (tmp_path / "t" / "x.json").write_text("{}")
    (tmp_path / "t" / "y.json").write_text("{}")
    good, damaged = trace_file.stored(tmp_path / "t")
    assert len(good) == 1
    assert any("x.gtrace.xz" in d and "cut short" in d for d in damaged)
    assert any("y.json" in d and "missing" in d for d in damaged)
    bad = tmp_path / "bad.trace"
    bad.write_bytes(b"GILTRACE")
    with pytest.raises(trace_file.TraceError):
        trace_file.store(bad, tmp_path / "t", "bad", {})
    assert not (tmp_path / "t" / "bad.gtrace.xz").exists()


def test_chrome_export_is_trace_event_json_with_a_row_per_thread():
    doc = json.loads(json.dumps(trace_file.chrome(trace_file.parse(raw(TURN), {"condition": "3.9.2"}))))
    ev = doc["traceEvents"]
    names = {e["args"]["name"] for e in ev if e["name"] == "thread_name"}
    assert names == {"main", "thread 1"}
    complete = [e for e in ev if e["ph"] == "X"]
    assert {e["name"] for e in complete} == {"holds the GIL", "waits for the GIL"}
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in complete)
    assert sum(e["ph"] == "i" for e in ev) == 1


def test_the_trace_plan_names_real_points_and_traced_builds():
    from gillab.measure import experiments

    for shot in trace_record.PLAN:
        exp = experiments.get(shot.experiment)
        assert shot.point in exp.points(exp.resolve("default")), shot
        for b in shot.builds:
            assert trace_record.traced_build(b) in TRACED
    assert trace_record.traced_build("3.13.5t-gil") == "3.13.5t+trace"



def test_a_window_opens_and_closes_inside_what_the_default_profile_measures():
    """A window set for another profile's timing records the server idle after the client stopped
    (convoy) or the background threads after the last ping (ccbench): every echo window lies inside
    the client's counted windows, every ccbench window inside its pings, at default's timing."""
    from gillab.measure import experiments

    conv = experiments.get("convoy").resolve("default")
    lat = experiments.get("ccbench").resolve("default")
    counted = (1000 * conv["warmup_s"], 1000 * (conv["warmup_s"] + conv["windows"] * conv["window_s"]))
    for shot in trace_record.PLAN:
        start, end = shot.window[0], sum(shot.window)
        if shot.experiment == "convoy":
            assert counted[0] <= start < end <= counted[1], shot
        elif shot.experiment == "ccbench":
            assert 0 < start < end <= 1000 * lat["latency_duration"], shot
    assert trace_record.convoy_window() == (300, 300)       # 0.2 s warm-up, one 0.5 s window
def test_traced_builds_are_declared_beside_their_twins_and_never_measured():
    from gillab.measure import interpreters

    specs = {s.build_id: s for s in provision.all_specs()}
    for tid in TRACED:
        base = specs[tid.removesuffix("+trace")]
        spec = specs[tid]
        assert spec.trace_of == base.build_id and spec.configure_flags == base.configure_flags
        assert spec.src == base.src and spec.patches[:-1] == base.patches and spec.version == base.version
        provision.check_patches(spec)
    assert not any(c.id.endswith("+trace") for c in interpreters.discover())
    assert provision.load_builds()[1]["trace"] == list(TRACED)


def test_committed_traces_read_whole_and_keep_to_the_budget():
    from gillab.paths import repo_root

    for camp in sorted((repo_root() / "data" / "results").iterdir()):
        if not (camp / "traces").is_dir():
            continue
        assert trace_record.campaign_bytes(camp) <= trace_record.BUDGET_BYTES, camp.name
        for folder in (f for f in (camp / "traces").iterdir() if f.is_dir()):
            good, damaged = trace_file.stored(folder)
            assert good and not damaged, (camp.name, folder.name, damaged)


# -- the traced builds ----------------------------------------------------------------------------
@pytest.fixture(scope="session")
def traced():
    """The traced builds (:func:`conftest.need_builds`): id -> executable."""
    specs = need_builds(TRACED, "traced builds", "make interpreters TRACE=1")
    return {b: str(s.executable()) for b, s in specs.items()}


def spin(n: int, interval: float | None = None, threads: int = 2) -> str:
    """A program: ``threads`` CPU-bound threads of ``n`` decrements each (2.7 and 3.x alike)."""
    set_interval = f"sys.setswitchinterval({interval})\n" if interval else ""
    return ("import sys, threading\n" + set_interval
            + "def f(n):\n    while n > 0:\n        n -= 1\n"
            + f"ts = [threading.Thread(target=f, args=({n},)) for _ in range({threads})]\n"
            + "[t.start() for t in ts]\n[t.join() for t in ts]\n")


def run_traced(exe: str, program: str, tmp_path, env: dict | None = None, name="gil.trace"):
    path = tmp_path / name
    full = {"PATH": os.environ["PATH"], trace_file.TRACE_ENV: str(path), **(env or {})}
    subprocess.run([exe, "-c", program], env=full, check=True, timeout=120, cwd=tmp_path)
    return trace_file.parse(path.read_bytes()) if path.exists() else None


def holds_never_overlap(tr) -> bool:
    holder = None
    for tid, ev in zip(tr.events["tid"].tolist(), tr.events["event"].tolist()):
        if ev == trace_file.TAKE:
            if holder is not None:
                return False
            holder = tid
        elif ev in trace_file.DROPS:
            if holder not in (tid, None):
                return False
            holder = None
    return True


@pytest.mark.parametrize("build", ["2.7.18+trace", "3.9.2+trace", "3.13.5+trace", "3.13.5t+trace"])
def test_two_cpu_bound_threads_take_the_gil_in_turns(traced, build, tmp_path):
    env = {"PYTHON_GIL": "1"} if "t+" in build else {}
    # enough work for several switch intervals; the old GIL's 100-tick drops fill the ring sooner
    tr = run_traced(traced[build], spin(3_000_000 if build.startswith("2.7") else 10_000_000), tmp_path, env)
    workers = [t for t in tr.threads if t != tr.pid]
    assert len(workers) == 2 and tr.lost == 0 and tr.reason == 1
    s = trace_file.spans(tr)
    turns = 3
    for w in workers:
        assert (s[(s["tid"] == w)]["kind"] == "hold").sum() >= turns
    assert trace_file.handoffs(tr) >= 2 * turns
    assert holds_never_overlap(tr)
    drops = set(tr.events["event"].tolist()) & set(trace_file.DROPS)
    assert (trace_file.DROP_TICKS in drops) == (build == "2.7.18+trace")
    assert (trace_file.DROP_FORCED in drops) == (build != "2.7.18+trace")


@pytest.mark.parametrize("build", ["3.9.2+trace", "3.13.5+trace"])
def test_a_forced_drop_follows_a_drop_request(traced, build, tmp_path):
    tr = run_traced(traced[build], spin(3_000_000), tmp_path)
    requested, forced = False, 0       # since the holder took the GIL
    for ev in tr.events["event"].tolist():
        if ev == trace_file.TAKE:
            requested = False
        elif ev == trace_file.REQUEST:
            requested = True
        elif ev == trace_file.DROP_FORCED:
            assert requested, "a forced drop with no drop request since the holder took the GIL"
            forced += 1
    assert forced >= 3


@pytest.mark.parametrize("build", ["3.9.2+trace", "3.13.5+trace"])
def test_holds_are_shorter_at_1_ms_than_at_5_ms(traced, build, tmp_path):
    med = {}
    for interval in (0.001, 0.005):
        tr = run_traced(traced[build], spin(4_000_000, interval), tmp_path, name=f"{interval}.trace")
        assert tr.interval == round(interval * 1e6)
        s = trace_file.spans(tr)
        forced = s[(s["kind"] == "hold") & (s["ended_by"] == trace_file.EVENT_NAMES[trace_file.DROP_FORCED])]
        assert len(forced) >= 5
        med[interval] = forced["dur_ns"].median()
    assert med[0.001] < med[0.005]


def test_a_build_without_its_gil_records_no_thread_but_its_start_up(traced, tmp_path):
    # 3.13.5t takes its GIL while it starts, before its configuration switches it off: the main
    # thread's few events then, and nothing of any thread after
    off = run_traced(traced["3.13.5t+trace"], spin(1_000_000), tmp_path, name="off.trace")
    assert off is None or (off.threads == [off.pid] and not (set(off.events["event"].tolist()) & set(trace_file.DROPS)))
    on = run_traced(traced["3.13.5t+trace"], spin(1_000_000), tmp_path, {"PYTHON_GIL": "1"}, name="on.trace")
    assert len([t for t in on.threads if t != on.pid]) == 2 and trace_file.handoffs(on) >= 2


def test_unset_no_file_is_written(traced, tmp_path):
    for build, exe in traced.items():
        out = subprocess.run([exe, "-c", spin(100_000) + "import os; print(sorted(os.listdir('.')))"],
                             env={"PATH": os.environ["PATH"]}, cwd=tmp_path, capture_output=True, text=True,
                             check=True, timeout=60)
        assert out.stdout.strip() == "[]" and list(tmp_path.iterdir()) == [], build


def test_a_window_records_only_its_span_then_writes(traced, tmp_path):
    program = spin(20_000_000, 0.001) + "import time\ntime.sleep(0.2)\n"
    tr = run_traced(traced["3.13.5+trace"], program, tmp_path, {trace_file.WINDOW_ENV: "50,100"})
    assert tr.reason == 3
    span_ms = tr.span_ns / 1e6
    assert 0 < span_ms <= 100 and (tr.events["t_ns"][0] - tr.t0_ns) / 1e6 >= 50


def test_a_child_started_with_exec_writes_its_own_file(traced, tmp_path):
    program = ("import subprocess, sys\n" + spin(100_000)
               + f"subprocess.check_call([sys.executable, '-c', {spin(100_000)!r}])\n")
    exe = traced["3.13.5+trace"]
    subprocess.run([exe, "-c", program], env={"PATH": os.environ["PATH"], trace_file.TRACE_ENV: str(tmp_path / "g-%p")},
                   check=True, timeout=60)
    written = [trace_file.parse(p.read_bytes()) for p in tmp_path.glob("g-*")]
    assert len(written) == 2
    parent, child = sorted(written, key=lambda t: t.t0_ns)
    assert child.ppid == parent.pid
    assert {p.name for p in tmp_path.glob("g-*")} == {f"g-{t.pid}" for t in written}


@pytest.mark.parametrize("build", ["2.7.18+trace", "3.13.5+trace"])
def test_a_sigtermed_server_leaves_its_trace(traced, build, tmp_path):
    program = spin(10**12).replace("[t.join() for t in ts]\n", "") + (
        "import sys\nsys.stdout.write('ready\\n')\nsys.stdout.flush()\n[t.join() for t in ts]\n")
    path = tmp_path / "server.trace"
    proc = subprocess.Popen([traced[build], "-c", program], stdout=subprocess.PIPE, text=True,
                            env={"PATH": os.environ["PATH"], trace_file.TRACE_ENV: str(path)})
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == -signal.SIGTERM
    finally:
        proc.kill()
    tr = trace_file.parse(path.read_bytes())
    assert tr.reason == 2 and len(tr.events) > 0 and tr.pid == proc.pid


def test_record_keeps_the_workload_process_trace_in_the_campaign(traced, data_dir, monkeypatch):
    # the whole process is the window: the plan's 200 ms after the start raced the workload's start
    # under a loaded suite (an interpreter still starting holds the GIL alone, so no event fell in it)
    whole = [dataclasses.replace(s, window=(0, 600_000)) if s.experiment == "countdown" else s
             for s in trace_record.PLAN]
    monkeypatch.setattr(trace_record, "PLAN", whole)
    out = trace_record.record("countdown", ["3.9.2"], campaign="trace-test", progress=lambda m: None)
    assert out["failed"] == [] and len(out["recorded"]) == 1
    good, damaged = trace_file.stored(data_dir / "results" / "trace-test" / "traces" / "countdown")
    (tr,) = good
    assert not damaged and tr.meta["condition"] == "3.9.2" and tr.meta["point"] == {"threads": 2}
    assert len([t for t in tr.threads if t != tr.pid]) == 2 and tr.reason in (1, 3)
    again = trace_record.record("countdown", ["3.9.2"], campaign="trace-test", progress=lambda m: None)
    assert again["kept"] == [trace_record.name_of(trace_record.shots("countdown")[0], "3.9.2")]


def test_record_refuses_before_measuring_when_a_traced_build_is_missing(data_dir, monkeypatch):
    from gillab.measure import interpreters

    real = trace_record.traced_condition
    monkeypatch.setattr(trace_record, "traced_condition", lambda c: dataclasses.replace(real(c), executable="/nonexistent"))
    with pytest.raises(interpreters.ConditionError, match="make interpreters TRACE=1"):
        trace_record.record("countdown", ["3.9.2"], campaign="trace-test", progress=lambda m: None)
    assert not (data_dir / "results" / "trace-test").exists()


def test_io_calls_tell_a_lost_gil_from_one_taken_straight_back():
    from gillab.present import trace_view

    h, c = 5, 6     # the handler blocks on I/O twice: once a CPU thread takes the GIL meanwhile, once not
    events = [(0, c, W), (10, h, T), (20, h, D), (30, c, T), (40, h, W), (5 * MS, h, R), (5 * MS + 10, c, F),
              (5 * MS + 20, h, T), (5 * MS + 30, h, D), (5 * MS + 40, h, W), (5 * MS + 50, h, T),
              (5 * MS + 60, c, W)]
    tr = trace_file.parse(raw(events, pid=1))
    calls = trace_view.io_calls(tr, h)
    assert calls["lost"].tolist() == [True, False]
    assert calls["wait_ms"].tolist() == pytest.approx([(5 * MS + 20 - 40) / 1e6, 10 / 1e6])
    story = trace_view.io_story(tr)
    assert story["io_calls"] == 2 and story["lost_share"] == 0.5
    assert story["lost_wait_median_intervals"] == pytest.approx((5 * MS - 20) / 5e6)
    passed = trace_view.tick_handoffs(tr)
    assert passed["drops when asked"]["passed_share"] == 1.0 and passed["drops"]["n"] == 2


def test_a_campaign_without_traces_says_how_to_record_them(data_dir):
    from gillab.present import trace_view

    assert trace_view.load("convoy") == (None, [], [])
    text = trace_view.none_yet("convoy")
    assert "make interpreters TRACE=1" in text and "gillab trace record convoy" in text


def test_a_campaign_carries_its_traces_and_a_damaged_one_is_refused_on_import(data_dir, tmp_path):
    from gillab.measure import campaigns, exchange

    camp = campaigns.create("with-traces")
    src = tmp_path / "gil-1.trace"
    src.write_bytes(raw(TURN))
    trace_file.store(src, camp.dir / "traces" / "countdown", "threads=2__3.9.2", {"condition": "3.9.2"})
    (camp.dir / "traces" / "overhead.csv").write_text("round,experiment\n1,countdown\n")
    out = exchange.export("with-traces", tmp_path / "c.tar.gz")
    members = exchange.read_archive(out)
    assert exchange.check(members, reference=False).campaign == "with-traces"
    name = "with-traces/traces/countdown/threads=2__3.9.2.gtrace.xz"
    cut = [(n, lzma.compress(lzma.decompress(b)[:-4]) if n == name else b) for n, b in members]
    manifest = json.loads(dict(cut)[exchange.MANIFEST])     # listed anew: only the parse can tell
    data = dict(cut)[name]
    for f in manifest["files"]:
        if f["path"] == name.split("/", 1)[1]:
            f.update(bytes=len(data), sha256=exchange._sha256(data))
    cut = [(n, json.dumps(manifest).encode() if n == exchange.MANIFEST else b) for n, b in cut]
    with pytest.raises(exchange.ArchiveError, match="not a whole GIL trace"):
        exchange.check(cut, reference=False)


def test_the_waits_of_one_window_carry_no_95_percent_interval_however_many():
    """n counts runs: the waits of one traced window are one run's, so their median has no interval."""
    from gillab.present import trace_view

    one = trace_view.median_with_interval(range(200))
    assert one["median"] == 99.5 and one["n"] == 200 and one["lo"] != one["lo"] and one["hi"] != one["hi"]


# -- the recorder keeps out of the GIL's way (version 2) -------------------------------------------
RECORDS = ("gillab_trace(", "gillab_record(", "GILLAB_TAKE_BEGIN", "GILLAB_TAKE_END", "GILLAB_DROP",
           "GILLAB_TICKS_ACQUIRED")
PATCHED = {"python-2.7.18-gil-trace.patch": ("python2.7_2.7.18.orig.tar.gz", ["Python/ceval.c"]),
           "python-3.9.2-gil-trace.patch": ("python3.9_3.9.2.orig.tar.xz", ["Python/ceval_gil.h"]),
           "python-3.13.5-gil-trace.patch": ("python3.13_3.13.5.orig.tar.xz", ["Python/ceval_gil.c"])}


def patched_source(patch: str, tmp_path) -> dict[str, str]:
    """The files a trace patch touches, patched: extracted from the build's Debian upstream tarball
    (in the gillab cache, where provisioning fetched and checked it) and the patch applied with
    ``patch``."""
    import shutil
    import tarfile

    from gillab.paths import repo_root

    tarball, _ = PATCHED[patch]
    found = [p for p in [provision.cache_root() / "source" / tarball] if p.is_file()]
    if not found:
        msg = f"source {tarball} not found (build the traced interpreters first)"
        pytest.fail(msg) if os.environ.get("CI") else pytest.skip(msg)
    text = (repo_root() / "patches" / patch).read_text()
    touched = sorted({ln[6:].strip() for ln in text.splitlines() if ln.startswith("--- a/")})
    with tarfile.open(found[0]) as tar:
        top = tar.getnames()[0].split("/")[0]
        for rel in touched:
            member = tar.getmember(f"{top}/{rel}")
            member.name = rel
            tar.extract(member, tmp_path)
    assert shutil.which("patch"), "the patch tool is needed (scripts/install-system-deps.sh)"
    subprocess.run(["patch", "-s", "-p1", "-i", str(repo_root() / "patches" / patch)], cwd=tmp_path, check=True)
    return {rel: (tmp_path / rel).read_text() for rel in touched + ["Python/gillab_gil_trace.h"]}


def function_body(src: str, name: str) -> str:
    """The body of the C function ``name`` (its definition: the name at a line's start)."""
    start = next(i for i, ln in enumerate(src.splitlines(True)) if ln.startswith(f"{name}(")
                 or ln.startswith(f"static void {name}(") or ln.startswith(f"static void\n{name}("))
    lines = src.splitlines(True)[start:]
    depth, out = 0, []
    for ln in lines:
        out.append(ln)
        depth += ln.count("{") - ln.count("}")
        if depth == 0 and "}" in ln:
            break
    return "".join(out)


@pytest.mark.parametrize("patch", [p for p in PATCHED if p != "python-2.7.18-gil-trace.patch"])
def test_no_event_is_recorded_while_the_gil_mutex_is_held(patch, tmp_path):
    """From the first lock of the GIL's mutex to its last unlock, take_gil and drop_gil only read
    the clock (GILLAB_*_STAMP); every event is recorded outside the mutex."""
    files = patched_source(patch, tmp_path)
    src = files[PATCHED[patch][1][0]]
    for fn in ("take_gil", "drop_gil"):
        body = function_body(src, fn)
        if "MUTEX_LOCK(gil->mutex)" not in body:
            continue
        inside = body[body.index("MUTEX_LOCK(gil->mutex)"):body.rindex("MUTEX_UNLOCK(gil->mutex)")]
        assert not [r for r in RECORDS if r in inside], (patch, fn)
        assert "GILLAB_REQUEST_STAMP" in inside or fn == "drop_gil"
    header = files["Python/gillab_gil_trace.h"]
    for stamp in ("GILLAB_REQUEST_STAMP", "GILLAB_TAKE_STAMP"):
        lines = header[header.index(f"#define {stamp}"):].splitlines()
        end = next(i for i, ln in enumerate(lines) if not ln.endswith("\\"))
        macro = "\n".join(lines[:end + 1])         # the definition: its continued lines
        assert "gillab_stamp()" in macro and not [r for r in RECORDS if r in macro], stamp


def test_the_old_gil_hand_off_has_nothing_between_its_release_and_acquire(tmp_path):
    src = patched_source("python-2.7.18-gil-trace.patch", tmp_path)["Python/ceval.c"]
    gap = src[src.index("GILLAB_TICKS_RELEASE();"):src.index("GILLAB_TICKS_ACQUIRED();")]
    gap = gap[gap.index("PyThread_release_lock(interpreter_lock);"):]
    assert "PyThread_acquire_lock(interpreter_lock, 1);" in gap and "gillab" not in gap.lower()


@pytest.mark.parametrize("build", ["3.9.2+trace", "3.13.5+trace"])
def test_a_thread_id_is_read_once_per_thread_not_per_event(traced, build, tmp_path):
    """Thousands of events, a handful of ``gettid`` calls (strace counts them)."""
    import shutil

    assert shutil.which("strace"), "strace is needed (scripts/install-system-deps.sh)"
    path, log = tmp_path / "g.trace", tmp_path / "strace.log"
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=gettid", "-o", str(log), traced[build], "-c",
                    spin(5_000_000, 0.0002)], env={"PATH": os.environ["PATH"], trace_file.TRACE_ENV: str(path)},
                   check=True, timeout=120, cwd=tmp_path)
    tr = trace_file.parse(path.read_bytes())
    calls = sum("gettid" in ln for ln in log.read_text().splitlines())
    assert len(tr.events) > 1000 and calls <= 2 * len(tr.threads) + 4, (len(tr.events), calls)


@pytest.mark.parametrize("build", ["3.9.2+trace", "3.13.5+trace"])
def test_a_drop_for_io_is_never_labelled_forced(traced, build, tmp_path):
    """A thread that sleeps (a blocking call) beside a spinning one drops of its own accord every
    time, even while its own drop request is pending; only the spinner is asked to drop."""
    program = ("import sys, threading, time\nsys.setswitchinterval(0.001)\n"
               "def f():\n    n = 0\n    while not done:\n        n += 1\n"
               "done = False\nt = threading.Thread(target=f)\nt.start()\n"
               "for _ in range(200):\n    time.sleep(0.0005)\ndone = True\nt.join()\n")
    tr = run_traced(traced[build], program, tmp_path)
    ev = tr.events
    main = ev[ev["tid"] == tr.pid]
    voluntary, forced = (main["event"] == trace_file.DROP).sum(), (main["event"] == trace_file.DROP_FORCED).sum()
    assert voluntary >= 150 and forced <= 0.05 * voluntary, (voluntary, forced)
    assert (ev[ev["tid"] != tr.pid]["event"] == trace_file.DROP_FORCED).sum() >= 100


def test_a_wait_under_way_when_the_window_opens_is_kept_clipped(traced, tmp_path):
    program = spin(40_000_000, 0.005)
    tr = run_traced(traced["3.13.5+trace"], program, tmp_path, {trace_file.WINDOW_ENV: "100,100"})
    s = trace_file.spans(tr)
    clipped = s[s["clipped"]]
    assert len(clipped) >= 1 and (clipped["start_ns"] == clipped["start_ns"].min()).all()
    assert int(clipped["start_ns"].min()) == int(tr.events["t_ns"].min())


def test_roles_name_the_threads_in_the_timeline_and_the_export():
    meta = {"condition": "3.9.2", "roles": {"100": "main (accepts)", "7": "handler"},
            "sample_result": {"client_pid": 555, "client_condition": "3.13.5", "client_cpu": 0,
                              "placement": "pinned"}}
    tr = trace_file.parse(raw(TURN), meta)
    assert [tr.label(t) for t in tr.threads] == ["main (accepts)", "handler"]
    doc = trace_file.chrome(tr)
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] in ("thread_name", "process_name")}
    assert {"main (accepts)", "handler", "client"} <= names
    assert any(e["name"] == "process_name" and e["pid"] == 555 for e in doc["traceEvents"])


def test_a_traced_statistic_over_too_few_runs_says_so():
    from gillab.present import trace_view

    few = trace_view.over_runs([1.0, 1.1, 0.9, 1.2, 1.0, 1.05])
    assert not few["conclusive"] and "too few runs" in trace_view.over_runs_text(few)
    enough = trace_view.over_runs([1.0, 1.1, 0.9, 1.2, 1.0, 1.05, 0.95])
    assert enough["conclusive"] and enough["lo"] <= enough["median"] <= enough["hi"]
    assert "[" in trace_view.over_runs_text(enough)


def test_the_prose_states_the_convoy_trace_plan_the_code_runs():
    """The method chapter's convoy trace plan (points, runs) is the one trace_record.PLAN runs."""
    from gillab.paths import repo_root

    text = " ".join((repo_root() / "book" / "method.md").read_text().split())
    assert f"are traced over {trace_record.CONVOY_ROUNDS} runs" in text
    convoy = [s for s in trace_record.PLAN if s.experiment == "convoy"]
    one = sorted({s.point["switch_interval"] for s in convoy if s.point["cpu_threads"] == 1})
    assert one == [0.001, 0.005, 0.01] and "(1, 5 and 10 ms next to one CPU thread" in text
    two = [s.point for s in convoy if s.point["cpu_threads"] == 2]
    assert two == [{"switch_interval": 0.005, "cpu_threads": 2, "cpu_processes": 0, "placement": "pinned"}]
    assert "two CPU threads pinned at 5 ms" in text


def test_the_convoys_explorer_draws_one_run_a_point_and_the_table_reads_every_run():
    """The explorer's images are drawn in advance (kernel-free): a campaign of 7 rounds a point
    would weigh the page by megabytes, so it shows the first round's trace of each point, while
    the table and the sentences read every round."""
    from gillab.present import trace_view

    camp, trs, damaged = trace_view.load("convoy", "amd-epyc-2c-20261130-traces")
    assert not damaged and max(t.meta.get("round", 0) for t in trs) > 0
    section = trace_view.convoy(trs)
    def point(t):
        return (t.meta["condition"], t.meta.get("placement", "os"), t.meta["point"]["switch_interval"])
    shown = [point(t) for t in section.explore]
    one_thread = {point(t) for t in trs if t.meta["point"]["cpu_threads"] == 1}
    assert sorted(shown) == sorted(one_thread), "one trace for each one-thread point, no point left out"
    assert all(t.meta.get("round", 0) == 0 for t in section.explore)
    assert section.table["runs"].max() > 1          # the table still reads every round


def test_a_timeline_window_opens_where_the_gil_changes_hands():
    """Issue 78: the data race's timeline opened at the trace's start, where the main thread runs
    alone before its workers; the window now opens where the GIL changes hands most, and shows
    at least two threads holding it in every committed data-race trace."""
    from gillab.present import trace_view

    camp, trs, _ = trace_view.load("data_race")
    assert trs
    for tr in trs:
        start = trace_view.busiest_start(tr, 2.0)
        _, spans = trace_view._rows(tr, start, 2.0)
        assert spans[spans["kind"] == "hold"]["tid"].nunique() >= 2, (camp.id, trace_view.title_of(tr), start)
        assert 0 <= start <= tr.span_ns / 1e6 - 2.0


def test_the_old_gils_countdown_window_shows_its_hand_offs_one_by_one():
    """Issue 78's blind read: over the countdown's 20 ms the old GIL's hand-offs (one every tens of
    microseconds) drew one solid band. Its window is short enough that its hand-offs can be counted
    by eye, between 3 and 40 of them, while the new GIL's keep 20 ms (a few switch intervals)."""
    from gillab.present import trace_view

    camp, trs, _ = trace_view.load("countdown")
    old = [t for t in trs if t.old_gil]
    assert old and any(not t.old_gil for t in trs)
    for tr in trs:
        length = trace_view.countdown_window(tr)
        _, spans = trace_view._rows(tr, trace_view.busiest_start(tr, length), length)
        holder = spans[spans["kind"] == "hold"].sort_values("start_ns")["tid"].to_numpy()
        handoffs = int((holder[1:] != holder[:-1]).sum())
        if tr.old_gil:
            assert 3 <= handoffs <= 40, (camp.id, handoffs)
        else:
            assert length == 20.0
