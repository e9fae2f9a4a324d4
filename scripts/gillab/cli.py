"""``gillab``: the command line of the report.

    gillab interpreters [--json]            conditions, with exact identities
    gillab provision [--set S] [--only ID]  build what builds.toml declares (skipped when valid)
    gillab measure EXPERIMENT [-P P] [-p k=v ...] [--plan [--json]]
                                            measure only (no notebook); --plan: say what would
                                            be measured and why, measure nothing
    gillab run EXPERIMENT [-P P] [-p k=v ...]       measure, then execute its notebook (papermill)
    gillab reproduce [-P P]                 measure every experiment, then the book
    gillab book [--force]                   the book from data/ (never measures; reuses notebooks
                                            whose inputs did not change)
    gillab campaigns [--json]               the reference campaign and yours
    gillab results EXPERIMENT --json        measured summary
    gillab verdicts --json                  every published number reproduced so far
    gillab verdicts --machines --json       every claim on every machine's campaign, k of n agree
    gillab export [CAMPAIGN] -o FILE        one campaign as one checked archive
    gillab import FILE|FOLDER               a campaign from another machine, checked whole first
    gillab trace record|list|export         GIL traces of the chapters' chosen points (traced builds)
    gillab trace witness                    3.15's own sampler beside the traced 3.13.5: a second witness
    gillab wheelhouse DIR                   the wheels that measuring needs, for a machine with
                                            no package registry

Measuring (measure, provision, campaigns, export) needs numpy, pandas and tqdm only
(requirements/measure.txt), not the notebook stack: a machine with many cores and no
registry measures with those, and the book is built where the notebooks are.

Measuring goes to your newest campaign on this machine (a new one the first time, or with
--new-campaign; --campaign ID names one); the committed reference campaign is read-only.

Why it is long: one short function per subcommand and the one argparse table that names them all; each calls
the layers and holds no logic of its own.
"""
from __future__ import annotations

import argparse
import ast
import json
import math
import os
import sys
from pathlib import Path

from .measure import interpreters
from .measure.profiles import BUDGET_MINUTES, PROFILES, VERDICTS_MINUTES, ParameterError


# What measuring needs (requirements/measure.txt) and what only the notebooks and the book need:
# a command that reaches a missing one says which it is in one line.
MEASURING_PACKAGES = ("numpy", "pandas", "tqdm")
# what executing the notebooks and rendering the book import (checked before anything is measured)
BOOK_PACKAGES = ("papermill", "nbclient", "nbformat", "ipykernel", "jupyter_book", "myst_nb", "matplotlib",
                 "seaborn", "ipywidgets")
# the whole notebook stack: those, what they bring, and the live explorers' JupyterLab
NOTEBOOK_PACKAGES = (*BOOK_PACKAGES, "IPython", "jupyter_core", "jupyter_client", "sphinx", "jupyterlab", "scipy")


# commands that run on the standard library alone (a bare machine builds its interpreters first)
STDLIB_COMMANDS = ("interpreters", "provision")


def _lacking(names) -> list[str]:
    import importlib.util

    missing = []
    for name in names:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def require_measuring_packages(command: str) -> None:
    """Raise :class:`ParameterError` naming the measuring package this Python lacks."""
    missing = _lacking(MEASURING_PACKAGES)
    if missing:
        raise ParameterError(missing_package(ModuleNotFoundError(name=missing[0]), command))


def require_notebook_stack(command: str, extra: tuple[str, ...] = ()) -> None:
    """Raise :class:`ParameterError` naming what of the notebook stack this Python lacks, before
    ``command`` measures or writes anything."""
    missing = _lacking((*BOOK_PACKAGES, *extra))
    if missing:
        raise ParameterError(_needs_notebook_stack(command, missing))


def _needs_notebook_stack(command: str, missing: list[str]) -> str:
    return (f"`gillab {command}` needs the notebook stack ({', '.join(missing)} missing): `make venv` installs it. "
            "Measuring does not: `gillab measure` and `gillab export` run without it")


