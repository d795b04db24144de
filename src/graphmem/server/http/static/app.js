// graphmem web UI: plain JavaScript over the REST API (no build step). Views are chosen by the
// URL hash (#/search, #/passage/<chunk>, #/entity/<id>, #/wiki/<slug>, #/memories, #/skills), so
// every view can be linked, bookmarked and reached with the keyboard (Tab, Enter; "/" focuses the
// view's main input). Text from the knowledge base is inserted as text nodes; rendered wiki
// markdown goes through DOMPurify.
"use strict";

const view = document.getElementById("view");
let token = sessionStorage.getItem("graphmem-token") || "";

// -- helpers ---------------------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// replaceChildren / append without the null placeholders of conditional parts
function put(parent, ...children) { parent.replaceChildren(...children.flat(Infinity).filter(c => c !== null && c !== undefined && c !== false)); }
function add(parent, ...children) { parent.append(...children.flat(Infinity).filter(c => c !== null && c !== undefined && c !== false)); }

function enc(s) { return encodeURIComponent(s); }
function encPath(s) { return String(s).split("/").map(encodeURIComponent).join("/"); }

function showError(message) {
  const box = document.getElementById("error");
  box.textContent = message;
  box.hidden = !message;
}

async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  if (token) headers["Authorization"] = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await resp.json().catch(() => ({}));
  if (resp.status === 401) {
    document.getElementById("token-bar").hidden = false;
    document.getElementById("token-input").focus();
  }
  if (!resp.ok) {
    const err = data.error || { type: "HTTPError", message: resp.statusText };
    throw new Error(`${err.type}: ${err.message}`);
  }
  return data;
}

function slugify(s) {
  return String(s).toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
}

function fmt(x) { return typeof x === "number" ? x.toFixed(3) : String(x); }

function setActive(name) {
  for (const a of document.querySelectorAll("nav a[data-view]")) a.classList.toggle("active", a.dataset.view === name);
}

function graphView(container, nodes, edges, onNode) {
  // nodes: [{id, label, kind, seed}], edges: [{id, source, target, label}]
  const elements = [
    ...nodes.map(n => ({ data: { id: n.id, label: n.label, kind: n.kind || "entity" }, classes: n.seed ? "seed" : "" })),
    ...edges.filter(e => nodes.some(n => n.id === e.source) && nodes.some(n => n.id === e.target))
      .map(e => ({ data: { id: e.id, source: e.source, target: e.target, label: e.label } })),
  ];
  const cy = cytoscape({
    container, elements, maxZoom: 1.6, minZoom: 0.2,
    layout: { name: "cose", animate: false, nodeRepulsion: () => 400000, idealEdgeLength: () => 110, padding: 20 },
    style: [
      { selector: "node", style: { "label": "data(label)", "font-size": 11, "text-valign": "bottom", "text-margin-y": 4,
                                   "background-color": "#5a8fd0", "width": 18, "height": 18, "text-wrap": "ellipsis",
                                   "text-max-width": 140 } },
      { selector: "node.seed", style: { "background-color": "#e0892b", "width": 26, "height": 26, "font-weight": 700 } },
      { selector: "node[kind = 'memory']", style: { "background-color": "#6a3fb3" } },
      { selector: "edge", style: { "label": "data(label)", "font-size": 9, "curve-style": "bezier", "width": 1.5,
                                   "target-arrow-shape": "triangle", "line-color": "#9aa8b6",
                                   "target-arrow-color": "#9aa8b6", "color": "#5b6670", "text-rotation": "autorotate" } },
    ],
  });
  if (onNode) cy.on("tap", "node", ev => onNode(ev.target.id()));
  container.dataset.nodes = String(nodes.length);
  container.dataset.edges = String(cy.edges().length);
  return cy;
}

// -- search ------------------------------------------------------------------------------------------

function citationLink(c) {
  const q = `#/passage/${encPath(c.chunk_id)}?start=${c.start}&end=${c.end}`;
  return h("a", { href: q, class: "citation" }, `${c.doc_id} v${c.version}, chars ${c.start}–${c.end}`);
}

