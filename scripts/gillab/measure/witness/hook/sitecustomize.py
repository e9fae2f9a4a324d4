"""Start the GIL witness beside this process, once, where the harness asks for it.

Put first on the path of a witnessed sample (``PYTHONPATH``) by :mod:`gillab.measure.witness`;
a process without ``GILLAB_GIL_WITNESS`` in its environment does nothing here.  The variable is
taken out of the environment at once, so the processes this one starts are not witnessed.
The witness (``sampler.py``, under this same interpreter: it reads this release's memory layout)
is attached before this process runs on, and is told to stop and waited for when it exits, so
that its file is whole before the harness reads it.
"""
import os
import sys

_spec = os.environ.pop("GILLAB_GIL_WITNESS", None)
if _spec:
    import atexit
    import subprocess

    _sampler, _out, _start, _length, _rate = _spec.split(",")
    _witness = subprocess.Popen([sys.executable, "-s", "-B", _sampler, str(os.getpid()), _out, _start, _length, _rate],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    if _witness.stdout.readline().strip() != b"ready":
        _witness.kill()
        raise SystemExit("gillab: the GIL witness could not attach to this process")

    def _stop():
        if _witness.poll() is None:         # still sampling: the window is longer than this run
            try:
                _witness.stdin.write(b"stop\n")
                _witness.stdin.flush()
            except OSError:
                pass
        try:
            _witness.stdin.close()
        except OSError:
            pass
        _witness.wait(timeout=60)

    atexit.register(_stop)
