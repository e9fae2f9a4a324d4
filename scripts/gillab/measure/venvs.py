"""A virtual environment per interpreter build, for workloads that need a package (Flask).

Made with the build's own ``-m venv`` in the gillab cache (one per binary, so ``3.13.5t`` and
``3.13.5t-gil`` share one), with pinned requirements, and reused while its marker matches.
The condition keeps its id and environment; only the executable becomes the venv's.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

from .interpreters import Condition, clean_env
from .provision import cache_root

FLASK_REQUIREMENTS = ("flask==3.1.3",)


class VenvError(RuntimeError):
    pass


def venv_dir(cond: Condition) -> Path:
    real = os.path.realpath(cond.executable)
    key = hashlib.sha1(real.encode()).hexdigest()[:10]
    return cache_root() / "venvs" / f"{Path(real).name}-{key}"


def ensure(cond: Condition, requirements=FLASK_REQUIREMENTS) -> Condition:
    """The condition, run from a venv of its own binary holding ``requirements``."""
    d = venv_dir(cond)
    marker = d / "gillab-venv.json"
    want = {"base": os.path.realpath(cond.executable), "requirements": list(requirements)}
    py = d / "bin" / "python"
    if not (marker.exists() and json.loads(marker.read_text()) == want and py.exists()):
        env = clean_env()
        run = lambda cmd: subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)  # noqa: E731
        out = run([cond.executable, "-m", "venv", "--clear", str(d)])
        if out.returncode != 0:
            raise VenvError(f"cannot make a venv for {cond.id}: {out.stderr.strip()[-400:]}")
        out = run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements])
        if out.returncode != 0:
            raise VenvError(f"cannot install {' '.join(requirements)} for {cond.id}: {out.stderr.strip()[-600:]}")
        marker.write_text(json.dumps(want))
    return replace(cond, executable=str(py))
