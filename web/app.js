// The page of `trainplan serve` (docs/WEB.md). Plain script, no build step:
// every number shown comes from the JSON API of the same server
// (docs/SERVER.md), and every chart is drawn here with uPlot from that JSON.
"use strict";

const state = { fitId: null, fitBody: null, samples: null, moved: null, charts: {}, resizers: {},
  seq: {}, busy: {}, watchSeq: 0, watchTimer: null };
const $ = (id) => document.getElementById(id);
const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
const GREY = "#999999";

// ---- the API ---------------------------------------------------------------

// POSTs `body` as JSON (GETs without one); resolves with the answer, or
// rejects with an Error whose message says what went wrong in words: the
// API's `error` (with `.status` and `.body`), a server that cannot be
// reached, or an answer that is not the API's JSON.
async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  let res, raw;
  try {
    res = await fetch(path, init);
    raw = await res.text();
  } catch (e) {
    // fetch rejects only when no answer (or half of one) came: the server stopped, or the network is down.
    throw new Error(`the server cannot be reached (${path}): is trainplan serve still running?`);
  }
  let json = null;
  try { json = JSON.parse(raw); } catch (e) { /* not JSON: said below */ }
  if (!res.ok) {
    // An error of the API is JSON with `error`; anything else (a proxy's HTML page, say) is quoted.
    const err = new Error(json && json.error ? json.error : `HTTP ${res.status}` + (brief(raw) ? `: ${brief(raw)}` : ""));
    err.status = res.status;
    err.body = json;
    throw err;
  }
  if (json === null || typeof json !== "object")
    throw new Error(`the server's answer to ${path} could not be read (HTTP ${res.status}, not the API's JSON: ` +
      `${brief(raw) || "empty"})`);
  return json;
}

// The first words of an answer that is not the API's JSON, its markup dropped.
function brief(raw) {
  const words = raw.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, " ").replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ").trim();
  return words.length > 160 ? words.slice(0, 160) + "…" : words;
}

function status(text) { $("status").textContent = text; }

// The header's word for a request that failed: a 422 without a `field` is a
// plan whose constraints cannot be met; with one (a search over
// --max-plan-cells, samples over --max-rows) the request itself was refused.
const failure = (e) => (e.status === 422 && !(e.body && e.body.field) ? "nothing fits" : "error");

function showError(id, err) {
  const el = $(id);
  if (!err) { el.hidden = true; el.textContent = ""; return; }
  let text = err.message || String(err);
  if (err.body && err.body.field) text += `\n(field: ${err.body.field})`;
  el.textContent = text;
  el.hidden = false;
}

// Each form's requests are numbered: an answer is shown only while its request
// is still the form's latest, so a slower earlier answer never replaces a later
// one. `invalidate` makes the request in flight stale without asking anew (new
// samples do this to every form whose answer rests on the old ones).
function invalidate(form) { state.seq[form] = (state.seq[form] || 0) + 1; return state.seq[form]; }

// Runs `work(current)` as the form's latest request with `button` disabled
// from the first moment, so that a double click asks once; `current()` says
// whether it is still the latest, and a stale answer or error is dropped. The
// button comes back when the form's last request ends.
// A plan on each of several GPUs. When no GPU has one the server answers 422
// with the whole answer inside, each GPU's reason in it: shown, with the error.
async function planOnEachGpu(path, body, errorId, current) {
  try {
    return { answer: await api(path, body), none: false };
  } catch (e) {
    if (!(e.status === 422 && e.body && e.body.plan)) throw e;
    if (current()) showError(errorId, e);
    return { answer: e.body.plan, none: true };
  }
}

async function whileBusy(form, button, errorId, work) {
  const n = invalidate(form);
  const current = () => state.seq[form] === n;
  state.busy[form] = n;
  $(button).disabled = true;
  try {
    await work(current);
  } catch (e) {
    if (current()) {
      showError(errorId, e);
      status(failure(e));
    }
  } finally {
    if (state.busy[form] === n) {
      state.busy[form] = 0;
      $(button).disabled = false;
    }
  }
}

// ---- formatting ------------------------------------------------------------

function fmt(x, digits = 4) {
  if (x === null || x === undefined) return "—";
  if (typeof x !== "number") return String(x);
  // Whole numbers as they are, up to where doubles stop being exact (1.0999999999999998e+25 is no reading).
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
  return Number(x.toPrecision(digits)).toString();
}
// A number that may be huge, for a label: 3 significant digits, and from a million on as a power of ten (1e+30).
const compact = (x) => (Math.abs(x) >= 1e6 ? Number(x.toPrecision(3)).toExponential() : fmt(x, 3));
const pct = (x) => (x === null || x === undefined ? "—" : (100 * x).toFixed(1) + "%");

// Fills `table` with a header row and one row per item; `cols` are
// [heading, item => cell text]. `chosen(item)` marks a row.
function fillTable(table, cols, items, chosen) {
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  for (const [h] of cols) {
    const th = document.createElement("th");
    th.textContent = h;
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const item of items) {
    const tr = body.insertRow();
    if (chosen && chosen(item)) tr.className = "chosen";
    for (const [, f] of cols) tr.insertCell().textContent = f(item);
  }
}

// ---- charts ----------------------------------------------------------------

