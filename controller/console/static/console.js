// The metctl console: reads /v1/status, /v1/cluster and /v1/events, follows
// /v1/events/stream (server-sent events, read with fetch so the token can go in a header) and
// changes things only through the /v1 API, after asking. Every name that comes from the
// cluster is set as text (textContent, setAttribute), never parsed as markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const CLASS_COLOURS = {read: "#2b7bb9", write: "#c0392b", read_write: "#8e44ad", scan: "#16a085"};
const TENANT_COLOURS = ["#2b7bb9", "#e67e22", "#27ae60", "#c0392b", "#8e44ad", "#16a085",
                        "#d35400", "#7f8c8d", "#2c3e50", "#f1c40f"];
const state = {token: sessionStorage.getItem("metctl-token") || "", events: [], lastId: 0, allowed: false,
               status: null, cluster: null, refreshTimer: null, streamAbort: null};

// ---------------------------------------------------------------- small DOM helpers
function $(id) { return document.getElementById(id); }
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}
function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
function pct(x) { return x === null || x === undefined ? "–" : Math.round(x * 100) + "%"; }
function num(x) { return x === null || x === undefined ? "–" : Math.round(x).toLocaleString("en"); }
function when(unix) {
  if (!unix) return "–";
  return new Date(unix * 1000).toLocaleString("en-GB", {hour12: false});
}
function clock(unix) {
  return new Date(unix * 1000).toLocaleTimeString("en-GB", {hour12: false});
}
function notice(text, bad) {
  const n = $("notice");
  n.textContent = text;
  n.className = bad ? "bad" : "good";
  n.hidden = !text;
}

// ---------------------------------------------------------------- the API
function headers(extra) {
  const h = Object.assign({}, extra || {});
  if (state.token) h["Authorization"] = "Bearer " + state.token;
  return h;
}
async function api(method, path, body) {
  const init = {method, headers: headers(body === undefined ? {} : {"Content-Type": "application/json"}),
                credentials: "omit", cache: "no-store"};
  if (body !== undefined) init.body = JSON.stringify(body);
  const r = await fetch(path, init);
  let doc = null;
  try { doc = await r.json(); } catch (e) { doc = {error: r.statusText}; }
  return {status: r.status, doc};
}

// ---------------------------------------------------------------- refresh
function scheduleRefresh(delay) {
  if (state.refreshTimer !== null) return;
  state.refreshTimer = setTimeout(() => { state.refreshTimer = null; refresh(); }, delay || 200);
}

async function refresh() {
  try {
    // ask first what this token may see: a locked view requests nothing it would be refused
    const session = await api("GET", "/console/session");
    state.allowed = session.status === 200 && session.doc.may_read;
    if (!state.allowed) {
      $("locked").hidden = false;
      $("main").hidden = true;
      $("token-state").textContent = state.token ? "token refused" : "no token";
      $("mode").textContent = "locked";
      return;
    }
    const [status, cluster, events] = await Promise.all([
      api("GET", "/v1/status"), api("GET", "/v1/cluster"),
      api("GET", "/v1/events?limit=300")]);
    if (cluster.status !== 200 || status.status !== 200) {
      $("link").textContent = "metctl answered " + cluster.status + "/" + status.status;
      return;
    }
    $("locked").hidden = true;
    $("main").hidden = false;
    state.status = status.doc;
    state.cluster = cluster.doc;
    if (events.status === 200) {
      state.events = events.doc.events;
      state.lastId = Math.max(state.lastId, events.doc.last_id || 0);
    }
    $("token-state").textContent = !state.token ? "read-only view (no token)"
      : (cluster.doc.can_change ? "token accepted" : "token refused: read-only view");
    render();
  } catch (err) {
    $("link").textContent = "cannot reach metctl (" + err.message + ")";
  }
}