def missing_package(exc: BaseException, command: str) -> str | None:
    """The one line for a package this Python lacks, or None when ``exc`` is no such case."""
    if not isinstance(exc, ModuleNotFoundError):
        return None
    top = (exc.name or "").split(".")[0]
    if top in MEASURING_PACKAGES:
        return (f"`gillab {command}` needs the Python package {top}, which this Python lacks: measuring needs "
                f"{', '.join(MEASURING_PACKAGES)} and nothing of the notebook stack. Install them with "
                "`pip install -r requirements/measure.txt`, or with no package registry from a wheelhouse "
                "(`make wheelhouse` where a registry is, then `make measure-env` here)")
    if top in NOTEBOOK_PACKAGES:
        return _needs_notebook_stack(command, [top])
    return None


def _parse_kv(items: list[str] | None) -> dict:
    """``-p key=value`` pairs: a value read as a Python literal where it is one (``0,2`` is a list,
    as ``[0, 2]``: the notebooks' parameters are JSON, which has no tuples), else as text."""
    out = {}
    for item in items or []:
        if "=" not in item:
            raise ParameterError(f"-p takes key=value, got {item!r}")
        key, raw = item.split("=", 1)
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        out[key.strip()] = list(value) if isinstance(value, tuple) else value
    return out


def _clean(obj):
    """JSON without NaN (which is not JSON): NaN becomes null."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item"):
        return _clean(obj.item())
    return obj


def cmd_interpreters(args) -> int:
    rows = interpreters.describe()
    if args.json:
        print(json.dumps(_clean(rows), indent=2))
        return 0
    for r in rows:
        status = r["kind"] if r["available"] else "MISSING"
        env = " ".join(f"{k}={v}" for k, v in r["env"].items())
        src = f"  [{r['source']}]" if r.get("source") else ""
        print(f"{r['condition']:<20} {status:<22} {r['version_short'] or r.get('declared_version') or '-':<10} "
              f"{r['executable']} {env}{src}")
    missing = [r["condition"] for r in rows if not r["available"] and r.get("source")]
    if missing:
        print(f"\nNot built: {', '.join(missing)}. Build them with `gillab provision --set core --set era` "
              "(or --set history, --only ID); about 3-4 min each on 2 cores.")
    return 0


def cmd_provision(args) -> int:
    from .measure import provision

    argv = (["--pgo"] if args.pgo else []) + (["--jobs", str(args.jobs)] if args.jobs else [])
    argv += [a for s in args.sets or [] for a in ("--set", s)] + [a for o in args.only or [] for a in ("--only", o)]
    argv += ["--no-deps"] if args.no_deps else []
    return provision.main(argv)


def _probes(profile: str):
    """The pace probes of a chapter measured on its own, as a whole run takes them
    (:class:`gillab.judge.steadiness.Probes`): its steadiness is on record like a sitting's."""
    from .judge import steadiness

    return steadiness.Probes(profile)


def cmd_measure(args) -> int:
    from .measure import sweep

    if args.plan:
        plan = sweep.plan(args.experiment, args.profile, _parse_kv(args.param),
                                campaign=args.campaign, new_campaign=args.new_campaign)
        d = plan.as_dict()
        if args.json:
            print(json.dumps(_clean(d), indent=2, default=str))
        else:
            print(f"{d['experiment']} [{d['profile']}] in campaign {d['campaign']}"
                  f"{' (new)' if d['campaign_is_new'] else ''}: {d['samples_planned']} of {d['samples_total']} "
                  f"samples to measure, {d['samples_resumable']} resumable")
            print(f"  points: {', '.join(d['points'])}\n  conditions: {', '.join(d['conditions'])}"
                  + (f" (missing: {', '.join(d['missing_conditions'])})" if d["missing_conditions"] else ""))
            for why, n in d["reasons"].items():
                print(f"  {n:>5}  {why}")
            if d["estimate_s"] is not None:
                est = d["estimate_s"]
                when = f"{est:.0f} s" if est < 120 else f"{est / 60:,.1f} min" if est < 7200 else f"{est / 3600:,.1f} h"
                print(f"  about {when} to measure ({d['estimate_basis']})")
            for dmg in d["damaged_rows"]:
                print(f"  damaged: samples.csv line {dmg['line']} ({dmg['reason']}): left out, set aside when "
                      "measuring, and its sample measured again")
        return 0
    res = sweep.measure(args.experiment, args.profile, _parse_kv(args.param),
                        campaign=args.campaign, new_campaign=args.new_campaign, allow_long=args.allow_long,
                        probes=_probes(args.profile))
    print(json.dumps(_clean(res.__dict__), indent=2, default=str))
    return 0 if not res.failed else 3