function hitCard(hit) {
  const title = hit.kind === "entity"
    ? h("a", { href: `#/entity/${enc(hit.id)}`, class: "hit-title" }, hit.name || hit.title || hit.id)
    : hit.kind === "page"
      ? h("a", { href: `#/wiki/${encPath(hit.slug || hit.id)}`, class: "hit-title" }, hit.title || hit.id)
      : h("span", { class: "hit-title" }, hit.title || hit.doc_id || hit.id);
  const parts = Object.entries(hit.parts || {}).map(([k, v]) => h("span", {}, `${k} `, h("b", {}, fmt(v))));
  return h("article", { class: "hit", "data-kind": hit.kind },
    h("div", { class: "hit-head" }, title, h("span", { class: "muted" }, `${hit.kind} · score ${fmt(hit.score)}`)),
    h("div", { class: "parts", "aria-label": "score parts" }, parts),
    hit.text ? h("div", { class: "hit-text" }, hit.text) : null,
    (hit.citations || []).length ? h("ol", { class: "citations" },
      hit.citations.map(c => h("li", {}, citationLink(c), " ", h("span", { class: "muted" }, `“${Array.from(c.text).slice(0, 140).join("")}${Array.from(c.text).length > 140 ? "…" : ""}”`)))) : null,
    (hit.path || []).length > 1 ? h("div", { class: "muted" }, "path: " + hit.path.join(" → ")) : null);
}

async function searchView(params) {
  setActive("search");
  const q = params.get("q") || "";
  const kinds = (params.get("kinds") || "chunk,entity").split(",").filter(Boolean);
  const input = h("input", { type: "search", id: "search-input", name: "q", value: q, placeholder: "Ask a question…",
                             "aria-label": "Search query", "data-main": true });
  const boxes = ["chunk", "entity", "page", "document"].map(k =>
    h("label", {}, h("input", { type: "checkbox", name: "kind", value: k, checked: kinds.includes(k) }), " ", k));
  const form = h("form", { class: "bar", role: "search", onsubmit: ev => {
    ev.preventDefault();
    const ks = [...form.querySelectorAll("input[name=kind]:checked")].map(b => b.value).join(",");
    location.hash = `#/search?q=${enc(input.value)}&kinds=${enc(ks)}`;
  } }, input, ...boxes, h("button", { type: "submit" }, "Search"));
  const results = h("section", { id: "results", "aria-label": "Results" });
  put(view, h("h1", {}, "Search with evidence"), form, results);
  if (!q.trim()) { input.focus(); return; }
  results.append(h("p", { class: "muted" }, "Searching…"));
  const data = await api("POST", "/search", { query: q, kinds, k: 10, context: true });
  put(results, 
    h("p", { class: "muted" }, `${data.hits.length} hits`),
    ...data.hits.map(hitCard),
    data.context ? h("details", {}, h("summary", {}, "Context block for a prompt"), h("pre", { class: "prompt" }, data.context)) : null);
}

async function passageView(chunkId, params) {
  setActive("search");
  const chunk = await api("GET", `/chunks/${encPath(chunkId)}`);
  const start = Number(params.get("start")), end = Number(params.get("end"));
  // Citation spans are offsets into the document in code points (Python's str), the chunk starting at
  // chunk.start; JavaScript strings index UTF-16 units, so an emoji before the quote shifted the mark.
  const chars = Array.from(chunk.text);
  let a = start - chunk.start, b = end - chunk.start;
  if (!(Number.isFinite(a) && Number.isFinite(b) && a >= 0 && b <= chars.length && a < b)) { a = 0; b = 0; }
  const passage = h("div", { class: "passage", id: "passage" }, chars.slice(0, a).join(""),
    b > a ? h("mark", { id: "quoted" }, chars.slice(a, b).join("")) : "", chars.slice(b).join(""));
  put(view, 
    h("h1", {}, "Passage"),
    h("p", { class: "muted" }, `${chunk.doc_id} · version ${chunk.version} · chunk ${chunk.ordinal} · characters ${chunk.start}–${chunk.end}`),
    passage,
    h("p", {}, h("a", { href: "javascript:history.back()" }, "← back")));
  const mark = document.getElementById("quoted");
  if (mark) mark.scrollIntoView({ block: "center" });
}

// -- entities ------------------------------------------------------------------------------------------

