/**
 * The status page (issue 17 item 1, issue 42 items 1-6): one HTML document with its style and
 * script inline (no build step, nothing fetched from elsewhere), served by the local API.
 *
 * - The server draws the first view (first-view.ts): it is what shows without JavaScript, with a
 *   `<noscript>` line saying so, and it reloads itself then.
 * - The script asks `/api/status` every two seconds and changes only what changed: rows are keyed
 *   (a printer by id, a job by row id) and kept, so keyboard focus, open rows and a receipt shown
 *   unmasked survive the refresh. Changes a person must hear (a printer's state, the broker, a
 *   new banner, a job failed or unconfirmed) go to a polite live region.
 * - At the top, what needs a person (attention.ts) in words they can act on.
 * - Times are the store's (`data-time-zone`), in one format, whatever the browser's locale/zone.
 * - Signed out where reading needs a token: only the sign-in. The token goes to the server once,
 *   which keeps it in an HttpOnly, SameSite=Strict cookie (Secure over HTTPS) for 30 days after
 *   the last visit; Sign out removes it.
 */
import { escapeHtml, type FirstView } from './first-view.js';

export interface PageView {
  /** The request carried a valid credential (the page's cookie). */
  signedIn: boolean;
  /** Reading needs a credential (a token is configured). */
  tokenRequired: boolean;
  /** IANA zone the page shows times in: the store's. */
  timeZone: string;
  /** The first view, when the request may read the status. */
  view: FirstView | null;
}

const STYLE = `
  :root { font-family: system-ui, sans-serif; color: #1b1b1b; background: #f4f4f2; }
  body { margin: 0; }
  header { background: #263238; color: #fff; padding: 12px 16px; display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: baseline; }
  header h1 { font-size: 18px; margin: 0; }
  header .muted { color: #dfe6e9; }
  header button { margin-left: auto; min-height: 32px; padding: 4px 10px; }
  main { padding: 12px; display: grid; gap: 12px; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); align-items: start; }
  section { background: #fff; border-radius: 8px; padding: 12px 14px; box-shadow: 0 1px 2px #0002; }
  h2 { font-size: 15px; margin: 0 0 8px; text-transform: uppercase; letter-spacing: .04em; color: #4a4a4a; }
  .state { font-weight: 600; padding: 2px 8px; border-radius: 10px; background: #ddd; color: #1b1b1b; }
  .ok { background: #c8e6c9; } .warn { background: #ffe0b2; } .bad { background: #ffcdd2; }
  .printer { display: flex; justify-content: space-between; gap: 8px; flex-wrap: wrap; padding: 6px 0; border-bottom: 1px solid #eee; }
  .muted { color: #595959; font-size: 13px; }
  button, select { font: inherit; color: #1b1b1b; padding: 8px 12px; border-radius: 6px; border: 1px solid #767676; background: #fafafa; cursor: pointer; min-height: 40px; }
  button:hover { background: #eee; }
  :focus-visible { outline: 3px solid #1565c0; outline-offset: 2px; }
  .job { border-top: 1px solid #eee; padding: 8px 0; }
  .job summary { cursor: pointer; display: flex; gap: 8px; flex-wrap: wrap; align-items: center; }
  .job img { width: 100%; max-width: 320px; border: 1px solid #ddd; margin-top: 8px; display: block; }
  .reason { color: #a31515; font-size: 13px; flex-basis: 100%; }
  .attention { background: #ffcdd2; color: #1b1b1b; border-left: 6px solid #b71c1c; margin: 12px 12px 0; padding: 10px 14px; border-radius: 6px; font-size: 17px; font-weight: 600; }
  .attention ul { margin: 0; padding-left: 20px; }
  .noscript { background: #fff3cd; color: #1b1b1b; margin: 12px 12px 0; padding: 8px 12px; border-radius: 6px; }
  #fault { background: #ffcdd2; padding: 8px 12px; border-radius: 6px; }
  #warnings { background: #ffe0b2; padding: 8px 12px; border-radius: 6px; margin-top: 6px; white-space: pre-line; }
  .test-print { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; }
  .visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  input { font: inherit; padding: 8px; min-height: 40px; box-sizing: border-box; width: 100%; margin: 6px 0; }
  [hidden] { display: none !important; }
`;