def cmd_run(args) -> int:
    from .present import execute
    from .measure import sweep

    require_notebook_stack("run")
    overrides = _parse_kv(args.param)
    res = sweep.measure(args.experiment, args.profile, overrides, campaign=args.campaign,
                        new_campaign=args.new_campaign, allow_long=args.allow_long,
                        probes=_probes(args.profile))   # checks, then the campaign
    execute.execute(args.experiment, args.profile, overrides | {"campaign": res.campaign}, measure=False)
    return 0 if not res.failed else 3


def minutes_arg(text: str) -> float:
    """--minutes: a positive number of minutes."""
    import argparse
    import math

    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of minutes") from None
    if not math.isfinite(x) or x <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the minutes must be a number above 0")
    return x


def cmd_reproduce(args) -> int:
    from . import reproduce

    if not args.no_book:
        require_notebook_stack("reproduce")
    out, failures = reproduce.reproduce(args.profile, campaign=args.campaign, new_campaign=args.new_campaign,
                                        render=not args.no_book, minutes=args.minutes)
    if args.no_book:
        print(f"[gillab] measured; the record of this run: {out}")
    for f in failures:
        print(f"[gillab] chapter {f['experiment']} failed: {f['error']}", file=sys.stderr)
    return 3 if failures else 0


def cmd_timing(args) -> int:
    from .present import timing

    if args.write:
        path = timing.write_chapter_times(args.profile, args.campaign)
        print(f"[gillab] written: {path}")
        rec = json.loads(path.read_text())
    else:
        rec = timing.chapter_times(args.profile, args.campaign)
    for e in rec["experiments"]:
        print(f"{e['experiment']:<16} {e['seconds'] / 60:7.1f} min  {len(e['runs'])} run(s)  "
              f"{e['stored']:>6,} of {e['planned']:,} samples stored" + ("" if not e["to_measure"] else
                                                                       f"  ({e['to_measure']:,} to measure)"))
    return 0


def cmd_trace_record(args) -> int:
    from .measure import trace_record

    return trace_record.main_record(args)


def cmd_trace_witness(args) -> int:
    from .measure import witness

    return witness.main(args)


def cmd_trace_overhead(args) -> int:
    from .measure import trace_record

    return trace_record.main_overhead(args)


def _trace_campaign(name: str | None):
    from .measure import campaigns

    if name:
        return campaigns.load(name)
    held = [c for c in campaigns.all_campaigns() if (c.dir / "traces").is_dir()]
    own = {c.id for c in campaigns.own()}
    mine = [c for c in held if c.id in own]
    if not (mine or held):
        raise campaigns.NoCampaign("no campaign holds traces yet: `make interpreters TRACE=1`, then "
                                   "`gillab trace record`")
    return (mine or held)[-1]


def cmd_trace_list(args) -> int:
    from .measure import trace_file

    camp = _trace_campaign(args.campaign)
    print(f"traces of campaign {camp.id}")
    folders = sorted((camp.dir / "traces").iterdir()) if (camp.dir / "traces").is_dir() else []
    if not folders:
        print(f"  none: `gillab trace record --campaign {camp.id}` records them (traced builds needed)")
    for folder in folders:
        good, damaged = trace_file.stored(folder)
        for tr in good:
            s = trace_file.summary(tr)
            print(f"  {folder.name:<11} {tr.meta.get('condition', '?'):<8} {tr.meta.get('point')}: "
                  f"{s['events']} events over {s['seconds'] * 1e3:.0f} ms, {s['handoffs_per_s']:.0f} hand-offs/s, "
                  f"{s['forced_drops_per_s']:.0f} forced drops/s" + (f", {tr.lost} lost" if tr.lost else ""))
        for d in damaged:
            print(f"  {folder.name:<11} damaged: {d}")
    return 0


