"""Campaigns that travel (gillab export / import) and the across-machines comparison."""
import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from gillab.judge import across, pairs, verdicts
from gillab.measure import campaigns, exchange

REPO = Path(__file__).resolve().parents[1]
REF = "intel-xeon-2c-20261130T184405Z"            # committed: the reference (verdicts, history, traces, overhead)
SAME_BOOT = "intel-xeon-2c-20261130T202705Z"      # committed: a reader's run on the reference's machine, same boot
SITTING4 = "amd-epyc-2c-20261127-sitting4"        # committed: the reference until 2026-11-30, another kind
CONTRIBUTED = "amd-epyc-2c-20261123T201134Z"      # committed: the first campaign from another machine
FORMER_REFERENCE = "amd-epyc-2c"                  # committed: the reference until 2026-11-24, same kind as CONTRIBUTED
SECOND_KIND = "amd-epyc-2c-20261124-sitting1"     # committed: default + verdicts on SITTING4's kind of machine
SITTING2 = "amd-epyc-2c-20261124-sitting2"        # committed: the reference until 2026-11-25, SITTING4's kind, an earlier boot
SOURCE = REPO / "data" / "results" / CONTRIBUTED


def tree(root: Path) -> dict:
    """Every file under ``root`` (hidden ones too) with its bytes: what 'nothing written' compares."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()} \
        if root.exists() else {}


def plain_campaign(data_dir: Path, cid: str = CONTRIBUTED, experiments=None) -> Path:
    """The committed contributed campaign's files as a campaign of this data folder (no manifest:
    as its own machine had it), optionally only some experiments."""
    dst = data_dir / "results" / cid
    shutil.copytree(SOURCE, dst, ignore=shutil.ignore_patterns("MANIFEST.json"))
    for d in dst.iterdir():
        if d.is_dir() and experiments is not None and d.name not in experiments:
            shutil.rmtree(d)
    return dst


def test_export_then_import_is_byte_identical(data_dir, tmp_path, monkeypatch):
    src = plain_campaign(data_dir, experiments={"countdown", "data_race"})
    original = tree(src)
    archive = exchange.export(CONTRIBUTED, tmp_path / "a.tar.gz")
    assert exchange.export(CONTRIBUTED, tmp_path / "again.tar.gz").read_bytes() == archive.read_bytes()

    other = tmp_path / "other-data"
    monkeypatch.setenv("GILLAB_DATA", str(other))
    assert exchange.import_(archive) == (CONTRIBUTED, "imported")
    got = tree(other / "results" / CONTRIBUTED)
    manifest = json.loads(got.pop("MANIFEST.json"))
    assert got == original                                   # every file, byte for byte
    assert manifest["schema"] == exchange.SCHEMA and manifest["machine"]["fingerprint"] == "af7bb5f06bf7"
    assert set(manifest["experiments"]) == {"countdown", "data_race"}
    assert all(len(e["sample_code_keys"]) >= 1 and e["code_key_of_this_harness"] for e in manifest["experiments"].values())
    # the imported campaign exports to the very archive it came from; importing it again changes nothing
    assert exchange.export(CONTRIBUTED, tmp_path / "b.tar.gz").read_bytes() == archive.read_bytes()
    assert exchange.import_(archive) == (CONTRIBUTED, "already here")
    c = campaigns.load(CONTRIBUTED)
    assert c.is_contributed and c.role == "contributed"


def test_the_committed_contributed_campaign_matches_its_manifest():
    """The campaign from ../shared/campaigns as imported: every file as its manifest says, and the
    folder it came from unchanged beside it (where shared/ is present)."""
    members = exchange._members(CONTRIBUTED, (SOURCE / "MANIFEST.json").read_bytes(), exchange.campaign_files(SOURCE))
    got = exchange.check(members, reference=campaigns.reference_id())
    assert got.campaign == CONTRIBUTED and len(got.files) == len(got.manifest["files"])
    shared = REPO.parent / "shared" / "campaigns" / CONTRIBUTED
    if shared.is_dir():
        assert exchange.campaign_files(shared) == got.files


def _archive(members) -> bytes:
    return exchange._tar_bytes(members)


def _good(data_dir, tmp_path):
    plain_campaign(data_dir, experiments={"countdown"})
    path = exchange.export(CONTRIBUTED, tmp_path / "good.tar.gz")
    shutil.rmtree(data_dir / "results" / CONTRIBUTED)
    with tarfile.open(path) as tar:
        members = [(m.name, tar.extractfile(m).read()) for m in tar.getmembers()]
    return path, members


def _with(members, name, data):
    return [(n, data if n == name else d) for n, d in members]


def _manifest(members):
    return json.loads(dict(members)["MANIFEST.json"])


def _remanifest(members, **change):
    m = _manifest(members) | change
    return _with(members, "MANIFEST.json", json.dumps(m).encode())


def _rehash(members, name, data):
    """``name`` replaced by ``data`` with the manifest's size and hash updated: an archive whose
    hashes hold, to reach the checks behind them."""
    m = _manifest(members)
    rel = name.split("/", 1)[1]
    for f in m["files"]:
        if f["path"] == rel:
            f.update(bytes=len(data), sha256=exchange._sha256(data))
    return _with(_with(members, name, data), "MANIFEST.json", json.dumps(m).encode())


def _renamed(members, old, new):
    """Every member and manifest path with ``old`` written ``new`` (hashes still hold)."""
    files = [f | {"path": f["path"].replace(old, new)} for f in _manifest(members)["files"]]
    return [(n.replace(f"/{old}", f"/{new}"), d) for n, d in _remanifest(members, files=files)]


def _raw_tar(entries) -> bytes:
    """An uncompressed tar of (TarInfo, data) written by hand (links, huge headers)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            if data is None:
                buf.write(info.tobuf(tarfile.PAX_FORMAT))
            else:
                tar.addfile(info, io.BytesIO(data) if data else None)
    return buf.getvalue()