async function entityView(name) {
  setActive("entity");
  const input = h("input", { type: "search", id: "entity-input", value: name || "", placeholder: "Entity name or id",
                             "aria-label": "Entity name", "data-main": true });
  const form = h("form", { class: "bar", onsubmit: ev => { ev.preventDefault(); location.hash = `#/entity/${enc(input.value)}`; } },
    input, h("button", { type: "submit" }, "Open"));
  if (!name) {
    const got = await api("GET", "/entities?limit=201");  // one more: says whether the list is cut
    const list = got.slice(0, 200);
    put(view, h("h1", {}, "Entities"), form,
      got.length > list.length ? h("p", { class: "muted", id: "entities-cut" },
        `The first ${list.length} entities are listed; open any other by its name above.`) : null,
      h("ul", {}, list.map(e => h("li", {}, h("a", { href: `#/entity/${enc(e.id)}` }, e.name), " ", h("span", { class: "muted" }, e.type)))));
    input.focus();
    return;
  }
  const [ent, nb] = await Promise.all([api("GET", `/entities/${enc(name)}`), api("GET", `/entities/${enc(name)}/graph?depth=1&max_nodes=40`)]);
  const graphBox = h("div", { class: "graph", id: "entity-graph", role: "img",
                              "aria-label": `Neighbourhood graph of ${ent.name}` });
  const rows = ent.relations.map(r => h("tr", {},
    h("td", {}, r.direction === "out" ? "→" : "←"),
    h("td", {}, r.type),
    h("td", {}, r.other_id ? h("a", { href: `#/entity/${enc(r.other_id)}` }, r.other) : r.other),
    h("td", {}, fmt(r.confidence)),
    h("td", {}, r.evidence.length ? h("ul", { class: "evidence" }, r.evidence.map(p =>
      h("li", {}, h("a", { href: `#/passage/${encPath(p.chunk_id)}?start=${p.start}&end=${p.end}` }, `“${p.text}”`),
        " ", h("span", { class: "muted" }, p.doc_id)))) : h("span", { class: "muted" }, r.manual ? "added by hand" : "none"))));
  put(view, 
    form,
    h("h1", {}, ent.name, " ", h("span", { class: "tag" }, ent.type)),
    ent.aliases && ent.aliases.length ? h("p", { class: "muted" }, "aliases: " + ent.aliases.join(", ")) : null,
    h("p", { class: "muted" }, `${ent.evidence_count} mentions · id ${ent.id}`),
    h("h2", {}, "Neighbourhood"), graphBox,
    h("h2", {}, `Relations (${ent.relations.length})`),
    h("table", { id: "relations" }, h("thead", {}, h("tr", {}, ["", "relation", "with", "confidence", "evidence"].map(t => h("th", {}, t)))),
      h("tbody", {}, rows)),
    ent.evidence.length ? h("h2", {}, "Mentions") : null,
    ent.evidence.length ? h("ul", { class: "evidence" }, ent.evidence.map(p => h("li", {},
      h("a", { href: `#/passage/${encPath(p.chunk_id)}?start=${p.start}&end=${p.end}` }, `“${p.text}”`), " ",
      h("span", { class: "muted" }, p.doc_id)))) : null);
  const nodes = Object.values(nb.nodes).map(n => ({ id: n.id, label: n.name, seed: n.id === ent.id }));
  const edges = nb.edges.map(e => ({ id: e.id, source: e.source, target: e.target, label: e.type }));
  graphView(graphBox, nodes, edges, id => { location.hash = `#/entity/${enc(id)}`; });
}

// -- wiki ------------------------------------------------------------------------------------------------

// A link's target as the server stores it (wiki/markdown.py link_target): last path part, no .md, lower case.
function linkTarget(raw) {
  let t = String(raw).trim().replace(/\\/g, "/").split("/").pop().trim();
  if (t.toLowerCase().endsWith(".md")) t = t.slice(0, -3);
  return t.toLowerCase();
}

// What page markdown may hold once rendered: no styles, forms or frames (a page's text can come from any
// ingested file), no ids or names (an injected id="error" would take over the app's own elements).
const PURIFY = {
  ADD_ATTR: ["class"], ALLOW_DATA_ATTR: false,
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "option", "iframe", "frame", "object",
                "embed", "link", "meta", "base", "svg", "math", "dialog"],
  FORBID_ATTR: ["style", "id", "name", "form", "formaction", "srcset"],
};