def cmd_trace_export(args) -> int:
    from .measure import trace_file

    tr = trace_file.read(args.trace)
    args.output.write_text(json.dumps(trace_file.chrome(tr)) + "\n")
    print(f"{args.output}: {len(tr.events)} events of {tr.meta.get('condition', '?')} as Chrome trace-event JSON")
    return 0


def cmd_steady(args) -> int:
    """Pace probes before a sitting (:class:`gillab.judge.steadiness.Probes`), ``--every`` seconds
    apart, read by the steadiness rule: exit 0 where the machine is steady and alone now, 1 where
    it is not (a sitting started now would not become the reference), before anything is measured."""
    import time

    from .judge import steadiness

    if args.probes < steadiness.FEWEST_PROBES:
        raise ParameterError(f"--probes {args.probes}: the rule reads at least {steadiness.FEWEST_PROBES}")
    if args.every < 0:
        raise ParameterError(f"--every {args.every:g}: seconds between probes, at least 0")
    probes = steadiness.Probes("verdicts")
    for i in range(args.probes):
        if i:
            time.sleep(args.every)      # spaced in time: a pace that drifts over a minute shows
        got = probes.take("start" if i == 0 else "end" if i == args.probes - 1 else "between")
        if got.get("error"):
            print(f"gillab: error: the pace probe could not measure: {got['error']}", file=sys.stderr)
            return 2
        each = got.get("cpu_median_s") or {}
        cpus = (", pinned: " + ", ".join(f"CPU {c} {s:.4f} s" for c, s in each.items())
                + f" ({got['cpu_gap']:.2f}x apart)") if each else ""
        print(f"[gillab] probe {i + 1}/{args.probes}: {got['median_s']:.4f} s{cpus}, "
              f"{got.get('foreign_cpus', 0):.2f} CPU of other processes", file=sys.stderr)
    st = steadiness.of({"probes": probes.taken})
    shared = sum(not p.get("alone", True) for p in probes.taken)
    ok = st.outcome == steadiness.STEADY and not shared
    why = st.why + (f"; {shared} probe(s) measured beside other processes' load" if shared else "")
    print(f"[gillab] {'steady and alone' if ok else 'not steady and alone'}: {why}")
    if st.cpu_gap is not None:      # recorded beside the rule, not part of it
        print(f"[gillab] the CPUs' paces stood at most {st.cpu_gap:.2f}x apart (one thread pinned to each); "
              "threads that hand the GIL to each other ride both")
    return 0 if ok else 1


def cmd_campaigns(args) -> int:
    from .measure import campaigns

    rows = [campaigns.describe(c) for c in campaigns.all_campaigns()]
    if args.json:
        print(json.dumps(_clean(rows), indent=2))
        return 0
    if not rows:
        print("no campaigns yet")
    for r in rows:
        tag = ("REFERENCE " if r["reference"] else "contrib.  " if r["contributed"]
               else "yours     " if r["this_machine"] else "other     ")
        cpu = r["cpu"]
        print(f"{tag}{r['campaign']:<36} {r['cpu_model']} {cpu.get('family')}/{cpu.get('model')}/{cpu.get('stepping')} "
              f"x{r['cores']}  {', '.join(r['profiles']) or '-'}  started {r['started'] or '-'}  {r['status']}, "
              f"{r['samples']} samples  builds: {', '.join(r['builds']) or '-'}")
    return 0