// Draws `series` ([{label, x: [...], y: [...], lo?, hi?, points?, marks?, dash?, color}]: points alone,
// or a line, with marks at its points, dashed by the pattern `dash`)
// into the element `id`: uPlot wants one x array, so the x values of all
// series are merged and each series is null where it has no point.
function chart(id, title, xlabel, ylabel, series, opts = {}) {
  if (state.charts[id]) { state.charts[id].destroy(); delete state.charts[id]; }
  if (state.resizers[id]) { state.resizers[id].disconnect(); delete state.resizers[id]; }
  const el = $(id);
  el.replaceChildren();
  el.removeAttribute("role");
  el.removeAttribute("aria-label");
  if (!series.length || typeof uPlot === "undefined") return;
  const xs = [...new Set(series.flatMap((s) => s.x))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const column = (s, ys) => {
    const col = new Array(xs.length).fill(null);
    s.x.forEach((x, i) => { col[at.get(x)] = ys[i] === undefined ? null : ys[i]; });
    return col;
  };
  const data = [xs];
  const useries = [{ label: xlabel }];
  const bands = [];
  for (const s of series) {
    const color = s.color;
    if (s.points) {
      data.push(column(s, s.y));
      useries.push({ label: s.label, stroke: color, paths: () => null,
        points: { show: true, size: 7, fill: color, stroke: color } });
      continue;
    }
    data.push(column(s, s.y));
    useries.push({ label: s.label, stroke: color, width: s.width || 2, spanGaps: true, dash: s.dash,
      points: s.marks ? { show: true, size: 5, fill: color, stroke: color } : { show: false },
      paths: s.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined });
    if (s.lo && s.hi && s.lo.some((v) => v !== null)) {
      data.push(column(s, s.hi));
      useries.push({ label: `${s.label} hi`, stroke: color + "55", width: 1, dash: [4, 4], spanGaps: true, points: { show: false } });
      data.push(column(s, s.lo));
      useries.push({ label: `${s.label} lo`, stroke: color + "55", width: 1, dash: [4, 4], spanGaps: true, points: { show: false } });
      bands.push({ series: [useries.length - 2, useries.length - 1], fill: color + "22" });
    }
  }
  // A hidden parent has no width: the chart then takes the page's. Narrower
  // than 240 px its axes leave no room to plot.
  const widthNow = () =>
    Math.max(240, Math.min(580, (el.parentElement.clientWidth || document.querySelector("main").clientWidth) - 20));
  const width = widthNow();
  const ticks = (u, splits) => tickLabels(splits);
  const u = new uPlot({
    title, width, height: 330, bands,
    scales: { x: { time: false, distr: opts.logx ? 3 : 1, range: opts.xrange ? () => opts.xrange : undefined },
      y: { distr: opts.logy ? 3 : 1, range: opts.yrange ? () => opts.yrange : undefined } },
    axes: [{ label: xlabel, values: ticks }, { label: ylabel, size: 70, values: ticks }],
    legend: { live: false },
    series: useries,
  }, data, el);
  // The band's edges are drawn but not listed: the legend names the curves and
  // the points, each label once (the grey points of every run without a curve share one).
  const listed = new Set();
  for (const row of u.root.querySelectorAll(".u-legend tr")) {
    const name = row.textContent.trim();
    if (/ (hi|lo)$/.test(name) || listed.has(name)) row.style.display = "none";
    listed.add(name);
  }
  state.charts[id] = u;
  // The chart follows its box's width (a window narrowed, a phone turned).
  if (typeof ResizeObserver !== "undefined") {
    const resizer = new ResizeObserver(() => {
      const w = widthNow();
      if (el.parentElement.clientWidth > 0 && w !== u.width) u.setSize({ width: w, height: 330 });
    });
    resizer.observe(el.parentElement);
    state.resizers[id] = resizer;
  }
  // The chart's words for a screen reader: what it plots and over what ranges.
  const range = (vals) => {
    const v = vals.filter((x) => x !== null && x !== undefined && Number.isFinite(x));
    return v.length ? `${fmt(v.reduce((a, b) => Math.min(a, b)), 3)} to ${fmt(v.reduce((a, b) => Math.max(a, b)), 3)}`
      : "no values";
  };
  const ys = series.flatMap((s) => [...s.y, ...(s.lo || []), ...(s.hi || [])]);
  el.setAttribute("role", "img");
  el.setAttribute("aria-label", `${title}: ${[...new Set(series.map((s) => s.label))].join(", ")}; ${xlabel} ${range(xs)}; ` +
    `${ylabel} ${range(ys)}`);
}

// Tick labels in as many significant digits as their spacing needs, at least
// 3: enough for the step's own last digit at the largest tick (212.5, 215,
// 217.5 keep their .5); from a million on as powers of ten (2.5e+6). uPlot's
// own fixed decimals print 0 for tiny GPU-hours.
function tickLabels(splits) {
  const vals = splits.filter((v) => v !== null && Number.isFinite(v));
  let step = Infinity;
  for (let i = 1; i < vals.length; i++) if (vals[i] !== vals[i - 1]) step = Math.min(step, Math.abs(vals[i] - vals[i - 1]));
  const top = vals.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
  let digits = 3;
  if (Number.isFinite(step) && top > 0) {
    // The power of ten of the step's last significant digit (2.5: -1; 20: 1),
    // read past the float noise of a difference (0.30000000000000004).
    const [mantissa, exp] = Number(step.toPrecision(6)).toExponential().split("e");
    const last = Number(exp) - (mantissa.split(".")[1] || "").length;
    digits = Math.min(15, Math.max(3, Math.floor(Math.log10(Number(top.toPrecision(12)))) - last + 1));
  }
  // A zero reached by adding steps may be off by float noise: it is 0, not 1e-17.
  return splits.map((v) => (v === null ? "" : Number.isFinite(step) && Math.abs(v) < 1e-9 * step ? "0"
    : Math.abs(v) >= 1e6 ? Number(v.toPrecision(digits)).toExponential() : fmt(v, digits)));
}

// Where a frontier drawn flat past its slowest point ends: at the deadline, but
// at most two decades (of a log axis) past that point, so a huge deadline
// (1e30 s) does not squeeze every step against the left edge.
const TAIL_DECADES = 2;
const tailEnd = (slowest, deadline) => Math.min(deadline, slowest * 10 ** TAIL_DECADES);

// ---- samples ---------------------------------------------------------------

async function loadModels() {
  try {
    const m = await api("/models");
    const sel = $("samples-model");
    // The menu sets `model`, one model for both parts: only those that have both.
    for (const e of m.models.filter((e) => e.parts.includes("time") && e.parts.includes("metric"))) {
      const o = document.createElement("option");
      o.value = e.name;
      o.textContent = `${e.name} (${e.parts.join(", ")})`;
      sel.appendChild(o);
    }
  } catch (e) { status(`GET /models: ${e.message}`); }
}

// A form's three sources of text: a file chosen, text pasted, a path on the
// server. The one changed last is sent (a file chosen after text was pasted
// wins, and the other way round), and `noteId` says which, so that two given
// at once are never a silent guess. Until one changes: file, text, path.
const sources = {};

function trackSources(form, fileId, textId, pathId, noteId) {
  sources[form] = { order: [fileId, textId, pathId], fileId, textId, pathId, noteId };
  for (const id of [fileId, textId, pathId]) {
    $(id).addEventListener(id === fileId ? "change" : "input", () => {
      const order = sources[form].order;
      order.splice(order.indexOf(id), 1);
      order.unshift(id);
      saySource(form);
    });
  }
}

// The sources given, the one to send first: [{id, words (which, in words), name (the file's or
// the path; none for pasted text), read: () => its text or the path}].
function givenSources(form) {
  const src = sources[form];
  const out = [];
  for (const id of src.order) {
    if (id === src.fileId && $(id).files[0]) {
      const file = $(id).files[0];
      out.push({ id, name: file.name, words: `the file ${file.name}`, read: () => file.text() });
    } else if (id === src.textId && $(id).value.trim()) {
      out.push({ id, words: "the pasted text", read: () => $(id).value });
    } else if (id === src.pathId && $(id).value.trim()) {
      const path = $(id).value.trim();
      out.push({ id, name: path, words: `the path ${path}`, read: () => path });
    }
  }
  return out;
}

function saySource(form) {
  const given = givenSources(form);
  const text = !given.length ? "" : `sends ${given[0].words}` +
    (given.length > 1 ? ` (changed last; not ${given.slice(1).map((g) => g.words).join(" or ")})` : "");
  // Said again only when it changes: each key typed would otherwise be announced.
  if ($(sources[form].noteId).textContent !== text) $(sources[form].noteId).textContent = text;
}

// The samples the form names, as /fit's fields, and in words.
async function samplesBody() {
  const [src] = givenSources("samples");
  if (!src) throw new Error("give a samples CSV: a file, its text, or a path on the server");
  // The API calls pasted and uploaded text alike `samples_csv`: the name says which in words.
  if (src.id === "samples-path") return { body: { samples_path: src.read() }, name: src.name };
  return { body: { samples_csv: await src.read() }, name: src.name || "the pasted samples" };
}

// Everything shown from the samples loaded before goes when a load starts, so
// that a load, even one that fails, leaves no result on the old ones: the fit
// the Plan tab plans on, its plan, the move to another GPU (and the moved
// samples "Plan on" would fit), the plans on each GPU, the charts and the
// models' table; and an answer still coming for any of them is stale.
function forgetSamples() {
  state.fitId = state.fitBody = state.samples = state.moved = null;
  for (const form of ["plan", "transfer", "moved-plan", "compare"]) invalidate(form);
  for (const id of ["samples-error", "plan-error", "transfer-error", "compare-error"]) showError(id, null);
  for (const id of ["plan-result", "transfer-result", "compare-result"]) $(id).hidden = true;
  $("plan-submit").disabled = true;
  $("fit-summary").textContent = "";
  chart("chart-time", "", "", "", []);
  chart("chart-metric", "", "", "", []);
  $("chart-metric").closest("figure").hidden = false;
  $("eval-table").replaceChildren();
  $("eval-note").textContent = "";
}

async function onSamples(ev) {
  ev.preventDefault();
  forgetSamples();
  // One load at a time: a slower earlier answer must not replace a later one.
  $("samples-load").disabled = true;
  try {
    const samples = await samplesBody();
    const body = { ...samples.body };
    const model = $("samples-model").value;
    if (model !== "auto") body.model = model;
    status("fitting…");
    const fit = await api("/fit", body);
    state.samples = samples;  // what the Another GPU tab moves
    await adoptFit(fit, body, samples.name, () => true);
  } catch (e) {
    showError("samples-error", e);
    status("error");
  } finally {
    $("samples-load").disabled = false;
    $("plan-submit").disabled = state.fitId === null;
  }
}

// Makes `fit` (POST /fit's answer to `body`, the samples `name` says in
// words) the one the Plan tab plans on, says what it is and draws its curves,
// unless `current()` turns false meanwhile. `body` fits it again when the
// server has let go of its id (a busy server holds --max-fits ids).
async function adoptFit(fit, body, name, current) {
  // A plan on the fit before is not one on this.
  invalidate("plan");
  showError("plan-error", null);
  $("plan-result").hidden = true;
  state.fitId = fit.id;
  state.fitBody = body;
  $("plan-submit").disabled = false;
  let text =
    `${fit.id}: ${fit.n_samples} samples (${name}), metric ${fit.direction === "max" ? "higher" : "lower"} is better; ` +
    `time model ${fit.time_model}, metric model ${fit.metric_model || "none"}; in-sample MRE time ${pct(fit.in_sample_mre.time)}, ` +
    `metric ${pct(fit.in_sample_mre.metric)}\n${fit.choice}` + (fit.note ? `\n${fit.note}` : "");
  if (fit.times_predicted_from)
    text += `\nepoch times predicted from ${fit.times_predicted_from}, not measured` + (fit.times_predicted_log_sd
      ? `: the transfer's own error (80% within ×/${factor80(fit.times_predicted_log_sd).toFixed(2)}) is not in the errors ` +
        "above; plans with a confidence include it" : "");
  $("fit-summary").textContent = text;
  // Only the latest fit adopted draws: a slower answer for an earlier one (a
  // load, then a move to another GPU) must not replace its charts.
  const n = invalidate("curves");
  const latest = () => current() && state.seq.curves === n;
  $("eval-table").replaceChildren();
  $("eval-note").textContent = "";
  status("drawing the curves…");
  // As many curves as colours: the measured points of the batches and runs past them are drawn grey.
  const cur = await api("/curves", { id: fit.id, curves: PALETTE.length });
  if (!latest()) return;
  drawCurves(cur);
  status(`${fit.id}: curves drawn; cross-validating the models…`);
  // Cross-validating every model costs far more than the curves (tens of
  // seconds on thousands of rows): asked apart, so that the charts never wait
  // for it, and a failure there leaves only the table empty, saying why.
  try {
    const scored = await api("/curves", { id: fit.id, evaluate: "all", curves: 1 });
    if (!latest()) return;
    fillEvaluation(scored, cur);
    status(`loaded ${fit.id}`);
  } catch (e) {
    if (!latest()) return;
    $("eval-note").textContent = `The models were not cross-validated: ${e.message || e}`;
    status(`loaded ${fit.id} (no cross-validation)`);
  }
}

// The factor an 80% two-sided interval spans on each side, for a log standard deviation.
const factor80 = (logSd) => Math.exp(1.2815515655446004 * logSd);

// Every measured point is drawn: /curves draws a curve for up to `curves`
// batches (and runs), spread evenly, and the points of the others are grey,
// listed once as "measured, no curve"; the summary says how many have a curve.
function drawCurves(cur) {
  const t = cur.time;
  const noCurve = "measured, no curve";
  const tseries = [];
  // The mean measured epoch time per worker count of one batch.
  const timesOf = (batch) => {
    const by = new Map();
    for (const p of t.points.filter((p) => p.batch === batch)) {
      const v = by.get(p.workers) || [0, 0];
      by.set(p.workers, [v[0] + p.epoch_time_s, v[1] + 1]);
    }
    const ws = [...by.keys()].sort((a, b) => a - b);
    return { x: ws, y: ws.map((w) => by.get(w)[0] / by.get(w)[1]) };
  };
  t.curves.forEach((c, k) => {
    const color = PALETTE[k % PALETTE.length];
    tseries.push({ label: `b=${fmt(c.batch)}`, x: c.workers, y: c.epoch_time_s, lo: c.lo, hi: c.hi, color });
    tseries.push({ label: `measured b=${fmt(c.batch)}`, ...timesOf(c.batch), points: true, color });
  });
  const batches = [...new Set(t.points.map((p) => p.batch))].sort((a, b) => a - b);
  const curved = new Set(t.curves.map((c) => c.batch));
  for (const b of batches.filter((b) => !curved.has(b))) tseries.push({ label: noCurve, ...timesOf(b), points: true, color: GREY });
  chart("chart-time", `epoch time: ${t.model}`, "workers", "seconds per epoch", tseries, { logy: true });
  const notes = [];
  if (curved.size < batches.length)
    notes.push(`epoch-time chart: curves for ${curved.size} of the ${batches.length} batches measured, ` +
      `the points of ${batches.filter((b) => !curved.has(b)).map((b) => `b=${fmt(b)}`).join(", ")} in grey`);
  const m = cur.metric;
  $("chart-metric").closest("figure").hidden = !m;
  if (m) {
    const mseries = [];
    const run = (b, w) => `${b}×${w}`;
    const pointsOf = (b, w) => {
      const pts = m.points.filter((p) => p.batch === b && p.workers === w).sort((x, y) => x.epochs - y.epochs);
      return { x: pts.map((p) => p.epochs), y: pts.map((p) => p.metric) };
    };
    m.curves.forEach((c, k) => {
      const color = PALETTE[k % PALETTE.length];
      mseries.push({ label: `b=${fmt(c.batch)}×${c.workers}`, x: c.epochs, y: c.metric, lo: c.lo, hi: c.hi, color });
      mseries.push({ label: `measured ${fmt(c.batch)}×${c.workers}`, ...pointsOf(c.batch, c.workers), points: true, color });
    });
    const curvedRuns = new Set(m.curves.map((c) => run(c.batch, c.workers)));
    const runs = new Map(m.points.map((p) => [run(p.batch, p.workers), p]));
    for (const [key, p] of runs)
      if (!curvedRuns.has(key)) mseries.push({ label: noCurve, ...pointsOf(p.batch, p.workers), points: true, color: GREY });
    chart("chart-metric", `metric: ${m.model}`, "epochs", "metric", mseries);
    if (curvedRuns.size < runs.size)
      notes.push(`metric chart: curves for ${curvedRuns.size} of the ${runs.size} runs (batch × workers) measured, ` +
        "the points of the others in grey");
  } else {
    chart("chart-metric", "", "", "", []);
    notes.push("no metric in these samples: only the epoch times are charted");
  }
  for (const note of [...(cur.notes || []), ...notes]) $("fit-summary").textContent += "\n" + note;
}

// The models' cross-validated scores (`scored.evaluation`), the ones `cur` drew marked.
function fillEvaluation(scored, cur) {
  const rows = [];
  if (scored.evaluation) {
    for (const scores of Object.values(scored.evaluation.datasets))
      for (const [name, s] of Object.entries(scores)) rows.push({ name, s });
  }
  fillTable($("eval-table"), [
    ["model", (r) => r.name],
    ["time: CV MRE", (r) => pct(r.s.time.cv_mre)],
    ["time: in-sample", (r) => pct(r.s.time.in_sample_mre)],
    ["metric: CV MRE", (r) => pct(r.s.metric.cv_mre)],
    ["metric: in-sample", (r) => pct(r.s.metric.in_sample_mre)],
  ], rows.filter((r) => r.s.time.cv_mre !== null || r.s.metric.cv_mre !== null),
  (r) => r.name === cur.time_model || r.name === cur.metric_model);
}

// ---- plan ------------------------------------------------------------------

// A number box's value; null when empty. Text that is no finite number is
// an error naming the box, not a null the server would read as absent.
function numberField(id) {
  const v = $(id).value.trim();
  if (v === "") return null;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`${boxName(id)}: '${v}' is not a number`);
  return n;
}

