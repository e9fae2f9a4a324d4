"""Document 002's Flask app on Flask's threaded development server (werkzeug), on 127.0.0.1.

Routes as published: ``/`` returns ``threading.active_count()``, ``/cpu`` computes
``sum(i * i for i in range(10**7))`` (``cpu_n`` sets the 10**7), ``/io`` writes
130,000,000 bytes (``io_bytes``) to a ``tempfile.TemporaryFile``, seeks back, reads, and calls
``os.remove(f.name)``, three times.  On Linux a ``TemporaryFile`` has no name (``f.name`` is
its file descriptor, an int), so ``os.remove`` raises after the first block and the request
ends in an error 500: this is measured as published.  ``/io_fixed`` does the three blocks
without the ``os.remove`` (the file disappears on close anyway).

It prints ``GILLAB-READY <port> {...}`` once it listens, then serves until stopped.
"""
import json
import os
import sys
import tempfile
import threading

from flask import Flask
from werkzeug.serving import make_server

from _common import runtime_info, setup

READY = "GILLAB-READY "


def make_app(cpu_n, io_bytes):
    app = Flask(__name__)
    payload = b"Hello, World!" * (io_bytes // 13)

    def heavy_computation():
        return sum(i * i for i in range(cpu_n))

    @app.route("/")
    def root():
        return f"{threading.active_count()=}"

    @app.route("/cpu")
    def cpu_bound():
        heavy_computation()
        return "CPU task done!"

    @app.route("/io")
    def io_bound():
        for _ in range(3):
            with tempfile.TemporaryFile() as f:
                f.write(payload)
                f.seek(0)
                f.read()
                os.remove(f.name)  # as published: f.name is an int on Linux, so this raises
        return "IO task done!"

    @app.route("/io_fixed")
    def io_fixed():
        for _ in range(3):
            with tempfile.TemporaryFile() as f:
                f.write(payload)
                f.seek(0)
                f.read()
        return "IO task done!"

    return app


if __name__ == "__main__":
    spec = setup()
    params = spec.get("params", {})
    app = make_app(int(params.get("cpu_n", 10 ** 7)), int(params.get("io_bytes", 130_000_000)))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    info = {"runtime": runtime_info(), "flask_threaded": True}
    sys.stdout.write(READY + "%d %s\n" % (server.server_port, json.dumps(info)))
    sys.stdout.flush()
    server.serve_forever()