// ---------------------------------------------------------------- live stream
async function follow() {
  let delay = 500;
  for (;;) {
    if (!state.allowed) {  // nothing to follow until the page may read
      $("link").textContent = "offline";
      await new Promise(done => setTimeout(done, 500));
      continue;
    }
    const abort = new AbortController();
    state.streamAbort = abort;
    try {
      const h = headers({"Accept": "text/event-stream"});
      if (state.lastId) h["Last-Event-ID"] = String(state.lastId);
      const r = await fetch("/v1/events/stream?changes=1", {headers: h, signal: abort.signal,
                                                            cache: "no-store", credentials: "omit"});
      if (r.ok && r.body) {
        $("link").textContent = "live";
        delay = 500;
        await readStream(r.body.getReader());
      }
    } catch (err) {
      if (err.name !== "AbortError") $("link").textContent = "reconnecting…";
    }
    $("link").textContent = "reconnecting…";
    await new Promise(done => setTimeout(done, delay));
    delay = Math.min(delay * 2, 10000);
  }
}

async function readStream(reader) {
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, {stream: true});
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message", data = "", id = null;
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
        else if (line.startsWith("id: ")) id = Number(line.slice(4));
      }
      if (name === "event" && data) {
        const ev = JSON.parse(data);
        if (id) state.lastId = Math.max(state.lastId, id);
        if (!state.events.some(e => e.id === ev.id)) state.events.push(ev);
        state.events = state.events.slice(-300);
        renderHistory();
        scheduleRefresh(150);
      } else if (name === "changed") {
        scheduleRefresh(150);
      }
    }
  }
}

// ---------------------------------------------------------------- rendering
function render() {
  renderMode(state.status);
  renderCluster(state.cluster);
  renderExplain(state.status);
  renderPlan(state.status, state.cluster);
  renderHistory();
  renderWindows(state.status);
}

function renderMode(s) {
  const m = $("mode");
  if (!s) { m.textContent = "unknown"; return; }
  $("identity").textContent = (s.identity || "metctl") + " · " + s.role;
  let words = "acting", cls = "badge act";
  if (s.mode === "observe") { words = "observe only: decides, never acts"; cls = "badge observe"; }
  if (s.paused && s.pause) {
    words = "paused until " + (s.pause.until_unix_s ? when(s.pause.until_unix_s) : "resumed")
      + (s.pause.reason ? " — " + s.pause.reason : "") + " (by " + s.pause.by + ")";
    cls = "badge paused";
  }
  if (s.pinned) words += " · pinned to " + s.pinned.min + (s.pinned.max !== s.pinned.min ? ".." + s.pinned.max : "") + " nodes";
  if (s.role === "follower") words += " · following (another instance leads)";
  m.textContent = words;
  m.className = cls;
}

function renderCluster(c) {
  if (!c) return;
  const wall = state.status && state.status.last_snapshot_unix_s;
  $("snapshot").textContent = !c.taken_at ? "no snapshot yet"
    : "snapshot at " + (c.simulated ? "simulated minute " + (c.clock_s / 60).toFixed(1) + ", " : "")
      + (wall ? clock(wall) : c.taken_at);
  const t = c.totals || {};
  $("totals").textContent = (t.nodes || 0) + " nodes · " + (t.partitions || 0) + " partitions · "
    + num(t.requests) + " requests/s" + ((t.missing || []).length ? " · missing: " + t.missing.join("; ") : "");
  const body = clear($("nodes").tBodies[0]);
  const cpuHigh = (c.thresholds || {}).cpu_high || 0.6;
  for (const n of c.nodes) {
    const parts = Object.values(n.partitions).reduce((a, b) => a + b, 0);
    const stateCell = el("td", {}, el("span", {class: "state " + n.state}, n.state));
    if (n.protected) stateCell.append(" ", el("span", {class: "badge protected", title: n.protected}, "protected"));
    const button = el("button", {type: "button", class: "protect", "data-node": n.id},
                      n.protected ? "unprotect" : "protect");
    button.addEventListener("click", () => protectNode(n.id, !n.protected));
    body.append(el("tr", {"data-node": n.id},
      el("td", {class: "name"}, n.id), el("td", {}, n.profile), stateCell,
      el("td", {class: "verdict " + n.verdict}, n.verdict), el("td", {}, pct(n.cpu)),
      el("td", {}, pct(n.io_wait)), el("td", {}, loadBar(n, cpuHigh)), el("td", {}, parts),
      el("td", {}, button)));
  }
  heatmap(c);
  latency(c);
  const busy = clear($("busiest").tBodies[0]);
  for (const p of c.busiest) {
    busy.append(el("tr", {}, el("td", {class: "name"}, p.table), el("td", {class: "name"}, p.partition),
      el("td", {class: "name"}, p.node), el("td", {}, p["class"]), el("td", {}, num(p.requests))));
  }
}

