// fieldstore's web catalogue: browse what the server stores keyword by keyword, look at a
// field as a map, take the request away. Everything comes from this server's read-only
// endpoints (docs/web.md); data is only ever put in the page as text, never as markup.
"use strict";

const LEVELS = ["data set", "collocation", "field"];
const PAGE = 50;

const state = {
  // keyword -> chosen values, in the order chosen
  chosen: new Map(),
  // the number of the latest browse and look asked: an answer to an older one is dropped
  asked: { browse: 0, look: 0 },
  // the last catalogue answer
  catalogue: null,
  // the key of the field looked at, if any
  looked: null,
  token: sessionStorage.getItem("fieldstore-token") || "",
};

const $ = (id) => document.getElementById(id);

function element(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

// A value as a request writes it: quoted where it holds a character the request language
// reads (a `#` starts a comment) or is one of its words.
function quote(value) {
  return /^[\w.:+-]+$/.test(value) && !["all", "off", "to", "by"].includes(value.toLowerCase()) ? value : `"${value}"`;
}

function requestText(pairs) {
  return pairs.map(([k, vs]) => `${k}=${vs.map(quote).join("/")}`).join(",");
}

// The request handed out: what was chosen, and every data set or collocation keyword that has
// one value among the fields (the same fields, named as a server's permissions expect), in the
// catalogue's order of keywords.
function completeRequest() {
  const pairs = [];
  const seen = new Set();
  for (const k of state.catalogue ? state.catalogue.keywords : []) {
    seen.add(k.keyword);
    if (state.chosen.has(k.keyword)) pairs.push([k.keyword, state.chosen.get(k.keyword)]);
    else if (k.level < 2 && k.total === 1) pairs.push([k.keyword, [k.values[0].value]]);
  }
  for (const [k, vs] of state.chosen) if (!seen.has(k)) pairs.push([k, vs]);
  return pairs;
}

class HttpError extends Error {}

async function call(path, params, as) {
  const url = new URL(path, window.location.origin);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  const headers = state.token ? { Authorization: `Bearer ${state.token}` } : {};
  const response = await fetch(url, { headers });
  if (!response.ok) {
    let message = response.statusText;
    try {
      message = (await response.json()).message || message;
    } catch (_) {
      // not JSON: the status says it
    }
    throw new HttpError(`${response.status}: ${message}`);
  }
  return as === "blob" ? response.blob() : response.json();
}

function showError(error) {
  $("error").hidden = !error;
  $("error").textContent = error ? String(error.message || error) : "";
}

function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

async function browse() {
  const request = requestText([...state.chosen]);
  $("request-text").textContent = request || "(everything)";
  const ticket = ++state.asked.browse;
  try {
    const catalogue = await call("/v1/web/browse", { request, limit: PAGE });
    if (ticket !== state.asked.browse) return;
    state.catalogue = catalogue;
    showError(null);
    const plural = (n, one) => `${n.toLocaleString("en")} ${one}${n === 1 ? "" : "s"}`;
    $("summary").textContent = catalogue.fields
      ? `${plural(catalogue.fields, "field")}, ${bytes(catalogue.bytes)}, in ${plural(catalogue.datasets, "data set")}`
      : `nothing: ${catalogue.explanation || "no field matched"}`;
    drawKeywords(catalogue);
    drawFields(catalogue);
  } catch (error) {
    if (ticket !== state.asked.browse) return;
    state.catalogue = null;
    $("summary").textContent = "";
    $("keywords").replaceChildren();
    $("fields-box").hidden = true;
    showError(error);
  }
  drawSnippets();
}

function drawKeywords(catalogue) {
  const box = $("keywords");
  box.replaceChildren();
  let level = -1;
  for (const k of catalogue.keywords) {
    if (k.level !== level) {
      level = k.level;
      box.append(element("div", `${LEVELS[level]} keywords`, "level"));
    }
    const row = element("div", undefined, "keyword");
    row.dataset.keyword = k.keyword;
    row.append(element("span", k.keyword, "keyword-name"));
    const values = element("div", undefined, "values");
    appendValues(values, k);
    row.append(values);
    box.append(row);
  }
}

function appendValues(values, k) {
  const chosen = state.chosen.get(k.keyword) || [];
  for (const v of k.values) {
    const button = element("button", v.value, "value");
    button.type = "button";
    button.dataset.value = v.value;
    if (v.label) button.append(element("span", v.label, "label"));
    button.append(element("span", v.fields.toLocaleString("en"), "count"));
    if (chosen.includes(v.value)) button.classList.add("chosen");
    button.addEventListener("click", () => choose(k.keyword, v.value));
    values.append(button);
  }
  const shown = k.offset + k.values.length;
  if (shown < k.total) {
    const more = element("button", `${k.total - shown} more`, "more");
    more.type = "button";
    more.addEventListener("click", async () => {
      try {
        const page = await call("/v1/web/browse", { request: requestText([...state.chosen]), keyword: k.keyword, offset: shown, limit: PAGE });
        more.remove();
        appendValues(values, page.keywords[0]);
      } catch (error) {
        showError(error);
      }
    });
    values.append(more);
  }
}

// A value clicked: chosen if it was not, let go if it was.
function choose(keyword, value) {
  const values = state.chosen.get(keyword) || [];
  const next = values.includes(value) ? values.filter((v) => v !== value) : [...values, value];
  if (next.length) state.chosen.set(keyword, next);
  else state.chosen.delete(keyword);
  browse();
}

function drawFields(catalogue) {
  const listed = catalogue.listed;
  $("fields-box").hidden = listed.length === 0;
  if (!listed.length) return;
  // Only the keywords whose values differ among the fields are columns (compared by name:
  // fields of different schema rules have different keywords).
  const keys = listed.map((f) => new Map(f.key));
  const names = [...new Set(listed.flatMap((f) => f.key.map(([k]) => k)))];
  const varying = names.filter((k) => keys.some((m) => m.get(k) !== keys[0].get(k)));
  const columns = varying.length ? varying : [names[names.length - 1]];
  const head = element("tr");
  for (const c of [...columns, "bytes"]) head.append(element("th", c));
  $("fields").tHead.replaceChildren(head);
  const body = $("fields").tBodies[0];
  body.replaceChildren();
  for (const field of listed) {
    const row = element("tr");
    const values = new Map(field.key);
    for (const c of columns) row.append(element("td", values.get(c) ?? ""));
    row.append(element("td", bytes(field.bytes)));
    const request = requestText(field.key.map(([k, v]) => [k, [v]]));
    row.dataset.request = request;
    if (request === state.looked) row.classList.add("looked");
    row.addEventListener("click", () => look(request));
    body.append(row);
  }
}

async function look(request) {
  state.looked = request;
  for (const row of $("fields").tBodies[0].rows) row.classList.toggle("looked", row.dataset.request === request);
  $("look").hidden = false;
  $("look-what").textContent = request;
  const ticket = ++state.asked.look;
  try {
    const [facts, png] = await Promise.all([call("/v1/web/field", { request }), call("/v1/web/map", { request }, "blob")]);
    if (ticket !== state.asked.look) return;
    const old = $("map").src;
    $("map").src = URL.createObjectURL(png);
    if (old.startsWith("blob:")) URL.revokeObjectURL(old);
    const s = facts.statistics;
    fillTable("statistics", [["points", s.points], ["missing", s.missing], ["min", s.min], ["max", s.max], ["mean", s.mean]]);
    fillTable("location", [["uri", facts.location.uri], ["offset", facts.location.offset], ["length", facts.location.length]]);
    fillTable("grib", facts.grib);
    showError(null);
  } catch (error) {
    if (ticket === state.asked.look) showError(error);
  }
}

function fillTable(id, rows) {
  const body = $(id).tBodies[0];
  body.replaceChildren();
  for (const [k, v] of rows) {
    const row = element("tr");
    row.append(element("th", k), element("td", v === null || v === undefined ? "-" : String(v)));
    body.append(row);
  }
}

// The request in each form a user takes away, with this server's address; a token is never
// written out, only named ($FIELDSTORE_TOKEN, which the client config reads by default).
function snippets() {
  const pairs = completeRequest();
  const request = requestText(pairs);
  const origin = window.location.origin;
  const quoted = `'${request}'`;
  const tokenHeader = state.token ? ' -H "Authorization: Bearer $FIELDSTORE_TOKEN"' : "";
  const url = `${origin}/v1/retrieve?request=${encodeURIComponent(request)}`;
  const python = `{${pairs.map(([k, vs]) => `"${k}": ${vs.length === 1 ? JSON.stringify(vs[0]) : JSON.stringify(vs).replaceAll(",", ", ")}`).join(", ")}}`;
  const config = `{"catalogue": {"type": "remote", "endpoint": "${origin}"}, "store": {"type": "remote", "endpoint": "${origin}"}}`;
  return [
    ["mars", "MARS request", ["retrieve,", ...pairs.map(([k, vs]) => `    ${k}=${vs.map(quote).join("/")},`), '    target="data.grib"'].join("\n")],
    [
      "cli",
      "fieldstore command line",
      `printf 'catalogue: {type: remote, endpoint: "${origin}"}\\nstore: {type: remote, endpoint: "${origin}"}\\n' > remote.yaml\n` +
        `fieldstore --config remote.yaml retrieve ${quoted} -o data.grib`,
    ],
    [
      "python",
      "Python (fieldstore)",
      `import fieldstore\n\nconfig = ${config}\nrequest = ${python}\nfs = fieldstore.FieldStore(config)\nwith open("data.grib", "wb") as out:\n    out.write(fs.retrieve(request).read())`,
    ],
    ["earthkit", "Python (earthkit-data)", `import earthkit.data\n\nconfig = ${config}\nrequest = ${python}\ndata = earthkit.data.from_source("fieldstore", request, config=config)`],
    ["xarray", "Python (xarray)", `import xarray\n\nconfig = ${config}\nrequest = ${python}\nds = xarray.open_dataset(request, engine="fieldstore", config=config)`],
    ["curl", "curl", `curl -fsS${tokenHeader} -o data.grib "${url}"`],
  ];
}

function drawSnippets() {
  const box = $("snippets");
  box.replaceChildren();
  const empty = completeRequest().length === 0;
  $("download").disabled = empty || !state.catalogue || state.catalogue.fields === 0;
  if (empty) {
    box.append(element("p", "choose values to build a request"));
    return;
  }
  for (const [id, title, text] of snippets()) {
    const block = element("div", undefined, "snippet");
    const head = element("div", undefined, "snippet-head");
    head.append(element("h3", title));
    const copy = element("button", "copy");
    copy.type = "button";
    copy.id = `copy-${id}`;
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(text);
        copy.textContent = "copied";
      } catch (error) {
        showError(new Error(`cannot copy: ${error.message}`));
      }
    });
    head.append(copy);
    const pre = element("pre", text);
    pre.id = `snippet-${id}`;
    block.append(head, pre);
    box.append(block);
  }
}

async function download() {
  const request = requestText(completeRequest());
  $("download-status").textContent = "retrieving...";
  try {
    const grib = await call("/v1/retrieve", { request }, "blob");
    const link = element("a");
    link.href = URL.createObjectURL(grib);
    link.download = "data.grib";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60000);
    $("download-status").textContent = `${bytes(grib.size)} retrieved`;
  } catch (error) {
    $("download-status").textContent = "";
    showError(error);
  }
}

function start() {
  $("token").value = state.token;
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.token = $("token").value.trim();
    sessionStorage.setItem("fieldstore-token", state.token);
    browse();
  });
  $("clear").addEventListener("click", () => {
    state.chosen.clear();
    state.looked = null;
    $("look").hidden = true;
    browse();
  });
  $("download").addEventListener("click", download);
  browse();
}

start();
