"""Where an echo sample's threads ran: recorded with every sample, pinned where asked, and never
pooled across placements by the convoy chapter."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from gillab.measure import placement


class FakeSampler:
    def __init__(self, reads, server_pid=10, client_pid=20):
        self.reads, self.server_pid, self.client_pid = reads, server_pid, client_pid
        self.polls, self.client_involuntary = max(len(v) for v in reads.values()), 3


def test_a_placement_summary_names_each_role_and_the_regime():
    s = FakeSampler({(10, 11): [0, 0, 0, 1, 0], (10, 12): [0, 0, 0, 0, 0], (20, 20): [1, 1, 1, 1, 1]})
    out = placement.summary(s, handler_tid=11, cpu_tids=[12], placement="os")
    assert out["handler_cpu"] == 0 and out["handler_share"] == 0.8 and out["handler_migrations"] == 2
    assert out["cpu_threads_cpu"] == 0 and out["cpu_threads_share"] == 1.0
    assert out["handler_with_cpu_thread"] == 0.8 and out["handler_with_client"] == 0.2
    assert out["placement_regime"] == "handler beside a CPU thread" and out["client_pid"] == 20
    apart = placement.summary(FakeSampler({(10, 11): [0] * 5, (10, 12): [1] * 5, (20, 20): [0] * 5}), 11, [12], "pinned")
    assert apart["placement_regime"] == "handler apart from the CPU threads"
    assert placement.summary(FakeSampler({(10, 11): [0] * 5, (20, 20): [0] * 5}), 11, [], "os")["placement_regime"] \
        == "no CPU thread"


def test_a_pin_needs_two_cpus():
    with pytest.raises(ValueError, match="2 CPUs"):
        placement.pin(os.getpid(), [], [0])


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a pinned sample needs 2 CPUs")
def test_a_pinned_sample_ran_where_it_was_pinned_and_says_so():
    """A real convoy sample (3.13.5, smoke sizes) pinned: the handler and the client on the first
    CPU, the CPU thread on the other, read from /proc while the client counted."""
    from conftest import need_builds
    from gillab.measure import experiments, interpreters

    need_builds(("3.13.5",), "the core builds", "make interpreters")
    exp = experiments.get("convoy")
    p = exp.resolve("smoke")
    cond = {c.id: c for c in interpreters.discover()}["3.13.5"]
    cpus = sorted(os.sched_getaffinity(0))
    point = {"switch_interval": 0.005, "cpu_threads": 1, "cpu_processes": 0, "placement": "pinned"}
    r = exp.run_sample(p, point, cond).result
    assert r["placement"] == "pinned" and r["placement_polls"] >= 10
    assert r["handler_cpu"] == cpus[0] and r["handler_share"] == 1.0
    assert r["cpu_threads_cpu"] == cpus[-1] and r["cpu_threads_share"] == 1.0 and r["cpu_threads_migrations"] == 0
    assert r["client_cpu"] == cpus[0] and r["handler_with_cpu_thread"] == 0.0
    assert r["placement_regime"] == "handler apart from the CPU threads"
    assert r["pinned_cpus"] == f"server={cpus[0]};cpu_threads={cpus[-1]};client={cpus[0]}"
    unpinned = exp.run_sample(p, {k: v for k, v in point.items() if k != "placement"}, cond).result
    assert unpinned["placement"] == "os" and unpinned["placement_polls"] >= 10 and "pinned_cpus" not in unpinned
    assert unpinned["handler_cpu"] in cpus and unpinned["client_cpu"] in cpus


def test_pinned_points_keep_the_configuration_and_need_two_cpus(monkeypatch):
    from gillab.measure import experiments
    from gillab.measure.profiles import ParameterError

    exp = experiments.get("convoy")
    p = exp.resolve("default")
    assert exp.config_id(p) == exp.config_id({**p, "pinned_intervals": [], "placements": ["os"]})
    pts = exp.points(p)
    pinned = [x for x in pts if x.get("placement") == "pinned"]
    assert pinned and all(x["switch_interval"] in p["pinned_intervals"] for x in pinned)
    assert len(pts) - len(pinned) == len(exp.points({**p, "placements": ["os"]}))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    with pytest.raises(ParameterError, match="2 CPUs"):
        exp.resolve("default")


def _rows(placement_, condition, si, n, rps, rounds=7, regime=None):
    out = []
    for k in range(rounds):
        out.append({"condition": condition, "switch_interval": si, "cpu_threads": n, "cpu_processes": 0,
                    "run_id": "r", "repeat": k, "window": 0, "rps": rps * (1 + 0.01 * k),
                    "placement": placement_, "placement_regime": regime or ("pinned" if placement_ == "pinned"
                                                                            else "handler beside a CPU thread"),
                    "handler_ctx_involuntary": 10, "handler_ctx_voluntary": 100, "requests_served": 100,
                    "client_cpu_share": 0.1, "gil_enabled": True, "status": "ok"})
    return out


def test_the_convoy_chapter_never_pools_pinned_and_unpinned_runs():
    """Unpinned runs at 20 RPS, pinned at 100 (5 ms, one CPU thread; 10,000 alone): the rates and
    the unpinned cost read only the unpinned, the judged mechanism only the pinned."""
    from gillab.chapters import convoy

    rows = (_rows(np.nan, "3.9.10", 0.005, 0, 10_000) + _rows(np.nan, "3.9.10", 0.005, 1, 20)
            + _rows("pinned", "3.9.10", 0.005, 0, 10_000) + _rows("pinned", "3.9.10", 0.005, 1, 100))
    df = pd.DataFrame(rows)
    s = convoy.summary(df)
    assert float(s[s["cpu_threads"] == 1]["rps_median"].iloc[0]) == pytest.approx(20 * 1.03, rel=0.01)
    w = convoy.waits_summary(df)
    pinned = w[w["placement"] == "pinned"].iloc[0]
    assert pinned["judged"] and pinned["waits"] == pytest.approx((1 / 103 - 1 / 10300) / 0.005, rel=0.02)
    assert not w[w["placement"] == "os"]["judged"].any()
    c = convoy.cost_by_placement(df)
    assert set(c["placement"]) == {"pinned", "handler beside a CPU thread"}
    assert c.set_index("placement").loc["pinned", "cost"] == pytest.approx(1.94, rel=0.03)
    mech = [r for r in convoy.claims(df) if r["claim_id"] == "convoy/mechanism/si=0.005/cpu_threads=1"][0]
    assert mech["measured"]["3.9.10"]["median"] == pytest.approx(pinned["waits"])


def test_the_chapters_state_the_sampling_period_the_harness_uses():
    from gillab.paths import repo_root

    ms = f"every {placement.PERIOD_S * 1000:g} ms"
    for nb in ("03_convoy.md", "05_affinity.md"):
        text = " ".join((repo_root() / "notebooks" / nb).read_text().split())
        assert ms in text, nb
