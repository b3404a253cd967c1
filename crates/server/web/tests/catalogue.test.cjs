// The web catalogue in headless Chromium (scripts/web-test.sh makes the store and starts the
// server): browsing with counts and paged values, maps of three grids whose pixels are
// checked, copying a request and running it, downloading, and that the page reaches nothing
// but its server and breaks no rule of its security policy.
"use strict";

const { test, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { chromium } = require("playwright-core");

const base = process.env.FIELDSTORE_URL;
const work = process.env.WEB_TEST_WORK;
const screenshots = process.env.SCREENSHOTS;
let browser;
let page;
const outside = [];
const problems = [];

// Records what a page reaches beyond its server (`origin`) and the errors it logs.
function watch(p, origin) {
  p.on("request", (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith("blob:")) outside.push(r.url());
  });
  p.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  p.on("pageerror", (e) => problems.push(String(e)));
}

before(async () => {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ["--no-sandbox"] });
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1400, height: 1000 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  page = await context.newPage();
  watch(page, base);
});

after(async () => {
  await browser?.close();
});

async function shot(name, locator) {
  if (screenshots) await (locator || page).screenshot({ path: path.join(screenshots, name) });
}

// The buttons a keyword's row offers: [value, count] pairs.
async function offered(keyword) {
  const buttons = page.locator(`.keyword[data-keyword="${keyword}"] .value`);
  const values = await buttons.evaluateAll((all) => all.map((b) => [b.dataset.value, b.querySelector(".count").textContent]));
  return values;
}

async function summary(expected) {
  await page.locator("#summary", { hasText: expected }).waitFor();
}

async function click(keyword, value) {
  await page.locator(`.keyword[data-keyword="${keyword}"] .value[data-value="${value}"]`).click();
}

// The map's pixels: how many are coloured (viridis is never grey) and how many colours.
async function mapPixels() {
  await page.waitForFunction(() => {
    const img = document.getElementById("map");
    return img.src.startsWith("blob:") && img.complete && img.naturalWidth > 0;
  });
  return page.evaluate(() => {
    const img = document.getElementById("map");
    const canvas = document.createElement("canvas");
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const g = canvas.getContext("2d");
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, canvas.width, canvas.height).data;
    let coloured = 0;
    const colours = new Set();
    for (let i = 0; i < d.length; i += 4) {
      if (!(d[i] === d[i + 1] && d[i + 1] === d[i + 2])) {
        coloured += 1;
        colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      }
    }
    return { share: coloured / (canvas.width * canvas.height), colours: colours.size };
  });
}

async function facts(table) {
  return page.locator(`#${table} tr`).evaluateAll((rows) => Object.fromEntries(rows.map((r) => [r.cells[0].textContent, r.cells[1].textContent])));
}

async function startAgain() {
  await page.locator("#clear").click();
  await summary("83 fields");
}

test("browse: data sets and values offered with their counts, values paged", async () => {
  await page.goto(`${base}/`);
  assert.equal(new URL(page.url()).pathname, "/web/");
  await summary("83 fields");
  assert.match(await page.locator("#summary").textContent(), /83 fields, .* in 3 data sets/);
  assert.deepEqual(await offered("date"), [["20231201", "18"], ["20231202", "5"], ["20231203", "60"]]);
  assert.deepEqual(await offered("levtype"), [["pl", "18"], ["sfc", "65"]]);
  // 60 steps: a page of 50, then the rest on asking.
  const steps = await offered("step");
  assert.equal(steps.length, 50);
  assert.deepEqual(steps.slice(0, 3), [["0", "10"], ["6", "9"], ["12", "7"]]);
  await shot("browse.png");
  await page.locator('.keyword[data-keyword="step"] .more', { hasText: "10 more" }).click();
  await page.waitForFunction(() => document.querySelectorAll('.keyword[data-keyword="step"] .value').length === 60);
  assert.deepEqual((await offered("step")).at(-1), ["354", "1"]);
  // Narrowing: keyword by keyword, the counts follow.
  await click("date", "20231202");
  await summary("5 fields");
  assert.equal(await page.locator("#request-text").textContent(), "date=20231202");
  assert.deepEqual(await offered("param"), [["151", "2"], ["165", "1"], ["167", "2"]]);
  const labels = await page.locator('.keyword[data-keyword="param"] .label').allTextContents();
  assert.deepEqual(labels, ["msl", "10u", "2t"]);
  await click("param", "167");
  await summary("2 fields");
  assert.equal(await page.locator("#fields tbody tr").count(), 2);
});

test("look: a reduced Gaussian field drawn, with its statistics, GRIB keys and location", async () => {
  await page.locator("#fields tbody tr").first().click();
  const pixels = await mapPixels();
  assert.ok(pixels.share > 0.5 && pixels.colours > 50, JSON.stringify(pixels));
  await page.locator("#grib tr").first().waitFor();
  const grib = await facts("grib");
  assert.equal(grib.shortName, "2t");
  assert.equal(grib.gridType, "reduced_gg");
  const statistics = await facts("statistics");
  assert.ok(Number(statistics.min) < Number(statistics.max), JSON.stringify(statistics));
  assert.equal(statistics.missing, "0");
  assert.match((await facts("location")).uri, /\.data$/);
  await shot("look.png");
});

