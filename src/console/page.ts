/**
 * The status page (issue 17 item 1): one HTML document with its style and script inline (no build
 * step, nothing fetched from elsewhere), served by the local API. It asks `/api/status` every two
 * seconds and redraws: agent and broker, each printer's state with when it was last checked, the
 * queue with reasons, the last jobs with a preview of each receipt (drawn from the bytes, personal
 * data masked unless the person asks for one receipt), and the actions (test print, retry,
 * reprint), each confirmed first. On a phone the sections stack. Where a token is required the
 * page asks for it once and the server keeps it in an HttpOnly, Secure, SameSite=Strict cookie.
 */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>printer-agent</title>
<style>
  :root { font-family: system-ui, sans-serif; color: #1b1b1b; background: #f4f4f2; }
  body { margin: 0; }
  header { background: #263238; color: #fff; padding: 12px 16px; display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: baseline; }
  header h1 { font-size: 18px; margin: 0; }
  main { padding: 12px; display: grid; gap: 12px; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); align-items: start; }
  section { background: #fff; border-radius: 8px; padding: 12px 14px; box-shadow: 0 1px 2px #0002; }
  h2 { font-size: 15px; margin: 0 0 8px; text-transform: uppercase; letter-spacing: .04em; color: #555; }
  .state { font-weight: 600; padding: 2px 8px; border-radius: 10px; background: #ddd; }
  .ok { background: #c8e6c9; } .warn { background: #ffe0b2; } .bad { background: #ffcdd2; }
  .printer { display: flex; justify-content: space-between; gap: 8px; flex-wrap: wrap; padding: 6px 0; border-bottom: 1px solid #eee; }
  .muted { color: #666; font-size: 13px; }
  button { font: inherit; padding: 8px 12px; border-radius: 6px; border: 1px solid #888; background: #fafafa; cursor: pointer; min-height: 40px; }
  button:hover { background: #eee; }
  .job { border-top: 1px solid #eee; padding: 8px 0; }
  .job summary { cursor: pointer; display: flex; gap: 8px; flex-wrap: wrap; align-items: center; }
  .job img { width: 100%; max-width: 320px; border: 1px solid #ddd; margin-top: 8px; display: block; }
  .reason { color: #b71c1c; font-size: 13px; }
  #fault { display: none; background: #ffcdd2; padding: 8px 12px; border-radius: 6px; }
  #warnings { display: none; background: #ffe0b2; padding: 8px 12px; border-radius: 6px; margin-top: 6px; white-space: pre-line; }
  #login { display: none; }
  input { font: inherit; padding: 8px; min-height: 40px; box-sizing: border-box; width: 100%; margin: 6px 0; }
</style>
</head>
<body>
<header><h1>printer-agent</h1><span id="agent" class="muted">connecting...</span><span id="broker" class="state"></span></header>
<main>
  <section id="login"><h2>Sign in</h2>
    <form id="login-form"><label>Access token<input id="token" type="password" autocomplete="current-password" required></label>
    <button type="submit">Sign in</button></form><p id="login-error" class="reason"></p></section>
  <section id="printers-section"><h2>Printers</h2><div id="fault"></div><div id="warnings"></div><div id="printers"></div>
    <p><button id="test-print" type="button">Print a test page</button></p></section>
  <section><h2>Queue</h2><div id="queue" class="muted"></div></section>
  <section><h2>Last jobs</h2><div id="jobs"></div></section>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const text = (tag, content, cls) => { const e = document.createElement(tag); e.textContent = content; if (cls) e.className = cls; return e; };
const STATE_CLASS = { ready: "ok", "paper-near-end": "warn" };
const when = (iso) => iso ? new Date(iso).toLocaleString() : "never";
async function api(method, path, body) {
  const res = await fetch(path, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined, credentials: "same-origin" });
  if (res.status === 401 && path !== "/api/login") { showLogin(); throw new Error("sign in first"); }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((data.error && data.error.message) || ("HTTP " + res.status));
  return data;
}
function showLogin() { $("login").style.display = "block"; }
async function act(question, method, path, body) {
  if (!window.confirm(question)) return;
  try { await api(method, path, body); refresh(); } catch (e) { alert(e.message); }
}
const opened = new Set();
function drawJobs(recent) {
  const list = $("jobs"); list.textContent = "";
  for (const j of recent) {
    const d = document.createElement("details"); d.className = "job"; d.dataset.job = String(j.id);
    d.open = opened.has(j.id);
    d.addEventListener("toggle", () => { if (d.open) { opened.add(j.id); loadPreview(d, j, false); } else opened.delete(j.id); });
    const s = document.createElement("summary");
    s.append(text("span", j.state, "state " + (j.state === "printed" ? "ok" : j.state === "failed" || j.state === "unconfirmed" ? "bad" : "warn")));
    s.append(text("span", (j.kind === "receipt" ? "" : j.kind + " ") + (j.orderNo || j.jobId)));
    s.append(text("span", j.printer + " · " + when(j.createdAt) + (j.markings.length ? " · " + j.markings.join(", ") : ""), "muted"));
    d.append(s);
    if (j.reason) d.append(text("div", j.reason.code + ": " + j.reason.message, "reason"));
    const buttons = document.createElement("p");
    if (["failed", "unconfirmed", "waiting"].includes(j.state) || j.held) {
      const b = text("button", "Retry"); b.type = "button";
      b.onclick = () => act("Print job " + j.jobId + " again?" + (j.state === "unconfirmed" ? " It may already be on paper: it prints marked POSSIBLE DUPLICATE." : ""), "POST", "/api/jobs/" + encodeURIComponent(j.id) + "/retry", {});
      buttons.append(b);
    }
    if (j.kind === "receipt" && j.orderNo && j.state === "printed") {
      const b = text("button", "Reprint"); b.type = "button";
      b.onclick = () => act("Reprint order " + j.orderNo + "? It prints marked REPRINT.", "POST", "/api/reprint", { orderNo: j.orderNo, printer: j.printer });
      buttons.append(b);
    }
    if (j.kind !== "test") {
      const b = text("button", "Show personal data"); b.type = "button";
      b.onclick = () => { if (window.confirm("Show this customer's name, phone and address?")) loadPreview(d, j, true); };
      buttons.append(b);
    }
    d.append(buttons);
    if (d.open) loadPreview(d, j, false);
    list.append(d);
  }
}
function loadPreview(d, j, reveal) {
  let img = d.querySelector("img");
  if (!img) { img = document.createElement("img"); img.alt = "receipt " + (j.orderNo || j.jobId); d.append(img); }
  const src = "/api/jobs/" + encodeURIComponent(j.id) + "/preview.svg" + (reveal ? "?reveal=1" : "");
  if (img.getAttribute("src") !== src) img.src = src;
}
async function refresh() {
  let s;
  try { s = await api("GET", "/api/status"); } catch (e) { $("agent").textContent = e.message; return; }
  $("login").style.display = "none";
  $("agent").textContent = "store " + s.storeId + " · version " + (s.agent ? s.agent.version : "?") + " · up since " + when(s.agent && s.agent.startedAt);
  $("broker").textContent = s.broker.connected ? "broker connected" : "broker NOT connected";
  $("broker").className = "state " + (s.broker.connected ? "ok" : "bad");
  $("fault").style.display = s.fault ? "block" : "none";
  $("fault").textContent = s.fault ? s.fault.code + ": " + s.fault.message : "";
  const warnings = s.warnings || [];
  $("warnings").style.display = warnings.length ? "block" : "none";
  $("warnings").textContent = warnings.map((w) => w.code + ": " + w.message).join("\\n");
  const printers = $("printers"); printers.textContent = "";
  for (const p of s.printers) {
    const row = document.createElement("div"); row.className = "printer"; row.dataset.printer = p.id;
    row.append(text("strong", p.id));
    row.append(text("span", p.state, "state printer-state " + (STATE_CLASS[p.state] || "bad")));
    row.append(text("span", "paper " + p.paper + " · " + p.queue.pending + " pending · checked " + when(p.checkedAt) + " · last printed " + when(p.lastPrintedAt), "muted"));
    printers.append(row);
  }
  const counts = Object.entries(s.jobs).filter(([, n]) => n > 0).map(([k, n]) => n + " " + k);
  $("queue").textContent = counts.length ? counts.join(" · ") : "no jobs";
  drawJobs(s.recent);
}
$("test-print").onclick = () => act("Print a test page?", "POST", "/api/test-print", {});
$("login-form").onsubmit = async (ev) => {
  ev.preventDefault();
  try { await api("POST", "/api/login", { token: $("token").value }); $("token").value = ""; $("login-error").textContent = ""; refresh(); }
  catch (e) { $("login-error").textContent = e.message; }
};
refresh();
setInterval(refresh, 2000);
</script>
</body>
</html>
`;