// A number box the server would quietly take a default for when empty: empty is an error naming it.
function requiredNumber(id) {
  const n = numberField(id);
  if (n === null) throw new Error(`${boxName(id)}: give a number`);
  return n;
}

function boxName(id) {
  const label = $(id).closest("label");
  return label ? label.firstChild.textContent.trim() : id;
}

async function onPlan(ev) {
  ev.preventDefault();
  showError("plan-error", null);
  $("plan-result").hidden = true;
  if (!state.fitId) { showError("plan-error", new Error("load samples first (Samples tab)")); return; }
  await whileBusy("plan", "plan-submit", "plan-error", async (current) => {
    const body = { id: state.fitId, target: numberField("plan-target"), deadline: numberField("plan-deadline"), frontier: true };
    const mw = numberField("plan-max-workers");
    if (mw !== null) body.max_workers = mw;
    const conf = numberField("plan-confidence");
    if (conf !== null && conf > 0) body.confidence = conf;
    status("planning…");
    const planned = await planOnFit(body, state.fitBody, current);
    if (!current()) return;
    showPlan(planned.plan);
    status("planned" + planned.note);
  });
  // Plans wait for a fit (a load in flight has none).
  if (state.fitId === null) $("plan-submit").disabled = true;
}

// POST /plan on the fitted id: {plan, note}. When the server has let go of
// the id (404: it holds --max-fits ids, the least recently used go first),
// the samples (`fitBody`) are fitted again under a new id, which the page
// keeps while the plan is `current()`, and the plan asked once more; `note`
// then says so.
async function planOnFit(body, fitBody, current) {
  try {
    return { plan: await api("/plan", body), note: "" };
  } catch (e) {
    if (e.status !== 404 || !fitBody) throw e;
    const old = body.id;
    status(`the server let go of ${old}: fitting the samples again…`);
    const fit = await api("/fit", fitBody);
    if (current()) state.fitId = fit.id;
    return { plan: await api("/plan", { ...body, id: fit.id }), note: ` (the server had let go of ${old}: fitted again as ${fit.id})` };
  }
}

