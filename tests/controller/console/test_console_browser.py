"""The web console in a real headless Chromium against a real `metctl run` on the simulated
cluster: what an operator sees and does from the page. The cluster's tenants are named
`<script>…` and `<img onerror=…>`: the page must show them as text and run none of it."""
from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest
import requests

from tests.fixtures.daemons import MetctlDaemon
from tests.fixtures.poll import poll

pytestmark = pytest.mark.integration

EVIL_SCRIPT = "<script>window.__pwned=1</script>"
EVIL_IMG = '<img src=x onerror="window.__pwned=2">'
# met-elasticity's tenants without their switch-off times (the cluster keeps growing and
# stays busy for the whole module), two of them named like markup
SCENARIO = f"""
name: console-test
description: met-elasticity's workloads, never switched off, two tenants named like markup
duration_s: 36000
initial_nodes: 6
slo_latency_ms: 50
workloads:
  - {{name: A, ycsb: A, threads: 50, records: 1000000, regions: 4, client_host: client-1}}
  - {{name: {EVIL_SCRIPT!r}, ycsb: B, threads: 50, records: 1000000, regions: 4, client_host: client-1}}
  - {{name: C, ycsb: C, threads: 50, records: 1000000, regions: 4, client_host: client-1}}
  - {{name: D, ycsb: D, threads: 5, target_ops: 1500, records: 100000, regions: 1, client_host: client-2}}
  - {{name: '{EVIL_IMG}', ycsb: E, threads: 50, records: 1000000, regions: 4, client_host: client-2}}
  - {{name: F, ycsb: F, threads: 50, records: 1000000, regions: 4, client_host: client-2}}
hardware: {{ram_mb: 3072, heap_mb: 1536}}
"""


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    work = tmp_path_factory.mktemp("console")
    (work / "console-test.yaml").write_text(SCENARIO)
    d = MetctlDaemon(work, "console", run_speed=60, scenario=str(work / "console-test.yaml"))
    try:
        yield d
    finally:
        d.kill()


def open_console(p, d: MetctlDaemon, token: str | None) -> None:
    p.page.goto(d.base + "/")
    if token is not None:
        p.page.fill("#token", token)
        p.page.click("#token-form button[type=submit]")


def node_ids(p) -> list[str]:
    return p.page.eval_on_selector_all("#nodes tbody tr", "rows => rows.map(r => r.dataset.node)")


def serving(p) -> list[str]:
    """The nodes the page shows serving (a node being launched shows as booting or joining)."""
    return p.page.eval_on_selector_all(
        "#nodes tbody tr", "rows => rows.filter(r => r.querySelector('.state.serving'))"
        ".map(r => r.dataset.node)")


def test_nodes_appear_as_the_simulated_cluster_grows(daemon, console_page):
    p = console_page
    open_console(p, daemon, daemon.token)
    first = poll(lambda: serving(p), 60, "the node table")
    grown = poll(lambda: (now := serving(p)) and len(now) > len(first) and now, 120,
                 "more serving nodes than at first (the cluster scales out)")
    assert set(grown) - set(first), "a node the page did not show at first"
    assert p.page.evaluate("performance.getEntriesByType('navigation').length") == 1  # no reload
    assert p.page.inner_text("#link") == "live"
    assert not p.problems()


def test_the_page_loads_its_script_only_from_the_package_without_errors(daemon, console_page):
    p = console_page
    # anything not from the daemon (a CDN, another host) is refused: the page must not need it
    p.page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(daemon.base)
                 else route.abort())
    response = p.page.goto(daemon.base + "/")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    p.page.fill("#token", daemon.token)
    p.page.click("#token-form button[type=submit]")
    poll(lambda: node_ids(p), 60, "the node table")
    poll(lambda: p.page.inner_text("#history tbody").strip(), 30, "the history")
    assert not p.problems(), p.problems()
    assert all(u.startswith(daemon.base) for u in p.requests), p.requests
    scripts = p.page.evaluate("Array.from(document.scripts).map(s => s.src)")
    assert scripts == [daemon.base + "/console/console.js"]
    package = resources.files("controller.console").joinpath("static")
    for name in ("console.js", "console.css"):
        served = requests.get(f"{daemon.base}/console/{name}", timeout=10).content
        assert served == package.joinpath(name).read_bytes()
    assert requests.get(daemon.base + "/console/../api.py", timeout=10).status_code == 404


