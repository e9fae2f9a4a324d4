"""The code key (gillab.codekey): what changes it and what does not, and the map from the older
text keys, recomputed from the commit it names."""
import csv
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from gillab import campaigns, codekey, experiments, paths, sweep

ROOT = Path(__file__).resolve().parents[1]

FUNC = '''def echo(sock, n):
    """Answer n requests."""
    done = 0
    while done < n:   # one request a turn
        data = sock.recv(64)
        sock.sendall(data)
        done += 1
    return done
'''

CLASS = '''class Echo(Experiment):
    """The echo chapter."""
    name = "echo"
    title = "Echo under load"
    notebook = "03_convoy.ipynb"
    params = {"threads": Param("threads", positive_ints, "thread counts")}

    def points(self, p):
        return [{"threads": t} for t in p["threads"]]
'''


def key(**texts):
    return codekey.key_of(texts)


@pytest.mark.parametrize("same", [
    # layout a linter fixes: comments, blank lines, line breaks inside brackets, indentation width
    FUNC.replace("  # one request a turn", "").replace("    done = 0\n", "    done = 0\n\n"),
    FUNC.replace("sock.sendall(data)", "sock.sendall(\n            data)"),
    FUNC.replace("    ", "  "),
    # a docstring's words
    FUNC.replace("Answer n requests.", "Answer ``n`` requests on ``sock``, then return."),
    FUNC.replace('    """Answer n requests."""\n', ""),
])
def test_layout_comments_and_docstrings_keep_the_key(same):
    assert key(**{"code:echo": same}) == key(**{"code:echo": FUNC})


@pytest.mark.parametrize("changed", [
    FUNC.replace("recv(64)", "recv(65)"),            # a literal
    FUNC.replace("done < n", "done <= n"),           # an operator
    FUNC.replace("sock.sendall(data)", "sock.send(data)"),   # a name
    FUNC.replace("        done += 1\n", "        done += 1\n        done += 0\n"),   # a statement
    FUNC.replace("        done += 1\n", "    done += 1\n"),   # the block a statement is in
])
def test_any_change_of_code_changes_the_key(changed):
    assert key(**{"code:echo": changed}) != key(**{"code:echo": FUNC})


def test_a_class_keeps_its_key_when_only_its_presentation_changes():
    base = key(**{"class:Echo": CLASS})
    assert key(**{"class:Echo": CLASS.replace("Echo under load", "The convoy effect")}) == base
    assert key(**{"class:Echo": CLASS.replace("03_convoy.ipynb", "convoy.md")}) == base
    assert key(**{"class:Echo": CLASS.replace('    notebook = "03_convoy.ipynb"\n', "")}) == base
    # what shapes a sample still counts: its name, its parameters, its points
    assert key(**{"class:Echo": CLASS.replace('name = "echo"', 'name = "echo2"')}) != base
    assert key(**{"class:Echo": CLASS.replace('"threads", positive', '"thread", positive')}) != base
    assert key(**{"class:Echo": CLASS.replace('[{"threads": t}', '[{"threads": t + 1}')}) != base


def test_text_that_is_not_python_is_kept_as_it_is():
    js = "export default function () {\n  http.get(url);  // one request\n}\n"
    assert key(**{"text:k6 script": js}) != key(**{"text:k6 script": js.replace("// one request", "")})
    assert key(**{"text:k6 script": js}) == key(**{"text:k6 script": js.replace("\n", "\r\n")})


def test_the_key_follows_measuring_code_not_analysis_nor_modules():
    cd = codekey.sources(experiments.get("countdown"))
    assert {"file:workload[0]", "file:workloads/_common.py", "file:runner.py",
            "class:Countdown", "class:Experiment"} <= set(cd)
    assert cd["file:workload[0]"] == (Path(codekey.__file__).parent / "workloads" / "countdown.py").read_text()
    assert not any("figure" in k or "summary" in k for k in cd)
    convoy = codekey.sources(experiments.get("convoy"))
    assert {"file:workload[0]", "file:workload[1]", "code:echo_sample"} <= set(convoy)
    # a helper is named without its module: moving it keeps the key
    assert not any(k.startswith("code:gillab") for k in convoy)
    assert sweep.code_key(experiments.get("convoy")) == codekey.key_of(convoy)


