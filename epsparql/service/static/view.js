// epsparql live view: plain JS, SVG and canvas, no library, no build step.
// The token comes in the address (?access_token= or #token=), is kept in
// this closure only, and the address is cleaned.
(function () {
  "use strict";

  const params = new URLSearchParams(location.search);
  const hash = new URLSearchParams(location.hash.replace(/^#/, ""));
  const TOKEN = params.get("access_token") || hash.get("token") || "";
  params.delete("access_token");
  if (TOKEN) {
    const q = params.toString();
    history.replaceState(null, "", location.pathname + (q ? "?" + q : ""));
  }

  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const fmt = (n) => (n === null || n === undefined) ? "–" : Number(n).toLocaleString("en-US");
  const fmtMs = (s) => (s === null || s === undefined) ? "–" : (s * 1000).toFixed(s < 0.01 ? 2 : 1);

  let selected = params.get("deployment") || null;
  let steps = null;            // the last steps reply
  let graphSig = "";           // the drawn graph's structure
  let source = null;           // EventSource of the selected deployment
  let sourceFor = null;
  let answersShown = 0;
  const MAX_ANSWERS = 100;

  async function get(path) {
    const r = await fetch(path, { headers: { "Authorization": "Bearer " + TOKEN },
                                  cache: "no-store" });
    if (!r.ok) {
      let msg = r.status + "";
      try { msg += ": " + (await r.json()).error; } catch (e) { /* not JSON */ }
      const err = new Error(msg);
      err.status = r.status;
      throw err;
    }
    return r.json();
  }

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in (attrs || {})) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sv(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in (attrs || {})) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function counter(parent, key, value, label, warn) {
    let c = parent.querySelector('[data-key="' + key + '"]');
    if (!c) {
      c = el("div", { "class": "c", "data-key": key });
      c.appendChild(el("b"));
      c.appendChild(el("span", {}, label));
      parent.appendChild(c);
    }
    const text = typeof value === "string" ? value : fmt(value);
    c.querySelector("b").textContent = text;
    c.classList.toggle("warn", !!warn);
  }

  // -- the service and the list of deployments -----------------------------------------
  function showStatus(st) {
    const s = $("service");
    counter(s, "events", st.events, "events");
    counter(s, "answers", st.answers, "answers");
    counter(s, "late", st.late, "late", st.late > 0);
    counter(s, "malformed", st.malformed, "malformed", st.malformed > 0);
    counter(s, "queued", st.queued, "queued");
    counter(s, "refused", st.refused, "refused");
    counter(s, "uptime", Math.round(st.uptime) + " s", "up");

    const ul = $("deployments");
    const names = st.deployments.map((d) => d.name);
    $("no-deployments").hidden = names.length > 0;
    if (selected && !names.includes(selected)) selected = null;
    if (!selected && names.length) selected = names[0];
    for (const li of Array.from(ul.children)) {
      if (!names.includes(li.dataset.name)) li.remove();
    }
    for (const d of st.deployments) {
      let li = ul.querySelector('li[data-name="' + CSS.escape(d.name) + '"]');
      if (!li) {
        li = el("li", { "data-name": d.name, "class": "deployment" });
        li.appendChild(el("span", { "class": "n" }, d.name));
        li.appendChild(el("span", { "class": "m" }));
        li.addEventListener("click", () => { select(d.name); });
        ul.appendChild(li);
      }
      li.querySelector(".m").textContent = d.state + " · " + fmt(d.events) + " events · " +
        fmt(d.answers) + " answers" + (d.late ? " · " + fmt(d.late) + " late" : "");
      li.classList.toggle("sel", d.name === selected);
    }
    drawCharts(st.series);
  }

  function select(name) {
    if (name === selected) return;
    selected = name;
    steps = null;
    graphSig = "";
    for (const li of $("deployments").children) li.classList.toggle("sel", li.dataset.name === name);
    refresh();
  }

  // -- the selected deployment ------------------------------------------------------
  function showSteps(s) {
    $("placeholder").hidden = true;
    $("selected").hidden = false;
    $("dep-name").textContent = s.name;
    const state = $("dep-state");
    state.textContent = s.state;
    state.className = "state " + s.state;
    $("dep-error").textContent = s.error || "";
    const c = $("dep-counters");
    counter(c, "events", s.events, "events in");
    counter(c, "answers", s.answers, "answers out");
    counter(c, "late", s.late, "late", s.late > 0);
    counter(c, "pm", s.partial_matches, "partial matches held");
    if (s.window_content !== null && s.window_content !== undefined) {
      counter(c, "wc", s.window_content, "in windows");
    }
    if (s.window_clock !== null && s.window_clock !== undefined) {
      counter(c, "clock", String(s.window_clock), "window clock (s)");
    }
    const sig = s.name + "|" + s.nodes.map((n) => n.id).join(",") + "|" +
      s.edges.map((e) => e.from + ">" + e.to).join(",");
    if (sig !== graphSig) {
      drawGraph(s);
      graphSig = sig;
      showQueries(s);
    }
    updateGraph(s);
    showWindows(s);
    steps = s;
    ensureSource(s.name, s.answers);
  }

  function showWindows(s) {
    const wins = s.nodes.filter((n) => n.kind === "window");
    $("windows-panel").hidden = wins.length === 0;
    const box = $("windows");
    box.textContent = "";
    for (const n of wins) {
      const d = el("div", { "class": "win", "data-window": n.id });
      d.appendChild(el("span", { "class": "h" }, (n.query ? n.query + " · " : "") + n.label));
      const held = n.held === null || n.held === undefined ? "?" : fmt(n.held);
      d.appendChild(el("span", { "class": "b" }, "holds " + held +
        (n.sample === undefined ? " (matches kept per pane)" : "") +
        (n.bounds ? " · " + boundsText(n.bounds) : "")));
      if (n.sample && n.sample.length) {
        const ul = el("ul");
        for (const t of n.sample) ul.appendChild(el("li", {}, t.s + " " + t.p + " " + t.o + "  @" + t.time));
        if (n.held > n.sample.length) ul.appendChild(el("li", { "class": "muted" }, "… and " + fmt(n.held - n.sample.length) + " more"));
        d.appendChild(ul);
      }
      box.appendChild(d);
    }
  }

  function showQueries(s) {
    const box = $("queries");
    box.textContent = "";
    for (const q of s.queries) {
      box.appendChild(el("div", { "class": "small" },
        q.name + " — " + (q.windowed ? q.dialect : "EP-SPARQL") + " " + q.form));
      box.appendChild(el("pre", {}, q.text));
    }
  }

  // A layered drawing: a node's layer is its longest path from an input;
  // within a layer, nodes are ordered by the mean place of their
  // predecessors (a few sweeps), then drawn top to bottom.
  const NW = 200, NH = 58, GX = 26, GY = 46, PAD = 14;

  function layout(nodes, edges) {
    const ids = nodes.map((n) => n.id);
    const preds = {}, succs = {};
    for (const id of ids) { preds[id] = []; succs[id] = []; }
    for (const e of edges) {
      if (preds[e.to] && succs[e.from]) { preds[e.to].push(e.from); succs[e.from].push(e.to); }
    }
    const layer = {};
    const indeg = {};
    for (const id of ids) indeg[id] = preds[id].length;
    const queue = ids.filter((id) => indeg[id] === 0);
    for (const id of queue) layer[id] = 0;
    for (let i = 0; i < queue.length; i++) {
      const u = queue[i];
      for (const v of succs[u]) {
        layer[v] = Math.max(layer[v] || 0, layer[u] + 1);
        if (--indeg[v] === 0) queue.push(v);
      }
    }
    for (const id of ids) if (layer[id] === undefined) layer[id] = 0;   // a cycle
    // answers at the bottom
    const maxL = Math.max(0, ...ids.map((id) => layer[id]));
    for (const n of nodes) if (n.kind === "answers") layer[n.id] = maxL;
    const rows = [];
    for (const id of ids) (rows[layer[id]] = rows[layer[id]] || []).push(id);
    for (let i = 0; i < rows.length; i++) rows[i] = rows[i] || [];
    const pos = {};
    const place = () => rows.forEach((r) => r.forEach((id, i) => { pos[id] = i; }));
    place();
    for (let sweep = 0; sweep < 4; sweep++) {
      for (let l = 1; l < rows.length; l++) {
        const bary = (id) => {
          const p = preds[id].filter((x) => layer[x] < l);
          return p.length ? p.reduce((a, x) => a + pos[x], 0) / p.length : pos[id];
        };
        rows[l].sort((a, b) => bary(a) - bary(b));
        rows[l].forEach((id, i) => { pos[id] = i; });
      }
    }
    const widest = Math.max(1, ...rows.map((r) => r.length));
    const W = widest * (NW + GX) - GX + 2 * PAD;
    const xy = {};
    rows.forEach((r, l) => {
      const off = (W - (r.length * (NW + GX) - GX)) / 2;
      r.forEach((id, i) => { xy[id] = { x: off + i * (NW + GX), y: PAD + l * (NH + GY) }; });
    });
    return { xy, W, H: rows.length * (NH + GY) - GY + 2 * PAD };
  }

  function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }

  function drawGraph(s) {
    const svg = $("graph");
    svg.textContent = "";
    const { xy, W, H } = layout(s.nodes, s.edges);
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("width", W);
    svg.setAttribute("height", H);
    const defs = sv("defs");
    const marker = sv("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5",
                                  markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
    marker.appendChild(sv("path", { d: "M0,0 L10,5 L0,10 z", fill: "#a7b0c2" }));
    defs.appendChild(marker);
    svg.appendChild(defs);
    const eg = sv("g", { "class": "edges" });
    for (const e of s.edges) {
      const a = xy[e.from], b = xy[e.to];
      if (!a || !b) continue;
      const x1 = a.x + NW / 2, y1 = a.y + NH, x2 = b.x + NW / 2, y2 = b.y;
      const my = (y1 + y2) / 2;
      eg.appendChild(sv("path", { "class": "edge", d: `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2 - 2}`,
                                  "marker-end": "url(#arrow)" }));
      if (e.side) {
        eg.appendChild(sv("text", { "class": "side", x: x2 + (e.side === "l" ? -16 : 6), y: y2 - 6 },
                          e.side === "l" ? "L" : e.side === "r" ? "R" : e.side.toUpperCase()));
      }
    }
    svg.appendChild(eg);
    for (const n of s.nodes) {
      const p = xy[n.id];
      const g = sv("g", { "class": "step " + n.kind, "data-step": n.id,
                          transform: `translate(${p.x},${p.y})` });
      g.appendChild(sv("rect", { width: NW, height: NH, rx: 6 }));
      g.appendChild(sv("text", { "class": "lbl", x: 8, y: 17 }, clip(n.label, 30)));
      g.appendChild(sv("text", { "class": "det", x: 8, y: 33 }, clip(n.details[0] || "", 32)));
      g.appendChild(sv("text", { "class": "cnt", x: 8, y: 50 }, ""));
      const title = sv("title", {}, [n.label].concat(n.details).join("\n"));
      g.appendChild(title);
      g.addEventListener("mouseenter", () => { $("step-info").textContent = info(n.id); });
      svg.appendChild(g);
    }
  }

  function info(id) {
    const n = steps && steps.nodes.find((x) => x.id === id);
    if (!n) return "";
    const lines = [n.label].concat(n.details);
    if (n.stores && n.stores.length) {
      for (const st of n.stores) {
        lines.push("store " + st.name + " (" + (st.side === "l" ? "left operand" :
          st.side === "r" ? "right operand" : st.side) + "): " + fmt(st.goals) + " partial matches");
      }
    }
    if (n.bounds) lines.push("bounds now: " + boundsText(n.bounds));
    return lines.join("\n");
  }

  function boundsText(b) {
    if (b.kind === "range") return b.from + " < τ ≤ " + b.to;
    if (b.kind === "now") return "τ = " + b.to;
    if (b.kind === "count") return "the last occurrences with τ ≤ " + b.to;
    return "τ ≤ " + b.to;
  }

  function countsText(n) {
    const parts = [];
    if (n.in !== undefined && n.in !== null) parts.push("in " + fmt(n.in));
    if (n.held !== undefined) {
      if (n.held === null) parts.push("held ?");
      else if (n.stores && n.stores.length > 1) {
        parts.push("held " + n.stores.map((s) => s.side.toUpperCase() + " " + fmt(s.goals)).join(" / "));
      } else parts.push((n.kind === "window" ? "holds " : "held ") + fmt(n.held));
    }
    if (n.out !== undefined && n.out !== null) parts.push("out " + fmt(n.out));
    if (n.bounds && n.bounds.kind === "range") parts.push("(" + n.bounds.from + ", " + n.bounds.to + "]");
    return parts.join(" · ");
  }

  function updateGraph(s) {
    const old = {};
    if (steps && steps.name === s.name) for (const n of steps.nodes) old[n.id] = countsText(n);
    for (const n of s.nodes) {
      const g = $("graph").querySelector('[data-step="' + CSS.escape(n.id) + '"]');
      if (!g) continue;
      const t = countsText(n);
      g.querySelector("text.cnt").textContent = t;
      g.dataset.in = n.in ?? "";
      g.dataset.held = n.held ?? "";
      g.dataset.out = n.out ?? "";
      if (old[n.id] !== undefined && old[n.id] !== t) {
        g.classList.add("changed");
        setTimeout(() => g.classList.remove("changed"), 600);
      }
    }
  }

  // -- answers, live ------------------------------------------------------------------
  function ensureSource(name, answers) {
    if (sourceFor === name && source) return;
    if (source) source.close();
    $("answers").textContent = "";
    answersShown = 0;
    sourceFor = name;
    const after = Math.max(0, answers - 20);
    source = new EventSource("/queries/" + encodeURIComponent(name) + "/stream?after=" + after +
                             "&access_token=" + encodeURIComponent(TOKEN));
    source.onopen = () => { $("answers-live").textContent = "(live)"; };
    source.onmessage = (ev) => addAnswer(ev.lastEventId, ev.data);
    source.addEventListener("dropped", () => { $("answers-live").textContent = "(dropped: too far behind)"; });
    source.addEventListener("closing", () => { $("answers-live").textContent = "(the service shuts down)"; });
    source.onerror = () => { $("answers-live").textContent = "(reconnecting…)"; };
  }

  function addAnswer(id, data) {
    let text = data;
    try {
      const a = JSON.parse(data);
      const b = a.bindings || {};
      const vs = Object.keys(b).map((k) => "?" + k + " = " + termText(b[k]));
      text = "[" + a.start + ", " + a.end + "] " + (a.query ? a.query + ": " : "") +
             (vs.join("  ") || (a.triples ? JSON.stringify(a.triples) : "(no bindings)"));
    } catch (e) { /* shown as it came */ }
    const ol = $("answers");
    const li = el("li", { "class": "answer new", value: id }, text);
    ol.insertBefore(li, ol.firstChild);
    answersShown++;
    while (ol.children.length > MAX_ANSWERS) ol.removeChild(ol.lastChild);
  }

  function termText(t) {
    if (t === null || t === undefined) return "";
    if (typeof t !== "object") return String(t);
    if (t.type === "uri" || t.type === "iri") return "<" + t.value + ">";
    if (t.type === "bnode") return "_:" + t.value;
    if ("value" in t) {
      const dt = t.datatype || "";
      if (/XMLSchema#(integer|decimal|double|float|long|int|boolean)$/.test(dt)) return t.value;
      return JSON.stringify(t.value) + (dt && !/XMLSchema#string$/.test(dt) ? "^^<" + dt + ">" : "") +
        (t["xml:lang"] ? "@" + t["xml:lang"] : "");
    }
    return JSON.stringify(t);
  }

  // -- charts (canvas) ----------------------------------------------------------------
  function drawCharts(series) {
    const rows = (series && series.rows) || [];
    const now = Math.floor(Date.now() / 1000);
    const span = 300;                     // the last five minutes
    const recent = rows.filter((r) => r[0] > now - span);
    chart($("tp-chart"), recent, now, span, [1, 2], (v) => v, "/s");
    chart($("lat-chart"), recent, now, span, [3, 4], (v) => v === null ? null : v * 1000, " ms");
  }

  function chart(cv, rows, now, span, cols, f, unit) {
    const dpr = window.devicePixelRatio || 1;
    const w = cv.clientWidth || 560, h = cv.clientHeight || 180;
    if (cv.width !== Math.round(w * dpr)) { cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr); }
    const ctx = cv.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const L = 52, R = 8, T = 8, B = 20;
    let max = 0;
    for (const r of rows) for (const c of cols) { const v = f(r[c]); if (v !== null && v > max) max = v; }
    max = niceMax(max);
    ctx.strokeStyle = "#e3e6ec"; ctx.fillStyle = "#6b7385"; ctx.lineWidth = 1;
    ctx.font = "11px system-ui, sans-serif";
    for (let i = 0; i <= 4; i++) {
      const y = T + (h - T - B) * (1 - i / 4);
      ctx.beginPath(); ctx.moveTo(L, y); ctx.lineTo(w - R, y); ctx.stroke();
      const v = max * i / 4;
      ctx.fillText((v >= 100 ? Math.round(v).toLocaleString("en-US") : +v.toFixed(2)) + (i === 4 ? unit : ""), 4, y + 4);
    }
    for (let m = 0; m <= span; m += 60) {
      const x = L + (w - L - R) * (1 - m / span);
      ctx.textAlign = m === 0 ? "right" : "center";
      ctx.fillText(m === 0 ? "now" : "-" + m / 60 + "m", x, h - 5);
      ctx.textAlign = "left";
    }
    const colors = ["#2f6fde", "#e07b22"];
    cols.forEach((c, k) => {
      ctx.strokeStyle = colors[k]; ctx.lineWidth = 1.6; ctx.beginPath();
      let pen = false, prevT = null;
      for (const r of rows) {
        const v = f(r[c]);
        if (v === null) { pen = false; continue; }
        const x = L + (w - L - R) * (1 - (now - r[0]) / span);
        const y = T + (h - T - B) * (1 - v / max);
        // a gap of quiet seconds is zero, drawn so
        if (pen && prevT !== null && r[0] - prevT > 1 && c <= 2) {
          ctx.lineTo(L + (w - L - R) * (1 - (now - prevT - 1) / span), T + (h - T - B));
          ctx.lineTo(L + (w - L - R) * (1 - (now - r[0] + 1) / span), T + (h - T - B));
        }
        if (pen) ctx.lineTo(x, y); else ctx.moveTo(x, y);
        pen = true; prevT = r[0];
      }
      ctx.stroke();
    });
  }

  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  // -- the loop ------------------------------------------------------------------------
  let busy = false;
  async function refresh() {
    if (busy) return;
    busy = true;
    const conn = $("conn");
    try {
      if (!TOKEN) throw new Error("no token: open /view?access_token=TOKEN");
      const st = await get("/status");
      showStatus(st);
      if (selected) {
        const s = await get("/view/api/steps/" + encodeURIComponent(selected));
        if (s.name === selected) showSteps(s);
      } else {
        $("placeholder").hidden = false;
        $("selected").hidden = true;
      }
      conn.textContent = "updated " + new Date().toLocaleTimeString();
      conn.classList.remove("bad");
    } catch (e) {
      conn.textContent = String(e.message || e);
      conn.classList.add("bad");
    } finally {
      busy = false;
    }
  }
  refresh();
  setInterval(refresh, 1000);
})();