function showPlan(p) {
  const c = p.choice;
  $("choice-workers").textContent = c.workers;
  $("choice-batch").textContent = fmt(c.batch);
  $("choice-epochs").textContent = fmt(c.epochs);
  $("choice-nodes").textContent = c.nodes;
  $("choice-time").textContent = c.total_time_s.toFixed(1);
  $("choice-cost").textContent = fmt(c.cost_worker_h);
  $("choice-metric").textContent = fmt(c.metric);
  $("plan-model").textContent = `planned by ${p.method} on ${p.model.name}` +
    (p.confidence ? ` at confidence ${p.confidence}` : " (point predictions)") +
    (p.past_longest_trial ? `; the run goes past the longest trial (${fmt(p.longest_trial_epochs)} epochs)` : "") +
    (p.times_predicted_from ? `\nepoch times predicted from ${p.times_predicted_from}, not measured` : "") +
    (p.note ? `\n${p.note}` : "") +
    (p.confidence_caveat ? `\nnote: ${p.confidence_caveat}` : "");
  const cols = [
    ["workers", (x) => x.workers], ["batch", (x) => fmt(x.batch)], ["epochs", (x) => fmt(x.epochs)],
    ["nodes", (x) => x.nodes], ["time, s", (x) => x.total_time_s.toFixed(1)],
    ["cost, GPU-h", (x) => fmt(x.cost_worker_h)], ["metric", (x) => fmt(x.metric)],
  ];
  fillTable($("plan-alternatives"), cols, [c, ...p.alternatives], (x) => x === c);
  fillTable($("plan-trials"), [
    ["batch", (t) => fmt(t.batch)], ["workers", (t) => t.workers], ["epochs", (t) => fmt(t.epochs)],
    ["measured metric", (t) => fmt(t.metric)], ["model's metric", (t) => fmt(t.model_metric)],
    ["meets target", (t) => (t.meets_target ? "yes" : "no")],
  ], p.nearest_trials);
  const f = (p.frontier || []).slice().sort((a, b) => a.total_time_s - b.total_time_s);
  const fx = f.map((x) => x.total_time_s), fy = f.map((x) => x.cost_worker_h);
  // The last run stays the cheapest up to the deadline asked: drawn flat towards it, and said where it is cut short.
  const end = f.length ? tailEnd(fx[fx.length - 1], p.deadline_s) : 0;
  if (end > fx[fx.length - 1]) { fx.push(end); fy.push(fy[fy.length - 1]); }
  $("plan-result").hidden = false;  // before the chart, which takes its parent's width
  chart("chart-frontier", "cheapest run for each deadline", "deadline, s", "GPU-hours", f.length ? [
    { label: end < p.deadline_s ? `frontier (flat on to the deadline, ${compact(p.deadline_s)} s)` : "frontier",
      x: fx, y: fy, color: PALETTE[0], stepped: true },
    { label: "chosen", x: [c.total_time_s], y: [c.cost_worker_h], points: true, color: PALETTE[1] },
  ] : [], { logx: true });  // deadlines span decades: the steps sit near the fastest runs
}

// ---- another GPU -------------------------------------------------------------

// What the training ran in, and will run in where it is moved, for moving its
// samples to another GPU (transfer's --precision, --target-precision and --tf32).
function trainingFields() {
  const out = {};
  if ($("transfer-precision").value !== "auto") out.precision = $("transfer-precision").value;
  if ($("transfer-target-precision").value !== "auto") out.target_precision = $("transfer-target-precision").value;
  if ($("transfer-tf32").checked) out.tf32 = true;
  return out;
}

async function onTransfer(ev) {
  ev.preventDefault();
  showError("transfer-error", null);
  $("transfer-result").hidden = true;
  // The samples moved before go, and a "Plan on" fitting them is stale.
  state.moved = null;
  invalidate("moved-plan");
  const samples = state.samples;
  if (!samples) { showError("transfer-error", new Error("load samples first (Samples tab)")); return; }
  await whileBusy("transfer", "transfer-submit", "transfer-error", async (current) => {
    const body = { ...samples.body, ...trainingFields(), from_gpu: $("transfer-from").value,
      to_gpu: $("transfer-to").value };
    const trials = $("transfer-trials").files[0];
    if (trials) body.trials_csv = await trials.text();
    status("moving the samples…");
    const moved = await api("/transfer", body);
    if (!current()) return;
    state.moved = { ...moved, name: samples.name };
    showTransfer(state.moved);
    status("predicted");
  });
}

function showTransfer(t) {
  const n = t.configurations.length;
  let text = `${t.name}: ${n} configuration${n === 1 ? "" : "s"} measured on ${t.from_gpu}, epoch times predicted on ` +
    `${t.to_gpu}` + (t.target_trials ? `, corrected by ${t.target_trials} configurations timed there` : ", no step timed there") +
    (t.network ? ` (layer graph ${t.network})` : " (no layer graph)") +
    (t.ratios && t.ratios.precision ? `; matrix work in ${t.ratios.precision}: ${t.ratios.precision_reason}` : "");
  if (t.times_predicted_log_sd)
    text += `\nthe move's error is one error for every configuration: 80% within ×/${factor80(t.times_predicted_log_sd).toFixed(2)} ` +
      "at the median; the moved samples carry it, and plans with a confidence include it";
  for (const note of t.notes || []) text += `\nnote: ${note}`;
  $("transfer-summary").textContent = text;
  fillTable($("transfer-table"), [
    ["batch", (c) => fmt(c.batch)], ["workers", (c) => c.workers], ["nodes", (c) => (c.nodes ? c.nodes : "?")],
    [`${t.from_gpu}: epoch, s`, (c) => fmt(c.source_epoch_time_s)], [`${t.to_gpu} nodes`, (c) => c.target_nodes],
    [`${t.to_gpu}: epoch, s`, (c) => fmt(c.target_epoch_time_s)],
    ["80% interval, s", (c) => (c.target_epoch_time_low80_s === null ? "—"
      : `${fmt(c.target_epoch_time_low80_s)} to ${fmt(c.target_epoch_time_high80_s)}`)],
    // The model's own ratio: its fit of the first GPU over its prediction on the second.
    ["speed-up (model)", (c) => `${c.speed_up.toFixed(2)}×`],
  ], t.configurations);
  $("transfer-plan").textContent = `Plan on ${t.to_gpu}`;
  $("transfer-result").hidden = false;  // before the chart, which takes its parent's width
  const series = [];
  [...new Set(t.configurations.map((c) => c.workers))].sort((a, b) => a - b).forEach((w, k) => {
    const color = PALETTE[k % PALETTE.length];
    const cs = t.configurations.filter((c) => c.workers === w).sort((a, b) => a.batch - b.batch);
    const x = cs.map((c) => c.batch);
    series.push({ label: `${t.to_gpu} ×${w}`, x, y: cs.map((c) => c.target_epoch_time_s),
      lo: cs.map((c) => c.target_epoch_time_low80_s), hi: cs.map((c) => c.target_epoch_time_high80_s), color });
    series.push({ label: `${t.from_gpu} ×${w}`, x, y: cs.map((c) => c.source_epoch_time_s), points: true, color });
  });
  chart("chart-transfer", `epoch time: ${t.from_gpu} measured, ${t.to_gpu} predicted`, "batch per worker",
    "seconds per epoch", series, { logx: true, logy: true });
}