function loadBar(n, cpuHigh) {
  const w = 160, h = 14;
  const box = svg("svg", {width: w + 90, height: h, class: "bar"});
  box.append(svg("rect", {x: 0, y: 0, width: w, height: h, class: "bar-bg"}));
  if (n.capacity) {
    const share = Math.min(1, n.load / n.capacity);
    box.append(svg("rect", {x: 0, y: 0, width: Math.max(1, share * w), height: h,
                            class: share >= cpuHigh ? "bar-hot" : "bar-ok"}));
    box.append(svg("line", {x1: cpuHigh * w, x2: cpuHigh * w, y1: 0, y2: h, class: "bar-mark"}));
    box.append(svg("text", {x: w + 4, y: h - 3}, num(n.load) + " / " + num(n.capacity)));
  } else {
    box.append(svg("text", {x: w + 4, y: h - 3}, num(n.load) + " / –"));
  }
  box.append(svg("title", {}, "requests/s served vs estimated capacity (at 100% of its busier resource); mark: cpu_high"));
  return box;
}

function heatmap(c) {
  const map = clear($("heatmap"));
  const classes = c.classes, left = 150, top = 20, cw = 80, ch = 18;
  map.setAttribute("width", left + cw * classes.length + 10);
  map.setAttribute("height", top + ch * c.nodes.length + 10);
  let peak = 0;
  for (const n of c.nodes) for (const k of classes) peak = Math.max(peak, n.requests[k]);
  classes.forEach((k, i) => map.append(svg("text", {x: left + i * cw + cw / 2, y: 14, "text-anchor": "middle", class: "axis"}, k)));
  c.nodes.forEach((n, j) => {
    const y = top + j * ch;
    map.append(svg("text", {x: left - 6, y: y + ch - 5, "text-anchor": "end", class: "axis"}, n.id));
    classes.forEach((k, i) => {
      const count = n.partitions[k];
      const shade = peak > 0 ? n.requests[k] / peak : 0;
      const cell = svg("rect", {x: left + i * cw, y, width: cw - 2, height: ch - 2,
                                fill: count ? CLASS_COLOURS[k] : "#eee",
                                "fill-opacity": count ? (0.15 + 0.85 * shade).toFixed(2) : 1});
      cell.append(svg("title", {}, n.id + " · " + k + ": " + count + " partitions, " + num(n.requests[k]) + " requests/s"));
      map.append(cell);
      if (count) map.append(svg("text", {x: left + i * cw + cw / 2, y: y + ch - 5, "text-anchor": "middle", class: "cell"}, count));
    });
  });
}

