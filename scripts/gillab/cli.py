"""``gillab``: the command line of the report.

    gillab interpreters [--json]            conditions, with exact identities
    gillab provision [--pgo]                build 3.13.5 and 3.13.5t (skipped when valid)
    gillab measure EXPERIMENT [-P P] [-p k=v ...]   measure only (no notebook)
    gillab run EXPERIMENT [-P P] [-p k=v ...]       measure + execute the notebook (papermill)
    gillab reproduce [-P P]                 every notebook, then the book
    gillab book                             notebooks from data/ (no measuring), then the book
    gillab results EXPERIMENT --json        measured summary
    gillab verdicts --json                  every published number reproduced so far
"""
from __future__ import annotations

import argparse
import ast
import json
import math
import sys

from . import interpreters
from .profiles import PROFILES, ParameterError


def _parse_kv(items: list[str] | None) -> dict:
    out = {}
    for item in items or []:
        if "=" not in item:
            raise ParameterError(f"-p takes key=value, got {item!r}")
        key, raw = item.split("=", 1)
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        out[key.strip()] = value
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
        status = r["kind"] if r["available"] else f"MISSING ({r['error']})"
        env = " ".join(f"{k}={v}" for k, v in r["env"].items())
        print(f"{r['condition']:<22} {status:<24} {r['version_short'] or '-':<10} {r['executable']} {env}")
    if not all(r["available"] for r in rows if r["condition"] in interpreters.CORE_IDS):
        print("\nBuild the missing core interpreters with `gillab provision` (about 3-8 min each).")
    return 0


def cmd_provision(args) -> int:
    from . import provision

    argv = (["--pgo"] if args.pgo else []) + (["--jobs", str(args.jobs)] if args.jobs else [])
    return provision.main(argv)


def cmd_measure(args) -> int:
    from . import experiments

    res = experiments.measure(args.experiment, args.profile, _parse_kv(args.param))
    print(json.dumps(_clean(res.__dict__), indent=2, default=str))
    return 0 if not res.failed else 3


def cmd_run(args) -> int:
    from . import notebooks

    notebooks.execute(args.experiment, args.profile, _parse_kv(args.param), measure=True)
    return 0


def cmd_reproduce(args) -> int:
    from . import notebooks

    notebooks.reproduce(args.profile)
    return 0


def cmd_book(args) -> int:
    from . import notebooks

    notebooks.book(execute_notebooks=not args.no_execute, profile=args.profile)
    return 0


def cmd_results(args) -> int:
    from . import report

    data = report.results(args.experiment, machine=args.machine)
    if args.json:
        print(json.dumps(_clean(data), indent=2))
    else:
        import pandas as pd

        print(pd.DataFrame(data["summary"]).to_string(index=False))
    return 0


def cmd_verdicts(args) -> int:
    from . import report

    rows = report.verdicts(machine=args.machine)
    if args.json:
        print(json.dumps(_clean(rows), indent=2))
    else:
        for r in rows:
            for cond, m in r["measured"].items():
                print(f"{r['claim_id']:<28} {cond:<14} published {r['published']:.3g} {r['unit']:<5} "
                      f"measured {m['median']:.3g} [{m['ci_lo']:.3g}, {m['ci_hi']:.3g}] -> {m['verdict']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="gillab", description="The GIL, measured.")
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("interpreters", help="list conditions with their identity")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_interpreters)
    s = sub.add_parser("provision", help="build CPython 3.13.5 with and without the GIL")
    s.add_argument("--pgo", action="store_true")
    s.add_argument("--jobs", type=int)
    s.set_defaults(fn=cmd_provision)
    for name, fn, helptext in (("measure", cmd_measure, "measure only"),
                               ("run", cmd_run, "measure and execute the notebook")):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("experiment")
        s.add_argument("-P", "--profile", default="default", choices=PROFILES)
        s.add_argument("-p", "--param", action="append", metavar="KEY=VALUE")
        s.set_defaults(fn=fn)
    s = sub.add_parser("reproduce", help="run every notebook, then build the book")
    s.add_argument("-P", "--profile", default="default", choices=PROFILES)
    s.set_defaults(fn=cmd_reproduce)
    s = sub.add_parser("book", help="render the book from data/ without measuring")
    s.add_argument("--no-execute", action="store_true", help="reuse the executed notebooks as they are")
    s.add_argument("-P", "--profile", default="default", choices=PROFILES,
                   help="which stored configuration to show (default: default)")
    s.set_defaults(fn=cmd_book)
    s = sub.add_parser("results", help="the measured summary of one experiment")
    s.add_argument("experiment")
    s.add_argument("--json", action="store_true")
    s.add_argument("--machine")
    s.set_defaults(fn=cmd_results)
    s = sub.add_parser("verdicts", help="published numbers beside ours, with verdicts")
    s.add_argument("--json", action="store_true")
    s.add_argument("--machine")
    s.set_defaults(fn=cmd_verdicts)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except (ParameterError, interpreters.ConditionError) as exc:
        print(f"gillab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gillab: interrupted; every sample measured so far is stored", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - shown plainly, not as a traceback
        from .results import NoData
        from .store import StoreBusy
        from .runner import WorkloadError

        if isinstance(exc, (NoData, StoreBusy, WorkloadError, FileNotFoundError)):
            print(f"gillab: error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