def test_a_stored_text_key_stands_for_its_token_key_and_nothing_else():
    exp = "countdown"
    (old, new), = codekey.LEGACY[exp].items()
    assert codekey.canonical(exp, old) == new
    assert codekey.same_code(exp, old, new) and codekey.same_code(exp, new, new)
    assert not codekey.same_code(exp, old, "0" * 16)
    assert not codekey.same_code(exp, "", new)
    assert codekey.canonical("sha256", old) == old          # another chapter's key means nothing here
    row = {"identity_key": "i", "code_key": old}
    assert sweep.why_not_resumable(row, "i", new, exp) is None
    assert sweep.why_not_resumable(row, "i", "0" * 16, exp) == sweep.CODE_CHANGED


def _git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False)


OLD_KEYS = r'''
import importlib.util, json, sys
from pathlib import Path
old, new = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, str(old))
from gillab import experiments, runner, sweep
from gillab.experiment import Experiment
spec = importlib.util.spec_from_file_location("newcodekey", new)
ck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ck)
out = {}
for n in experiments.names():
    e = experiments.get(n)
    srcs = ck.sources(e, pkg=old / "gillab", workload_path=runner.workload_path, base=Experiment)
    out[n] = [sweep.code_key(e), ck.key_of(srcs)]
print(json.dumps(out))
'''


def test_the_legacy_map_is_what_its_commit_computes(tmp_path):
    """Each text key of the map, and the token key it stands for, are recomputed from the files
    of the commit the map names: that commit's own ``sweep.code_key`` and this module's token key
    over that commit's sources."""
    legacy = json.loads(codekey.LEGACY_FILE.read_text())
    commit = legacy["commit"]
    if _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout: the commit's files cannot be read")
    arch = _git("archive", "--format=tar", commit, "scripts", "builds.toml", "profiles.toml")
    assert arch.returncode == 0, f"commit {commit} is not in this repository: {arch.stderr.decode()}"
    with tarfile.open(fileobj=io.BytesIO(arch.stdout)) as tar:
        tar.extractall(tmp_path)
    out = subprocess.run([sys.executable, "-c", OLD_KEYS, str(tmp_path / "scripts"), codekey.__file__],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    computed = json.loads(out.stdout)
    assert set(legacy["keys"]) <= set(computed)
    for name, pairs in legacy["keys"].items():
        assert pairs == {computed[name][0]: computed[name][1]}, name


def test_the_committed_campaigns_stay_resumable_where_their_code_is_unchanged():
    """The committed campaigns measured before the token keys (the former references, now
    contributed) carry text keys; where a chapter's code is still the code of the map's commit,
    every stored sample resumes under the token key (nothing would be measured again, and the
    chapter counts as measured with this code), and where it is not, none does."""
    unchanged = changed = 0
    for ref, name in [(c.id, n) for c in campaigns.all_campaigns() if c.is_reference or c.is_contributed
                      for n in experiments.names()]:
        f = paths.results_dir() / ref / name / "samples.csv"
        if not f.is_file():
            continue
        with open(f, newline="") as fh:
            rows = [r for r in csv.DictReader(fh) if r["status"] == "ok" and r.get("code_key") in codekey.LEGACY.get(name, {})]
        if not rows:
            continue
        now = sweep.code_key(experiments.get(name))
        resumes = {sweep.why_not_resumable(r, r["identity_key"], now, name) for r in rows}
        if codekey.LEGACY[name][rows[0]["code_key"]] == now:
            assert resumes == {None}, name
            unchanged += 1
        else:
            assert resumes == {sweep.CODE_CHANGED}, name
            changed += 1
    assert unchanged + changed >= 1