def bad_archives(good_path, members):
    cid = CONTRIBUTED
    samples = f"{cid}/countdown/samples.csv"
    csv_bytes = dict(members)[samples]
    cut = csv_bytes[: csv_bytes.rstrip(b"\n").rfind(b"\n") + 41]       # the last row cut to 40 characters
    machine = _manifest(members)["machine"] | {"cpu_count": 64}
    huge = tarfile.TarInfo(f"{cid}/countdown/samples.csv")
    huge.size = 2 * 2 ** 30
    link = tarfile.TarInfo(f"{cid}/countdown/runs/x.json")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    return {
        "truncated": (good_path.read_bytes()[: good_path.stat().st_size // 2], "truncated or damaged"),
        "hash mismatch": (_archive(_with(members, samples, csv_bytes.replace(b"ok", b"OK", 1))),
                          "does not match its manifest"),
        "a path outside": (_archive(members + [("../x", b"x")]), "not a plain relative path"),
        "an absolute path": (_archive(members + [("/tmp/x", b"x")]), "not a plain relative path"),
        "a 2 GB file": (_raw_tar([(huge, None)]), "more than the 64 MiB"),
        "a link": (_raw_tar([(link, b"")]), "is a link"),
        "unknown schema": (_archive(_remanifest(members, schema="gillab-campaign-archive/99")), "unknown archive schema"),
        "no manifest": (_archive([m for m in members if m[0] != "MANIFEST.json"]), "has no MANIFEST.json"),
        "a file not in the manifest": (_archive(members + [(f"{cid}/countdown/runs/extra.json", b"{}")]),
                                       "not in its manifest"),
        "unknown experiment": (_archive(_renamed(members, "countdown/", "nosuch/")), "unknown experiment 'nosuch'"),
        "the reference's id": (_archive([(n.replace(cid, REF), d) for n, d in
                                         _remanifest(members, campaign=REF)]), "reference campaign's id"),
        "a cut row": (_archive(_rehash(members, samples, cut)), "a cut or damaged row"),
        "a changed machine record": (_archive(_remanifest(members, machine=machine)), "does not hash to its fingerprint"),
        "not an archive": (b"this is not a tar file\n" * 10, "truncated or damaged"),
    }


CASES = ["truncated", "hash mismatch", "a path outside", "an absolute path", "a 2 GB file", "a link",
         "unknown schema", "no manifest", "a file not in the manifest", "unknown experiment", "the reference's id",
         "a cut row", "a changed machine record", "not an archive"]


@pytest.mark.parametrize("case", CASES)
def test_a_bad_archive_is_refused_with_one_line_and_nothing_written(case, data_dir, tmp_path):
    from conftest import copy_reference

    copy_reference(data_dir)
    good_path, members = _good(data_dir, tmp_path)
    data, message = bad_archives(good_path, members)[case]
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(data)
    before = tree(data_dir)
    with pytest.raises(exchange.ArchiveError, match=message):
        exchange.import_(bad)
    assert tree(data_dir) == before                       # nothing written, not even a temporary folder
    out = subprocess.run([sys.executable, "-m", "gillab", "import", str(bad)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("gillab: error: ") and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert tree(data_dir) == before


def test_a_contributed_campaign_is_read_only_and_never_yours(data_dir, tmp_path):
    """Even one measured on a machine of this very kind: it is never the reader's own campaign,
    and nothing is measured into it."""
    mine = campaigns.create("from-a-twin")
    shutil.copytree(SOURCE / "countdown", mine.dir / "countdown")
    assert [c.id for c in campaigns.own()] == ["from-a-twin"]
    archive = exchange.export("from-a-twin", tmp_path / "twin.tar.gz")
    shutil.rmtree(mine.dir)
    exchange.import_(archive)
    assert campaigns.own() == [] and campaigns.load("from-a-twin").is_contributed
    with pytest.raises(campaigns.ReferenceIsReadOnly, match="contributed from another machine"):
        campaigns.for_measuring("from-a-twin")
    assert campaigns.for_measuring().id != "from-a-twin"


def test_a_folder_with_stray_files_is_not_exported(data_dir, tmp_path):
    src = plain_campaign(data_dir, experiments={"countdown"})
    (src / "countdown" / "notes.txt").write_text("mine")
    with pytest.raises(exchange.ArchiveError, match="no part of a campaign: countdown/notes.txt"):
        exchange.export(CONTRIBUTED, tmp_path / "x.tar.gz")
    assert not (tmp_path / "x.tar.gz").exists()


# -- across machines -------------------------------------------------------------------------------
def _row(campaign, fp, outcome, this_code=True, cond="3.13.5"):
    return {"document": "000", "experiment": "countdown", "claim_id": "c1", "claim": "a claim", "condition": cond,
            "build": cond, "published": 1.0, "unit": "ratio", "campaign": campaign, "role": "contributed",
            "fingerprint": fp, "outcome": outcome, "measured": 1.0, "ci_low": 0.9, "ci_high": 1.1, "n": 3,
            "ours_over_published": 1.0, "ratio_low": 0.9, "ratio_high": 1.1, "this_code": this_code}


@pytest.mark.parametrize("outcomes, kind, flips", [
    (["agrees", "agrees"], "agrees", False),
    (["agrees", "lower"], across.DIFFERS, True),
    (["higher", "lower"], across.DIFFERS, True),
    (["agrees", "inconclusive"], across.DIFFERS, False),
    (["inconclusive"], "inconclusive", False),
])
def test_a_machine_kind_has_one_outcome_only_when_its_sittings_agree(outcomes, kind, flips):
    assert across.kind_outcome(outcomes) == (kind, flips)


XEON_207 = "Intel(R) Xeon(R) Processor, family / model 6 / 207, cache 266240 KB"
XEON_167 = "Intel(R) Xeon(R) Processor, family / model 6 / 167, cache 107520 KB"
EPYC_17 = "AMD EPYC, family / model 25 / 17, cache 1024 KB"


@pytest.mark.parametrize("a, b, short", [
    (XEON_207, EPYC_17, ("Intel(R) Xeon(R) Processor", "AMD EPYC")),
    (XEON_207, XEON_167, ("Intel(R) Xeon(R) Processor, family / model 6 / 207",
                          "Intel(R) Xeon(R) Processor, family / model 6 / 167")),
    (XEON_207, XEON_207.replace("266240", "107520"), (XEON_207, XEON_207.replace("266240", "107520"))),
])
def test_two_kinds_of_cpu_are_named_as_short_as_tells_them_apart(a, b, short):
    assert across.kind_names(a, b) == short
    assert across.kind_names(b, a) == short[::-1]


def test_a_kinds_interval_is_the_hull_of_its_sittings_and_judged_so_gives_the_kinds_outcome():
    """Between-sitting spread widens the interval, never the band: the hull of the sittings'
    intervals, judged against the claim's band with the smallest n, gives the outcome
    :func:`across.kind_outcome` gives from the sittings' own outcomes (differs between sittings:
    not definite), over many random pairs of sittings."""
    from gillab.judge import claims
    from gillab import stats

    rng = np.random.default_rng(7)
    band, n = 0.10, 9
    for _ in range(3000):
        sittings = []
        for _ in range(int(rng.integers(1, 4))):
            centre, half = rng.uniform(0.7, 1.3), rng.uniform(0.005, 0.15)
            sittings.append((centre - half, centre + half))
        outcomes = [claims.compare("about", 1.0, band, lo, hi, n, method=stats.MEDIAN) for lo, hi in sittings]
        lo, hi = across.kind_interval([s[0] for s in sittings], [s[1] for s in sittings])
        hull = claims.compare("about", 1.0, band, lo, hi, n, method=stats.MEDIAN)
        kind, _ = across.kind_outcome(outcomes)
        assert hull == (kind if kind != across.DIFFERS else "inconclusive"), (sittings, outcomes, hull)
        assert all(lo <= a and b <= hi for a, b in sittings)
    assert across.kind_interval([], []) != across.kind_interval([], [])       # NaN: no sitting, no interval
    v = pd.DataFrame([_row("a1", "kindA", "agrees"), _row("a2", "kindA", "agrees") | {"ci_low": 0.95, "ci_high": 1.2}])
    (r,) = across.rows(verdicts=v)
    assert r["machine_intervals"] == {"kindA": (0.9, 1.2)}


def test_k_of_n_counts_machine_kinds_not_campaigns_and_leaves_other_code_out():
    v = pd.DataFrame([_row("a1", "kindA", "agrees"), _row("a2", "kindA", "lower"),       # one kind, two sittings: flip
                      _row("b1", "kindB", "agrees"),
                      _row("c1", "kindC", "agrees"), _row("c2", "kindC", "agrees"),
                      _row("old", "kindD", "higher", this_code=False)])                  # other code: shown, not counted
    (r,) = across.rows(verdicts=v)
    assert r["machines"] == {"kindA": across.DIFFERS, "kindB": "agrees", "kindC": "agrees"}
    assert (r["n_machines"], r["n_campaigns"], r["agrees"], r["higher"], r["lower"]) == (3, 5, 2, 0, 0)
    assert r[across.DIFFERS] == 1 and r["flips"] and not r["same_everywhere"]
    assert set(r["campaigns"]) == {"a1", "a2", "b1", "c1", "c2", "old"}
    assert r["campaigns"]["old"]["measured_with_this_code"] is False


def test_the_sittings_of_a_kind_count_flips_among_its_headline_rows_judged_in_another_sitting(monkeypatch):
    """The verdicts page's sittings paragraph: only the campaign's rows judged (mechanism claims on
    their own builds) in at least one other sitting of its kind count, in every sitting that judged
    them (a sitting may have measured other chapters); a sitting that judged nothing (traces alone)
    is not one; a flip is definite on two sides."""
    from types import SimpleNamespace

    kind = [SimpleNamespace(id=i, fingerprint="kindA") for i in ("a1", "a2", "a3", "a4")]   # a3: traces alone
    other = SimpleNamespace(id="b1", fingerprint="kindB")
    monkeypatch.setattr(across, "counted", lambda: [*kind, other])
    monkeypatch.setattr(campaigns, "boots", lambda c: {"a1": ["boot1"], "a2": ["boot2"], "a3": ["boot2"],
                                                       "a4": ["boot2"], "b1": ["boot3"]}[c.id])
    rows = []
    for cond, (x, y) in {"same": ("agrees", "agrees"), "flip": ("agrees", "lower"), "differ": ("higher", "inconclusive"),
                         "both-inconclusive": ("inconclusive", "inconclusive")}.items():
        rows += [_row("a1", "kindA", x, cond=cond), _row("a2", "kindA", y, cond=cond)]
    rows += [_row("a2", "kindA", "agrees", cond="partial"), _row("a4", "kindA", "agrees", cond="partial"),
             _row("a1", "kindA", "agrees", cond="one-sitting-only"),
             _row("a1", "kindA", "agrees", cond="a2-not-measured"), _row("a2", "kindA", "not measured", cond="a2-not-measured"),
             _row("a1", "kindA", "lower", cond="not-a2s"), _row("a4", "kindA", "agrees", cond="not-a2s"),
             _row("a1", "kindA", "agrees", cond="machine") | {"claim_role": "machine"},
             _row("a2", "kindA", "lower", cond="machine") | {"claim_role": "machine"},
             _row("a1", "kindA", "agrees", cond="old-code"), _row("a2", "kindA", "lower", cond="old-code", this_code=False)]
    seen = []

    def verdicts(cs, profile):
        seen.append([c.id for c in cs])
        return pd.DataFrame([{"claim_role": "judged"} | r for r in rows])
    monkeypatch.setattr(across, "campaign_verdicts", verdicts)
    k = across.sittings_of_kind("a2")
    assert seen == [["a1", "a2", "a3", "a4"]]         # the kind's sittings only
    assert k["sittings"] == ["a1", "a2", "a4"]        # a3 judged nothing
    # same, partial: the same; flip: different; differ, both-inconclusive: open
    assert k["counts"] == {"both": 5, "the same": 2, "different": 1, "open": 2} and k["boots"] == 2
    assert [f["condition"] for f in k["flips"]] == ["flip"]
    assert across.sittings_of_kind("a3") is None      # judged nothing: not a sitting to set beside others
    assert across.sittings_of_kind("b1") is None      # the only sitting of its kind


@pytest.mark.parametrize("a, b, word", [
    ("agrees", "agrees", "the same"), ("lower", "lower", "the same"),                 # both definite, equal
    ("agrees", "lower", "different"), ("higher", "lower", "different"),               # both definite, not equal
    ("agrees", "inconclusive", "open"), ("inconclusive", "higher", "open"),           # inconclusive in one
    ("inconclusive", "inconclusive", "open"),                                         # ... or in both
    ("agrees", "not measured", "not judged in both"), ("not testable here", "agrees", "not judged in both"),
])
def test_two_campaigns_outcomes_are_the_same_different_or_open(a, b, word):
    assert across.pair_outcome(a, b) == word == across.pair_outcome(b, a)


def test_pairs_are_counted_the_same_way_from_tuples_and_from_a_frame():
    pairs = [("agrees", "agrees"), ("agrees", "lower"), ("agrees", "inconclusive"), ("inconclusive", "inconclusive"),
             ("agrees", "not measured")]
    want = {"both": 4, "the same": 1, "different": 1, "open": 2}
    assert across.pair_counts(pairs) == want
    assert across.pair_counts(pd.DataFrame(pairs, columns=["x", "y"]), "x", "y") == want
    words = pd.DataFrame({"w": [across.pair_outcome(a, b) for a, b in pairs]})
    assert across.pair_counts(words, "w") == want
    # more than two campaigns: two definite outcomes that differ make it different, whatever the rest
    assert across.outcomes_compared(["agrees", "inconclusive", "lower"]) == "different"
    assert across.outcomes_compared(["agrees", "agrees", "inconclusive"]) == "open"
    assert across.outcomes_compared(["agrees", "agrees", "agrees"]) == "the same"


def test_the_same_inconclusive_outcome_everywhere_is_open_not_the_same():
    v = pd.DataFrame([_row("a1", "kindA", "inconclusive", cond="x"), _row("b1", "kindB", "inconclusive", cond="x"),
                      _row("a1", "kindA", "lower", cond="y"), _row("b1", "kindB", "lower", cond="y"),
                      _row("a1", "kindA", "lower", cond="z"), _row("a2", "kindA", "agrees", cond="z"),
                      _row("a1", "kindA", "lower", cond="w")])                                     # one campaign only
    x, y, z, w = sorted(across.rows(verdicts=v), key=lambda r: "xyzw".index(r["condition"]))
    assert (x["compared"], y["compared"], z["compared"], w["compared"]) == ("open", "the same", "different",
                                                                            "not judged in both")
    s = across.summary([x, y, z, w]).iloc[0]
    assert (s["judged on 2+ campaigns"], s["the same"], s["different"], s["open"]) == (3, 1, 1, 1)
    assert s["of the different, flip within one kind"] == 1


@pytest.fixture(scope="module")
def committed():
    """The committed campaigns as the book reads them: the reference and the contributed one."""
    cs = [c for c in campaigns.all_campaigns() if c.is_reference or c.is_contributed]
    v = across.campaign_verdicts(cs, "default")
    return cs, v, across.rows(verdicts=v)


def test_each_campaign_is_judged_alone_never_pooled(committed):
    cs, v, table = committed
    assert {c.role for c in cs} == {"reference", "contributed"}
    # two chapters whose configuration the campaign shares with today's default
    alone = verdicts.flat(verdicts.verdicts(CONTRIBUTED, ["switch_interval", "thread_memory"]))
    alone = alone[alone["condition"] != "-"].set_index(["claim_id", "condition"])
    mine = v[(v["campaign"] == CONTRIBUTED) & v["experiment"].isin(["switch_interval", "thread_memory"])].set_index(
        ["claim_id", "condition"])
    assert len(mine) == len(alone) > 0
    assert (mine["outcome"] == alone.loc[mine.index, "outcome"]).all()
    assert (mine["n"] == alone.loc[mine.index, "n"]).all()       # n is one campaign's runs, never both
    ref = campaigns.reference_id()
    assert ref == REF

    def machine(r, c):
        return r["campaigns"][c]["machine"]

    def where(*cs):
        return [r for r in table if set(cs) <= set(r["campaigns"])]

    # the former reference and the first contributed campaign are one kind of machine (the same
    # fingerprint): two sittings of one kind; so are SITTING4 and the two campaigns measured on its
    # kind before it; the two kinds differ (a newer CPU model); the reference is a third (an Intel
    # Xeon), the kind of the reader's run measured in its boot
    assert where(FORMER_REFERENCE, CONTRIBUTED) and where(SITTING4, SECOND_KIND) and where(SITTING4, CONTRIBUTED)
    assert where(SITTING4, SITTING2) and where(ref, SAME_BOOT) and where(ref, SITTING4)
    assert all(machine(r, CONTRIBUTED) == machine(r, FORMER_REFERENCE) for r in where(FORMER_REFERENCE, CONTRIBUTED))
    assert all(machine(r, SECOND_KIND) == machine(r, SITTING4) for r in where(SITTING4, SECOND_KIND))
    assert all(machine(r, SITTING2) == machine(r, SITTING4) for r in where(SITTING4, SITTING2))
    assert all(machine(r, CONTRIBUTED) != machine(r, SITTING4) for r in where(SITTING4, CONTRIBUTED))
    assert all(machine(r, SAME_BOOT) == machine(r, ref) for r in where(ref, SAME_BOOT))
    assert all(machine(r, SITTING4) != machine(r, ref) for r in where(ref, SITTING4))
    # machines are counted by kind, never by campaign
    assert all(r["n_machines"] == len({machine(r, c) for c, m in r["campaigns"].items() if m["measured_with_this_code"]})
               for r in table)
    four = [r for r in where(SITTING4, SECOND_KIND, FORMER_REFERENCE, CONTRIBUTED)
            if all(m["measured_with_this_code"] for m in r["campaigns"].values())]
    # the four are two kinds (a row may hold more campaigns, of other kinds, that add to its count)
    assert four and {len({machine(r, c) for c in (SITTING4, SECOND_KIND, FORMER_REFERENCE, CONTRIBUTED)})
                     for r in four} == {2}
    assert all(r["n_machines"] >= 2 for r in four)


def test_the_former_reference_campaigns_fingerprint_comes_from_its_run_files():
    ref = campaigns.load(FORMER_REFERENCE)
    assert not ref.machine.get("fingerprint") and ref.fingerprint == "af7bb5f06bf7"


def test_verdicts_machines_json_on_the_committed_campaigns(committed, capsys):
    # the command line's own function, in this process: the campaigns judged for ``committed`` are
    # not judged again (`python -m gillab verdicts --json` as a program: tests/test_verdicts.py)
    from gillab import cli

    capsys.readouterr()
    assert cli.main(["verdicts", "--machines", "--json"]) == 0
    out = capsys.readouterr()
    rows = json.loads(out.out)
    assert len(rows) == len(committed[2])
    r = next(r for r in rows if r["n_campaigns"] >= 2 and CONTRIBUTED in r["campaigns"])
    assert {"claim_id", "condition", "campaigns", "machines", "agrees", "flips"} <= set(r)
    assert set(r["campaigns"][CONTRIBUTED]) >= {"outcome", "measured", "ci_low", "ci_high", "n", "role", "machine"}


def test_sittings_of_one_boot_are_named(committed):
    """The two campaigns measured on SITTING4's kind of machine on 2026-11-24 share a boot (their
    run files' boot_id); SITTING4 was measured on a later boot, and the former reference and the
    first contributed campaign, one kind too, on two machines; the reference and the reader's run
    after it share the reference's boot.  The machines chapter names those pairs only."""
    cs, _, _ = committed
    found = {frozenset((a, b)): exps for a, b, exps in across.shared_boots(cs)}
    assert frozenset((SITTING2, SECOND_KIND)) in found and frozenset((REF, SAME_BOOT)) in found
    assert frozenset((SITTING4, SITTING2)) not in found and frozenset((SITTING4, SECOND_KIND)) not in found
    assert frozenset((FORMER_REFERENCE, CONTRIBUTED)) not in found
    assert all(campaigns.load(a).fingerprint == campaigns.load(b).fingerprint for a, b in map(tuple, found))
    # named per chapter: a pair shares a boot for the chapters whose runs were measured in it
    for pair, exps in found.items():
        a, b = (campaigns.load(x) for x in pair)
        ba, bb = campaigns.boots_by_experiment(a), campaigns.boots_by_experiment(b)
        assert exps and all(ba[e] & bb[e] for e in exps)
        assert not any(ba[e] & bb.get(e, set()) for e in set(ba) - set(exps))


def test_what_the_reference_measured_of_the_grids_is_read_from_its_run_files(monkeypatch):
    """The new reference measured `default`'s grids; the former one completed its chapters with
    `-p full_grid=all` (or predates the grids), so it holds every build at every point: the texts
    that say so read it from the run files, never assert it."""
    assert verdicts.reference_grids() == "profile"
    monkeypatch.setattr(campaigns, "reference_id", lambda: FORMER_REFERENCE)
    assert verdicts.reference_grids() == "all"


# -- across CPU models -----------------------------------------------------------------------------
def _cpu(cid, model_name, family, model, cache):
    return SimpleNamespace(id=cid, machine_record={"cpu_model": model_name, "cpu": {
        "family": family, "model": model, "cache_per_core": cache}})


@pytest.mark.parametrize("outcomes, group, within", [
    (["agrees", "agrees"], "agrees", "the same"),
    (["agrees", "inconclusive"], "agrees", "open"),            # an inconclusive campaign says nothing either way
    (["agrees", "inconclusive", "agrees"], "agrees", "the same"),
    (["agrees", "lower"], across.DIFFERS, "different"),        # the group has no outcome there
    (["inconclusive", "inconclusive"], "inconclusive", "open"),
    (["lower"], "lower", "not judged in both"),
    (["not measured", "agrees"], "agrees", "not judged in both"),
    (["not measured"], None, "not judged in both"),
])
def test_a_cpu_groups_outcome_is_its_campaigns_one_definite_outcome(outcomes, group, within):
    assert across.group_outcome(outcomes) == group
    assert across.within_group(outcomes) == within


def test_pairs_of_cpu_groups_count_rows_definite_in_both_and_those_that_contradict(monkeypatch):
    monkeypatch.setattr(campaigns, "reference_id", lambda: "a1")
    cs = [_cpu("a1", "EPYC", 25, 17, "1024 KB"), _cpu("a2", "EPYC", 25, 17, "1024 KB"),
          _cpu("b1", "EPYC", 25, 1, "512 KB"), _cpu("x1", "Xeon", 6, 207, "300 KB"),
          SimpleNamespace(id="none", machine_record={})]
    groups = across.cpu_groups(cs)
    assert list(groups.values()) == [["a1", "a2"], ["b1"], ["x1"], ["none"]]     # the reference's group first
    assert list(groups)[0] == "EPYC, family / model 25 / 17, cache 1024 KB" and across.NO_CPU in groups
    rows = [{"claim_role": "judged"} | r for r in (
        _row("a1", "A", "agrees", cond="same"), _row("a2", "A", "inconclusive", cond="same"),
        _row("b1", "B", "agrees", cond="same"),
        _row("a1", "A", "higher", cond="contradict"), _row("b1", "B", "agrees", cond="contradict"),
        _row("a1", "A", "agrees", cond="flip"), _row("a2", "A", "lower", cond="flip"), _row("b1", "B", "agrees", cond="flip"),
        _row("a1", "A", "inconclusive", cond="open"), _row("b1", "B", "lower", cond="open"),
        _row("a1", "A", "agrees", cond="old"), _row("b1", "B", "agrees", cond="old", this_code=False),
        _row("b1", "B", "agrees", cond="b-only"))]
    rows += [{"claim_role": "control"} | _row("a1", "A", "agrees", cond="ctl"), {"claim_role": "control"}
             | _row("b1", "B", "lower", cond="ctl")]
    t = across.across_cpus(pd.DataFrame(rows), cs).set_index(["group", "beside"])
    a, b = list(groups)[:2]
    ab = t.loc[(a, b)]
    # same: the same; contradict: different; flip (A has no outcome) and open: open; old: other code; ctl: a control
    assert (ab["judged in both"], ab["definite in both"], ab["the same"], ab["different"], ab["open"]) == (4, 2, 1, 1, 2)
    assert ab["other code (not counted)"] == 1 and ab["campaigns"] == "2 and 1"
    aa = t.loc[(a, "itself (its campaigns)")]
    assert (aa["judged in both"], aa["definite in both"], aa["the same"], aa["different"], aa["open"]) == (2, 1, 0, 1, 1)
    assert t.loc[(b, list(groups)[2])]["judged in both"] == 0
    assert len(t) == 4 * 5 // 2                                     # every pair of groups, and each group with itself


def test_every_committed_campaign_is_in_one_cpu_group_read_from_its_metadata(committed):
    cs, _, _ = committed
    groups = across.cpu_groups(cs)
    placed = [cid for ids in groups.values() for cid in ids]
    assert sorted(placed) == sorted(c.id for c in cs) and len(placed) == len(set(placed))
    assert "intel-xeon-2c-20261127T030022Z" in placed and across.NO_CPU not in groups
    for c in cs:
        cpu = c.machine_record["cpu"]
        (g,) = [g for g, ids in groups.items() if c.id in ids]
        assert g == (f"{c.machine_record['cpu_model']}, family / model {cpu['family']} / {cpu['model']}, "
                     f"cache {cpu['cache_per_core']}")
    assert list(groups.values())[0].count(REF) == 1                  # the reference's group first
    # one group per CPU model and cache as the campaigns recorded them: the reference's, the one
    # before it, and the Intel Xeons (model 207 with two caches, as two hosts reported them)
    kinds = {(c.machine_record["cpu_model"], c.machine_record["cpu"]["model"], c.machine_record["cpu"]["cache_per_core"])
             for c in cs}
    assert len(groups) == len(kinds) >= 4
    assert {c.machine_record["cpu"]["vendor"] for c in cs} == {"AuthenticAMD", "GenuineIntel"}
    table = across.cpu_group_table(cs)
    assert table["how many"].sum() == len(cs) and list(table["CPU group"]) == list(groups)


def test_the_counts_across_cpu_groups_equal_a_direct_recount(committed):
    cs, v, _ = committed
    groups = across.cpu_groups(cs)
    t = across.across_cpus(v, cs)
    judged = v[v["this_code"] & (v["claim_role"] == "judged") & v["outcome"].isin(["agrees", "higher", "lower", "inconclusive"])]
    definite = {"agrees", "higher", "lower"}

    def outcomes(ids):
        """(claim, build) -> {campaign: outcome} of the group's campaigns."""
        out = {}
        for r in judged[judged["campaign"].isin(ids)].itertuples():
            out.setdefault((r.claim_id, r.condition), {})[r.campaign] = r.outcome
        return out
    names = list(groups)
    for _, r in t.iterrows():
        a = outcomes(groups[r["group"]])
        if r["beside"].startswith("itself"):
            keys = [k for k, o in a.items() if len(o) >= 2]
            defs = [[x for x in a[k].values() if x in definite] for k in keys]
            both, sure = len(keys), [d for d in defs if len(d) >= 2]
        else:
            b = outcomes(groups[r["beside"]])
            keys = set(a) & set(b)
            da = {k: {x for x in a[k].values() if x in definite} for k in keys}
            db = {k: {x for x in b[k].values() if x in definite} for k in keys}
            both, sure = len(keys), [da[k] | db[k] for k in keys if len(da[k]) == 1 and len(db[k]) == 1]
        diff = sum(len(set(d)) > 1 for d in sure)
        got = tuple(int(r[k]) for k in ("judged in both", "definite in both", "the same", "different", "open"))
        assert got == (both, len(sure), len(sure) - diff, diff, both - len(sure)), r
    assert len(t) == len(names) * (len(names) + 1) // 2
    # the reference's CPU beside the one before it: rows definite in both to compare
    assert t[(t["group"] == names[0]) & (t["beside"] == names[1])].iloc[0]["definite in both"] > 0


def test_every_committed_campaign_but_the_reference_is_contributed():
    """A campaign committed without its MANIFEST is read as the reader's own: a reader's run on
    that kind of machine would resume into it, and it would be shown as "yours".  Every campaign
    the repository holds is the reference or contributed (filed by ``gillab import``)."""
    listed = subprocess.run(["git", "ls-files", "data/results/*/campaign.json"], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout.split()
    committed = {Path(p).parent.name for p in listed}
    assert committed, "no committed campaign found"
    roles = {c.id: c.role for c in campaigns.all_campaigns() if c.id in committed}
    assert roles.keys() == committed
    assert {cid for cid, role in roles.items() if role == "yours"} == set()
    assert list(roles.values()).count("reference") == 1


def test_each_campaign_against_the_reference_counts_judged_rows_only(committed):
    """A machine row (claims.csv ``about = machine``: what the OS or the CPU decides) is context:
    the table of each campaign beside the reference and its figure count the judged rows alone,
    as the counts across CPU groups do."""
    cs, v, table = committed
    ref = campaigns.reference_id()
    vs = across.against(table, ref).set_index("campaign")
    judged = v[v["this_code"] & (v["claim_role"] == "judged")]
    roles = set(v["claim_role"])
    assert "machine" in roles            # there are machine rows to leave out
    for other in vs.index:
        a = judged[judged["campaign"] == ref].set_index(["claim_id", "condition"])["outcome"]
        b = judged[judged["campaign"] == other].set_index(["claim_id", "condition"])["outcome"]
        both = [pairs.pair_outcome(a[k], b[k]) for k in a.index.intersection(b.index)]
        both = [w for w in both if w != pairs.NOT_BOTH]
        assert vs.loc[other, "both"] == len(both), other
        assert vs.loc[other, "different"] == both.count(pairs.DIFFERENT), other
