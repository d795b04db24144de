// An offline reference page: it renders the OpenAPI document itself (no CDN-hosted Swagger UI).
"use strict";
(async () => {
  const main = document.getElementById("api");
  const token = sessionStorage.getItem("graphmem-token");
  const resp = await fetch("/openapi.json", { headers: token ? { Authorization: "Bearer " + token } : {} });
  if (!resp.ok) { main.textContent = `Cannot load /openapi.json (HTTP ${resp.status}); open the UI and give the token first.`; return; }
  const spec = await resp.json();
  const el = (tag, text, cls) => { const e = document.createElement(tag); if (text) e.textContent = text; if (cls) e.className = cls; return e; };
  const resolve = s => s && s.$ref ? spec.components.schemas[s.$ref.split("/").pop()] : s;
  main.replaceChildren(el("h1", `${spec.info.title} ${spec.info.version}`), el("p", spec.info.description, "muted"));
  const byTag = {};
  for (const [path, ops] of Object.entries(spec.paths))
    for (const [method, op] of Object.entries(ops)) (byTag[(op.tags || ["other"])[0]] ||= []).push([method, path, op]);
  for (const [tag, ops] of Object.entries(byTag)) {
    main.append(el("h2", tag));
    for (const [method, path, op] of ops) {
      const d = el("details", null, "op"), s = el("summary");
      s.append(el("span", method.toUpperCase(), "method"), el("span", path, "path"), " — ", op.summary || "");
      d.append(s);
      if (op.parameters && op.parameters.length)
        d.append(el("p", "Parameters: " + op.parameters.map(p => `${p.name} (${p.in}${p.required ? ", required" : ""})`).join(", ")));
      const body = op.requestBody && resolve(op.requestBody.content["application/json"].schema);
      if (body) { d.append(el("p", "Body:")); d.append(el("pre", JSON.stringify(body, null, 2))); }
      d.append(el("p", "Responses: " + Object.keys(op.responses).join(", "), "muted"));
      main.append(d);
    }
  }
})();