test("look: a regular lat/lon and a regular Gaussian field drawn too", async () => {
  for (const [choices, grid, least] of [
    [[["date", "20231201"], ["param", "130"], ["step", "0"], ["levelist", "500"]], "regular_ll", 0.02],
    [[["date", "20231202"], ["param", "165"]], "regular_gg", 0.5],
  ]) {
    await startAgain();
    for (const [keyword, value] of choices) {
      await click(keyword, value);
      await page.locator("#request-text", { hasText: `${keyword}=${value}` }).waitFor();
    }
    await summary("1 field,");
    await page.locator("#fields tbody tr").first().click();
    await page.locator("#grib td", { hasText: grid }).waitFor();
    const pixels = await mapPixels();
    assert.ok(pixels.share > least && pixels.colours > 10, `${grid}: ${JSON.stringify(pixels)}`);
  }
});

test("take it with you: the copied command and curl line retrieve what the download button does", async () => {
  await startAgain();
  await click("date", "20231202");
  await click("param", "167");
  await summary("2 fields");
  const expected = "class=od,expver=0001,stream=oper,date=20231202,time=1200,domain=g,type=fc,levtype=sfc,param=167";
  assert.match(await page.locator("#snippet-mars").textContent(), /^retrieve,\n {4}class=od,\n/);
  for (const id of ["cli", "python", "earthkit", "xarray", "curl"]) assert.ok((await page.locator(`#snippet-${id}`).textContent()).length > 0);
  await page.locator("#copy-cli").click();
  await page.locator("#copy-cli", { hasText: "copied" }).waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, await page.locator("#snippet-cli").textContent());
  assert.ok(copied.includes(`retrieve '${expected}'`), copied);
  const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#download").click()]);
  const downloaded = path.join(work, "downloaded.grib");
  await download.saveAs(downloaded);
  const grib = fs.readFileSync(downloaded);
  assert.equal(grib.subarray(0, 4).toString(), "GRIB");
  assert.equal(grib.toString("latin1").split("7777GRIB").length, 2, "two fields");
  // The copied command, run as a user would in a shell, and the curl line: the same bytes.
  const shell = fs.mkdtempSync(path.join(work, "shell-"));
  const env = { ...process.env, PATH: `${process.env.FIELDSTORE_BIN_DIR}:${process.env.PATH}` };
  execFileSync("bash", ["-euc", copied], { cwd: shell, env, stdio: "inherit" });
  assert.ok(fs.readFileSync(path.join(shell, "data.grib")).equals(grib), "the command line retrieves what was downloaded");
  fs.rmSync(path.join(shell, "data.grib"));
  execFileSync("bash", ["-euc", await page.locator("#snippet-curl").textContent()], { cwd: shell, env, stdio: "inherit" });
  assert.ok(fs.readFileSync(path.join(shell, "data.grib")).equals(grib), "curl retrieves what was downloaded");
  await shot("take.png", page.locator("#take"));
});

test("take it with you: the Python snippets read the same fields", { skip: !process.env.FIELDSTORE_PYTHON && "no Python with fieldstore installed (FIELDSTORE_PYTHON)" }, async () => {
  const shell = fs.mkdtempSync(path.join(work, "python-"));
  const python = (code) => execFileSync(process.env.FIELDSTORE_PYTHON, ["-c", code], { cwd: shell, encoding: "utf8" });
  const snippet = async (id) => page.locator(`#snippet-${id}`).textContent();
  python(await snippet("python"));
  assert.ok(fs.readFileSync(path.join(shell, "data.grib")).equals(fs.readFileSync(path.join(work, "downloaded.grib"))));
  assert.equal(python(`${await snippet("xarray")}\nprint(sorted(ds.data_vars), ds.sizes["step"])`).trim(), "['t2m'] 2");
  assert.equal(python(`${await snippet("earthkit")}\nprint(len(data.to_fieldlist()))`).trim(), "2");
});

test("a server with an access file: the page asks for the token, then shows only what the identity may read", async () => {
  const guarded = process.env.FIELDSTORE_GUARDED_URL;
  const token = process.env.FIELDSTORE_GUARDED_TOKEN;
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1400, height: 1000 } });
  page = await context.newPage();
  watch(page, guarded);
  await page.goto(`${guarded}/web/`);
  await page.locator("#error", { hasText: "401" }).waitFor();
  assert.match(await page.locator("#error").textContent(), /no bearer token/);
  // The refusal was the page's to show, not a fault of the page.
  problems.splice(0, problems.length, ...problems.filter((p) => !p.includes("status of 401")));
  await page.locator("#token").fill(token);
  await page.locator("#use-token").click();
  await summary("5 fields");
  assert.match(await page.locator("#summary").textContent(), /in 1 data set$/);
  assert.deepEqual(await offered("date"), [["20231202", "5"]]);
  await click("param", "167");
  await summary("2 fields");
  const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#download").click()]);
  const downloaded = path.join(work, "guarded.grib");
  await download.saveAs(downloaded);
  assert.ok(fs.readFileSync(downloaded).equals(fs.readFileSync(path.join(work, "downloaded.grib"))), "the same two fields");
  // The snippets name the token's variable, never the token.
  assert.match(await page.locator("#snippet-curl").textContent(), /-H "Authorization: Bearer \$FIELDSTORE_TOKEN"/);
  assert.ok(!(await page.evaluate(() => document.body.innerText)).includes(token), "the token is nowhere on the page");
  await context.close();
});

test("the page reached nothing but its server and broke no rule of its policy", () => {
  assert.deepEqual(outside, []);
  assert.deepEqual(problems, []);
});