// Fits the moved samples and plans on them: the Plan tab then answers for the other GPU.
async function onTransferPlan() {
  const t = state.moved;
  if (!t) return;
  showError("transfer-error", null);
  await whileBusy("moved-plan", "transfer-plan", "transfer-error", async (current) => {
    status("fitting the moved samples…");
    const body = { samples_csv: t.samples_csv };
    const fit = await api("/fit", body);
    if (!current()) return;
    await adoptFit(fit, body, `${t.name} moved to ${t.to_gpu}`, current);
    if (current()) showTab("plan");
  });
}

// "t4=0.53, a100-40gb=3.7" as {t4: 0.53, "a100-40gb": 3.7}; empty: null.
function parsePrices(text) {
  if (!text.trim()) return null;
  const out = {};
  for (const item of text.split(",").map((x) => x.trim()).filter((x) => x)) {
    const [name, value] = item.split("=").map((x) => x.trim());
    const v = Number(value);
    if (!name || value === undefined || !(v > 0) || !Number.isFinite(v))
      throw new Error(`Price: '${item}' is not NAME=PRICE with a price > 0`);
    out[name] = v;
  }
  return out;
}

// The same job on several GPUs (POST /plan with gpus), from the samples as loaded.
async function onCompare(ev) {
  ev.preventDefault();
  showError("compare-error", null);
  $("compare-result").hidden = true;
  const samples = state.samples;
  if (!samples) { showError("compare-error", new Error("load samples first (Samples tab)")); return; }
  status("planning on each GPU…");  // at once: reading a trials file comes first, and the last answer's status must not stand
  await whileBusy("compare", "compare-submit", "compare-error", async (current) => {
    const gpus = $("compare-gpus").value.split(",").map((x) => x.trim()).filter((x) => x);
    if (!gpus.length) throw new Error("GPUs: name at least one");
    const body = { ...samples.body, ...trainingFields(), from_gpu: $("transfer-from").value, gpus,
      target: numberField("compare-target"), deadline: numberField("compare-deadline"), frontier: true };
    const prices = parsePrices($("compare-prices").value);
    if (prices) body.prices = prices;
    // Trials chosen above for the "Predict on" GPU correct its move here too, when it is one of the GPUs.
    const trialsFile = $("transfer-trials").files[0], timedOn = $("transfer-to").value;
    const timed = trialsFile && gpus.includes(timedOn) && timedOn !== body.from_gpu;
    if (timed) body.trials = { [timedOn]: await trialsFile.text() };
    const conf = numberField("compare-confidence");
    if (conf !== null && conf > 0) body.confidence = conf;
    status("planning on each GPU…");
    const { answer, none } = await planOnEachGpu("/plan", body, "compare-error", current);
    if (!current()) return;
    showComparison(answer, Boolean(prices), body.deadline);
    if (timed) $("compare-summary").textContent += `\n${timedOn}'s move corrected by the trials chosen above (${trialsFile.name})`;
    status(none ? "no GPU fits" : "planned on each GPU");
  });
}

// Each GPU's frontier as a step, flat from its slowest point on to one right
// edge (the deadline, or past the slowest GPU's last point; at most
// TAIL_DECADES past that point), and its plan as a point: `time` and `cost`
// read a frontier point, `chosen` a GPU's plan.
function gpuFrontierSeries(rows, deadline, time, cost, label, chosen) {
  const withFront = rows.filter((g) => (g.frontier || []).length);
  const slowest = Math.max(...withFront.map((g) => time(g.frontier[g.frontier.length - 1])));
  const right = tailEnd(slowest, Math.max(deadline, 1.3 * slowest));
  const series = [];
  withFront.forEach((g) => {
    const color = PALETTE[rows.indexOf(g) % PALETTE.length];
    const x = g.frontier.map(time), y = g.frontier.map(cost);
    if (right > x[x.length - 1]) { x.push(right); y.push(y[y.length - 1]); }
    series.push({ label: label(g), x, y, color, stepped: true });
    const c = chosen(g);
    if (c) series.push({ label: `${g.gpu}: plan`, x: [c.time], y: [c.cost], points: true, color });
  });
  return series;
}

function showComparison(c, priced, deadline) {
  const rows = c.gpus;
  const choice = (g) => (g.plan ? g.plan.choice : null);
  const cell = (f) => (g) => (choice(g) ? f(choice(g), g) : "—");
  const cols = [
    ["gpu", (g) => g.gpu], ["batch", cell((x) => fmt(x.batch))], ["workers", cell((x) => x.workers)],
    ["nodes", cell((x) => x.nodes)], ["epochs", cell((x) => fmt(x.epochs))], ["time, s", cell((x) => x.total_time_s.toFixed(1))],
    ["GPU-hours", cell((x, g) => fmt(g.gpu_hours))], ["metric", cell((x) => fmt(x.metric))],
    ["epoch times", (g) => (g.measured ? "measured" : `predicted${g.trials ? `, ${g.trials} timed` : ""}, ×/${factor80(g.times_predicted_log_sd || 0).toFixed(2)} at 80%`)],
    ...(priced ? [["price", (g) => fmt(g.price_per_gpu_hour)], ["cost", cell((x, g) => fmt(g.cost))]] : []),
    ...(rows.some((g) => !g.plan) ? [["why no plan", (g) => (g.plan ? "" : g.infeasible.split("\n").slice(0, 2).join("; "))]] : []),
  ];
  const best = c.cheapest || c.fastest;
  fillTable($("compare-table"), cols, rows, (g) => g.gpu === best);
  $("compare-summary").textContent = `measured on ${c.from_gpu}; on every other GPU the epoch times are predicted from them` +
    (c.cheapest ? `\ncheapest: ${c.cheapest}` : "") + (c.fastest ? `\nfastest: ${c.fastest}` : "") +
    (priced ? "" : "\n(GPU-hours of different GPUs cost differently: prices name the cheapest)");
  $("compare-result").hidden = false;  // before the chart, which takes its parent's width
  const series = gpuFrontierSeries(rows, deadline || 0, (p) => p.total_time_s, (p) => (priced ? p.cost : p.gpu_hours),
    (g) => `${g.gpu}${g.measured ? " (measured)" : " (moved)"}`,
    (g) => (g.plan ? { time: g.plan.choice.total_time_s, cost: priced ? g.cost : g.gpu_hours } : null));
  chart("chart-compare", "cheapest run for each deadline, on each GPU", "deadline, s", priced ? "cost" : "GPU-hours",
    series, { logx: true });
  const merged = c.frontier || [];
  $("compare-frontier-note").hidden = !merged.length;
  fillTable($("compare-frontier"), merged.length ? [
    ["from deadline, s", (p) => fmt(p.total_time_s)], ["gpu", (p) => p.gpu], ["batch", (p) => fmt(p.batch)],
    ["workers", (p) => p.workers], ["epochs", (p) => fmt(p.epochs)], ["metric", (p) => fmt(p.metric)],
    ["GPU-hours", (p) => fmt(p.gpu_hours)], ["cost", (p) => fmt(p.cost)],
  ] : [], merged, (p) => p === merged.filter((q) => q.total_time_s <= deadline).pop());  // the one in effect at the deadline
}