def test_the_page_has_no_inline_script_or_handler():
    html = resources.files("controller.console").joinpath("static", "index.html").read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)", html), "an inline <script>"
    assert not re.search(r"\son[a-z]+\s*=", html, re.I), "an inline event handler"
    assert not re.search(r"\sstyle\s*=", html, re.I), "an inline style"


def test_names_from_the_cluster_are_shown_as_text(daemon, console_page):
    p = console_page
    open_console(p, daemon, daemon.token)
    legend = poll(lambda: (t := p.page.inner_text("#tenants")) and EVIL_SCRIPT in t and t, 60,
                  "the tenants' names in the latency legend")
    assert EVIL_IMG in legend
    tables = poll(lambda: (t := p.page.inner_text("#busiest tbody")) and "usertable_" in t and t,
                  30, "the busiest partitions")
    assert "usertable_<" in tables  # the table named after the tenant, as typed
    assert p.page.evaluate("window.__pwned") is None
    assert p.page.locator("#tenants img, #busiest img, #tenants script").count() == 0
    assert not p.dialogs and not p.problems()


def test_a_wrong_token_is_refused_and_changes_nothing(daemon, console_page):
    p = console_page
    open_console(p, daemon, "not-the-token")
    poll(lambda: "refused" in p.page.inner_text("#token-state"), 30, "the token refused")
    assert p.page.is_visible("#locked")  # the view needs the token (no read-only configured)
    # the controls cannot be reached by a page without the token: try the API as the page would
    status = p.page.evaluate("""async () => (await fetch('/v1/pause', {method: 'POST',
        headers: {'Authorization': 'Bearer not-the-token', 'Content-Type': 'application/json'},
        body: '{}'})).status""")
    assert status == 401
    assert daemon.status()["paused"] is False


def test_pausing_from_the_page_pauses_metctl_and_shows_until_when(daemon, console_page):
    p = console_page
    open_console(p, daemon, daemon.token)
    poll(lambda: node_ids(p), 60, "the node table")
    p.page.fill("#pause-for", "2h")
    p.page.fill("#pause-reason", "browser test: disk swap")
    p.page.click("#pause")
    assert p.page.is_visible("#confirm") and "Pause metctl for 2h" in p.page.inner_text("#confirm-text")
    p.page.click("#confirm-ok")
    s = poll(lambda: (s := daemon.status())["paused"] and s, 30, "/v1/status to say paused")
    assert s["pause"]["reason"] == "browser test: disk swap"
    assert s["pause"]["until_unix_s"] - s["pause"]["at_unix_s"] == pytest.approx(7200, abs=5)
    poll(lambda: "paused until" in p.page.inner_text("#mode"), 30, "the page to show the pause")
    # the operator's command is an event, and it reaches the page's history without a reload
    row = poll(lambda: p.page.query_selector("#history tr.event.command"), 30,
               "the pause command in the history")
    assert "pause" in row.inner_text() and "accepted" in row.inner_text()
    # cancelling the confirmation changes nothing
    p.page.click("#resume")
    p.page.click("#confirm-cancel")
    assert daemon.status()["paused"] is True
    p.page.click("#resume")
    p.page.click("#confirm-ok")
    poll(lambda: not daemon.status()["paused"], 30, "resumed")
    poll(lambda: "paused" not in p.page.inner_text("#mode"), 30, "the page to show it resumed")
    assert not p.problems()


