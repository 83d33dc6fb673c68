"""deploy/grafana/metctl.json: every metric its panels query is one metctl exports (the names
the code declares), it draws what operators look for (cluster size, decisions, plan progress,
tenant latency against the SLO, action durations), and every query is PromQL that Prometheus
itself parses (`promtool check rules` on the queries as recording rules)."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from controller.control_plane import CONTROL_METRICS
from controller.telemetry import METRIC_NAMES, METRICS
from tests.fixtures.daemons import lasting_scenario
from tests.fixtures.poll import poll

BOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "metctl.json"
EXPORTED = set(METRIC_NAMES) | {n for n, _ in CONTROL_METRICS}
HISTOGRAMS = {m.name for m in METRICS if m.kind == "histogram"}


def queries() -> list[tuple[str, str]]:
    board = json.loads(BOARD.read_text())
    return [(p["title"], t["expr"]) for p in board["panels"] for t in p["targets"]]


def referenced(expr: str) -> set[str]:
    names = set()
    for name in re.findall(r"\bmetctl_[a-z0-9_]+", expr):
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and name.removesuffix(suffix) in HISTOGRAMS:
                name = name.removesuffix(suffix)
        names.add(name)
    return names


def test_every_metric_the_board_reads_is_exported():
    used = set().union(*(referenced(e) for _, e in queries()))
    assert used and used <= EXPORTED, sorted(used - EXPORTED)


def test_the_board_draws_what_operators_look_for():
    by_title = {}
    for title, expr in queries():
        by_title.setdefault(title, set()).update(referenced(expr))
    wanted = {"metctl_cluster_nodes", "metctl_decisions_total", "metctl_plan_actions_done",
              "metctl_plan_actions", "metctl_tenant_latency_seconds", "metctl_tenant_slo_seconds",
              "metctl_action_duration_seconds"}
    assert wanted <= set().union(*by_title.values())
    # the SLO is drawn on the same panel as the latencies it judges
    assert any({"metctl_tenant_latency_seconds", "metctl_tenant_slo_seconds"} <= names
               for names in by_title.values())


def test_panels_have_unique_ids_and_do_not_overlap():
    panels = json.loads(BOARD.read_text())["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    cells = set()
    for p in panels:
        g = p["gridPos"]
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & mine, p["title"]
        assert g["x"] + g["w"] <= 24
        cells |= mine


def test_prometheus_parses_every_query(tmp_path):
    # Grafana's variables as Prometheus would see them once Grafana filled them in
    rules = [{"record": f"metctl_board:q{i}",
              "expr": expr.replace("$__rate_interval", "5m").replace("$job", "metctl")}
             for i, (_, expr) in enumerate(queries())]
    (tmp_path / "board.yml").write_text(yaml.safe_dump({"groups": [{"name": "board",
                                                                    "rules": rules}]}))
    done = subprocess.run(["promtool", "check", "rules", str(tmp_path / "board.yml")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(rules)} rules found" in done.stdout


def test_a_misspelt_metric_would_be_caught():
    assert referenced("rate(metctl_decisions_totl[5m])") - EXPORTED == {"metctl_decisions_totl"}
    assert referenced("metctl_action_duration_seconds_bucket") <= EXPORTED


@pytest.mark.integration
def test_every_panel_draws_data_from_a_live_metctl(tmp_path, metctl_daemons, prometheus_scraping,
                                                   receivers):
    """Prometheus scraping a real `metctl run` (simulated cluster, one webhook): once it has been
    paused and has acted, every panel's queries return series (Grafana's variables filled in
    as Grafana would)."""
    hook = receivers.ok(b"s")
    (tmp_path / "secret").write_text("s\n")
    d = metctl_daemons("graf", control=f"webhooks: [{{name: chat, url: '{hook.url}', "
                                       f"secret_file: '{tmp_path / 'secret'}'}}]",
                       scenario=str(lasting_scenario(tmp_path, hours=24)))
    # Paused from the start: a round is held as `paused` only when the policy wants to act,
    # which it does while met-elasticity's tenants come and go in its first simulated hour
    # (15 s here). Paused after its first action instead, the daemon could already be past
    # them, hold nothing for the whole pause and leave the holds panel blank.
    assert d.call("POST", "/v1/pause", {"reason": "grafana test"}).ok
    target = re.search(r"//([^/]+)/metrics", d.metrics_url()).group(1)
    prom = prometheus_scraping("metctl", [target])
    # increase() needs two samples of a series: a counter born at the pause needs two scrapes
    poll(lambda: prom.query('increase(metctl_holds_total{reason="paused"}[5m])'), 120,
         "holds scraped twice", every_s=1.0)
    assert d.call("POST", "/v1/resume", {}).ok
    poll(lambda: [e for e in d.get("/v1/events?kind=action").json()["events"]
                  if e["outcome"] == "done" and "op" in e["details"]], 120, "a finished action")

    # a panel may have a query with nothing to say yet (no source error): none stays blank
    # (the action's counters, too, are drawn once scraped twice)
    missing: list[str] = []

    def all_drawn() -> bool:
        drawn: dict[str, bool] = {}
        for title, expr in queries():
            promql = expr.replace("$__rate_interval", "5m").replace("$job", "metctl")
            drawn[title] = drawn.get(title, False) or bool(prom.query(promql))
        missing[:] = [t for t, ok in drawn.items() if not ok]
        return not missing
    try:
        poll(all_drawn, 120, "every panel drawn", every_s=1.0)
    except TimeoutError:
        pytest.fail(f"panels still blank after 120 s: {missing}")