// ---- simulate --------------------------------------------------------------

async function loadWorkloads() {
  try {
    const w = await api("/workloads");
    const sel = $("sim-workload");
    for (const name of w.workloads) {
      const o = document.createElement("option");
      o.value = o.textContent = name;
      sel.appendChild(o);
    }
    const box = $("sim-policies");
    for (const p of w.policies) {
      const l = document.createElement("label");
      const i = document.createElement("input");
      i.type = "checkbox";
      i.value = p;
      // Ours beside the two it is measured against: Pollux's objective and Tiresias.
      i.checked = p === "coconfig" || p === "pollux" || p === "tiresias";
      // What the policy does, on hover: the same line as `trainplan simulate --help`.
      if (w.policy_summaries && w.policy_summaries[p]) l.title = w.policy_summaries[p];
      l.append(i, " " + p);
      box.appendChild(l);
    }
    for (const id of ["sim-gpu", "sim-gpu2"]) {
      for (const name of w.gpus || []) {
        const o = document.createElement("option");
        o.value = o.textContent = name;
        $(id).appendChild(o);
      }
    }
    if (!w.workloads.length) showError("sim-error", new Error(w.note || "the server has no workloads to simulate"));
  } catch (e) {
    showError("sim-error", e);
    $("sim-submit").disabled = true;
  }
}

async function onSimulate(ev) {
  ev.preventDefault();
  showError("sim-error", null);
  // The last run's results go: what is shown is always this request's answer.
  $("sim-table").replaceChildren();
  $("sim-note").hidden = true;
  chart("chart-jct", "", "", "", []);
  chart("chart-util", "", "", "", []);
  await whileBusy("sim", "sim-submit", "sim-error", async (current) => {
    const policies = [...document.querySelectorAll("#sim-policies input:checked")].map((i) => i.value);
    const body = { workload: $("sim-workload").value, policies, nodes: requiredNumber("sim-nodes"),
      gpus_per_node: requiredNumber("sim-gpus"), load_scale: requiredNumber("sim-load") };
    if ($("sim-gpu2").value) {
      // Two GPU types: the nodes above of the GPU above (the traces' own, T4, as traced), and the second group.
      body.cluster = [
        { gpu: $("sim-gpu").value || "t4", nodes: body.nodes, gpus_per_node: body.gpus_per_node },
        { gpu: $("sim-gpu2").value, nodes: requiredNumber("sim-nodes2"), gpus_per_node: requiredNumber("sim-gpus2") },
      ];
      delete body.nodes;
      delete body.gpus_per_node;
    } else if ($("sim-gpu").value) {
      body.gpu = $("sim-gpu").value;
    }
    status("simulating…");
    const sim = await api("/simulate", body);
    if (!current()) return;
    showSimulation(sim);
    status("simulated");
  });
}

function showSimulation(s) {
  // Where the step times came from, when not the traces' own.
  $("sim-note").textContent = s.step_times || "";
  $("sim-note").hidden = !s.step_times;
  fillTable($("sim-table"), [
    ["policy", (p) => p.policy], ["jobs", (p) => p.jobs], ["avg JCT, s", (p) => fmt(p.avg_jct_s, 5)],
    ["median, s", (p) => fmt(p.median_jct_s, 5)], ["p99, s", (p) => fmt(p.p99_jct_s, 5)],
    ["makespan, s", (p) => fmt(p.makespan_s, 5)], ["GPU-hours", (p) => fmt(p.gpu_hours, 5)],
    ["use", (p) => pct(p.utilisation)], ["restarts", (p) => p.restarts],
    ...(s.cluster.groups ? [["GPU-hours by group", (p) => p.gpu_hours_by_group.map((g) => `${g.gpu} ${fmt(g.gpu_hours, 4)}`).join(", ")]] : []),
  ], s.policies);
  const cdf = s.policies.map((p, k) => {
    const j = p.job_results.map((r) => r.jct_s).filter((x) => x !== null).sort((a, b) => a - b);
    return { label: p.policy, x: j, y: j.map((_, i) => (i + 1) / j.length), color: PALETTE[k % PALETTE.length], stepped: true };
  });
  chart("chart-jct", "JCT distribution", "job completion time, s", "share of jobs", cdf, { logx: true });
  const use = s.policies.map((p, k) => ({ label: p.policy, x: p.gpus_in_use.t_s, y: p.gpus_in_use.gpus,
    color: PALETTE[k % PALETTE.length], stepped: true, width: 1 }));
  const total = s.cluster.groups ? s.cluster.groups.reduce((n, g) => n + g.nodes * g.gpus_per_node, 0)
    : s.cluster.nodes * s.cluster.gpus_per_node;
  chart("chart-util", `GPUs in use (of ${total})`, "time, s", "GPUs", use);
}

// ---- live forecast ---------------------------------------------------------

// The log the form names (the source changed last: trackSources), as /watch's fields, and in words.
async function watchBody() {
  const [src] = givenSources("watch");
  if (!src) throw new Error("give the job's log: a file, its text, or a path on the server");
  if (src.id === "watch-path") return { body: { log_path: src.read() }, name: src.name };
  return { body: { log_text: await src.read() }, name: src.name || "the pasted log" };
}

// Draws one panel of /watch's chart (the panels `trainplan watch --plot` draws).
function watchPanel(id, p) {
  const series = p.series.map((s) => ({ ...s, points: s.points.filter(([x]) => x !== null) }))
    .filter((s) => s.points.some(([, y]) => y !== null)).map((s) => ({
      label: s.title, x: s.points.map(([x]) => x), y: s.points.map(([, y]) => y), color: s.color || PALETTE[0],
      points: s.kind === "points", width: s.kind === "band" ? 6 : 2, dash: s.dashed ? [6, 4] : undefined,
      marks: s.marks,
    }));
  // The title's lines as one; an empty line (a title ending in a newline) adds nothing.
  const title = p.title.split("\n").map((l) => l.trim()).filter((l) => l).join(": ");
  chart(id, title, p.xlabel, p.ylabel, series, { xrange: p.xrange, yrange: p.yrange });
}

// Seconds a followed log may stay unchanged before following stops, as `watch --stall` (its default).
const WATCH_STALL_S = 300;

// The form's /watch request, read once: following asks the same again (the
// path read anew by the server), whatever the form holds since.
async function watchRequest() {
  const log = await watchBody();
  const body = { ...log.body, target: numberField("watch-target") };
  const deadline_h = numberField("watch-deadline");
  if (deadline_h) {
    if (!Number.isFinite(3600 * deadline_h)) throw new Error(`Deadline: ${deadline_h} hours is too long`);
    body.deadline_s = deadline_h * 3600;
  }
  body.method = $("watch-method").value;
  return { log, body };
}

// One /watch request (watchRequest's); its answer shown, unless a newer
// request has started since (`seq`). Resolves with the answer, or null when stale.
async function watchOnce(seq, { log, body }) {
  const w = await api("/watch", body);
  if (seq !== state.watchSeq) return null;
  let text = `${log.name}: ${w.lines} lines, ${w.epochs_seen} epochs with a metric` +
    (w.trial ? ` (trial: ${w.trial})` : "") + (w.done ? ", the run is done" : "") + "\n" +
    (w.text || "no forecast yet: the log has no epoch with a metric");
  if (w.warnings_total) text += `\n${w.warnings_total} line(s) not used or without a metric; the first: ${w.warnings[0]}`;
  $("watch-summary").textContent = text;
  watchPanel("chart-watch-metric", w.panels[0] || { title: "", xlabel: "", ylabel: "", series: [] });
  if (w.panels[1]) watchPanel("chart-watch-time", w.panels[1]);
  else chart("chart-watch-time", "", "", "", []);
  w.follows = "log_path" in log.body;
  return w;
}