function renderMarkdown(md, linkSlugs) {
  // [[target]] / [[target|label]] become links into this view, to the page the server resolved the link to
  // (by slug, title or alias, as lint and backlinks do); a link it could not resolve is marked broken.
  const withLinks = md.replace(/<!-- graphmem:(begin|end) generated -->/g, "").replace(/\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]+))?\]\]/g,
    (_, target, label) => {
      const key = linkTarget(target);  // own keys only: [[constructor]] must not find Object's
      const slug = Object.prototype.hasOwnProperty.call(linkSlugs, key) ? linkSlugs[key] : null;
      const cls = slug ? "wikilink" : "wikilink broken";
      const href = `#/wiki/${enc(slug || slugify(linkTarget(target)))}`;
      return `<a class="${cls}" href="${href}">${(label || target).replace(/[<>&"]/g, "")}</a>`;
    });
  return DOMPurify.sanitize(marked.parse(withLinks), PURIFY);
}

async function wikiView(slug) {
  setActive("wiki");
  const [pages, lint] = await Promise.all([api("GET", "/wiki/pages?limit=2000"), api("GET", "/wiki/lint")]);
  const byCat = {};
  for (const p of pages) (byCat[p.category] = byCat[p.category] || []).push(p);
  const input = h("input", { type: "search", id: "wiki-search", placeholder: "Search the wiki", "aria-label": "Search the wiki", "data-main": true });
  const found = h("ul", { id: "wiki-hits" });
  const form = h("form", { class: "bar", onsubmit: async ev => {
    ev.preventDefault();
    if (!input.value.trim()) { put(found); return; }  // a blank query is a 400: nothing to look for
    const hits = await api("GET", `/wiki/search?q=${enc(input.value)}&k=20`);
    put(found, ...hits.map(x => h("li", {}, h("a", { href: `#/wiki/${enc(x.slug)}` }, x.title), " ",
      h("span", { class: "muted" }, x.category))));
  } }, input, h("button", { type: "submit" }, "Search"));
  const list = h("nav", { class: "page-list", "aria-label": "Wiki pages" },
    Object.keys(byCat).sort().map(c => [h("h3", {}, `${c} (${byCat[c].length})`),
      h("ul", {}, byCat[c].map(p => h("li", {}, h("a", { href: `#/wiki/${enc(p.slug)}` }, p.title))))]));
  const main = h("section", { id: "wiki-page" });
  const problems = Object.entries(lint).filter(([k, v]) => k !== "problems" && (Array.isArray(v) ? v.length : Object.keys(v || {}).length));
  const lintBox = h("details", { class: "lint", id: "lint", open: !slug && lint.problems > 0 },
    h("summary", {}, `Lint: ${lint.problems} problem${lint.problems === 1 ? "" : "s"}`),
    h("ul", {}, problems.map(([k, v]) => h("li", {}, h("b", {}, k.replace(/_/g, " ")), ": ",
      Array.isArray(v) ? v.map(x => typeof x === "string" ? x : JSON.stringify(x)).join(", ")
        : Object.entries(v).map(([p, ls]) => `${p} → ${[].concat(ls).join(", ")}`).join("; ")))));
  put(view, h("h1", {}, "Wiki"), form, found, lintBox, h("div", { class: "two" }, list, main));
  if (!slug) { main.append(h("p", { class: "muted" }, `${pages.length} pages; choose one.`)); return; }
  const page = await api("GET", `/wiki/pages/${encPath(slug)}`);
  const body = h("div", { class: "markdown", id: "wiki-body" });
  body.innerHTML = renderMarkdown(page.content, page.link_slugs || {});
  put(main, 
    h("h2", {}, page.title, " ", h("span", { class: "tag" }, page.category)),
    page.summary ? h("p", { class: "muted" }, page.summary) : null,
    (page.tags || []).length ? h("p", {}, page.tags.map(t => h("span", { class: "tag" }, t))) : null,
    body,
    h("h2", {}, `Backlinks (${page.backlinks.length})`),
    h("ul", { id: "backlinks" }, page.backlinks.map(b => h("li", {}, h("a", { href: `#/wiki/${enc(b.slug)}` }, b.slug), " ",
      h("span", { class: "muted" }, `line ${b.line}`)))));
}

