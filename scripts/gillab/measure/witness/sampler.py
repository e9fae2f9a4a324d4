"""Sample, from outside a process, which of its threads holds the GIL and which wait for it.

The reader is CPython 3.15's own: ``_remote_debugging.RemoteUnwinder``, with which its sampling
profiler (``python -m profiling.sampling``, PEP 799) samples, and whose thread states its
``--mode gil`` filters on (a thread holds the GIL, has asked for it, is on a CPU).  No patch, no
hook in the GIL: it reads the other process's memory (process_vm_readv), so it must run under
the same CPython release as the process it reads.  Standard library only.

    python3.15 sampler.py PID OUT START_MS LENGTH_MS RATE_HZ

Attached, it prints ``ready`` (the process it reads waits for that line before it runs on), then
samples from START_MS to START_MS + LENGTH_MS after it attached, at RATE_HZ, or until a line
arrives on stdin (the process is exiting) or the process is gone, and writes OUT: JSON with
every sample (its time in µs after the first and each thread's id and state bits) and every
sample that failed (a thread being created or ending as it was read), counted by error.
"""
import json
import os
import select
import sys
import time

import _remote_debugging as rd

MODE_ALL = 3          # profiling.sampling.constants.PROFILING_MODE_ALL: the GIL and CPU states
BITS = {"has_gil": rd.THREAD_STATUS_HAS_GIL, "gil_requested": rd.THREAD_STATUS_GIL_REQUESTED,
        "on_cpu": rd.THREAD_STATUS_ON_CPU, "main": rd.THREAD_STATUS_MAIN_THREAD,
        "unknown": rd.THREAD_STATUS_UNKNOWN}


def main(argv):
    pid, out, start_ms, length_ms, rate = int(argv[1]), argv[2], float(argv[3]), float(argv[4]), float(argv[5])
    unwinder = rd.RemoteUnwinder(pid, all_threads=True, mode=MODE_ALL, skip_non_matching_threads=False)
    attached = time.perf_counter_ns()
    print("ready", flush=True)
    begin = attached + int(start_ms * 1e6)
    end = begin + int(length_ms * 1e6)
    step = int(1e9 / rate)
    samples, failed, stopped = [], {}, "window closed"
    tick = begin
    while True:
        now = time.perf_counter_ns()
        if tick > now:
            ready, _, _ = select.select([sys.stdin], [], [], (tick - now) / 1e9)
            if ready:
                stopped = "the process exited before the window closed"
                break
        if tick >= end:
            break
        t = time.perf_counter_ns()
        try:
            stacks = unwinder.get_stack_trace()
        except (RuntimeError, OSError, UnicodeDecodeError, ValueError) as exc:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                stopped = "the process was gone before the window closed"
                break
            name = type(exc).__name__
            failed[name] = failed.get(name, 0) + 1
        else:
            samples.append([round((t - begin) / 1e3), [[th.thread_id, th.status] for it in stacks for th in it.threads]])
        tick += step
        while tick < time.perf_counter_ns() - step:      # late: skip the ticks missed, never burst
            tick += step
    with open(out, "w") as f:
        json.dump({"pid": pid, "window_ms": [start_ms, length_ms], "rate_hz": rate, "bits": BITS,
                   "stopped": stopped, "failed": failed, "samples": samples,
                   "sampler": {"version": sys.version, "executable": sys.executable}}, f)


if __name__ == "__main__":
    main(sys.argv)