async function onWatch(ev) {
  ev.preventDefault();
  // A newer request makes every earlier one's answer stale, and ends its following.
  const seq = ++state.watchSeq;
  clearTimeout(state.watchTimer);
  showError("watch-error", null);
  $("watch-follow-note").textContent = "";
  // The last answer goes: what is shown is always this request's.
  $("watch-summary").textContent = "";
  chart("chart-watch-metric", "", "", "", []);
  chart("chart-watch-time", "", "", "", []);
  $("watch-submit").disabled = true;
  let w = null, request = null;
  try {
    if (numberField("watch-target") === null) throw new Error("give the target metric");
    status("forecasting…");
    request = await watchRequest();
    w = await watchOnce(seq, request);
    if (w) status("forecast");
  } catch (e) {
    showError("watch-error", e);
    status("error");
  } finally {
    $("watch-submit").disabled = false;
  }
  if (!w || !$("watch-follow").checked) return;
  const note = (t) => { $("watch-follow-note").textContent = t; };
  if (!w.follows) { note("following reads a path on the server; a file or pasted text is read once"); return; }
  // Following: the same request every 5 s, in this tab only (the header's
  // status is left to the other tabs), until the run is done, the log stays
  // unchanged past WATCH_STALL_S, "follow" is unticked, an error other than
  // busy, or a newer request.
  const follow = async () => {
    if (seq !== state.watchSeq) return;
    if (!$("watch-follow").checked) { note("following stopped (unticked)"); return; }
    try {
      const again = await watchOnce(seq, request);
      if (!again) return;
      if (again.done) { note(`the run is done (${new Date().toLocaleTimeString()}): following stopped`); return; }
      if (again.quiet_s > WATCH_STALL_S) {
        note(`the log has not changed for ${Math.round(again.quiet_s)} s: stalled, following stopped`);
        return;
      }
      note(`following: asked at ${new Date().toLocaleTimeString()}, again in 5 s`);
    } catch (e) {
      if (seq !== state.watchSeq) return;
      if (e.status !== 503) { showError("watch-error", e); note("following stopped by the error above"); return; }
      note(`the server is busy (${new Date().toLocaleTimeString()}): asking again in 5 s`);
    }
    state.watchTimer = setTimeout(follow, 5000);
  };
  note("following: again in 5 s");
  state.watchTimer = setTimeout(follow, 5000);
}

// ---- transformer plan ------------------------------------------------------

async function loadLlm() {
  try {
    const z = await api("/llm/models");
    const fill = (sel, names, pick) => {
      for (const n of names) {
        const o = document.createElement("option");
        o.value = o.textContent = n;
        if (n === pick) o.selected = true;
        sel.appendChild(o);
      }
    };
    fill($("llm-model"), z.models, "gpt3-1.3b");
    fill($("llm-gpu"), z.gpus, "h100");
    fill($("llm-calibrate-gpu"), z.gpus, "");
    fill($("transfer-from"), z.gpus, "t4");
    fill($("transfer-to"), z.gpus, "a100-40gb");
  } catch (e) {
    showError("llm-error", e);
  }
}

// The transformer job the form describes: {body: /llm/plan's fields (no GPU,
// price or measured rows), deadline_h: the deadline asked, which the answer
// does not repeat}.
function llmJob() {
  const deadline_h = numberField("llm-deadline");
  const body = { model: $("llm-model").value, max_gpus: requiredNumber("llm-max-gpus"),
    tokens: requiredNumber("llm-tokens"), global_batch: requiredNumber("llm-global-batch"),
    max_cp: requiredNumber("llm-max-cp"), overlap: $("llm-overlap").checked,
    uneven_end_stages: $("llm-uneven").checked, grad_reduce_in_bf16: $("llm-bf16-grads").checked, frontier: true };
  // Empty or 0: no deadline. A deadline too long for a number is an error, not none.
  if (deadline_h) {
    if (!Number.isFinite(3600 * deadline_h)) throw new Error(`Deadline: ${deadline_h} hours is too long`);
    body.deadline = 3600 * deadline_h;
  }
  // Empty: the GPU's default (bf16; fp16 where its tensor cores take fp16 only; fp32 without tensor cores).
  if ($("llm-precision").value) body.precision = $("llm-precision").value;
  return { body, deadline_h };
}

// The same transformer job on several GPUs (POST /llm/plan with gpus).
async function onLlmCompare(ev) {
  ev.preventDefault();
  showError("llm-compare-error", null);
  $("llm-compare-result").hidden = true;
  status("planning on each GPU…");
  await whileBusy("llm-compare", "llm-compare-submit", "llm-compare-error", async (current) => {
    const gpus = $("llm-compare-gpus").value.split(",").map((x) => x.trim()).filter((x) => x);
    if (!gpus.length) throw new Error("GPUs: name at least one");
    const job = llmJob();
    const body = { ...job.body, gpus };
    const prices = parsePrices($("llm-compare-prices").value);
    if (prices) body.prices = prices;
    const { answer, none } = await planOnEachGpu("/llm/plan", body, "llm-compare-error", current);
    if (!current()) return;
    showLlmComparison(answer, Boolean(prices), job.deadline_h || 0);
    status(none ? "no GPU fits" : "planned on each GPU");
  });
}

function showLlmComparison(c, priced, deadline_h) {
  const rows = c.gpus;
  const cell = (f) => (g) => (g.chosen ? f(g.chosen, g) : "—");
  fillTable($("llm-compare-table"), [
    ["gpu", (g) => g.gpu], ["gpus", cell((x) => x.gpus)], ["tp", cell((x) => x.tp)], ["cp", cell((x) => x.cp)],
    ["pp", cell((x) => x.pp)], ["dp", cell((x) => x.dp)], ["mb", cell((x) => x.micro_batch)],
    ["recompute", cell((x) => x.recompute)], ["precision", cell((x) => x.precision)],
    ["train, h", cell((x) => fmt(x.train_time_s / 3600))], ["GPU-hours", cell((x) => fmt(x.gpu_hours))],
    ...(priced ? [["price", (g) => fmt(g.price_per_gpu_hour)], ["cost", cell((x) => fmt(x.cost))]] : []),
    ...(rows.some((g) => !g.chosen) ? [["why no plan", (g) => (g.chosen ? "" : `${g.failing}: ${g.explanation}`)]] : []),
  ], rows, (g) => g.gpu === (c.cheapest || c.fastest));
  $("llm-compare-summary").textContent = `${c.model}, ${c.objective}` + (c.cheapest ? `\ncheapest: ${c.cheapest}` : "") +
    (c.fastest ? `\nfastest: ${c.fastest}` : "") +
    (priced ? "" : "\n(GPU-hours of different GPUs cost differently: prices name the cheapest)");
  $("llm-compare-result").hidden = false;  // before the chart, which takes its parent's width
  const costOf = (p) => (priced ? p.cost : p.gpu_hours), hours = (p) => p.train_time_s / 3600;
  const series = gpuFrontierSeries(rows, deadline_h, hours, costOf, (g) => g.gpu,
    (g) => (g.chosen ? { time: hours(g.chosen), cost: costOf(g.chosen) } : null));
  chart("chart-llm-compare", "cheapest configuration for each training time, on each GPU", "training time, h",
    priced ? "cost" : "GPU-hours", series, { logx: true });
  const merged = c.frontier || [];
  $("llm-compare-frontier-note").hidden = !merged.length;
  fillTable($("llm-compare-frontier"), merged.length ? [
    ["from training time, h", (p) => fmt(p.train_time_s / 3600)], ["gpu", (p) => p.gpu], ["gpus", (p) => p.gpus],
    ["tp", (p) => p.tp], ["pp", (p) => p.pp], ["dp", (p) => p.dp], ["GPU-hours", (p) => fmt(p.gpu_hours)], ["cost", (p) => fmt(p.cost)],
  ] : [], merged, (p) => deadline_h > 0 && p === merged.filter((q) => q.train_time_s <= 3600 * deadline_h).pop());
}