function latency(c) {
  const chart = clear($("latency")), legend = clear($("tenants"));
  const w = 520, h = 200, left = 46, bottom = 22;
  chart.setAttribute("width", w);
  chart.setAttribute("height", h);
  $("slo").textContent = c.slo_ms ? "(SLO " + c.slo_ms + " ms)" : "(no SLO configured)";
  let top = c.slo_ms ? c.slo_ms * 1.5 : 1;
  for (const t of c.tenants) top = Math.max(top, t.max_ms * 1.1);
  const x = s => left + (w - left - 8) * (1 + s / 3600);
  const y = ms => (h - bottom) - (h - bottom - 8) * Math.min(ms / top, 1);
  chart.append(svg("line", {x1: left, x2: w - 8, y1: h - bottom, y2: h - bottom, class: "axis-line"}));
  chart.append(svg("line", {x1: left, x2: left, y1: 8, y2: h - bottom, class: "axis-line"}));
  for (const m of [-60, -45, -30, -15, 0]) {
    chart.append(svg("text", {x: x(m * 60), y: h - 6, "text-anchor": "middle", class: "axis"}, m ? m + " min" : "now"));
  }
  for (const f of [0, 0.5, 1]) {
    chart.append(svg("text", {x: left - 4, y: y(top * f) + 4, "text-anchor": "end", class: "axis"}, Math.round(top * f) + " ms"));
  }
  if (c.slo_ms) {
    chart.append(svg("line", {x1: left, x2: w - 8, y1: y(c.slo_ms), y2: y(c.slo_ms), class: "slo"}));
    chart.append(svg("text", {x: w - 10, y: y(c.slo_ms) - 4, "text-anchor": "end", class: "slo-label"}, "SLO"));
  }
  c.tenants.forEach((t, i) => {
    const colour = TENANT_COLOURS[i % TENANT_COLOURS.length];
    const points = t.points.map(([s, ms]) => x(s).toFixed(1) + "," + y(ms).toFixed(1)).join(" ");
    const line = svg("polyline", {points, fill: "none", stroke: colour, "stroke-width": 1.5});
    line.append(svg("title", {}, t.name));
    chart.append(line);
    const over = t.share_over_slo === null ? "" : " · over the SLO " + pct(t.share_over_slo) + " of the hour";
    const swatch = el("span", {class: "swatch"});
    swatch.style.backgroundColor = colour;
    legend.append(el("li", {}, swatch, el("span", {class: "name"}, t.name),
                     " " + t.last_ms.toFixed(1) + " ms now" + over));
  });
  if (!c.tenants.length) legend.append(el("li", {class: "muted"}, "no latency reported yet"));
}

function renderExplain(s) {
  const box = clear($("explain"));
  if (!s) return;
  const last = s.last_decision;
  if (!last) { box.append(el("p", {class: "muted"}, "no decision yet")); return; }
  const sizing = last.sizing ? " — " + last.sizing.current + " → " + last.sizing.target + " nodes, " + last.actions + " actions" : "";
  box.append(el("p", {}, el("strong", {}, "Last verdict (" + last.kind + ", " + when(last.at_unix_s) + "): "),
                last.reason || "no change", sizing));
  if (last.hold) box.append(el("p", {class: "hold"}, "held: " + last.hold.cause + ": " + last.hold.words));
  const odd = (last.verdicts || []).filter(v => v.verdict !== "healthy");
  if (odd.length) {
    const ul = el("ul", {class: "verdicts"});
    for (const v of odd) ul.append(el("li", {}, el("span", {class: "name"}, v.node), ": " + v.verdict
                                       + (v.reasons.length ? " (" + v.reasons.join("; ") + ")" : "")));
    box.append(ul);
  } else if ((last.verdicts || []).length) {
    box.append(el("p", {class: "muted"}, "every node healthy"));
  }
  if (s.window && s.window.configured) box.append(el("p", {}, (s.window.open ? "window open: " : "window closed: ") + s.window.words));
}

