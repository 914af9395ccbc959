// Drives the page of `trainplan serve` (docs/WEB.md) in headless chromium and
// checks that what it shows is what the CLI says for the same inputs.
//
//   node page_test.mjs --url http://127.0.0.1:PORT --trainplan build/trainplan \
//        --samples examples/lenet-mnist-samples.csv --out build/browser-test
//        [--gpu-samples examples/h200/lenet-mnist-samples.csv]
//        [--target 0.97 --deadline 300 --max-workers 4]
//
// It starts no server (run_page_test.sh does). Chromium is $TRAINPLAN_CHROMIUM,
// else /usr/bin/chromium. Exit 0: passed; 1: a check failed (each failure is
// printed). Screenshots of each tab go to --out.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import puppeteer from "puppeteer-core";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
for (const need of ["url", "trainplan", "samples", "out"])
  if (!args[need]) { console.error(`page_test: missing --${need}`); process.exit(2); }
const target = Number(args.target || 0.97), deadline = Number(args.deadline || 300), maxWorkers = Number(args["max-workers"] || 4);
const chromium = process.env.TRAINPLAN_CHROMIUM || "/usr/bin/chromium";
mkdirSync(args.out, { recursive: true });

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures++;
}

// `trainplan ...` as JSON; exit 3 (nothing fits) gives {exit: 3, stderr}.
function cli(argv) {
  const r = spawnSync(args.trainplan, argv, { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status === 0) return JSON.parse(r.stdout);
  return { exit: r.status, stdout: r.stdout, stderr: r.stderr };
}

const text = (page, sel) => page.$eval(sel, (e) => e.textContent.trim());
const visible = (page, sel) => page.$eval(sel, (e) => !e.hidden && e.offsetParent !== null);

async function waitStatus(page, pattern, timeout = 60000) {
  await page.waitForFunction((p) => new RegExp(p).test(document.getElementById("status").textContent),
    { timeout }, pattern.source);
}

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: [...(process.getuid && process.getuid() === 0 ? ["--no-sandbox"] : []), "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1000 });
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  // An answer the API gives as an error is logged by chromium as a failed
  // load: those are checked by status below, the rest of the console here.
  page.on("console", (m) => {
    if (m.type() === "error" && !/Failed to load resource/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  let expect422 = false, expect404 = false, expect403 = false;
  page.on("response", (r) => {
    if (r.status() >= 400 && !(r.status() === 422 && expect422) && !(r.status() === 404 && expect404) &&
        !(r.status() === 403 && expect403))
      problems.push(`${r.status()} from ${r.url()}`);
  });
  const origin = new URL(args.url).origin;
  const posts = [];  // the API requests the page made, by path: a double click must ask once
  page.on("request", (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) problems.push(`request elsewhere: ${r.url()}`);
    if (r.method() === "POST") posts.push(new URL(r.url()).pathname);
  });
  // Clicks `sel` twice at once, as a double click does: the button must be
  // disabled by the first click, so that the second asks nothing.
  const doubleClick = (sel) => page.$eval(sel, (b) => { b.click(); const busy = b.disabled; b.click(); return busy; });

  await page.goto(args.url, { waitUntil: "networkidle0" });
  check(await page.evaluate(() => typeof uPlot === "function"), "uPlot loaded from the server");
  await waitStatus(page, /ready/);

  // ---- samples: upload the CSV, fit, draw ----
  const input = await page.$("#samples-file");
  await input.uploadFile(path.resolve(args.samples));
  await page.click("#samples-load");
  await waitStatus(page, /loaded fit-\d+|error/);
  const summary = await text(page, "#fit-summary");
  check(new RegExp(`^fit-\\d+: \\d+ samples \\(${path.basename(args.samples)}\\)`).test(summary),
    `samples fitted, the file named: ${summary.split("\n")[0]}`);
  check(await page.$("#chart-time canvas") !== null, "epoch-time chart drawn");
  check(await page.$("#chart-metric canvas") !== null, "metric chart drawn");
  // Every measured point is drawn, also of the batches and runs /curves draws no curve for.
  {
    const id = summary.match(/^fit-\d+/)[0];
    const drawn = await page.evaluate(async (id) => {
      const cur = await (await fetch("/curves", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ id }) })).json();
      const count = (chartId) => {
        const u = state.charts[chartId];
        return !u ? 0 : u.series.reduce((n, s, i) => n + (/^measured/.test(s.label) ? u.data[i].filter((v) => v !== null).length : 0), 0);
      };
      return { time: count("chart-time"), metric: count("chart-metric"),
        timeWant: new Set(cur.time.points.map((p) => `${p.batch} ${p.workers}`)).size,
        metricWant: new Set((cur.metric ? cur.metric.points : []).map((p) => `${p.batch} ${p.workers} ${p.epochs}`)).size };
    }, id);
    check(drawn.time === drawn.timeWant && drawn.metric === drawn.metricWant,
      `every measured point drawn: ${drawn.time} of ${drawn.timeWant} (batch, workers) times, ` +
      `${drawn.metric} of ${drawn.metricWant} (batch, workers, epochs) metrics`);
  }
  const evalRows = await page.$$eval("#eval-table tbody tr", (rows) => rows.length);
  check(evalRows > 0, `models' cross-validated errors listed (${evalRows} models)`);
  // The model menu sets one model for both parts: it lists only those with both.
  const menu = await page.$$eval("#samples-model option", (os) => os.map((o) => o.value));
  check(menu.includes("auto") && !menu.includes("paleo") && !menu.includes("global-batch"),
        `the model menu lists models with both parts (${menu.join(", ")})`);
  await page.screenshot({ path: path.join(args.out, "web-samples.png"), fullPage: true });
  // The screenshot the docs show: the samples given, before any other tab
  // loads samples of its own (the Another GPU tab's moved ones).
  await page.screenshot({ path: path.join(args.out, "web-screenshot.png") });

  // ---- plan: fill the form, compare with `trainplan plan --json` ----
  await page.click('nav button[data-tab="plan"]');
  const fill = async (sel, v) => { await page.$eval(sel, (e) => { e.value = ""; }); await page.type(sel, String(v)); };
  await fill("#plan-target", target);
  await fill("#plan-deadline", deadline);
  await fill("#plan-max-workers", maxWorkers);
  posts.length = 0;
  const planBusy = await doubleClick("#plan-submit");
  await waitStatus(page, /planned|nothing fits/);
  check(planBusy && posts.filter((p) => p === "/plan").length === 1, `a double click on Plan asks once (${posts.join(", ")})`);
  const want = cli(["plan", "--samples", args.samples, "--target", String(target), "--deadline", String(deadline),
    "--max-workers", String(maxWorkers), "--frontier", "--json"]);
  check(want.choice !== undefined, `trainplan plan --json chose a run (${JSON.stringify(want.choice || want.stderr)})`);
  check(await visible(page, "#plan-result"), "the page shows a chosen run");
  if (want.choice) {
    const shown = {
      workers: Number(await text(page, "#choice-workers")),
      batch: Number(await text(page, "#choice-batch")),
      epochs: Number(await text(page, "#choice-epochs")),
      time: Number(await text(page, "#choice-time")),
    };
    console.log(`     page: ${JSON.stringify(shown)}; plan --json: workers ${want.choice.workers}, batch ${want.choice.batch}, ` +
      `epochs ${want.choice.epochs}, time ${want.choice.total_time_s}`);
    check(shown.workers === want.choice.workers, "workers as plan --json");
    check(shown.batch === want.choice.batch, "batch as plan --json");
    check(shown.epochs === want.choice.epochs, "epochs as plan --json");
    check(Math.abs(shown.time - want.choice.total_time_s) <= 0.051, "time as plan --json (to 0.1 s)");
    const alts = await page.$$eval("#plan-alternatives tbody tr", (r) => r.length);
    check(alts === 1 + want.alternatives.length, `alternatives listed (${alts - 1})`);
    const trials = await page.$$eval("#plan-trials tbody tr", (r) => r.length);
    check(trials === want.nearest_trials.length, `nearest trials listed (${trials})`);
    check(await page.$("#chart-frontier canvas") !== null, "frontier chart drawn");
    const label = await page.$eval("#chart-frontier", (e) => `${e.getAttribute("role")}: ${e.getAttribute("aria-label")}`);
    check(/^img: cheapest run for each deadline: frontier[^,;]*, chosen; deadline, s .+ to .+; GPU-hours .+ to /.test(label),
      `the frontier chart has words for a screen reader (${label})`);
  }
  // The tabs as a screen reader and a keyboard meet them.
  check(await page.$eval('nav button[data-tab="plan"]', (b) => b.getAttribute("aria-selected")) === "true" &&
    await page.$eval('nav button[data-tab="samples"]', (b) => b.getAttribute("aria-selected")) === "false",
    "the Plan tab is the selected one");
  await page.focus('nav button[data-tab="plan"]');
  await page.keyboard.press("ArrowLeft");
  check(await visible(page, "#tab-samples") && await page.evaluate(() => document.activeElement.dataset.tab) === "samples",
    "ArrowLeft moves to the Samples tab and shows it");
  await page.keyboard.press("ArrowRight");
  check(await visible(page, "#tab-plan"), "ArrowRight comes back to Plan");
  await page.screenshot({ path: path.join(args.out, "web-plan.png"), fullPage: true });

  // Nothing fits: the page says why, as the CLI does (exit 3).
  expect422 = true;
  await fill("#plan-deadline", 1);
  await page.click("#plan-submit");
  await waitStatus(page, /nothing fits|planned/);
  const none = cli(["plan", "--samples", args.samples, "--target", String(target), "--deadline", "1",
    "--max-workers", String(maxWorkers), "--json"]);
  check(none.exit === 3, "trainplan plan exits 3 at a 1 s deadline");
  const why = (await visible(page, "#plan-error")) ? await text(page, "#plan-error") : "";
  check(/deadline/.test(why) && !(await visible(page, "#plan-result")), `the page says why nothing fits: ${why.split("\n")[0]}`);
  const firstLine = (none.stderr || "").split("\n").find((l) => l.startsWith("infeasible:")) || "";
  check(firstLine !== "" && why.includes(firstLine.replace(/^infeasible: /, "")), "the same reason as the CLI's");
  expect422 = false;

  // A busy server lets go of the least recently used id past --max-fits (3,
  // run_page_test.sh): three more fits from elsewhere, and the page's plan
  // meets a 404, fits its samples again and plans.
  const samplesCsv = readFileSync(args.samples, "utf8");
  const others = await page.evaluate(async (csv) => {
    const ids = [];
    for (let i = 0; i < 3; ++i) {
      const r = await fetch("/fit", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ samples_csv: csv }) });
      ids.push((await r.json()).id);
    }
    return ids;
  }, samplesCsv);
  expect404 = true;
  await fill("#plan-deadline", deadline);
  await page.click("#plan-submit");
  await waitStatus(page, /^planned|nothing fits|error/);
  const refit = await text(page, "#status");
  const refitted = /^planned \(the server had let go of fit-\d+: fitted again as fit-\d+\)$/.test(refit) &&
    await visible(page, "#plan-result");
  check(refitted, `a plan on an id the server let go of (after ${others.join(", ")}) fits the samples again: ${refit}`);
  if (refitted && want.choice)
    check(Number(await text(page, "#choice-workers")) === want.choice.workers &&
      Number(await text(page, "#choice-batch")) === want.choice.batch, "the plan is the same as before");
  expect404 = false;

  // ---- another GPU: samples measured on the H200 moved to an A100, as
  // `trainplan transfer --samples` moves them, then planned there ----
  if (args["gpu-samples"]) {
    const gpuSamples = path.resolve(args["gpu-samples"]);
    await page.click('nav button[data-tab="samples"]');
    await (await page.$("#samples-file")).uploadFile(gpuSamples);
    await page.click("#samples-load");
    await waitStatus(page, /loaded fit-\d+|error/);
    check(await page.$eval("#plan-result", (e) => e.hidden) && await page.$eval("#plan-error", (e) => e.hidden),
      "new samples take away the plan on the samples before");
    await page.click('nav button[data-tab="transfer"]');
    const gpus = await page.$$eval("#transfer-to option", (o) => o.map((x) => x.value));
    check(gpus.includes("h200") && gpus.includes("a100-80gb"), `the GPU menus list the catalog (${gpus.length} GPUs)`);
    await page.select("#transfer-from", "h200");
    await page.select("#transfer-to", "a100-80gb");
    await page.click("#transfer-submit");
    await waitStatus(page, /predicted|error/);
    const movedFile = path.join(args.out, "moved-a100.csv");
    const moved = cli(["transfer", "--samples", gpuSamples, "--from-gpu", "h200", "--to-gpu", "a100-80gb", "-o", movedFile, "--json"]);
    check(Array.isArray(moved.configurations), `trainplan transfer --samples --json moved the samples (${JSON.stringify(moved.stderr || "")})`);
    if (Array.isArray(moved.configurations)) {
      const heads = await page.$$eval("#transfer-table thead th", (h) => h.map((x) => x.textContent));
      const rows = await page.$$eval("#transfer-table tbody tr", (r) => r.map((x) => [...x.cells].map((c) => c.textContent)));
      check(rows.length === moved.configurations.length, `one row per configuration (${rows.length})`);
      const at = heads.indexOf("a100-80gb: epoch, s"), iv = heads.indexOf("80% interval, s");
      const close = (a, b) => Math.abs(a - b) <= 1e-3 * Math.abs(b);
      check(at >= 0 && rows.every((r, i) => close(Number(r[at]), moved.configurations[i].target_epoch_time_s)),
        "the predicted epoch times as transfer --json");
      check(iv >= 0 && rows.every((r, i) => {
        const [lo, hi] = r[iv].split(" to ").map(Number);
        const c = moved.configurations[i];
        return close(lo, c.target_epoch_time_low80_s) && close(hi, c.target_epoch_time_high80_s) && lo < c.target_epoch_time_s && hi > c.target_epoch_time_s;
      }), "each prediction's 80% interval as transfer --json, about the prediction");
      check(/80% within ×\/\d/.test(await text(page, "#transfer-summary")), "the move's shared error is said");
      check(await page.$("#chart-transfer canvas") !== null, "the transfer chart drawn");
      // The training's precision and TF32, said on the form, move the samples as --precision and --tf32 do.
      await page.select("#transfer-precision", "mixed");
      await page.click("#transfer-tf32");
      await page.click("#transfer-submit");
      await waitStatus(page, /predicted|error/);
      const said = cli(["transfer", "--samples", gpuSamples, "--from-gpu", "h200", "--to-gpu", "a100-80gb", "--precision", "mixed",
        "--tf32", "--json"]);
      const saidRows = await page.$$eval("#transfer-table tbody tr", (r) => r.map((x) => [...x.cells].map((c) => c.textContent)));
      check(Array.isArray(said.configurations) && saidRows.length === said.configurations.length &&
        saidRows.every((r, i) => close(Number(r[at]), said.configurations[i].target_epoch_time_s)),
        "with precision and TF32 said, the predicted epoch times as transfer --precision mixed --tf32 --json");
      check(/matrix work in mixed: as the user gave it/.test(await text(page, "#transfer-summary")), "the precision given is said");
      // Profiled in fp32, trained in mixed precision there: as --target-precision says it.
      await page.select("#transfer-precision", "fp32");
      await page.select("#transfer-target-precision", "mixed");
      await page.click("#transfer-submit");
      await waitStatus(page, /predicted|error/);
      const there = cli(["transfer", "--samples", gpuSamples, "--from-gpu", "h200", "--to-gpu", "a100-80gb", "--precision", "fp32",
        "--target-precision", "mixed", "--tf32", "--json"]);
      const thereRows = await page.$$eval("#transfer-table tbody tr", (r) => r.map((x) => [...x.cells].map((c) => c.textContent)));
      check(Array.isArray(there.configurations) && thereRows.length === there.configurations.length &&
        thereRows.every((r, i) => close(Number(r[at]), there.configurations[i].target_epoch_time_s)),
        "with the precision there said, the predicted epoch times as transfer --target-precision mixed --json");
      check(/on the target mixed, as the user gave it/.test(await text(page, "#transfer-summary")), "the precision there is said");
      await page.select("#transfer-target-precision", "auto");
      await page.select("#transfer-precision", "auto");
      await page.click("#transfer-tf32");
      await page.click("#transfer-submit");
      await waitStatus(page, /predicted|error/);
      await page.screenshot({ path: path.join(args.out, "web-transfer.png"), fullPage: true });
      // Planned on the moved samples: the Plan tab answers as plan --samples on the file transfer -o wrote.
      await page.click("#transfer-plan");
      await waitStatus(page, /loaded fit-\d+|error/);
      check(await visible(page, "#tab-plan"), "the Plan tab opens on the moved samples");
      check(/predicted from h200/.test(await text(page, "#fit-summary")), "the fit says its times were predicted from h200");
      const gpuTarget = 0.97, gpuDeadline = 600;
      await fill("#plan-target", gpuTarget);
      await fill("#plan-deadline", gpuDeadline);
      await page.$eval("#plan-max-workers", (e) => { e.value = ""; });
      await fill("#plan-confidence", 0.9);
      await page.click("#plan-submit");
      await waitStatus(page, /planned|nothing fits/);
      const onA100 = cli(["plan", "--samples", movedFile, "--target", String(gpuTarget), "--deadline", String(gpuDeadline),
        "--confidence", "0.9", "--json"]);
      check(onA100.choice !== undefined && onA100.times_predicted_from === "h200" && onA100.times_predicted_log_sd > 0,
        `plan --json on the moved samples chose a run and says whence its times (${JSON.stringify(onA100.choice || onA100.stderr)})`);
      if (onA100.choice) {
        check(Number(await text(page, "#choice-workers")) === onA100.choice.workers &&
          Number(await text(page, "#choice-batch")) === onA100.choice.batch &&
          Number(await text(page, "#choice-epochs")) === onA100.choice.epochs, "the run planned on the A100 as plan --json");
        check(/predicted from h200/.test(await text(page, "#plan-model")), "the plan says its times were predicted");
      }
      await page.$eval("#plan-confidence", (e) => { e.value = ""; });

      // Which GPU: the same job on the H200 and an L4, priced, as plan --gpu --json plans it.
      await page.click('nav button[data-tab="transfer"]');
      await fill("#compare-gpus", "h200,l4");
      await fill("#compare-prices", "h200=3.5,l4=0.8");
      await fill("#compare-target", 0.97);
      await fill("#compare-deadline", 600);
      await page.click("#compare-submit");
      await waitStatus(page, /planned on each GPU|error/);
      const each = cli(["plan", "--samples", gpuSamples, "--from-gpu", "h200", "--gpu", "h200,l4", "--price", "h200=3.5,l4=0.8",
        "--target", "0.97", "--deadline", "600", "--frontier", "--json"]);
      check(Array.isArray(each.gpus), `plan --gpu --json planned on each GPU (${JSON.stringify(each.stderr || "")})`);
      if (Array.isArray(each.gpus)) {
        const heads = await page.$$eval("#compare-table thead th", (h) => h.map((x) => x.textContent));
        const rows = await page.$$eval("#compare-table tbody tr", (r) => r.map((x) => [...x.cells].map((c) => c.textContent)));
        const col = (name) => heads.indexOf(name);
        check(rows.length === 2 && rows.every((r, i) => {
          const g = each.gpus[i], c = g.plan && g.plan.choice;
          return r[col("gpu")] === g.gpu && c && Number(r[col("batch")]) === c.batch && Number(r[col("workers")]) === c.workers &&
            Number(r[col("epochs")]) === c.epochs && Math.abs(Number(r[col("cost")]) - g.cost) <= 1e-3 * g.cost;
        }), "each GPU's run and cost as plan --gpu --json");
        check(new RegExp(`cheapest: ${each.cheapest}`).test(await text(page, "#compare-summary")),
          `the cheapest named as the CLI names it (${each.cheapest})`);
        check(/predicted, ×\/\d/.test(rows[1][col("epoch times")]) && rows[0][col("epoch times")] === "measured",
          "the measured GPU and the moved one told apart");
        check(await page.$("#chart-compare canvas") !== null, "each GPU's cost against the deadline drawn");
        const fheads = await page.$$eval("#compare-frontier thead th", (h) => h.map((x) => x.textContent));
        const frows = await page.$$eval("#compare-frontier tbody tr", (r) => r.map((x) => [...x.cells].map((c) => c.textContent)));
        const fcol = (name) => fheads.indexOf(name);
        const merged = each.frontier || [];
        check(merged.length > 0 && frows.length === merged.length && frows.every((r, i) =>
          r[fcol("gpu")] === merged[i].gpu && Math.abs(Number(r[fcol("cost")]) - merged[i].cost) <= 1e-3 * merged[i].cost),
        `the cheapest GPU and run for each deadline as plan --gpu --frontier --json (${frows.length} rows, ${merged.length} from the CLI)`);
      }
      // Trials timed on the L4, chosen above for "Predict on", correct its move as plan --gpu --trials does.
      const timedFile = path.join(args.out, "l4-timed.csv");
      writeFileSync(timedFile, "# trainplan: metric=max dataset_size=60000\nbatch,workers,epochs,epoch_time_s,metric\n64,1,1,2.6,\n1024,1,1,0.16,\n");
      await page.select("#transfer-to", "l4");
      await (await page.$("#transfer-trials")).uploadFile(timedFile);
      await page.$eval("#status", (e) => { e.textContent = ""; });  // the last answer's status must not pass for this one's
      await page.click("#compare-submit");
      await waitStatus(page, /planned on each GPU|error/);
      const corrected = cli(["plan", "--samples", gpuSamples, "--from-gpu", "h200", "--gpu", "h200,l4", "--price", "h200=3.5,l4=0.8",
        "--trials", `l4=${timedFile}`, "--target", "0.97", "--deadline", "600", "--frontier", "--json"]);
      check(Array.isArray(corrected.gpus), `plan --gpu --trials --json planned (${JSON.stringify(corrected.stderr || "")})`);
      if (Array.isArray(corrected.gpus)) {
        const heads = await page.$$eval("#compare-table thead th", (h) => h.map((x) => x.textContent));
        const rows = await page.$$eval("#compare-table tbody tr", (r) => r.map((x) => [...x.cells].map((c) => c.textContent)));
        const col = (name) => heads.indexOf(name), l4 = corrected.gpus[1], c = l4.plan && l4.plan.choice;
        check(rows.length === 2 && /2 timed/.test(rows[1][col("epoch times")]) && c && Number(rows[1][col("epochs")]) === c.epochs &&
          Math.abs(Number(rows[1][col("cost")]) - l4.cost) <= 1e-3 * l4.cost,
        `the L4's run corrected by its two trials, as plan --gpu --trials --json (${rows[1] && rows[1][col("epoch times")]})`);
        check(/l4's move corrected by the trials chosen above/.test(await text(page, "#compare-summary")), "the page says the trials were used");
      }
      await page.screenshot({ path: path.join(args.out, "web-transfer.png"), fullPage: true });
      // New samples take away every answer on the old ones: the move, its
      // moved samples ("Plan on"), the plans on each GPU.
      await page.click('nav button[data-tab="samples"]');
      await (await page.$("#samples-file")).uploadFile(path.resolve(args.samples));
      await page.click("#samples-load");
      await waitStatus(page, /loaded fit-\d+|error/);
      await page.click('nav button[data-tab="transfer"]');
      check(!(await visible(page, "#transfer-result")) && !(await visible(page, "#compare-result")) &&
        await page.evaluate(() => state.moved === null), "new samples take away the move and the plans on each GPU");
    }
  } else {
    console.log("skip another GPU: no --gpu-samples");
  }

  // A load that fails (no samples given) leaves nothing of the samples before:
  // no charts, no models' table, no plan; its error in the alert box.
  await page.click('nav button[data-tab="samples"]');
  await page.$eval("#samples-file", (e) => { e.value = ""; });
  await page.$eval("#samples-text", (e) => { e.value = ""; });
  await page.$eval("#samples-path", (e) => { e.value = ""; });
  await page.click("#samples-load");
  await waitStatus(page, /^error$/);
  check(await visible(page, "#samples-error") && await page.$eval("#samples-error", (e) => e.getAttribute("role")) === "alert" &&
    await page.$("#chart-time canvas") === null && await page.$("#chart-metric canvas") === null &&
    await page.$$eval("#eval-table tr", (r) => r.length) === 0 && await page.$eval("#plan-submit", (b) => b.disabled) &&
    await page.$eval("#plan-result", (e) => e.hidden),
  `a failed load clears the charts, the models and the plan, and says why (${await text(page, "#samples-error")})`);

  // ---- simulate, where the server has workloads ----
  await page.click('nav button[data-tab="simulate"]');
  const workloads = await page.$$eval("#sim-workload option", (o) => o.map((x) => x.value));
  if (workloads.length === 0) {
    console.log(`skip simulate: ${await text(page, "#sim-error")}`);
  } else {
    // Ours and the two it is measured against are ticked at first, each saying what it does on hover.
    const ticked = await page.$$eval("#sim-policies input:checked", (i) => i.map((x) => x.value).sort());
    check(JSON.stringify(ticked) === JSON.stringify(["coconfig", "pollux", "tiresias"]), `policies ticked at first: ${ticked}`);
    const titled = await page.$$eval("#sim-policies label", (l) => l.filter((x) => x.title.length > 0).length);
    check(titled === (await page.$$eval("#sim-policies label", (l) => l.length)), "every policy says what it does on hover");
    posts.length = 0;
    const simBusy = await doubleClick("#sim-submit");
    await waitStatus(page, /simulated|error/, 120000);
    check(simBusy && posts.filter((p) => p === "/simulate").length === 1, `a double click on Simulate asks once (${posts.join(", ")})`);
    const rows = await page.$$eval("#sim-table tbody tr", (r) => r.length);
    check(rows === 3, `simulation summary shown (${rows} policies, workload ${workloads[0]})`);
    check(await page.$("#chart-jct canvas") !== null && await page.$("#chart-util canvas") !== null, "JCT and use charts drawn");
    await page.screenshot({ path: path.join(args.out, "web-simulate.png"), fullPage: true });
    // The same on a cluster of another GPU: the answer says where its step times came from.
    const gpus = await page.$$eval("#sim-gpu option", (o) => o.map((x) => x.value));
    check(gpus[0] === "" && gpus.includes("h100"), `GPU choices: as traced, then the catalog (${gpus.join(",")})`);
    const before = await page.$$eval("#sim-table tbody tr td:nth-child(3)", (c) => c.map((x) => x.textContent));
    await page.select("#sim-gpu", "h100");
    await page.click("#sim-submit");
    await waitStatus(page, /simulated|error/, 120000);
    const note = await text(page, "#sim-note");
    check(/moved from t4 to h100/.test(note), `the note says the steps were moved (${note})`);
    const after = await page.$$eval("#sim-table tbody tr td:nth-child(3)", (c) => c.map((x) => x.textContent));
    check(after.length === 3 && JSON.stringify(after) !== JSON.stringify(before), `H100 JCTs differ from the T4's (${before} / ${after})`);
    await page.select("#sim-gpu", "");
    // One cluster of two GPU types: the T4 nodes above and 2 nodes of 8 A100s, each policy's GPU-hours by group.
    await page.select("#sim-gpu2", "a100-40gb");
    await page.click("#sim-submit");
    await waitStatus(page, /simulated|error/, 120000);
    const mixedNote = await text(page, "#sim-note");
    check(/t4: the traces' own steps; a100-40gb: .*moved from t4/.test(mixedNote), `the note names both groups' steps (${mixedNote})`);
    const byGroup = await page.$$eval("#sim-table tbody tr td:last-child", (c) => c.map((x) => x.textContent));
    check(byGroup.length === 3 && byGroup.every((t) => /^t4 [\d.]+, a100-40gb [\d.]+$/.test(t)), `GPU-hours by group shown (${byGroup})`);
    await page.screenshot({ path: path.join(args.out, "web-simulate-two-types.png"), fullPage: true });
    await page.select("#sim-gpu2", "");
  }

  // ---- transformer plan ----
  await page.click('nav button[data-tab="llm"]');
  const models = await page.$$eval("#llm-model option", (o) => o.length);
  if (models === 0) {
    console.log(`skip transformer plan: ${await text(page, "#llm-error")}`);
  } else {
    posts.length = 0;
    const llmBusy = await doubleClick("#llm-submit");
    await waitStatus(page, /planned|nothing fits|error/);
    check(llmBusy && posts.filter((p) => p === "/llm/plan").length === 1, `a double click on the transformer Plan asks once (${posts.join(", ")})`);
    const form = await page.evaluate(() => ({
      model: document.getElementById("llm-model").value, gpu: document.getElementById("llm-gpu").value,
      max_gpus: document.getElementById("llm-max-gpus").value, tokens: document.getElementById("llm-tokens").value,
      global_batch: document.getElementById("llm-global-batch").value, deadline: document.getElementById("llm-deadline").value,
    }));
    const llm = cli(["llm", "plan", "--model", form.model, "--gpu", form.gpu, "--max-gpus", form.max_gpus, "--tokens",
      form.tokens, "--global-batch", form.global_batch, "--deadline", `${form.deadline}h`, "--json"]);
    const first = await page.$$eval("#llm-top tbody tr:first-child td", (c) => c.map((x) => x.textContent));
    check(llm.chosen !== undefined, "trainplan llm plan --json chose a layout");
    if (llm.chosen) {
      const [gpus, tp, cp, pp, , dp, mb] = first.map(Number);
      console.log(`     page: gpus ${gpus} tp ${tp} pp ${pp} dp ${dp} mb ${mb}; llm plan --json: ${JSON.stringify(llm.chosen)}`);
      check(gpus === llm.chosen.gpus && tp === llm.chosen.tp && cp === llm.chosen.cp && pp === llm.chosen.pp &&
        dp === llm.chosen.dp && mb === llm.chosen.micro_batch, "the transformer layout as llm plan --json");
      check(/GiB/.test(await text(page, "#llm-choice")), "memory per GPU shown");
      const heads = await page.$$eval("#llm-top thead th", (h) => h.map((x) => x.textContent));
      const mfu = parseFloat(first[heads.indexOf("MFU")]);
      check(heads.includes("MFU") && Math.abs(mfu - 100 * llm.chosen.mfu) < 0.06,
        `model FLOP utilisation as llm plan --json (${mfu}% and ${100 * llm.chosen.mfu}%)`);
      // What each deadline costs: the chart's points are llm plan --frontier's.
      const front = cli(["llm", "plan", "--model", form.model, "--gpu", form.gpu, "--max-gpus", form.max_gpus, "--tokens",
        form.tokens, "--global-batch", form.global_batch, "--deadline", `${form.deadline}h`, "--frontier", "--json"]);
      check(await page.$("#chart-llm-frontier canvas") !== null, "the transformer frontier chart drawn");
      const flabel = await page.$eval("#chart-llm-frontier", (e) => e.getAttribute("aria-label") || "");
      const hours = (front.frontier || []).map((x) => x.gpu_hours);
      const words = flabel.match(/GPU-hours ([0-9.e+-]+) to ([0-9.e+-]+)/);
      check(hours.length > 0 && words !== null &&
        Math.abs(Number(words[1]) - Math.min(...hours)) <= 0.01 * Math.min(...hours) &&
        Math.abs(Number(words[2]) - Math.max(...hours)) <= 0.01 * Math.max(...hours),
        `its GPU-hours span llm plan --frontier's ${hours.length} points (${flabel})`);
    }
    // Which GPU for the same transformer job: each GPU's layout and cost, and
    // the cheapest GPU for each training time, as llm plan --gpu A,B --price --frontier --json.
    await fill("#llm-compare-gpus", "a100-80gb,h100");
    await fill("#llm-compare-prices", "a100-80gb=1.8,h100=3.2");
    await page.click("#llm-compare-submit");
    await waitStatus(page, /planned on each GPU|error/);
    const each = cli(["llm", "plan", "--model", form.model, "--gpu", "a100-80gb,h100", "--price", "a100-80gb=1.8,h100=3.2",
      "--max-gpus", form.max_gpus, "--tokens", form.tokens, "--global-batch", form.global_batch, "--deadline", `${form.deadline}h`,
      "--frontier", "--json"]);
    check(Array.isArray(each.gpus), `llm plan --gpu --json planned on each GPU (${JSON.stringify(each.stderr || "")})`);
    if (Array.isArray(each.gpus)) {
      const heads = await page.$$eval("#llm-compare-table thead th", (h) => h.map((x) => x.textContent));
      const rows = await page.$$eval("#llm-compare-table tbody tr", (r) => r.map((x) => [...x.cells].map((c) => c.textContent)));
      const col = (name) => heads.indexOf(name);
      check(rows.length === 2 && rows.every((r, i) => {
        const g = each.gpus[i], c = g.chosen;
        return r[col("gpu")] === g.gpu && c && Number(r[col("gpus")]) === c.gpus && Number(r[col("tp")]) === c.tp &&
          Number(r[col("pp")]) === c.pp && Number(r[col("dp")]) === c.dp && Math.abs(Number(r[col("cost")]) - c.cost) <= 1e-3 * c.cost;
      }), "each GPU's transformer layout and cost as llm plan --gpu --json");
      check(new RegExp(`cheapest: ${each.cheapest}`).test(await text(page, "#llm-compare-summary")),
        `the cheapest GPU named as the CLI names it (${each.cheapest})`);
      check(await page.$("#chart-llm-compare canvas") !== null, "each GPU's cost against the training time drawn");
      const frows = await page.$$eval("#llm-compare-frontier tbody tr", (r) => r.map((x) => [...x.cells].map((c) => c.textContent)));
      const fheads = await page.$$eval("#llm-compare-frontier thead th", (h) => h.map((x) => x.textContent));
      const merged = each.frontier || [];
      check(merged.length > 0 && frows.length === merged.length && frows.every((r, i) => r[fheads.indexOf("gpu")] === merged[i].gpu &&
        Math.abs(Number(r[fheads.indexOf("cost")]) - merged[i].cost) <= 1e-3 * merged[i].cost),
      `the cheapest GPU for each training time as llm plan --gpu --frontier --json (${frows.length} rows, ${merged.length} from the CLI)`);
    }
    // Calibrated on measured iterations pasted into the form: the layout and
    // the calibration as llm plan --calibrate gives them.
    const measured = "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,iteration_time_s\n" +
      "8,32,2,2048,16,24,2048,2,4,1,1.9\n16,64,1,4096,32,32,2048,4,2,2,5.2\n8,64,1,2048,16,24,2048,8,1,1,3.1\n" +
      "4,16,4,2048,16,24,2048,1,4,1,2.2\n16,64,2,4096,32,32,2048,2,2,4,6.0\n";
    const measuredFile = path.join(args.out, "llm-measured.csv");
    writeFileSync(measuredFile, measured);
    await page.$eval("#llm-calibrate", (el, v) => { el.value = v; }, measured);
    await page.click("#llm-submit");
    await waitStatus(page, /planned|nothing fits|error/);
    const calibrated = cli(["llm", "plan", "--model", form.model, "--gpu", form.gpu, "--max-gpus", form.max_gpus, "--tokens",
      form.tokens, "--global-batch", form.global_batch, "--deadline", `${form.deadline}h`, "--calibrate", measuredFile, "--json"]);
    check(calibrated.calibration !== undefined && calibrated.calibration.rows === 5, "llm plan --calibrate --json calibrated on 5 rows");
    const shown = await text(page, "#llm-choice");
    check(new RegExp(`on 5 measured iterations \\(${calibrated.calibration.fitted} fit\\)`).test(shown),
      `the page says it is calibrated as the CLI fitted (${calibrated.calibration.fitted})`);
    if (calibrated.chosen && calibrated.chosen.train_time_interval_s)
      check(/% interval /.test(shown), "the training time's interval shown");
    if (calibrated.chosen) {
      const [gpus, tp, cp, pp, , dp, mb] = (await page.$$eval("#llm-top tbody tr:first-child td", (c) => c.map((x) => x.textContent))).map(Number);
      check(gpus === calibrated.chosen.gpus && tp === calibrated.chosen.tp && cp === calibrated.chosen.cp && pp === calibrated.chosen.pp &&
        dp === calibrated.chosen.dp && mb === calibrated.chosen.micro_batch, "the calibrated layout as llm plan --calibrate --json");
    }
    // The same rows said to be measured on another GPU: the plan llm plan --calibrate-gpu gives.
    const other = form.gpu === "a100-80gb" ? "h100" : "a100-80gb";
    await page.select("#llm-calibrate-gpu", other);
    await page.click("#llm-submit");
    await waitStatus(page, /planned|nothing fits|error/);
    const moved = cli(["llm", "plan", "--model", form.model, "--gpu", form.gpu, "--max-gpus", form.max_gpus, "--tokens",
      form.tokens, "--global-batch", form.global_batch, "--deadline", `${form.deadline}h`, "--calibrate", measuredFile,
      "--calibrate-gpu", other, "--json"]);
    if (moved.chosen) {
      const [gpus, tp, cp, pp, , dp, mb] = (await page.$$eval("#llm-top tbody tr:first-child td", (c) => c.map((x) => x.textContent))).map(Number);
      check(gpus === moved.chosen.gpus && tp === moved.chosen.tp && cp === moved.chosen.cp && pp === moved.chosen.pp &&
        dp === moved.chosen.dp && mb === moved.chosen.micro_batch, `calibrated on ${other}'s rows: the layout as llm plan --calibrate-gpu --json`);
    }
    await page.select("#llm-calibrate-gpu", "");
    // FP8, overlapped communication and context parallelism chosen on the
    // form: the layout llm plan gives with the same options.
    await page.$eval("#llm-calibrate", (el) => { el.value = ""; });
    await page.select("#llm-precision", "fp8");
    await page.$eval("#llm-max-cp", (el) => { el.value = "2"; });
    await page.$eval("#llm-overlap", (el) => { el.checked = true; });
    await page.$eval("#llm-uneven", (el) => { el.checked = true; });
    await page.$eval("#llm-bf16-grads", (el) => { el.checked = true; });
    await page.click("#llm-submit");
    await waitStatus(page, /planned|nothing fits|error/);
    const fp8 = cli(["llm", "plan", "--model", form.model, "--gpu", form.gpu, "--max-gpus", form.max_gpus, "--tokens",
      form.tokens, "--global-batch", form.global_batch, "--deadline", `${form.deadline}h`, "--precision", "fp8",
      "--max-cp", "2", "--overlap", "--uneven-end-stages", "--grad-reduce-in-bf16", "--json"]);
    if (fp8.chosen) {
      const cells = await page.$$eval("#llm-top tbody tr:first-child td", (c) => c.map((x) => x.textContent));
      const [gpus, tp, cp, pp, , dp, mb] = cells.map(Number);
      const ends = fp8.chosen.first_stage_layers > 0 ? `${fp8.chosen.first_stage_layers}, ${fp8.chosen.last_stage_layers}` : "even";
      check(gpus === fp8.chosen.gpus && tp === fp8.chosen.tp && cp === fp8.chosen.cp && pp === fp8.chosen.pp &&
        dp === fp8.chosen.dp && mb === fp8.chosen.micro_batch && cells[cells.length - 1] === ends,
        "the FP8, overlapped, context-parallel, bf16-gradient layout with its end stages as llm plan --json");
      // The memory tells bf16 gradients from fp32 ones on the same layout.
      const memory = Number(cells[cells.length - 3]);
      check(Math.abs(memory - fp8.chosen.memory_gib) < 0.01 * memory,
        `the page's memory per GPU is llm plan's with bf16 gradients (${memory} and ${fp8.chosen.memory_gib} GiB)`);
    } else {
      check(/FP8|precision|qualif/.test(await text(page, "#llm-error")), "the page says why nothing qualifies in FP8");
    }
    // A price on the form: each layout's cost as llm plan --price gives it.
    await page.$eval("#llm-price", (el) => { el.value = "2.5"; });
    await page.click("#llm-submit");
    await waitStatus(page, /planned|nothing fits|error/);
    const priced = cli(["llm", "plan", "--model", form.model, "--gpu", form.gpu, "--max-gpus", form.max_gpus, "--tokens",
      form.tokens, "--global-batch", form.global_batch, "--deadline", `${form.deadline}h`, "--precision", "fp8",
      "--max-cp", "2", "--overlap", "--uneven-end-stages", "--grad-reduce-in-bf16", "--price", "2.5", "--json"]);
    if (priced.chosen) {
      const headers = await page.$$eval("#llm-top thead th", (h) => h.map((x) => x.textContent));
      const cells = await page.$$eval("#llm-top tbody tr:first-child td", (c) => c.map((x) => x.textContent));
      const cost = Number(cells[headers.indexOf("cost")]);
      check(headers.includes("cost") && Math.abs(cost - priced.chosen.cost) < 0.001 * priced.chosen.cost,
        `the chosen layout's cost as llm plan --price (${cost} and ${priced.chosen.cost})`);
      check(/cost .* a GPU-hour/.test(await text(page, "#llm-choice")), "the chosen plan's cost shown beside its GPU-hours");
    }
    await page.screenshot({ path: path.join(args.out, "web-llm.png"), fullPage: true });
  }

  // ---- live forecast: a log pasted, the forecast trainplan watch gives ----
  {
    let log = "loading data\n";
    for (let k = 1; k <= 10; k++)
      log += JSON.stringify({ event: "epoch", epoch: k, epoch_time_s: 30 + (k % 3),
        metric: Number((0.95 - 0.6 * Math.exp(-0.2 * k)).toFixed(5)), metric_name: "accuracy" }) + "\n";
    const logFile = path.join(args.out, "watch.log");
    writeFileSync(logFile, log);
    const run = spawnSync(args.trainplan, ["watch", "--log", logFile, "--target", "0.93", "--deadline", "2h", "--stall", "1"],
      { encoding: "utf8" });
    const lines = run.stdout.trim().split("\n");
    const cliLast = lines.filter((l) => l.startsWith("epoch 10:"))[0] || "";
    await page.click('nav button[data-tab="watch"]');
    await page.$eval("#watch-text", (el, v) => { el.value = v; }, log);
    await page.$eval("#watch-target", (el) => { el.value = "0.93"; });
    await page.$eval("#watch-deadline", (el) => { el.value = "2"; });
    await page.click("#watch-submit");
    await waitStatus(page, /^(forecast|error)$/);
    const summary = await text(page, "#watch-summary");
    check(cliLast !== "" && summary.includes(cliLast), `the page's forecast is trainplan watch's last line ("${cliLast}")`);
    check(/1 line\(s\) not used/.test(summary), "the page says a line of the log was not used");
    for (const id of ["#chart-watch-metric", "#chart-watch-time"]) {
      const label = await page.$eval(id, (e) => e.getAttribute("aria-label") || "");
      check(/measured|elapsed/.test(label), `${id} is drawn (${label.slice(0, 80)})`);
    }
    await page.screenshot({ path: path.join(args.out, "web-watch.png"), fullPage: true });
    // Following reads a path on the server: pasted text is read once, and the page says so.
    await page.$eval("#watch-follow", (el) => { el.checked = true; });
    await page.click("#watch-submit");
    await waitStatus(page, /^(forecast|error)$/);
    await page.waitForFunction(() => document.getElementById("watch-follow-note").textContent !== "", { timeout: 10000 });
    check(/read once/.test(await text(page, "#watch-follow-note")), "following pasted text is refused, saying it is read once");
    await page.$eval("#watch-follow", (el) => { el.checked = false; });
    // A deadline past any number of seconds is refused, not sent as null and dropped.
    await page.$eval("#watch-deadline", (el) => { el.value = "1e306"; });
    await page.click("#watch-submit");
    await waitStatus(page, /^error$/);
    check(/too long/.test(await text(page, "#watch-error")), "a deadline past any number of seconds is refused, saying so");
    await page.$eval("#watch-deadline", (el) => { el.value = ""; });
    // A log on the server is refused unless the server allows paths, saying how.
    await page.$eval("#watch-text", (el) => { el.value = ""; });
    await page.$eval("#watch-path", (el) => { el.value = "/etc/hostname"; });
    expect403 = true;
    await page.click("#watch-submit");
    await waitStatus(page, /^error$/);
    expect403 = false;
    check(/allow-paths/.test(await text(page, "#watch-error")), "a path on a server that reads no files is refused, saying how to allow it");
  }

  // Tick labels carry the digits their spacing needs, on every chart drawn.
  check(JSON.stringify(await page.evaluate(() => tickLabels([212.5, 215, 217.5, 220]))) === '["212.5","215","217.5","220"]' &&
    JSON.stringify(await page.evaluate(() => tickLabels([0.0012, 0.0014, 0.0016]))) === '["0.0012","0.0014","0.0016"]',
  "tick labels keep the digits of their step (212.5, 215, 217.5)");
  // [chart, axis, value, label, the axis's largest |value|]: a label may differ from its value by float noise only.
  const ticks = await page.evaluate(() => Object.entries(state.charts).flatMap(([id, u]) => u.axes.flatMap((a, k) =>
    (a._splits || []).map((v, i, all) => [id, k, v, (a._values || [])[i], Math.max(...all.map(Math.abs))]))));
  const wrong = ticks.filter(([, , v, label, top]) => label !== "" && label !== undefined &&
    !(Math.abs(Number(label) - v) <= 1e-9 * top));
  check(ticks.length > 0 && wrong.length === 0,
    `every tick label reads as its value (${ticks.length} ticks${wrong.length ? "; wrong: " + JSON.stringify(wrong.slice(0, 5)) : ""})`);

  // The API's failures in words, on a page whose requests are answered here:
  // a server that cannot be reached, an HTML error page, a broken answer; and
  // a plan answered after new samples were loaded is not shown.
  {
    const page2 = await browser.newPage();
    await page2.setViewport({ width: 1280, height: 1000 });
    page2.on("pageerror", (e) => problems.push(`page error (second page): ${e.message}`));
    let answer = null;
    const held = [];
    await page2.setRequestInterception(true);
    page2.on("request", (r) => {
      const mode = r.method() === "POST" && answer && new URL(r.url()).pathname === answer.path ? answer.mode : null;
      if (mode === "unreachable") r.abort("connectionrefused");
      else if (mode === "html") r.respond({ status: 500, contentType: "text/html", body: "<html><body><h1>Internal Server Error</h1></body></html>" });
      else if (mode === "broken") r.respond({ status: 200, contentType: "application/json", body: '{"chosen": ' });
      else if (mode === "hold") { answer = null; held.push(r); }
      else r.continue();
    });
    await page2.goto(args.url, { waitUntil: "networkidle0" });
    await waitStatus(page2, /ready/);
    await page2.click('nav button[data-tab="llm"]');
    const said = async (mode) => {
      answer = { path: "/llm/plan", mode };
      await page2.$eval("#status", (e) => { e.textContent = ""; });
      await page2.click("#llm-submit");
      await waitStatus(page2, /planned|nothing fits|error/);
      answer = null;
      return (await visible(page2, "#llm-error")) ? await text(page2, "#llm-error") : "(no error shown)";
    };
    const unreachable = await said("unreachable");
    check(/server cannot be reached/.test(unreachable), `a server that cannot be reached is said so (${unreachable})`);
    const html = await said("html");
    check(/^HTTP 500: Internal Server Error/.test(html), `an HTML error page is quoted (${html})`);
    const broken = await said("broken");
    check(/could not be read/.test(broken) && !(await visible(page2, "#llm-result")), `a broken answer is said to be unreadable (${broken})`);
    // A plan held back while other samples load: its answer, when it comes, is not shown.
    await page2.click('nav button[data-tab="samples"]');
    await (await page2.$("#samples-file")).uploadFile(path.resolve(args.samples));
    await page2.$eval("#status", (e) => { e.textContent = ""; });  // the last test's "error" must not pass for this load's
    await page2.click("#samples-load");
    await waitStatus(page2, /loaded fit-\d+|error/);
    await page2.click('nav button[data-tab="plan"]');
    await page2.$eval("#plan-target", (e, v) => { e.value = v; }, String(target));
    await page2.$eval("#plan-deadline", (e, v) => { e.value = v; }, String(deadline));
    answer = { path: "/plan", mode: "hold" };
    await page2.click("#plan-submit");
    await page2.waitForFunction(() => document.getElementById("status").textContent === "planning…");
    await page2.click('nav button[data-tab="samples"]');
    await page2.$eval("#status", (e) => { e.textContent = ""; });
    await page2.click("#samples-load");
    await waitStatus(page2, /loaded fit-\d+|error/);
    const loaded = await text(page2, "#status");
    held.forEach((r) => r.continue());
    await page2.waitForNetworkIdle({ idleTime: 300 });
    check(held.length === 1 && !(await page2.$eval("#plan-result", (e) => !e.hidden)) && await text(page2, "#status") === loaded,
      `a plan asked before new samples were loaded is not shown when it comes (${held.length} held; status ${await text(page2, "#status")})`);
    await page2.close();
  }

  check(problems.length === 0, `no script errors or requests elsewhere${problems.length ? ": " + problems.join("; ") : ""}`);
} finally {
  await browser.close();
}
console.log(failures ? `page_test: ${failures} check(s) failed` : `page_test: passed; screenshots in ${args.out}`);
process.exit(failures ? 1 : 0);
