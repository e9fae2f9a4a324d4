"""Read stored samples and run metadata back, from a campaign (see :mod:`gillab.measure.campaigns`)."""
from __future__ import annotations

import contextlib

import pandas as pd

from ..measure import campaigns, codekey
from ..paths import reference_dir, results_dir


class NoData(LookupError):
    """No stored samples for this experiment (and configuration)."""


def pick_campaign(experiment: str, campaign: str | None = None) -> str:
    """``campaign`` if given; else the reader's newest campaign on this machine that holds the
    experiment; else the committed reference campaign."""
    if campaign:
        return campaign
    yours, ref = campaigns.for_reading(experiment)
    for c in (yours, ref):
        if c is not None:
            return c.id
    raise NoData(f"no stored samples for {experiment} in {results_dir()}: no campaign of yours and no "
                 "reference campaign holds it; measure it with `gillab measure` or measure=True")


def current_rows(df: pd.DataFrame, experiment: str = "") -> pd.DataFrame:
    """Drop samples superseded inside a campaign: where a condition was measured again after its
    interpreter or the measuring code changed, only the samples of the newest resume key of
    each (configuration, condition) are analysed (two keys of one code, :func:`codekey.canonical`,
    are one key).  The file keeps every row."""
    if "identity_key" not in df.columns or df.empty:
        return df
    code = [codekey.canonical(experiment, k) for k in df["code_key"].fillna("").astype(str)]
    keys = df["identity_key"].fillna("").astype(str) + "/" + pd.Series(code, index=df.index, dtype=str)
    newest = keys.groupby([df["config"], df["condition"]]).transform("last")
    return df[keys == newest]


def code_key_rows(c: campaigns.Campaign, experiment: str) -> pd.DataFrame:
    """The successful samples of ``experiment`` in campaign ``c`` that are analysed
    (:func:`current_rows`), by configuration and condition, with the code key that measured each
    as today's definition reads it (``key``: :func:`codekey.canonical`), read from the samples
    file's key columns alone; empty where there are none or they carry no code key."""
    cols = ["status", "config", "condition", "identity_key", "code_key"]
    f = c.store(experiment).samples_path
    if not f.is_file():
        return pd.DataFrame(columns=["config", "condition", "key"])
    df = pd.read_csv(f, dtype=str, keep_default_na=False, usecols=lambda col: col in cols)
    df = df[df["status"] == "ok"] if "status" in df.columns else df.iloc[0:0]
    if df.empty or "code_key" not in df.columns:
        return pd.DataFrame(columns=["config", "condition", "key"])
    cur = current_rows(df, experiment)
    return cur.assign(key=cur["code_key"].map(lambda k: codekey.canonical(experiment, k)))[["config", "condition", "key"]]


def samples(experiment: str, campaign: str | None = None, config_id: str | None = None,
            include_failed: bool = False) -> pd.DataFrame:
    cid = pick_campaign(experiment, campaign)
    store = campaigns.load(cid).store(experiment)
    _read(f"data/results/{cid}/{experiment}/samples.csv")
    df = store.frame()
    if df.empty:
        raise NoData(f"{store.samples_path} holds no samples")
    earlier = None
    if config_id is not None:
        picked = df[df["config"] == config_id]
        ok = picked if include_failed else picked[picked["status"] == "ok"]
        earlier = None if len(ok) else earlier_config(experiment, cid, df, config_id)
        df = df[df["config"] == (earlier or config_id)]
    if not include_failed:
        df = df[df["status"] == "ok"]
    if df.empty:
        raise NoData(f"{store.samples_path} holds no successful samples for configuration {config_id}")
    n_all = len(df)
    df = current_rows(df, experiment).copy()
    df.attrs["campaign"] = cid
    if earlier:
        df.attrs["earlier_config"] = earlier
        df.attrs["note"] = (f"{experiment}: the reference campaign {cid} holds no samples of configuration {config_id}: "
                            f"the chapter is declared to be measured again (data/results/MEASURE_AGAIN.toml), and its "
                            f"samples of the configuration it measured, {earlier}, are read until it is")
    df.attrs["superseded"] = n_all - len(df)
    return df


