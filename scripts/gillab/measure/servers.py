"""Servers as context managers: started on 127.0.0.1, ready before use, always stopped.

A server is a workload that prints ``GILLAB-READY <port>`` once it listens (on a free port of
127.0.0.1, so a port in use cannot collide) and its ``GILLAB-RESULT`` line when its client has
gone.  The context manager waits for readiness with a timeout, and on leaving, whatever the
reason (done, exception, timeout, Ctrl-C), stops the server's whole process group.
"""
from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

from . import procs
from .interpreters import Condition, clean_env
from .runner import MARKER, WorkloadError, command

READY = "GILLAB-READY "


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    cond: Condition
    workload: str
    ready: dict
    _lines: list

    def result(self, timeout: float = 30.0) -> dict:
        """Wait for the server's result line (printed when its client has gone); the server
        keeps running, so that its threads can still be read from /proc."""
        deadline = time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            while True:
                line = next((ln for ln in self._lines if ln.startswith(MARKER)), None)
                if line is not None:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WorkloadError(f"{self.workload} under {self.cond.id} gave no result within {timeout:g} s")
                if sel.select(timeout=min(left, 0.5)):
                    got = self.proc.stdout.readline()
                    if not got:
                        raise WorkloadError(f"{self.workload} under {self.cond.id} ended without a result: "
                                            f"{self.proc.stderr_text().strip()}")
                    self._lines.append(got.rstrip("\n"))
        finally:
            sel.close()
        data = json.loads(line[len(MARKER):])
        if not data.get("ok"):
            raise WorkloadError(f"{self.workload} under {self.cond.id} failed: {data.get('error')}")
        return data

    def thread_stats(self, tid: int) -> dict:
        """Context switches and CPU seconds of one of the server's threads, read from /proc."""
        return thread_stats(self.proc.pid, tid)


def thread_stats(pid: int, tid: int) -> dict:
    out = {}
    base = f"/proc/{pid}/task/{tid}"
    try:
        with open(f"{base}/status") as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches"):
                    out["ctx_voluntary"] = int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches"):
                    out["ctx_involuntary"] = int(line.split()[1])
        with open(f"{base}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out["cpu_s"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        out["last_cpu"] = int(fields[36])
    except OSError:
        pass
    return out


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the server's process group, then SIGKILL to whatever is left of it (its
    watcher included, see gillab.measure.procs)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            pass
    procs.kill_group(proc)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5.0)


@contextlib.contextmanager
def workload_server(cond: Condition, workload: str, params: dict, *, switch_interval=None,
                    affinity=None, ready_timeout: float = 30.0, env: dict | None = None):
    if not cond.exists:
        raise WorkloadError(f"interpreter for {cond.id} not found: {cond.executable}")
    cmd = command(cond, workload, params, switch_interval=switch_interval, affinity=affinity)
    # stderr goes to a file, not a pipe: a chatty server (a request log) must never block on a
    # full pipe that nobody reads while it is being measured
    errfile = tempfile.TemporaryFile(mode="w+")
    proc = procs.popen(cmd, stdout=subprocess.PIPE, stderr=errfile, text=True,
                       env=clean_env({**cond.env_dict, **(env or {})}))
    proc.stderr_text = lambda: (errfile.seek(0), errfile.read()[-600:])[1]
    try:
        lines: list[str] = []
        port, ready = None, {}
        deadline = time.monotonic() + ready_timeout
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        while port is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkloadError(f"{workload} under {cond.id} not ready within {ready_timeout:g} s")
            if not sel.select(timeout=min(left, 0.5)):
                if proc.poll() is not None:
                    raise WorkloadError(f"{workload} under {cond.id} exited {proc.returncode} before it "
                                        f"was ready: {proc.stderr_text().strip()}")
                continue
            line = proc.stdout.readline()
            if not line:
                raise WorkloadError(f"{workload} under {cond.id} closed its output before it was ready: "
                                    f"{proc.stderr_text().strip()}")
            line = line.rstrip("\n")
            if line.startswith(READY):
                port_text, _, info = line[len(READY):].partition(" ")
                port = int(port_text)
                ready = json.loads(info) if info else {}
            else:
                lines.append(line)
        sel.close()
        yield Server(proc, port, cond, workload, ready, lines)
    finally:
        _stop(proc)
        errfile.close()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


NGINX_CONF = """
worker_processes {workers};
error_log {tmp}/error.log warn;
pid {tmp}/nginx.pid;
{user}
events {{ worker_connections 256; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    types {{ application/octet-stream bin; }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location / {{ }}
    }}
}}
"""


@contextlib.contextmanager
def nginx(root, workers: int = 2, ready_timeout: float = 10.0):
    """nginx (Debian's package) serving ``root`` with HTTP Range support on 127.0.0.1, from a
    generated configuration in a temporary folder: no system service, no system config touched."""
    import shutil
    import socket

    exe = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(exe):
        raise WorkloadError("nginx is not installed (apt-get install nginx-light)")
    with tempfile.TemporaryDirectory(prefix="gillab-nginx-") as tmp:
        port = free_port()
        conf = os.path.join(tmp, "nginx.conf")
        user = "user root;" if os.geteuid() == 0 else ""
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(workers=workers, tmp=tmp, user=user, port=port, root=root))
        proc = procs.popen([exe, "-p", tmp, "-c", conf, "-g", "daemon off;"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + ready_timeout
            while True:
                if proc.poll() is not None:
                    raise WorkloadError(f"nginx exited {proc.returncode}: {proc.stderr.read().strip()[-400:]}")
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise WorkloadError(f"nginx not ready on 127.0.0.1:{port} within {ready_timeout:g} s") from None
                    time.sleep(0.05)
            yield f"http://127.0.0.1:{port}"
        finally:
            _stop(proc)