/**
 * The script: plain ES2020, no template literals (this file is one). It draws into the server's
 * markup, removing the server-drawn rows (they have no `data-key`) on the first answer.
 */
const SCRIPT = `
"use strict";
const $ = (id) => document.getElementById(id);
const el = (tag, cls, content) => { const e = document.createElement(tag); if (cls) e.className = cls; if (content !== undefined) e.textContent = content; return e; };
// Writes only what differs: an unchanged node is left alone (focus, selection, a screen reader's place).
const setText = (e, v) => { if (e.textContent !== v) e.textContent = v; };
const setClass = (e, v) => { if (e.className !== v) e.className = v; };
const show = (e, on) => { if (e.hidden === on) e.hidden = !on; };
const page = document.body;
const TOKEN_REQUIRED = page.dataset.tokenRequired === "1";
let signedIn = page.dataset.signedIn === "1";
const STATE_CLASS = { ready: "ok", "paper-near-end": "warn" };
const jobClass = (s) => s === "printed" ? "ok" : s === "failed" || s === "unconfirmed" ? "bad" : "warn";

// The store's zone and one format, not the browser's locale (a phone set to another zone or language).
const FORMAT = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" };
let clock;
try { clock = new Intl.DateTimeFormat("en-CA", Object.assign({ timeZone: page.dataset.timeZone }, FORMAT)); }
catch (e) { clock = new Intl.DateTimeFormat("en-CA", Object.assign({ timeZone: "UTC" }, FORMAT)); setText($("zone"), "times in UTC"); }
function when(iso) {
  if (!iso) return "never";
  const p = {};
  for (const part of clock.formatToParts(new Date(iso))) p[part.type] = part.value;
  return p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + ":" + p.second;
}

async function api(method, path, body) {
  const res = await fetch(path, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined, credentials: "same-origin" });
  if (res.status === 401 && path !== "/api/login") {
    signedIn = false;
    if (path === "/api/status") drawSession(); else askSignIn();
    const refused = new Error("sign in first"); refused.signIn = true; throw refused;
  }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((data.error && data.error.message) || ("HTTP " + res.status));
  return data;
}
function askSignIn() { show($("login"), true); $("token").focus(); }
/** Signed out where reading needs a token: the sign-in and nothing else. */
function drawSession() {
  const blank = TOKEN_REQUIRED && !signedIn;
  for (const s of document.querySelectorAll(".view")) show(s, !blank);
  show($("sign-out"), signedIn);
  if (blank) {
    for (const id of ["printers", "jobs", "attention-list"]) $(id).textContent = "";
    setText($("queue"), ""); setText($("broker"), ""); show($("attention"), false);
    setText($("agent"), "sign in to see this store's printers");
    show($("login"), true);
  }
}
async function act(question, method, path, body) {
  if (!window.confirm(question)) return;
  try { await api(method, path, body); refresh(); } catch (e) { if (!e.signIn) alert(e.message); }
}
function announce(lines) { if (lines.length) setText($("announcer"), lines.join(". ")); }

/** Keyed rows: existing ones are updated in place and moved only when out of order. */
function place(list, items, key, make, update) {
  const wanted = new Set(items.map(key));
  for (const row of [...list.children]) if (!wanted.has(row.dataset.key)) row.remove();
  const rows = new Map([...list.children].map((row) => [row.dataset.key, row]));
  items.forEach((item, i) => {
    const k = key(item);
    let row = rows.get(k);
    if (!row) { row = make(item); row.dataset.key = k; }
    update(row, item);
    if (list.children[i] !== row) list.insertBefore(row, list.children[i] || null);
  });
}

function makePrinter(p) {
  const row = el("div", "printer"); row.dataset.printer = p.id;
  row._parts = { state: el("span"), line: el("span", "muted"), drawer: el("span", "muted drawer") };
  row.append(el("strong", "", p.id), row._parts.state, row._parts.line, row._parts.drawer);
  return row;
}
function drawPrinter(row, p) {
  const parts = row._parts;
  setText(parts.state, p.state); setClass(parts.state, "state printer-state " + (STATE_CLASS[p.state] || "bad"));
  setText(parts.line, "paper " + p.paper + " · " + p.queue.pending + " pending · checked " + when(p.checkedAt) + " · last printed " + when(p.lastPrintedAt));
  // The cash drawer's sensor (kick-out pin 3), where the printer reports it.
  const drawer = p.drawerPinHigh === true || p.drawerPinHigh === false;
  show(parts.drawer, drawer); setText(parts.drawer, drawer ? "drawer pin 3 " + (p.drawerPinHigh ? "high" : "low") : "");
}

const opened = new Set();
const revealed = new Set();
const button = (label, onclick) => { const b = el("button", "", label); b.type = "button"; b.onclick = onclick; return b; };
function makeJob(j) {
  const d = el("details", "job"); d.dataset.job = String(j.id);
  const s = el("summary");
  const parts = { state: el("span"), name: el("span", "name"), meta: el("span", "muted"), reason: el("span", "reason") };
  s.append(parts.state, parts.name, parts.meta, parts.reason);
  parts.retry = button("Retry", () => { const job = d._job; act("Print job " + job.jobId + " again?" + (job.state === "unconfirmed" ? " It may already be on paper: it prints marked POSSIBLE DUPLICATE." : ""), "POST", "/api/jobs/" + encodeURIComponent(job.id) + "/retry", {}); });
  parts.reprint = button("Reprint", () => { const job = d._job; act("Reprint order " + job.orderNo + "? It prints marked REPRINT.", "POST", "/api/reprint", { orderNo: job.orderNo, printer: job.printer }); });
  parts.reveal = button("Show personal data", () => {
    const job = d._job;
    if (revealed.has(job.id)) revealed.delete(job.id);
    else if (window.confirm("Show this customer's name, phone and address?")) revealed.add(job.id);
    drawJob(d, job);
  });
  const actions = el("p", "actions"); actions.append(parts.retry, parts.reprint, parts.reveal);
  d.append(s, actions);
  d._parts = parts;
  d.addEventListener("toggle", () => { if (d.open) opened.add(d._job.id); else opened.delete(d._job.id); drawPreview(d); });
  return d;
}
function drawJob(d, j) {
  d._job = j;
  const parts = d._parts;
  setText(parts.state, j.state); setClass(parts.state, "state " + jobClass(j.state));
  setText(parts.name, (j.kind === "receipt" ? "" : j.kind + " ") + (j.orderNo || j.jobId));
  setText(parts.meta, j.printer + " · " + when(j.createdAt) + (j.markings.length ? " · " + j.markings.join(", ") : ""));
  // The reason in the row itself: a person sees why without opening it.
  setText(parts.reason, j.reason ? j.reason.code + ": " + j.reason.message : ""); show(parts.reason, !!j.reason);
  show(parts.retry, ["failed", "unconfirmed", "waiting"].includes(j.state) || j.held);
  show(parts.reprint, j.kind === "receipt" && !!j.orderNo && j.state === "printed");
  show(parts.reveal, j.kind !== "test");
  setText(parts.reveal, revealed.has(j.id) ? "Hide personal data" : "Show personal data");
  if (d.open !== opened.has(j.id)) d.open = opened.has(j.id);
  drawPreview(d);
}
function drawPreview(d) {
  const j = d._job;
  if (!d.open) return;
  let img = d.querySelector("img");
  if (!img) {
    img = el("img"); img.alt = "receipt " + (j.orderNo || j.jobId); d.append(img);
    // Unmasked needs a credential: a refused image asks for it and shows the masked one again.
    img.onerror = () => { if (revealed.delete(d._job.id)) { askSignIn(); drawJob(d, d._job); } };
  }
  // Asked for once per reveal (each is logged), not at every refresh.
  const src = "/api/jobs/" + encodeURIComponent(j.id) + "/preview.svg" + (revealed.has(j.id) ? "?reveal=1" : "");
  if (img.getAttribute("src") !== src) img.setAttribute("src", src);
}

let last = null;
// A banner is news once: its waiting time changes at every refresh.
const attentionKey = (a) => a.code + "/" + (a.printer || "");
/** What a person must hear: printers and broker changing, a new banner, a job failed or unconfirmed. */
function changes(s) {
  const now = { broker: s.broker.connected, printers: new Map(s.printers.map((p) => [p.id, p.state])), jobs: new Map(s.recent.map((j) => [j.id, j.state])), attention: new Set(s.attention.map(attentionKey)) };
  const lines = [];
  if (last) {
    if (now.broker !== last.broker) lines.push(now.broker ? "Broker connected" : "Broker NOT connected");
    for (const [id, state] of now.printers) if (last.printers.has(id) && last.printers.get(id) !== state) lines.push("Printer " + id + ": " + state);
    for (const a of s.attention) if (!last.attention.has(attentionKey(a))) lines.push(a.message);
    for (const j of s.recent) if ((j.state === "failed" || j.state === "unconfirmed") && last.jobs.get(j.id) !== j.state) lines.push((j.orderNo ? "Order " + j.orderNo : "Job " + j.jobId) + ": " + j.state);
  }
  last = now;
  return lines;
}

let draws = 0;
async function refresh() {
  if (TOKEN_REQUIRED && !signedIn) return;
  let s;
  try { s = await api("GET", "/api/status"); } catch (e) { if (!e.signIn) setText($("agent"), e.message); return; }
  setText($("agent"), "store " + s.storeId + " · version " + (s.agent ? s.agent.version : "?") + " · up since " + when(s.agent && s.agent.startedAt));
  setText($("broker"), s.broker.connected ? "broker connected" : "broker NOT connected");
  setClass($("broker"), "state " + (s.broker.connected ? "ok" : "bad"));
  show($("attention"), s.attention.length > 0);
  place($("attention-list"), s.attention, attentionKey, () => el("li"), (li, a) => setText(li, a.message));
  show($("fault"), !!s.fault);
  setText($("fault"), s.fault ? s.fault.code + ": " + s.fault.message : "");
  const warnings = s.warnings || [];
  show($("warnings"), warnings.length > 0);
  setText($("warnings"), warnings.map((w) => w.code + ": " + w.message).join("\\n"));
  place($("printers"), s.printers, (p) => p.id, makePrinter, drawPrinter);
  const roles = [...new Set(s.printers.flatMap((p) => p.roles && p.roles.length ? p.roles : [p.id]))];
  const select = $("test-role");
  if ([...select.options].map((o) => o.value).join("\\n") !== roles.join("\\n")) {
    const chosen = select.value || "receipt";
    select.textContent = "";
    for (const r of roles) { const o = el("option", "", r); o.value = r; select.append(o); }
    select.value = roles.includes(chosen) ? chosen : roles[0] || "";
  }
  const counts = Object.entries(s.jobs).filter(([, n]) => n > 0).map(([k, n]) => n + " " + k);
  setText($("queue"), counts.length ? counts.join(" · ") : "no jobs");
  place($("jobs"), s.recent, (j) => String(j.id), makeJob, drawJob);
  announce(changes(s));
  // Counts the redraws: a test waits for the next one instead of a fixed time.
  page.dataset.draws = String(++draws);
}
$("test-print").onclick = () => {
  const role = $("test-role").value;
  act("Print a test page on the " + role + " printer?", "POST", "/api/test-print", role ? { role } : {});
};
$("login-form").onsubmit = async (ev) => {
  ev.preventDefault();
  try { await api("POST", "/api/login", { token: $("token").value }); }
  catch (e) { setText($("login-error"), e.message); return; }
  $("token").value = ""; setText($("login-error"), "");
  signedIn = true; show($("login"), false); drawSession(); refresh();
};
$("sign-out").onclick = async () => {
  try { await api("POST", "/api/logout", {}); } catch (e) { if (!e.signIn) { alert(e.message); return; } }
  signedIn = false;
  // What was shown unmasked goes back to masked.
  revealed.clear();
  for (const d of $("jobs").children) if (d._job) drawJob(d, d._job);
  drawSession();
  announce(["Signed out"]);
};
drawSession();
refresh();
setInterval(refresh, 2000);
`;