async function onLlm(ev) {
  ev.preventDefault();
  showError("llm-error", null);
  $("llm-result").hidden = true;
  await whileBusy("llm", "llm-submit", "llm-error", async (current) => {
    const job = llmJob();
    const body = { ...job.body, gpu: $("llm-gpu").value };
    const price = numberField("llm-price");
    if (price) body.price_per_gpu_hour = price;
    const measured = $("llm-calibrate").value.trim();
    if (measured) body.calibrate = measured + "\n";
    // Rows measured on another GPU: fitted there, their factors price this one (llm plan --calibrate-gpu).
    const measuredOn = $("llm-calibrate-gpu").value;
    if (measured && measuredOn && measuredOn !== body.gpu) body.calibrate_gpu = measuredOn;
    status("planning…");
    let plan;
    try {
      plan = await api("/llm/plan", body);
    } catch (e) {
      // Nothing qualifies: the answer still says why and shows the closest.
      if (current() && e.body && e.body.plan) showLlm(e.body.plan, job.deadline_h);
      throw e;
    }
    if (!current()) return;
    showLlm(plan, job.deadline_h);
    status("planned");
  });
}

function showLlm(r, deadline_h) {
  const dl = $("llm-choice");
  dl.replaceChildren();
  const c = r.chosen || r.closest;
  const rows = [["model", `${r.model} (${fmt(r.params / 1e9)}B parameters)`], ["GPU", r.gpu], ["objective", r.objective],
    ["iterations", r.iterations], ["searched / fit memory / qualify", `${r.enumerated} / ${r.fit_memory} / ${r.qualified}`]];
  if (c) {
    const ends = c.first_stage_layers > 0 ? ` (end stages ${c.first_stage_layers} and ${c.last_stage_layers} layers)` : "";
    rows.push([r.chosen ? "chosen" : "closest", `tp ${c.tp}, ${c.cp > 1 ? `cp ${c.cp}, ` : ""}pp ${c.pp}${ends}, dp ${c.dp}, micro-batch ${c.micro_batch}, recompute ${c.recompute}`],
      ["GPUs", c.gpus], ["training time, h", fmt(c.train_time_s / 3600) + (c.train_time_interval_s
        ? ` (${Math.round(100 * r.interval_coverage)}% interval ${fmt(c.train_time_interval_s[0] / 3600)} to ` +
          `${fmt(c.train_time_interval_s[1] / 3600)})` : "")], ["GPU-hours", fmt(c.gpu_hours) + (c.cost !== undefined ? ` (cost ${fmt(c.cost)} at ${fmt(r.price_per_gpu_hour)} a GPU-hour)` : "")],
      ["memory per GPU, GiB", `${fmt(c.memory_gib)} of ${fmt(r.memory_available_gib)} (headroom ${fmt(c.headroom_gib)})`]);
  }
  const cal = r.calibration;
  if (cal) {
    rows.push(["calibrated", `on ${cal.rows} measured iterations (${cal.fitted} fit): mean |error| ` +
      `${pct(cal.mean_abs_relative_error)}, cross-validated ${pct(cal.cv.time_mean_abs_relative_error)}`]);
    for (const p of cal.passed_over || []) rows.push(["passed over", p]);
    for (const w of cal.warnings || []) rows.push(["warning", w]);
  }
  for (const [k, v] of rows) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = v;
    dl.append(dt, dd);
  }
  fillTable($("llm-top"), [
    ["gpus", (x) => x.gpus], ["tp", (x) => x.tp], ["cp", (x) => x.cp], ["pp", (x) => x.pp], ["vpp", (x) => x.virtual_stages], ["dp", (x) => x.dp],
    ["mb", (x) => x.micro_batch], ["recompute", (x) => x.recompute],
    ["seq. parallel", (x) => (x.sequence_parallel ? "yes" : "no")], ["dist. optimizer", (x) => (x.distributed_optimizer ? "yes" : "no")],
    ["iter, s", (x) => fmt(x.iteration_time_s)], ["MFU", (x) => pct(x.mfu)],
    ["train, h", (x) => fmt(x.train_time_s / 3600)], ["GPU-hours", (x) => fmt(x.gpu_hours)],
    ...(r.price_per_gpu_hour ? [["cost", (x) => fmt(x.cost)]] : []),
    ["memory, GiB", (x) => fmt(x.memory_gib)], ["free, GiB", (x) => fmt(x.headroom_gib)],
    ["end-stage layers", (x) => (x.first_stage_layers > 0 ? `${x.first_stage_layers}, ${x.last_stage_layers}` : "even")],
  ], r.top || [], (x) => x === (r.top || [])[0]);
  $("llm-result").hidden = false;  // before the chart, which takes its parent's width
  // GPU-hours of the cheapest configuration that fits each training time: a
  // step at each point, flat past the slowest (the cheapest of all).
  const f = r.frontier || [];
  const fx = f.map((x) => x.train_time_s / 3600), fy = f.map((x) => x.gpu_hours);
  // Flat from the slowest on towards the deadline asked, and said where it is cut short.
  const end = f.length && deadline_h > 0 ? tailEnd(fx[fx.length - 1], deadline_h) : 0;
  if (end > fx[fx.length - 1]) { fx.push(end); fy.push(fy[fy.length - 1]); }
  chart("chart-llm-frontier", "cheapest configuration for each deadline", "training time, h", "GPU-hours", f.length ? [
    { label: end > 0 && end < deadline_h ? `frontier (flat on to the deadline, ${compact(deadline_h)} h)` : "frontier",
      x: fx, y: fy, color: PALETTE[0], stepped: true },
    ...(r.chosen ? [{ label: "chosen", x: [r.chosen.train_time_s / 3600], y: [r.chosen.gpu_hours], points: true, color: PALETTE[1] }] : []),
  ] : [], { logx: true });
}

// ---- tabs ------------------------------------------------------------------

// The tabs follow the ARIA tabs pattern: the selected tab is the one in the
// tab order, and the arrow keys, Home and End move between them.
function showTab(name, focus = false) {
  for (const b of document.querySelectorAll("nav button")) {
    const on = b.dataset.tab === name;
    b.classList.toggle("active", on);
    b.setAttribute("aria-selected", String(on));
    b.tabIndex = on ? 0 : -1;
    if (on && focus) b.focus();
  }
  for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== `tab-${name}`;
}

function onTabKey(e) {
  const tabs = [...document.querySelectorAll("nav button")];
  const i = tabs.indexOf(e.target);
  const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  showTab(tabs[(to + tabs.length) % tabs.length].dataset.tab, true);
}

function init() {
  for (const b of document.querySelectorAll("nav button")) {
    b.addEventListener("click", () => showTab(b.dataset.tab));
    b.addEventListener("keydown", onTabKey);
  }
  showTab("samples");
  trackSources("samples", "samples-file", "samples-text", "samples-path", "samples-source");
  trackSources("watch", "watch-file", "watch-text", "watch-path", "watch-source");
  $("samples-form").addEventListener("submit", onSamples);
  $("plan-form").addEventListener("submit", onPlan);
  $("sim-form").addEventListener("submit", onSimulate);
  $("llm-form").addEventListener("submit", onLlm);
  $("llm-compare-form").addEventListener("submit", onLlmCompare);
  $("transfer-form").addEventListener("submit", onTransfer);
  $("transfer-plan").addEventListener("click", onTransferPlan);
  $("compare-form").addEventListener("submit", onCompare);
  $("watch-form").addEventListener("submit", onWatch);
  loadModels();
  loadWorkloads();
  loadLlm();
  status("ready");
}

document.addEventListener("DOMContentLoaded", init);
