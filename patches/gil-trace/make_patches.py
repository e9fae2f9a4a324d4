"""Write the GIL-trace patches of builds.toml from pristine sources (run by hand, not by builds).

    python3 patches/gil-trace/make_patches.py <dir with Python-2.7.18/, Python-3.9.2/,
                                                Python-3.13.5/ unpacked>

The sources are the upstream tarballs of builds.toml's Debian source packages (``gillab
provision`` keeps them, checked, in its cache's ``source/`` folder).

Each patch adds ``Python/gillab_gil_trace.h`` (this folder's copy) and a few hooks, one line
each, at the points where its GIL implementation is asked for, taken and let go: inside a GIL
mutex a hook only reads the clock (see the header).  Every hook
is anchored on text that must occur exactly once, so a source that differs stops the script.
Then update the patches' sha256 in builds.toml (``sha256sum patches/*.patch``).
"""
from __future__ import annotations

import difflib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADER = (HERE / "gillab_gil_trace.h").read_text()
T = "gillab_trace"

# (source folder, patch name, {file: [(anchor, replacement), ...]})
OLD_GIL = {"Python/ceval.c": [
    ('#include <ctype.h>\n', '#include <ctype.h>\n#include "gillab_gil_trace.h"\n'),
    ("    interpreter_lock = PyThread_allocate_lock();\n    PyThread_acquire_lock(interpreter_lock, 1);\n"
     "    main_thread = PyThread_get_thread_ident();\n}\n",
     "    interpreter_lock = PyThread_allocate_lock();\n    gillab_impl = 1;\n"
     "    gillab_interval_ticks = &_Py_CheckInterval;\n"
     f"    {T}(GILLAB_EV_WANT);\n    PyThread_acquire_lock(interpreter_lock, 1);\n    {T}(GILLAB_EV_TAKE);\n"
     "    main_thread = PyThread_get_thread_ident();\n}\n"),
    ("PyEval_AcquireLock(void)\n{\n    PyThread_acquire_lock(interpreter_lock, 1);\n",
     f"PyEval_AcquireLock(void)\n{{\n    {T}(GILLAB_EV_WANT);\n    PyThread_acquire_lock(interpreter_lock, 1);\n"
     f"    {T}(GILLAB_EV_TAKE);\n"),
    ("PyEval_ReleaseLock(void)\n{\n    PyThread_release_lock(interpreter_lock);\n",
     f"PyEval_ReleaseLock(void)\n{{\n    {T}(GILLAB_EV_DROP);\n    PyThread_release_lock(interpreter_lock);\n"),
    ("    assert(interpreter_lock);\n    PyThread_acquire_lock(interpreter_lock, 1);\n",
     f"    assert(interpreter_lock);\n    {T}(GILLAB_EV_WANT);\n    PyThread_acquire_lock(interpreter_lock, 1);\n"
     f"    {T}(GILLAB_EV_TAKE);\n"),
    ('        Py_FatalError("PyEval_ReleaseThread: wrong thread state");\n'
     "    PyThread_release_lock(interpreter_lock);\n",
     '        Py_FatalError("PyEval_ReleaseThread: wrong thread state");\n'
     f"    {T}(GILLAB_EV_DROP);\n    PyThread_release_lock(interpreter_lock);\n"),
    ("    if (interpreter_lock)\n        PyThread_release_lock(interpreter_lock);\n",
     f"    if (interpreter_lock) {{\n        {T}(GILLAB_EV_DROP);\n        PyThread_release_lock(interpreter_lock);\n"
     "    }\n"),
    ("        int err = errno;\n        PyThread_acquire_lock(interpreter_lock, 1);\n",
     f"        int err = errno;\n        {T}(GILLAB_EV_WANT);\n        PyThread_acquire_lock(interpreter_lock, 1);\n"
     f"        {T}(GILLAB_EV_TAKE);\n"),
    # the check interval's hand-off: nothing between the release and the acquire
    ("                PyThread_release_lock(interpreter_lock);\n\n                /* Other threads may run now */\n\n"
     "                PyThread_acquire_lock(interpreter_lock, 1);\n",
     "                GILLAB_TICKS_RELEASE();\n                PyThread_release_lock(interpreter_lock);\n\n"
     "                /* Other threads may run now */\n\n"
     "                PyThread_acquire_lock(interpreter_lock, 1);\n                GILLAB_TICKS_ACQUIRED();\n"),
]}


def _take_gil(begin: str, request: str, take: str, end: str) -> list[tuple[str, str]]:
    """take_gil's four hooks: WANT before the mutex, drop requests and the take stamped inside
    it, all recorded after the function's last unlock."""
    return [
        (begin, begin.replace("    MUTEX_LOCK(gil->mutex);\n", "    GILLAB_TAKE_BEGIN();\n    MUTEX_LOCK(gil->mutex);\n", 1)),
        (request, request.replace(request.lstrip(" "), "GILLAB_REQUEST_STAMP();\n", 1)
         .replace("GILLAB_REQUEST_STAMP();\n", "GILLAB_REQUEST_STAMP();\n" + request, 1)),
        (take, f"{take}    GILLAB_TAKE_STAMP();\n"),
        (end, end.replace("    MUTEX_UNLOCK(gil->mutex);\n", "    MUTEX_UNLOCK(gil->mutex);\n    GILLAB_TAKE_END();\n", 1)),
    ]