def cmd_codekeys(args) -> int:
    from .judge import across, keyguard
    from .measure import campaigns

    cs, now, decl = campaigns.all_campaigns(), across.code_keys_now(), keyguard.declared()
    tab = keyguard.table(cs, now)
    problems = keyguard.problems(tab, decl, now=now)
    if args.json:
        print(json.dumps({"code_keys": now,
                          "campaigns": {c.id: c.role for c in cs},
                          "chapters": {n: {cid: s.word for cid, s in row.items()} for n, row in tab.items()},
                          "measure_again": [d.__dict__ for d in decl], "problems": problems},
                         indent=2))
    else:
        print("which code measured each campaign's chapters (this: this checkout's code key; other; "
              "k/n: k of n configuration x build groups with this code; -: not measured)")
        for i, c in enumerate(cs, 1):
            print(f"  [{i}] {c.id} ({c.role})")
        print(f"{'chapter':<16} {'this code':<17}" + "".join(f"{f'[{i}]':>7}" for i in range(1, len(cs) + 1)))
        for name, row in tab.items():
            print(f"{name:<16} {now[name]:<17}"
                  + "".join(f"{row[c.id].short:>7}" for c in cs))
        for d in decl:
            print(f"to be measured again: {d.chapter} (reference {d.reference}, key {d.code_key}): {d.reason}")
        for p in problems:
            print(f"[guard] {p}")
        if args.check and not problems:
            print("[guard] every chapter of the reference is measured with this code or declared to be measured again")
    return 1 if args.check and problems else 0


def cmd_book(args) -> int:
    require_notebook_stack("book")
    from .present import book

    book.book(execute_notebooks=not args.no_execute, profile=args.profile, force=args.force,
              campaign=args.campaign)
    return 0


def cmd_results(args) -> int:
    from .judge import verdicts

    data = verdicts.results(args.experiment, campaign=args.campaign, profile=None if args.profile == "any" else args.profile)
    print(f"[gillab] {args.experiment}: campaign {data['campaign']}, profile {args.profile}"
          + (f" ({data['note']})" if data["note"] else ""), file=sys.stderr)
    if args.json:
        print(json.dumps(_clean(data), indent=2))
    else:
        import pandas as pd

        print(pd.DataFrame(data["summary"]).to_string(index=False))
    return 0


def cmd_verdicts(args) -> int:
    from .judge import verdicts

    profile = None if args.profile == "any" else args.profile
    if args.machines:
        from .judge import across

        print(json.dumps(_clean(across.rows(profile=profile)), indent=2))
        return 0
    notes: list[str] = []
    rows = verdicts.verdicts(campaign=args.campaign, profile=profile, notes=notes, as_chapter=True)
    read = sorted({r["campaign"] for r in rows})
    print(f"[gillab] verdicts of profile {args.profile} from campaign(s) {', '.join(read) or '-'}", file=sys.stderr)
    for line in notes:
        print(f"[gillab] {line}", file=sys.stderr)
    if args.json:
        flat = verdicts.flat(rows).assign(profile=args.profile)
        print(json.dumps(_clean(flat.to_dict(orient="records")), indent=2))
    elif args.nested:
        print(json.dumps(_clean(rows), indent=2))
    else:
        if not rows:
            print(f"no claim judged: no campaign read holds samples of profile {args.profile}")
        for r in rows:
            for cond, m in r["measured"].items():
                print(f"{r['claim_id']:<28} {cond:<14} published {r['published']:.3g} {r['unit']:<5} "
                      f"measured {m['median']:.3g} [{m['ci_lo']:.3g}, {m['ci_hi']:.3g}] -> {m['verdict']}")
    return 0


def cmd_export(args) -> int:
    from .measure import exchange

    out = exchange.export(args.campaign, args.output)
    print(f"[gillab] campaign written to {out} ({out.stat().st_size:,} bytes); "
          "`gillab import` checks and files it on another machine")
    return 0


def cmd_import(args) -> int:
    from .measure import exchange

    cid, what = exchange.import_(args.source)
    print(f"[gillab] campaign {cid}: {what} (contributed, read-only); `gillab book` shows it on the "
          "across-machines page, and any chapter beside the reference with -p campaign " + cid)
    return 0


def cmd_wheelhouse(args) -> int:
    from .measure import offline

    if args.plan:
        for who, exe, reqs in offline.plan(args.profile, args.python_version):
            print(f"{who}: {exe} -m pip download {' '.join(reqs)}")
        return 0
    fetched, failed = offline.wheelhouse(args.dest, args.profile, args.python_version)
    for line in fetched:
        print(f"[wheelhouse] {line}")
    for line in failed:
        print(f"[wheelhouse] NOT fetched: {line}", file=sys.stderr)
    print(f"[wheelhouse] {args.dest}: {len(list(args.dest.glob('*.whl')))} wheels; carry it with the checkout "
          "(and the gillab cache's source/ folder: the Debian sources, checked again there), then "
          "`make measure-env WHEELHOUSE=<it>` there")
    return 1 if failed else 0