// -- memories --------------------------------------------------------------------------------------------

async function memoriesView(params) {
  setActive("memories");
  const scope = {};
  for (const k of ["user_id", "agent_id", "run_id"]) if (params.get(k)) scope[k] = params.get(k);
  const fields = ["user_id", "agent_id", "run_id"].map(k =>
    h("label", {}, k.replace("_id", ""), " ", h("input", { type: "text", name: k, value: scope[k] || "", size: 12,
                                                        "data-main": k === "user_id" ? true : null })));
  const form = h("form", { class: "bar", onsubmit: ev => {
    ev.preventDefault();
    const qs = [...form.querySelectorAll("input[type=text]")].filter(i => i.value.trim()).map(i => `${i.name}=${enc(i.value.trim())}`);
    location.hash = "#/memories?" + qs.join("&");
  } }, ...fields, h("button", { type: "submit" }, "Show scope"));
  put(view, h("h1", {}, "Memories"), form);
  if (!Object.keys(scope).length) {
    add(view, h("p", { class: "muted" }, "Give a user, agent or run to see its memories and their context graph."));
    return;
  }
  const qs = Object.entries(scope).map(([k, v]) => `${k}=${enc(v)}`).join("&");
  const data = await api("GET", `/memories/graph?${qs}`);
  const graphBox = h("div", { class: "graph", id: "memory-graph", role: "img", "aria-label": "Context graph of the memories" });
  const q = h("input", { type: "search", placeholder: "Search these memories", "aria-label": "Search memories" });
  const found = h("ol", { id: "memory-hits" });
  const sform = h("form", { class: "bar", onsubmit: async ev => {
    ev.preventDefault();
    if (!q.value.trim()) { put(found); return; }
    const res = await api("POST", "/search", { query: q.value, filters: scope, limit: 10 });
    put(found, ...res.results.map(m => h("li", {}, m.memory, " ", h("span", { class: "muted" },
      `score ${fmt(m.score)} · ` + Object.entries(m.context_graph).filter(([, v]) => typeof v === "number").map(([k, v]) => `${k} ${fmt(v)}`).join(" · ")))));
  } }, q, h("button", { type: "submit" }, "Search"));
  const byId = Object.fromEntries(data.results.map(m => [m.id, m]));
  add(view, 
    h("p", { class: "muted", id: "memories-count" }, `${data.results.length} memories · ${data.edges.length} context-graph edges`
      + (data.more ? ` · the scope holds more: the ${data.results.length} said first are shown; search to find the others` : "")),
    graphBox, sform, found,
    h("table", { id: "memories" }, h("thead", {}, h("tr", {}, ["said", "memory", "edges"].map(t => h("th", {}, t)))),
      h("tbody", {}, data.results.map(m => h("tr", {}, h("td", { class: "muted" }, m.timestamp), h("td", {}, m.memory),
        h("td", { class: "muted" }, data.edges.filter(e => e.src === m.id).map(e => `${e.type} → ${(byId[e.dst] || {}).memory || e.dst}`).join("; ")))))));
  graphView(graphBox, data.results.map(m => ({ id: m.id, label: m.memory.slice(0, 40), kind: "memory" })),
    data.edges.map((e, i) => ({ id: `e${i}`, source: e.src, target: e.dst, label: e.type })));
}

// -- skills ----------------------------------------------------------------------------------------------

async function skillsView(params) {
  setActive("skills");
  const msg = params.get("q") || "";
  const input = h("input", { type: "search", id: "skills-input", value: msg, placeholder: "What is the agent asked to do?",
                             "aria-label": "Message", "data-main": true });
  const form = h("form", { class: "bar", onsubmit: ev => { ev.preventDefault(); location.hash = `#/skills?q=${enc(input.value)}`; } },
    input, h("button", { type: "submit" }, "Find skills"));
  const info = await api("GET", "/skills");
  put(view, h("h1", {}, "Skills"), h("p", { class: "muted" }, `${info.skills} skills indexed`), form);
  if (!msg.trim()) { input.focus(); return; }
  const res = await api("POST", "/skills/query", { message: msg });
  add(view, 
    h("ol", { id: "skill-hits" }, res.skills.map(s => h("li", {}, h("b", {}, s.name), ` — ${s.description} `,
      h("span", { class: "muted" }, `${s.via} · score ${fmt(s.score)}`)))),
    h("h2", {}, `Prompt block (${res.prompt.skills} skills, ~${res.prompt.tokens} tokens)`),
    h("pre", { class: "prompt", id: "prompt-block" }, res.prompt.text));
}