NEW_GIL_39 = {"Python/ceval_gil.h": [
    ("#include <errno.h>\n", '#include <errno.h>\n#include "gillab_gil_trace.h"\n'),
    ("static void create_gil(struct _gil_runtime_state *gil)\n{\n",
     "static void create_gil(struct _gil_runtime_state *gil)\n{\n    gillab_impl = 2;\n"
     "    gillab_interval_us = &gil->interval;\n"),
    ("    MUTEX_LOCK(gil->mutex);\n    _Py_ANNOTATE_RWLOCK_RELEASED",
     "    GILLAB_DROP();\n    MUTEX_LOCK(gil->mutex);\n    _Py_ANNOTATE_RWLOCK_RELEASED"),
    *_take_gil("    assert(gil_created(gil));\n\n    MUTEX_LOCK(gil->mutex);\n",
               "            SET_GIL_DROP_REQUEST(interp);\n",
               "    _Py_atomic_store_relaxed(&gil->locked, 1);\n",
               "    MUTEX_UNLOCK(gil->mutex);\n\n    errno = err;\n}\n"),
], "Python/ceval.c": [
    # the eval loop lets the GIL go because it was asked: the drop's hook reads this thread's flag
    ("        drop_gil(ceval, ceval2, tstate);\n\n        /* Other threads may run now */\n",
     "        gillab_asked = 1;\n        drop_gil(ceval, ceval2, tstate);\n        gillab_asked = 0;\n\n"
     "        /* Other threads may run now */\n"),
]}

NEW_GIL_313 = {"Python/ceval_gil.c": [
    ('#include "condvar.h"\n', '#include "condvar.h"\n#include "gillab_gil_trace.h"\n'),
    ("static void create_gil(struct _gil_runtime_state *gil)\n{\n",
     "static void create_gil(struct _gil_runtime_state *gil)\n{\n    gillab_impl = 4;\n"
     "    gillab_interval_us = &gil->interval;\n"),
    ("    drop_gil_impl(tstate, gil);\n\n#ifdef FORCE_SWITCHING\n",
     "    GILLAB_DROP();\n    drop_gil_impl(tstate, gil);\n\n#ifdef FORCE_SWITCHING\n"),
    *_take_gil("    assert(gil_created(gil));\n\n    MUTEX_LOCK(gil->mutex);\n\n    int drop_requested = 0;\n",
               "            _Py_set_eval_breaker_bit(holder_tstate, _PY_GIL_DROP_REQUEST_BIT);\n",
               "    /* We now hold the GIL */\n    _Py_atomic_store_int_relaxed(&gil->locked, 1);\n",
               "    MUTEX_UNLOCK(gil->mutex);\n\n    errno = err;\n    return;\n}\n"),
    # the eval loop lets the GIL go because it was asked: the drop's hook reads this thread's flag
    ("        /* Give another thread a chance */\n        _PyThreadState_Detach(tstate);\n",
     "        /* Give another thread a chance */\n        gillab_asked = 1;\n        _PyThreadState_Detach(tstate);\n"
     "        gillab_asked = 0;\n"),
]}

PATCHES = [
    ("Python-2.7.18", "python-2.7.18-gil-trace.patch", OLD_GIL),
    ("Python-3.9.2", "python-3.9.2-gil-trace.patch", NEW_GIL_39),
    ("Python-3.13.5", "python-3.13.5-gil-trace.patch", NEW_GIL_313),
]


def hooked(text: str, edits: list[tuple[str, str]], where: str) -> str:
    for anchor, replacement in edits:
        count = text.count(anchor)
        if count != 1:
            sys.exit(f"{where}: anchor found {count} times, not once:\n{anchor}")
        text = text.replace(anchor, replacement)
    return text


def patch_text(src: Path, files: dict) -> str:
    out = [f"gil-lab's GIL trace ({src.name}): see patches/gil-trace/gillab_gil_trace.h\n\n"]
    new = "Python/gillab_gil_trace.h"
    out += difflib.unified_diff([], HEADER.splitlines(True), "/dev/null", f"b/{new}")
    for rel, edits in files.items():
        before = (src / rel).read_text()
        after = hooked(before, edits, f"{src.name}/{rel}")
        out += difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{rel}", f"b/{rel}")
    return "".join(out)


def main(root: str) -> None:
    for folder, name, files in PATCHES:
        (HERE.parent / name).write_text(patch_text(Path(root) / folder, files))
        print(f"wrote patches/{name}")


if __name__ == "__main__":
    main(sys.argv[1])