function renderPlan(s, c) {
  const box = clear($("plan"));
  const f = s && s.plan_in_flight;
  if (!f) { box.append(el("p", {class: "muted"}, "no plan in flight")); return; }
  const done = f.done || 0, total = f.total || 0;
  const bar = svg("svg", {width: 300, height: 14, class: "bar"});
  bar.append(svg("rect", {x: 0, y: 0, width: 300, height: 14, class: "bar-bg"}));
  bar.append(svg("rect", {x: 0, y: 0, width: total ? 300 * done / total : 0, height: 14, class: "bar-ok"}));
  box.append(el("p", {}, el("strong", {}, "plan " + f.plan_id), " · phase " + (f.phase || "–") + " · "
                + done + "/" + (total || "?") + " actions ", bar));
  if (f.current) box.append(el("p", {class: "muted"}, "now: " + f.current));
  const steps = (c && c.plan_steps) || [];
  const counts = {};
  for (const st of steps) counts[st.state] = (counts[st.state] || 0) + 1;
  if (steps.length) {
    box.append(el("p", {}, Object.entries(counts).map(([k, v]) => v + " " + k).join(" · ")));
    const table = el("table", {id: "steps"}, el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "step"), el("th", {}, "state"))));
    const tb = el("tbody");
    const shown = steps.filter(st => st.state === "running").concat(steps.filter(st => st.state !== "running")).slice(0, 40);
    for (const st of shown) {
      tb.append(el("tr", {}, el("td", {}, st.idx), el("td", {class: "name"}, st.what),
                   el("td", {class: "step " + st.state}, st.state + (st.sub_state ? " (" + st.sub_state + ")" : "")
                      + (st.error ? ": " + st.error : ""))));
    }
    table.append(tb);
    box.append(table);
  }
}

function renderHistory() {
  const body = clear($("history").tBodies[0]);
  const kind = $("history-kind").value;
  // summary: a plan's single steps (a move, a launch) only when they failed, and a decision
  // that held only as its hold (the same words)
  const keep = e => !kind || (kind === "summary"
    ? (!(e.details && e.details.op) || e.kind === "failure") && !(e.kind === "decision" && e.outcome === "none")
    : e.kind === kind);
  // Asked every 30 s, a policy holds for one cause many times in a row: one row for each run
  // of them (the latest's words, how many, since when), so the plans stay in sight.
  const rows = [];
  for (const e of state.events.filter(keep)) {
    const last = rows[rows.length - 1];
    if (last && e.kind === "hold" && last.e.kind === "hold" && last.e.subject === e.subject) {
      last.count += 1;
      last.e = e;
    } else rows.push({e: e, count: 1, since: e.at_unix_s});
  }
  for (const {e, count, since} of rows.slice(-60).reverse()) {
    const outcome = count > 1 ? e.outcome + " \u00d7" + count + " since " + clock(since) : e.outcome;
    body.append(el("tr", {class: "event " + e.kind, "data-id": e.id},
      el("td", {}, clock(e.at_unix_s)), el("td", {}, e.kind), el("td", {class: "name"}, e.subject),
      el("td", {}, outcome), el("td", {}, e.reason)));
  }
}

function renderWindows(s) {
  const w = s && s.window;
  $("window-state").textContent = w ? (w.configured ? w.words + " (" + w.source + ")" : "no windows: always allowed") : "";
}

// ---------------------------------------------------------------- controls
function confirmThen(text) {
  const dialog = $("confirm");
  $("confirm-text").textContent = text;
  return new Promise(done => {
    const finish = ok => { dialog.close(); $("confirm-ok").onclick = $("confirm-cancel").onclick = null; done(ok); };
    $("confirm-ok").onclick = () => finish(true);
    $("confirm-cancel").onclick = () => finish(false);
    dialog.showModal();
  });
}

async function change(what, method, path, body) {
  if (!state.token) { notice("Enter the API token first: every change needs it.", true); return null; }
  if (!(await confirmThen(what + "?"))) return null;
  const r = await api(method, path, body);
  if (r.status === 401) notice("Refused: the token is not the daemon's (401). Nothing changed.", true);
  else if (r.status >= 400) notice("Refused (" + r.status + "): " + (r.doc.error || ""), true);
  else notice("Done: " + what + ".", false);
  refresh();
  return r.status < 400 ? r.doc : null;
}

function seconds(text) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$/.exec(text.toLowerCase());
  if (!m) return null;
  return Number(m[1]) * ({"": 1, s: 1, m: 60, h: 3600, d: 86400})[m[2]];
}

function protectNode(node, protect) {
  if (protect) {
    change("Protect " + node + " from restart, drain and termination", "PUT",
           "/v1/nodes/" + encodeURIComponent(node) + "/protection", {reason: "protected from the console"});
  } else {
    change("Lift the protection of " + node, "DELETE", "/v1/nodes/" + encodeURIComponent(node) + "/protection");
  }
}