def test_an_action_appears_as_an_event_on_the_page(daemon, console_page):
    p = console_page
    open_console(p, daemon, daemon.token)
    poll(lambda: node_ids(p), 60, "the node table")
    since = daemon.get("/v1/events?limit=1").json()["last_id"]
    ev = poll(lambda: [e for e in daemon.get(f"/v1/events?after={since}&kind=action").json()["events"]
                       if "op" not in e["details"]], 120, "a plan's action after the page opened")[0]
    poll(lambda: p.page.query_selector(f'#history tr[data-id="{ev["id"]}"]'), 30,
         "the plan's action in the page's history")
    # each step of it too, when asked for
    p.page.select_option("#history-kind", "")
    step = poll(lambda: [e for e in daemon.get(f"/v1/events?after={since}&kind=action").json()["events"]
                         if "op" in e["details"]], 120, "a step after the page opened")[-1]
    poll(lambda: p.page.query_selector(f'#history tr[data-id="{step["id"]}"]'), 30,
         "the step in the page's history")


def test_cross_origin_changes_are_refused(daemon):
    for origin in ("http://evil.example", "null"):
        r = requests.post(daemon.base + "/v1/pause", json={}, timeout=10,
                          headers={**daemon.auth, "Origin": origin})
        assert r.status_code == 403
    r = requests.post(daemon.base + "/v1/pause", json={}, timeout=10,
                      headers={**daemon.auth, "Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    assert daemon.status()["paused"] is False
    same = requests.post(daemon.base + "/v1/resume", json={}, timeout=10,
                         headers={**daemon.auth, "Origin": daemon.base})
    assert same.status_code == 200


def test_the_packaged_files_are_package_data():
    import tomllib

    data = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())
    globs = data["tool"]["setuptools"]["package-data"]["controller.console"]
    static = resources.files("controller.console").joinpath("static")
    for f in static.iterdir():
        assert any(Path("static", f.name).match(g) for g in globs), f.name


def test_protect_a_node_set_a_window_and_dry_run_from_the_page(daemon, console_page):
    p = console_page
    open_console(p, daemon, daemon.token)
    node = poll(lambda: serving(p), 60, "the node table")[0]
    p.page.click(f'#nodes tr[data-node="{node}"] button.protect')
    assert node in p.page.inner_text("#confirm-text")
    p.page.click("#confirm-ok")
    poll(lambda: node in daemon.status()["protected"], 30, "the protection in /v1/status")
    poll(lambda: "protected" in p.page.inner_text(f'#nodes tr[data-node="{node}"]'), 30,
         "the protected badge on the node's row")
    p.page.click(f'#nodes tr[data-node="{node}"] button.protect')  # now "unprotect"
    p.page.click("#confirm-ok")
    poll(lambda: daemon.status()["protected"] == {}, 30, "the protection lifted")

    for day in ("sat", "sun"):
        p.page.check(f'input.day[value="{day}"]')
    p.page.fill("#window-start", "00:00")
    p.page.fill("#window-end", "24:00")
    p.page.click("#windows-set")
    p.page.click("#confirm-ok")
    w = poll(lambda: (w := daemon.status()["window"])["source"] != "config" and w, 30,
             "the window set at run time")
    assert w["windows"] == [{"days": ["sat", "sun"], "start": "00:00", "end": "24:00"}]
    poll(lambda: "sat,sun" in p.page.inner_text("#window-state"), 30, "the window on the page")
    p.page.click("#windows-clear")
    p.page.click("#confirm-ok")
    poll(lambda: daemon.status()["window"]["source"] == "config", 30, "the config's windows")

    p.page.click("#dry-run")
    result = poll(lambda: (t := p.page.inner_text("#dry-run-result")) and "nodes" in t and t, 60,
                  "the dry-run plan")
    assert "→" in result and "moves" in result
    assert not p.problems(), p.problems()


def test_the_console_view_needs_the_token_unless_read_only_is_configured(daemon):
    assert daemon.get("/v1/cluster").status_code == 401
    assert daemon.get("/v1/cluster", headers={"Authorization": "Bearer nope"}).status_code == 401
    # run first (alone, or with -k), the daemon may not have its first sample yet
    doc = poll(lambda: (d := daemon.get("/v1/cluster", headers=daemon.auth).json())["nodes"] and d,
               30, "the cluster's nodes")
    assert doc["can_change"] is True
    # the page and its assets load without it (they hold no data)
    assert daemon.get("/").status_code == 200 and daemon.get("/console/console.js").ok
    assert daemon.get("/console/session").json() == {"authorized": False, "token_given": False,
                                                     "may_read": False}