def earlier_config(experiment: str, campaign: str, frame: pd.DataFrame, asked: str | None = None) -> str | None:
    """The configuration the reference campaign measured a chapter at, where the chapter is
    declared to be measured again (``MEASURE_AGAIN.toml``: its measuring code, and with it what a
    sample is, changed since) and the reference holds none of today's: the one its newest
    ``default`` or ``verdicts`` samples have, which every page and verdict reads until the
    reference is measured again.  None for any other campaign or chapter, and where the
    configuration ``asked`` is none of today's ``default`` or ``verdicts`` (another profile's, the
    version sweep's or the documents' sizes: those samples are not the default's of yesterday)."""
    if campaign != campaigns.reference_id() or not any(d.chapter == experiment and d.reference == campaign
                                                       for d in campaigns.declared()):
        return None
    if asked is not None and asked not in _todays_default(experiment):
        return None
    ok = frame[(frame["status"] == "ok") & frame["profile"].isin(["default", "verdicts"])]
    return str(ok["config"].iloc[-1]) if len(ok) else None


def profile_config(experiment: str, profile: str = "default") -> str | None:
    """The configuration id a profile (without overrides) measures, or None if this machine
    cannot even resolve it (then every configuration stored is shown)."""
    from ..measure import experiments
    from ..measure.profiles import ParameterError

    exp = experiments.get(experiment)
    try:
        return exp.config_id(exp.resolve(profile))
    except ParameterError:
        return None


def _todays_default(experiment: str) -> set[str]:
    """The configurations today's ``default`` and ``verdicts`` profiles measure ``experiment`` at
    (one this machine cannot resolve is left out)."""
    return {c for c in (profile_config(experiment, p) for p in ("default", "verdicts")) if c is not None}


def samples_as_chapter(experiment: str, campaign: str | None = None, config_id: str | None = None) -> pd.DataFrame:
    """The samples the chapter shows: those of ``config_id`` in the reader's campaign (``campaign``
    if named, else their newest holding the experiment), else in the reference campaign, as
    :meth:`gillab.present.page.Chapter` picks them.  ``attrs["note"]`` says when the reader's campaign
    was passed over, and why (what ``gillab results`` and ``verdicts`` print)."""
    yours, ref = campaigns.for_reading(experiment, campaign)
    passed = None
    for c in (yours, ref):
        if c is None:
            continue
        try:
            df = samples(experiment, c.id, config_id)
        except NoData as exc:
            passed = passed or (c, exc)
            continue
        if passed is not None and c is ref:
            df.attrs["note"] = (f"{experiment}: campaign {passed[0].id} holds no samples of this configuration "
                                f"({config_id or 'any'}); the reference campaign's are read, as in the chapter")
        return df
    raise NoData(str(passed[1]) if passed else
                 f"no stored samples for {experiment} in {results_dir()}: no campaign of yours and no reference "
                 "campaign holds it; measure it with `gillab measure` or measure=True")


def runs(experiment: str, campaign: str | None = None) -> list[dict]:
    return campaigns.load(pick_campaign(experiment, campaign)).store(experiment).runs()


def conditions_seen(experiment: str, campaign: str | None = None) -> dict[str, dict]:
    """Identity of every condition, from the newest run that recorded it."""
    out: dict[str, dict] = {}
    for run in runs(experiment, campaign):
        for cid, ident in run.get("conditions", {}).items():
            out[cid] = ident
    return out


_READ: list[list[str]] = []   # open recordings (:func:`recording`)


@contextlib.contextmanager
def recording():
    """Record the data files read inside the ``with`` block (published tables and campaigns'
    samples, as paths from the repository root): what a figure or table was made from."""
    got: list[str] = []
    _READ.append(got)
    try:
        yield got
    finally:   # this recording itself, not an outer one that read the same files (list.remove compares)
        del _READ[next(i for i, g in enumerate(_READ) if g is got)]


def _read(path: str) -> None:
    for got in _READ:
        if path not in got:
            got.append(path)


def keyed(name: str, columns, key: str) -> pd.DataFrame:
    """A table of ``data/reference`` as text (claims.csv, lexicon.csv), refused where it lacks one
    of ``columns`` or lists a ``key`` twice."""
    t = pd.read_csv(reference_dir() / name, dtype=str, keep_default_na=False)
    missing = set(columns) - set(t.columns)
    if missing:
        raise KeyError(f"{name} lacks the columns {sorted(missing)}")
    dup = t[key][t[key].duplicated()]
    if len(dup):
        raise ValueError(f"{name}: {key} values listed twice: {sorted(set(dup))}")
    return t


def reference(name: str) -> pd.DataFrame:
    """A table of published numbers from ``data/reference/<name>.csv``."""
    path = reference_dir() / f"{name}.csv"
    _read(f"data/reference/{name}.csv")
    if not path.exists():
        raise FileNotFoundError(f"no published table {path}")
    return pd.read_csv(path)