function wire() {
  $("token").value = state.token;
  $("token-form").addEventListener("submit", ev => {
    ev.preventDefault();
    state.token = $("token").value.trim();
    sessionStorage.setItem("metctl-token", state.token);
    if (state.streamAbort) state.streamAbort.abort();
    refresh();
  });
  $("forget").addEventListener("click", () => {
    state.token = "";
    $("token").value = "";
    sessionStorage.removeItem("metctl-token");
    refresh();
  });
  $("history-kind").addEventListener("change", renderHistory);
  $("pause-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const text = $("pause-for").value.trim();
    const forS = text ? seconds(text) : null;
    if (text && !forS) { notice("Pause for: a duration such as 90s, 15m, 2h or 1d.", true); return; }
    const body = {reason: $("pause-reason").value, stop_plan: !$("pause-finish").checked};
    if (forS) body.for_s = forS;
    change("Pause metctl " + (forS ? "for " + text : "until resumed"), "POST", "/v1/pause", body);
  });
  $("resume").addEventListener("click", () => change("Resume metctl", "POST", "/v1/resume", {}));
  $("pin-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const lo = Number($("pin-min").value), hi = Number($("pin-max").value || $("pin-min").value);
    if (!(lo >= 1 && hi >= lo)) { notice("Pin: min >= 1 and max >= min.", true); return; }
    change("Pin the cluster to " + lo + ".." + hi + " nodes", "PUT", "/v1/size", {min: lo, max: hi});
  });
  $("unpin").addEventListener("click", () => change("Unpin the cluster size", "DELETE", "/v1/size"));
  const days = $("window-days");
  for (const d of ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]) {
    days.append(el("label", {}, el("input", {type: "checkbox", value: d, class: "day"}), d), " ");
  }
  $("windows-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const chosen = Array.from(document.querySelectorAll("input.day:checked")).map(i => i.value);
    if (!chosen.length) { notice("Window: choose at least one day.", true); return; }
    const w = {days: chosen, start: $("window-start").value.trim(), end: $("window-end").value.trim()};
    change("Allow scale-in and reconfiguration only " + chosen.join(",") + " " + w.start + "-" + w.end,
           "PUT", "/v1/windows", {windows: [w], timezone: $("window-tz").value.trim() || "UTC"});
  });
  $("windows-clear").addEventListener("click", () => change("Go back to the config's maintenance windows", "DELETE", "/v1/windows"));
  $("dry-run").addEventListener("click", dryRun);
}

async function dryRun() {
  const box = clear($("dry-run-result"));
  box.append(el("p", {class: "muted"}, "planning…"));
  const r = await api("POST", "/v1/plan");
  clear(box);
  if (r.status !== 200) { box.append(el("p", {class: "bad"}, "no plan (" + r.status + "): " + (r.doc.error || ""))); return; }
  const p = r.doc, s = p.summary;
  box.append(el("p", {}, el("strong", {}, p.reason || "no change"), " — " + p.sizing.current + " → " + p.sizing.target
                + " nodes; " + s.moves + " moves, " + s.reconfigurations + " reconfigurations, " + s.launches
                + " launches, " + s.terminations + " terminations"));
  if (p.would_hold) box.append(el("p", {class: "hold"}, "would be held: " + p.would_hold.cause + ": " + p.would_hold.words));
  const ul = el("ul", {class: "actions"});
  for (const a of p.actions.slice(0, 30)) {
    ul.append(el("li", {}, a.op + " " + [a.node, a.partition, a.source && a.target ? a.source + " → " + a.target : a.target]
                 .filter(Boolean).join(" ") + ": " + a.reason));
  }
  if (p.actions.length > 30) ul.append(el("li", {class: "muted"}, "… " + (p.actions.length - 30) + " more"));
  box.append(ul);
}

document.addEventListener("DOMContentLoaded", () => {
  wire();
  refresh();
  follow();
  setInterval(refresh, 10000);  // a timed pause ends and windows open without any event
});