// -- live events (Server-Sent Events read with fetch, so the token goes in a header) -------------------

let lastEventId = 0;
let knownAtLoad = 0;  // events up to this id existed when the page loaded: not highlighted as new

function addEvent(ev, fresh) {
  const list = document.getElementById("event-list");
  const item = h("li", { class: fresh ? "fresh" : "", "data-id": ev.id, "data-type": ev.type, "data-target": ev.target },
    h("span", { class: "ev-type" }, ev.type), " ", h("span", {}, ev.target), h("br"),
    h("span", { class: "muted" }, `#${ev.id} · ${ev.timestamp}`));
  list.prepend(item);
  while (list.children.length > 100) list.lastElementChild.remove();
}

// The header's counts follow the live events (read once at load, they went stale at the first ingest).
async function refreshStats() {
  const s = await api("GET", "/stats");
  document.getElementById("stats").textContent = `${s.documents} documents · ${s.entities} entities · ${s.edges} relations`;
  return s;
}

let statsTimer = null;
function statsSoon() {  // at most one /stats a second, however many events arrive
  if (statsTimer) return;
  statsTimer = setTimeout(() => { statsTimer = null; refreshStats().catch(() => {}); }, 1000);
}

async function followEvents() {
  const state = document.getElementById("events-state");
  for (;;) {
    try {
      if (!lastEventId) {
        const s = await refreshStats();
        knownAtLoad = s.events;
        lastEventId = Math.max(0, s.events - 20);  // start with the last few events
      }
      const headers = { "Accept": "text/event-stream", "Last-Event-ID": String(lastEventId) };
      if (token) headers["Authorization"] = "Bearer " + token;
      const resp = await fetch("/events/stream", { headers });
      if (!resp.ok) throw new Error(`event stream: HTTP ${resp.status}`);
      state.textContent = "live";
      const reader = resp.body.getReader();
      const decoder = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const frame = buf.slice(0, cut); buf = buf.slice(cut + 2);
          const data = frame.split("\n").filter(l => l.startsWith("data:")).map(l => l.slice(5).trim()).join("\n");
          const id = frame.split("\n").find(l => l.startsWith("id:"));
          if (!data) continue;
          const ev = JSON.parse(data);
          if (id) lastEventId = Number(id.slice(3).trim());
          addEvent(ev, ev.id > knownAtLoad);
          statsSoon();
        }
      }
    } catch (err) {
      state.textContent = "reconnecting…";
    }
    await new Promise(r => setTimeout(r, 2000));
  }
}

// -- routing ---------------------------------------------------------------------------------------------

async function route() {
  showError("");
  const raw = location.hash.replace(/^#\/?/, "") || "search";
  const [path, query] = raw.split("?");
  const params = new URLSearchParams(query || "");
  const [name, ...rest] = path.split("/");
  try {
    let arg;
    try {
      arg = rest.map(decodeURIComponent).join("/");
    } catch (err) {  // a hand-edited address with a broken %-escape
      throw new Error(`this address is not valid (${err.message}); go back or choose a view above`);
    }
    if (name === "passage") await passageView(arg, params);
    else if (name === "entity") await entityView(arg);
    else if (name === "wiki") await wikiView(arg);
    else if (name === "memories") await memoriesView(params);
    else if (name === "skills") await skillsView(params);
    else await searchView(params);
  } catch (err) {
    showError(err.message);
  }
}

document.getElementById("token-form").addEventListener("submit", ev => {
  ev.preventDefault();
  token = document.getElementById("token-input").value.trim();
  sessionStorage.setItem("graphmem-token", token);
  document.getElementById("token-bar").hidden = true;
  route();
});

document.addEventListener("keydown", ev => {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  if (ev.key === "/" && !typing) {
    const main = view.querySelector("[data-main]");
    if (main) { ev.preventDefault(); main.focus(); }
  }
});

window.addEventListener("hashchange", route);
route();
followEvents();