/** The whole document; `view` null: the sign-in only (reading needs a token the request lacks). */
export function pageHtml(page: PageView): string {
  const v = page.view;
  const blank = v === null;
  const hidden = (on: boolean) => (on ? ' hidden' : '');
  const noscript = blank
    ? 'JavaScript is off: signing in needs it.'
    : 'JavaScript is off: this is the state when the page was loaded, and it reloads itself every 15 seconds. Signing in, the receipt previews and the buttons need JavaScript.';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>printer-agent</title>
${blank ? '' : '<noscript><meta http-equiv="refresh" content="15"></noscript>'}
<style>${STYLE}</style>
</head>
<body data-time-zone="${escapeHtml(page.timeZone)}" data-signed-in="${page.signedIn ? 1 : 0}" data-token-required="${page.tokenRequired ? 1 : 0}">
<header><h1>printer-agent</h1><span id="agent" class="muted">${v ? v.agent : "sign in to see this store's printers"}</span><span id="broker" class="state${v ? ` ${v.broker.className}` : ''}">${v ? v.broker.text : ''}</span><span id="zone" class="muted">times in ${escapeHtml(page.timeZone)}</span><button id="sign-out" type="button"${hidden(!page.signedIn)}>Sign out</button></header>
<noscript><p class="noscript">${noscript}</p></noscript>
<div id="attention" class="attention"${hidden(!v?.attention)}><h2 class="visually-hidden">Needs attention</h2><ul id="attention-list">${v?.attention ?? ''}</ul></div>
<div id="announcer" class="visually-hidden" role="status" aria-live="polite"></div>
<main>
  <section id="login"${hidden(!blank)}><h2>Sign in</h2>
    <form id="login-form"><label>Access token<input id="token" type="password" autocomplete="current-password" required></label>
    <button type="submit">Sign in</button></form><p class="muted">The token of console.tokenFile, or the agent's local token: on the Pi, <code>sudo cat /var/lib/printer-agent/console-local-token</code> (changes, and personal data, need one).</p><p id="login-error" class="reason" role="alert"></p></section>
  <section id="printers-section" class="view"${hidden(blank)}><h2>Printers</h2><div id="fault"${hidden(!v?.fault)}>${v?.fault ?? ''}</div><div id="warnings"${hidden(!v?.warnings)}>${v?.warnings ?? ''}</div><div id="printers">${v?.printers ?? ''}</div>
    <p class="test-print"><label for="test-role">Printer</label><select id="test-role">${v?.roles ?? ''}</select><button id="test-print" type="button">Print a test page</button></p></section>
  <section id="queue-section" class="view"${hidden(blank)}><h2>Queue</h2><div id="queue" class="muted">${v?.queue ?? ''}</div></section>
  <section id="jobs-section" class="view"${hidden(blank)}><h2>Last jobs</h2><div id="jobs">${v?.jobs ?? ''}</div></section>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
