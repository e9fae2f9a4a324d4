"""Shared start-up and result line for every workload (stdlib only; CPython 2.7 and 3.6+).

A workload is started as ``python -s -B WORKLOAD.py '<json>'`` where the JSON holds
``params`` plus optional ``switch_interval`` and ``affinity``.  :func:`main` applies those
*before* the work starts, runs the workload's function, and prints exactly one line,
``GILLAB-RESULT {...}``, holding the function's result and what the interpreter reports of
itself at that moment (GIL state, switch interval, CPU affinity), so that every sample
carries the conditions it was really measured under.

A workload needs no code to die with the harness: the harness starts it in a process group
with a watcher beside it (see ``gillab/measure/procs.py``).
"""
import json
import os
import platform
import resource
import sys
import sysconfig
import threading
import time
import traceback

MARKER = "GILLAB-RESULT "


# 2.7 has no perf_counter; its time.time() is the best wall clock it offers
perf_counter = getattr(time, "perf_counter", time.time)


def gil_enabled():
    """Whether a GIL is in force now: sys._is_gil_enabled() (3.13+), else the nogil fork's
    sys.flags.nogil, else True (every other build has a GIL)."""
    fn = getattr(sys, "_is_gil_enabled", None)
    if fn is not None:
        return bool(fn())
    nogil = getattr(sys.flags, "nogil", None)
    return True if nogil is None else not nogil


def affinity():
    """The CPUs this process may run on: os.sched_getaffinity, else (2.7) the kernel's list."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Cpus_allowed_list:"):
                    cpus = []
                    for part in line.split(":", 1)[1].strip().split(","):
                        lo, _, hi = part.partition("-")
                        cpus.extend(range(int(lo), int(hi or lo) + 1))
                    return cpus
    except (OSError, ValueError):
        pass
    return None


def runtime_info():
    return {
        "python": platform.python_version(),
        "py_gil_disabled": sysconfig.get_config_var("Py_GIL_DISABLED") or 0,
        "nogil_fork": getattr(sys.flags, "nogil", None) is not None,
        "gil_enabled": gil_enabled(),
        # the new GIL (3.2+) switches by time, the old one (2.x) every N "ticks"
        "switch_interval": sys.getswitchinterval() if hasattr(sys, "getswitchinterval") else None,
        "check_interval": sys.getcheckinterval() if sys.version_info < (3, 2) else None,
        "affinity": affinity(),
        "pid": os.getpid(),
    }


def rusage():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu_user_s": ru.ru_utime, "cpu_sys_s": ru.ru_stime,
            "ctx_voluntary": ru.ru_nvcsw, "ctx_involuntary": ru.ru_nivcsw,
            "max_rss_kib": ru.ru_maxrss}


def timed_threads(target, args_per_thread):
    """Start one thread per argument tuple, join them all; return wall seconds.

    Thread creation, start and join are inside the timed region, as in the documents.
    """
    t0 = perf_counter()
    threads = [threading.Thread(target=target, args=a) for a in args_per_thread]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return perf_counter() - t0


def setup():
    """Read the spec from argv and apply switch interval and affinity; return the spec."""
    spec = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    if spec.get("switch_interval") is not None:
        if not hasattr(sys, "setswitchinterval"):
            raise ValueError("this interpreter has the old GIL: no sys.setswitchinterval (use check_interval)")
        sys.setswitchinterval(float(spec["switch_interval"]))
    if spec.get("check_interval") is not None:
        if sys.version_info >= (3, 2):
            raise ValueError("check_interval is the old GIL's (2.x); this interpreter has a switch interval")
        sys.setcheckinterval(int(spec["check_interval"]))
    if spec.get("affinity") is not None:
        if not hasattr(os, "sched_setaffinity"):
            raise ValueError("this interpreter has no os.sched_setaffinity (the harness pins it with taskset)")
        os.sched_setaffinity(0, set(spec["affinity"]))
    return spec


def emit(out):
    sys.stdout.write(MARKER + json.dumps(out) + "\n")
    sys.stdout.flush()


def main(fn):
    try:
        spec = setup()
        before = runtime_info()
        result = fn(spec.get("params", {}))
        out = {"ok": True, "result": result, "runtime": before,
               "gil_enabled_after": gil_enabled(), "rusage": rusage()}
    except Exception as exc:  # reported, never hidden
        out = {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc),
               "traceback": traceback.format_exc(limit=5)}
    emit(out)
    return 0 if out["ok"] else 1
