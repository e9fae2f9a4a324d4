"""Document 003's memory overhead of threads, and how deep a thread can recurse.

``mode``:

- ``threads``: start ``threads`` threads that block on an event (with ``stack_kb`` > 0, after
  ``threading.stack_size(stack_kb * 1024)``), wait until every one runs, and read the process's
  virtual size and resident set from ``/proc/self/status`` before and after, and Python's own
  allocations (``tracemalloc``, every domain) over the same span.  Per thread = difference /
  threads.  The stack limit (``RLIMIT_STACK``, what a new thread's stack defaults to on Linux)
  is recorded.
- ``recursion``: in a child process (a crash is a result, not a lost sample), one thread with
  the default stack (or ``stack_kb``) and ``sys.setrecursionlimit(cap + 50)`` recurses and
  prints its depth every 100 levels; the parent records the deepest level printed, how the
  child ended (RecursionError, the cap, or a signal such as SIGSEGV) and its exit status.

Stdlib only; CPython 3.x.
"""
import os
import resource
import subprocess
import sys
import threading
import tracemalloc

from _common import main

CHILD = r"""
import sys, threading
cap = int(sys.argv[1]); stack_kb = int(sys.argv[2])
if stack_kb:
    threading.stack_size(stack_kb * 1024)
sys.setrecursionlimit(cap + 50)
out = sys.stdout
def down(n):
    if n % 100 == 0:
        out.write("%d\n" % n)
        out.flush()
    if n >= cap:
        return n
    return down(n + 1)
def run():
    try:
        down(1)
        out.write("END cap\n")
    except RecursionError:
        out.write("END RecursionError\n")
    except MemoryError:
        out.write("END MemoryError\n")
    out.flush()
t = threading.Thread(target=run)
t.start()
t.join()
"""


def status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmSize", "VmRSS"):
                out[key] = int(rest.split()[0])    # KiB
    return out


def threads_mode(p):
    n, stack_kb = int(p["threads"]), int(p.get("stack_kb") or 0)
    if stack_kb:
        threading.stack_size(stack_kb * 1024)
    release = threading.Event()
    started = threading.Semaphore(0)

    def idle():
        started.release()
        release.wait()

    tracemalloc.start()
    before = status()
    py_before = tracemalloc.get_traced_memory()[0]
    ts = [threading.Thread(target=idle) for _ in range(n)]
    for t in ts:
        t.start()
    for _ in range(n):
        started.acquire()                          # every thread is running and blocked
    after = status()
    py_after = tracemalloc.get_traced_memory()[0]
    release.set()
    for t in ts:
        t.join()
    tracemalloc.stop()
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    return {
        "vm_kib_before": before["VmSize"], "vm_kib_after": after["VmSize"],
        "rss_kib_before": before["VmRSS"], "rss_kib_after": after["VmRSS"],
        "vm_per_thread_kib": (after["VmSize"] - before["VmSize"]) / float(n),
        "rss_per_thread_kib": (after["VmRSS"] - before["VmRSS"]) / float(n),
        "py_bytes_per_thread": (py_after - py_before) / float(n),
        "rlimit_stack_kib": None if soft == resource.RLIM_INFINITY else soft // 1024,
        "stack_size_set_kib": stack_kb or None, "page_size": os.sysconf("SC_PAGE_SIZE"),
    }


def recursion_mode(p):
    cap, stack_kb = int(p["cap"]), int(p.get("stack_kb") or 0)
    proc = subprocess.Popen([sys.executable, "-s", "-B", "-c", CHILD, str(cap), str(stack_kb)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    depth, ended = 0, None
    for line in out.decode().splitlines():
        if line.startswith("END "):
            ended = line[4:]
        elif line.strip().isdigit():
            depth = int(line)
    if ended is None:
        ended = "signal %d" % -proc.returncode if proc.returncode < 0 else "exit %d" % proc.returncode
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    return {"depth": depth, "ended": ended, "crashed": proc.returncode != 0, "returncode": proc.returncode,
            "reached_cap": ended == "cap", "cap": cap, "stack_size_set_kib": stack_kb or None,
            "rlimit_stack_kib": None if soft == resource.RLIM_INFINITY else soft // 1024,
            "stderr_tail": err.decode(errors="replace")[-300:]}


def run(p):
    return {"threads": threads_mode, "recursion": recursion_mode}[p["mode"]](p)


if __name__ == "__main__":
    raise SystemExit(main(run))