def cmd_notebooks(args) -> int:
    from .present import contents, notebooks

    for path in notebooks.write_all():
        print(path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path)
    for path in contents.write():   # every list of the chapters, from the registry
        print(f"rewrote the chapters of {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return 0


def cmd_live(args) -> int:
    import secrets

    require_notebook_stack("live", ("jupyterlab",))
    from .measure import experiments
    from .present import live, notebooks
    from .paths import repo_root

    live.check_port(args.port)
    notebooks.write_all()   # the .ipynb JupyterLab opens, from the text notebooks
    notebook = live.LIVE_NOTEBOOK
    if args.chapter:
        notebook = f"notebooks/{notebooks.ipynb_name(experiments.notebook(args.chapter))}"
    token = secrets.token_hex(16)
    cmd = live.lab_command(args.port, token, repo_root())
    print(f"[live] open {live.lab_url(args.port, token, notebook)}", flush=True)
    os.execv(cmd[0], cmd)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="gillab", description="The GIL, measured.")
    ap.add_argument("--debug", action="store_true",
                    help="show the traceback of an unexpected error (also GILLAB_DEBUG=1)")
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("interpreters", help="list conditions with their identity")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_interpreters)
    s = sub.add_parser("provision", help="build the interpreters of builds.toml (default: the 3.13.5 pair)")
    s.add_argument("--pgo", action="store_true")
    s.add_argument("--jobs", type=int)
    s.add_argument("--set", action="append", dest="sets", help="a set of builds.toml: core, era, history, doc000...")
    s.add_argument("--only", action="append", help="one build id; repeatable")
    s.add_argument("--no-deps", action="store_true", help="do not apt-get install build dependencies")
    s.set_defaults(fn=cmd_provision)
    def campaign_args(s):
        s.add_argument("--campaign", metavar="ID", help="measure into this campaign (made if new; never the reference)")
        s.add_argument("--new-campaign", action="store_true", help="start a new campaign instead of resuming yours")

    for name, fn, helptext in (("measure", cmd_measure, "measure only"),
                               ("run", cmd_run, "measure, then execute the notebook")):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("experiment")
        s.add_argument("-P", "--profile", default="default", choices=PROFILES)
        s.add_argument("-p", "--param", action="append", metavar="KEY=VALUE")
        campaign_args(s)
        s.add_argument("--allow-long", action="store_true",
                       help="measure even when the sweep would take more than 12 hours by its estimate (--plan says)")
        if name == "measure":
            s.add_argument("--plan", action="store_true", help="say what would be measured and why; measure nothing")
            s.add_argument("--json", action="store_true", help="with --plan: as JSON")
        s.set_defaults(fn=fn)
    s = sub.add_parser("reproduce", help="measure every experiment, then build the book")
    s.add_argument("-P", "--profile", default="default", choices=PROFILES)
    s.add_argument("--no-book", action="store_true", help="measure only (the run's record is written either way)")
    s.add_argument("--minutes", type=minutes_arg, default=None,
                   help=f"the most minutes to measure (default: {BUDGET_MINUTES} for default, {VERDICTS_MINUTES} for verdicts, "
                   "none otherwise): "
                   "the plan is forecast first, chapters that do not fit are left out and named, and no sample "
                   "starts after that time")
    campaign_args(s)
    s.set_defaults(fn=cmd_reproduce)
    s = sub.add_parser("timing", help="per chapter, how long a profile's samples took in a campaign (its run files)")
    s.add_argument("-P", "--profile", default="seed", choices=PROFILES)
    s.add_argument("--campaign", metavar="ID", help="default: the reference campaign")
    s.add_argument("--write", action="store_true", help="write data/timing/<profile>-chapters.json (the method "
                   "chapter shows it)")
    s.set_defaults(fn=cmd_timing)
    s = sub.add_parser("steady", help="pace probes now, read by the steadiness rule: exit 1 where a sitting "
                       "started now would not be steady and alone")
    s.add_argument("--probes", type=int, default=6, help="probes to take (default 6)")
    s.add_argument("--every", type=float, default=10.0, help="seconds between two probes (default 10)")
    s.set_defaults(fn=cmd_steady)
    s = sub.add_parser("campaigns", help="the reference campaign and yours")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_campaigns)
    s = sub.add_parser("codekeys", help="which measuring code each campaign's chapters were measured with")
    s.add_argument("--json", action="store_true")
    s.add_argument("--check", action="store_true", help="exit 1 where a chapter of the reference is not measured "
                   "with this code and not declared in data/results/MEASURE_AGAIN.toml (make test runs it)")
    s.set_defaults(fn=cmd_codekeys)
    s = sub.add_parser("book", help="render the book from data/ without measuring")
    s.add_argument("--no-execute", action="store_true", help="reuse the executed notebooks as they are")
    s.add_argument("--force", action="store_true", help="execute every notebook, even those whose inputs did not change")
    s.add_argument("--campaign", metavar="ID", help="the campaign the chapters show beside the reference "
                   "(default: your newest here; a contributed campaign's id shows another machine's)")
    s.add_argument("-P", "--profile", default="default", choices=PROFILES,
                   help="which stored configuration to show (default: default)")
    s.set_defaults(fn=cmd_book)
    s = sub.add_parser("results", help="the measured summary of one experiment")
    s.add_argument("experiment")
    s.add_argument("--json", action="store_true")
    s.add_argument("--campaign", help="default: yours if you have one, else the reference")
    s.add_argument("-P", "--profile", default="default", choices=(*PROFILES, "any"),
                   help="whose configuration's samples (a campaign may hold several; any: every sample stored)")
    s.set_defaults(fn=cmd_results)
    s = sub.add_parser("verdicts", help="published numbers beside ours, with verdicts")
    s.add_argument("--json", action="store_true", help="one flat row per claim and condition (or pair)")
    s.add_argument("--nested", action="store_true", help="JSON, one row per claim with its conditions inside")
    s.add_argument("--machines", action="store_true",
                   help="with --json: every claim x build on every campaign (reference, contributed, yours), "
                        "and how many machines agree")
    s.add_argument("--campaign", help="default: yours if you have one, else the reference")
    s.add_argument("-P", "--profile", default="default", choices=(*PROFILES, "any"),
                   help="the configuration whose samples are judged (any: every sample stored)")
    s.set_defaults(fn=cmd_verdicts)
    s = sub.add_parser("export", help="write one campaign as one archive (manifest with every file's sha256)")
    s.add_argument("campaign", nargs="?", help="default: your newest campaign on this machine")
    s.add_argument("-o", "--output", required=True, type=Path, metavar="FILE")
    s.set_defaults(fn=cmd_export)
    s = sub.add_parser("import", help="check a campaign archive (or folder) whole, then file it as contributed")
    s.add_argument("source", type=Path, metavar="FILE|FOLDER")
    s.set_defaults(fn=cmd_import)
    s = sub.add_parser("wheelhouse", help="download the wheels measuring needs, for a machine with no registry")
    s.add_argument("dest", type=Path, metavar="DIR")
    s.add_argument("--profile", "-P", default="default", choices=sorted(PROFILES),
                   help="whose conditions get the experiments' venv wheels")
    s.add_argument("--python-version", metavar="X.Y",
                   help="the harness's wheels for this Python there (default: the one running this)")
    s.add_argument("--plan", action="store_true", help="say what would be downloaded, with which pip")
    s.set_defaults(fn=cmd_wheelhouse)
    s = sub.add_parser("trace", help="GIL traces: record them with the traced builds, list them, export them")
    tsub = s.add_subparsers(dest="trace_command", required=True)
    t = tsub.add_parser("record", help="record the traces of the chapters' chosen points (traced builds needed)")
    t.add_argument("experiment", nargs="?", help="one chapter's traces only (default: every chapter's)")
    t.add_argument("--build", action="append", dest="builds", help="only on this build; repeatable")
    t.add_argument("--campaign", help="record into this campaign (default: your newest on this machine)")
    t.add_argument("--redo", action="store_true", help="record again a trace that is there already")
    t.set_defaults(fn=cmd_trace_record)
    t = tsub.add_parser("overhead", help="what the traced builds cost: interleaved rounds, tracing off and on")
    t.add_argument("--rounds", type=int, default=12, help="rounds to add (default 12)")
    t.add_argument("--build", action="append", dest="builds", help="only this build; repeatable")
    t.add_argument("--campaign", help="default: your newest campaign on this machine")
    t.set_defaults(fn=cmd_trace_overhead)
    t = tsub.add_parser("witness", help="CPython 3.15's own sampler (no patch) beside the traced 3.13.5, "
                                        "interleaved rounds")
    t.add_argument("--rounds", type=int, default=7, help="rounds a point (default 7: a median's interval)")
    t.add_argument("--campaign", help="record into this campaign (default: your newest on this machine)")
    t.add_argument("--redo", action="store_true", help="record again a round that is there already")
    t.set_defaults(fn=cmd_trace_witness)
    t = tsub.add_parser("list", help="the traces of a campaign, with what each says")
    t.add_argument("--campaign", help="default: your newest campaign, else the reference")
    t.set_defaults(fn=cmd_trace_list)
    t = tsub.add_parser("export", help="a stored trace as Chrome trace-event JSON (chrome://tracing, Perfetto)")
    t.add_argument("trace", type=Path, metavar="FILE.gtrace.xz")
    t.add_argument("-o", "--output", required=True, type=Path, metavar="FILE.json")
    t.set_defaults(fn=cmd_trace_export)
    s = sub.add_parser("notebooks", help="write each text notebook's .ipynb beside it (for papermill and JupyterLab), "
                                         "and every list of the chapters (_toc.yml, the README's, the introduction's)")
    s.set_defaults(fn=cmd_notebooks)
    s = sub.add_parser("live", help="JupyterLab on 127.0.0.1 at the live explorers (prints the address)")
    s.add_argument("--port", type=int, default=8888)
    s.add_argument("--chapter", metavar="EXPERIMENT", help="open this chapter's notebook instead of Explore live")
    s.set_defaults(fn=cmd_live)
    return ap


def main(argv: list[str] | None = None) -> int:
    import faulthandler
    import signal

    # `kill -USR1 <pid>` prints where every thread of a long or stuck run is, and it goes on
    try:
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    except (OSError, ValueError, AttributeError):   # a stderr with no file descriptor (a notebook, a test)
        pass
    args = build_parser().parse_args(argv)
    debug = args.debug or os.environ.get("GILLAB_DEBUG") not in (None, "", "0")
    try:
        if args.command not in STDLIB_COMMANDS:
            require_measuring_packages(args.command)
        return args.fn(args)
    except (ParameterError, interpreters.ConditionError) as exc:
        print(f"gillab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gillab: interrupted; every sample measured so far is stored", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - shown plainly, not as a traceback
        line = missing_package(exc, args.command)
        if line:
            print(f"gillab: error: {line}", file=sys.stderr)
            return 2
        from .measure.campaigns import NoCampaign
        from .measure.provision import ProvisionError
        from .judge.results import NoData
        from .measure.runner import WorkloadError
        from .measure.store import StoreBusy, StoreWriteError

        from .measure.trace_file import TraceError

        if isinstance(exc, (NoData, NoCampaign, StoreBusy, StoreWriteError, WorkloadError, ProvisionError,
                            FileNotFoundError, TraceError)):
            print(f"gillab: error: {exc}", file=sys.stderr)
            return 2
        if debug:
            raise
        if isinstance(exc, OSError) and exc.filename:   # a folder not writable, a disk full, a file gone
            what = f"{exc.strerror or exc}: {exc.filename}"
        else:
            what = f"{type(exc).__name__}: {exc}"
        print(f"gillab: error: {what} (nothing more was done; `gillab --debug {args.command} ...` shows where)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
