// The inspector's page: plain JavaScript, no build step, nothing from the network. It talks to the API of
// mcplite/inspector/__init__.py (POST /api/ACTION with the token in a header; GET /events?token= for events).
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token") || "";
const KINDS = ["tools", "resources", "templates", "prompts"];
const state = {
  info: null, lists: {tools: [], resources: [], templates: [], prompts: []}, kind: "tools", selected: null,
  sentMethods: new Map(), httpPending: new Map(), seq: 0, lastT: 0, wire: [], calls: 0, tasks: new Map(), questions: new Map(),
};

// ---- helpers ----------------------------------------------------------------------------------------------
function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "className") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}
const $ = (selector) => document.querySelector(selector);
// node.replaceChildren, skipping the null and false of optional parts (replaceChildren would show "null").
const fill = (node, ...children) => node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
const pretty = (value) => JSON.stringify(value, null, 2);

async function api(action, body) {
  const response = await fetch("/api/" + action, {
    method: "POST", headers: {"Content-Type": "application/json", "X-Inspector-Token": TOKEN},
    body: JSON.stringify(body || {}),
  });
  const answer = await response.json();
  if (answer.error) throw new Error(answer.error.type + ": " + answer.error.message);
  return answer.result;
}

function shellQuote(text) {
  return /^[A-Za-z0-9_\-.,:/=@%+]+$/.test(text) ? text : "'" + text.replace(/'/g, "'\\''") + "'";
}

function pyRepr(value, indent) {
  indent = indent || "";
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number" || typeof value === "string") return JSON.stringify(value);
  const inner = indent + "    ";
  if (Array.isArray(value)) {
    if (!value.length) return "[]";
    return "[" + value.map((item) => pyRepr(item, inner)).join(", ") + "]";
  }
  const keys = Object.keys(value);
  if (!keys.length) return "{}";
  return "{" + keys.map((key) => JSON.stringify(key) + ": " + pyRepr(value[key], inner)).join(", ") + "}";
}

function firstType(schema) {
  let type = schema && schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== "null") || type[0];
  if (!type && schema && (schema.enum || schema.oneOf && schema.oneOf.every((o) => "const" in o))) type = "string";
  return type;
}

function resolveRef(schema, root) {
  if (schema && typeof schema.$ref === "string" && schema.$ref.startsWith("#/")) {
    let node = root;
    for (const part of schema.$ref.slice(2).split("/")) node = node && node[part];
    if (node) return Object.assign({}, node, schema, {$ref: undefined});
  }
  return schema || {};
}

// ---- forms from JSON Schema ---------------------------------------------------------------------------------
// One field per property: text, number, integer, boolean, enum (a select), other types as JSON text.
function schemaForm(schema, prefix, complete) {
  const form = h("form", {className: "fields", onsubmit: (event) => event.preventDefault()});
  const properties = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const fields = [];
  for (const [name, raw] of Object.entries(properties)) {
    const prop = resolveRef(raw, schema);
    const type = firstType(prop);
    const id = prefix + name;
    const choices = prop.enum ? prop.enum.map((v) => [v, v])
      : prop.oneOf && prop.oneOf.every((o) => "const" in o) ? prop.oneOf.map((o) => [o.const, o.title || o.const])
      : null;
    const itemChoices = type === "array" && prop.items ? (prop.items.enum ? prop.items.enum.map((v) => [v, v])
      : (prop.items.anyOf || prop.items.oneOf || []).filter((o) => "const" in o).map((o) => [o.const, o.title || o.const]))
      : [];
    let input;
    let kind;
    if (choices) {
      kind = "enum";
      input = h("select", {name: id, id},
        required.has(name) ? null : h("option", {value: "", text: "(not set)"}),
        choices.map(([value, title]) => h("option", {value: JSON.stringify(value), text: String(title)})));
      if (prop.default !== undefined) input.value = JSON.stringify(prop.default);
    } else if (type === "array" && itemChoices.length) {
      kind = "multi";
      input = h("select", {name: id, id, multiple: true, size: Math.min(itemChoices.length, 5)},
        itemChoices.map(([value, title]) => h("option", {value: JSON.stringify(value), text: String(title)})));
      for (const option of input.options) {
        option.selected = Array.isArray(prop.default) && prop.default.includes(JSON.parse(option.value));
      }
    } else if (type === "boolean") {
      kind = "boolean";
      input = h("select", {name: id, id}, required.has(name) ? null : h("option", {value: "", text: "(not set)"}),
        h("option", {value: "true", text: "true"}), h("option", {value: "false", text: "false"}));
      input.value = prop.default === undefined ? (required.has(name) ? "false" : "") : String(prop.default);
    } else if (type === "number" || type === "integer") {
      kind = type;
      input = h("input", {type: "number", name: id, id, step: type === "integer" ? "1" : "any",
        min: prop.minimum, max: prop.maximum, value: prop.default});
    } else if (type === "string") {
      kind = "string";
      input = h("input", {type: "text", name: id, id, value: prop.default, placeholder: prop.format || "",
        list: complete ? id + "-choices" : null, autocomplete: "off"});
      if (complete) {
        const datalist = h("datalist", {id: id + "-choices"});
        let timer = null;
        const ask = () => {
          clearTimeout(timer);
          timer = setTimeout(async () => {
            try {
              const values = await complete(name, input.value, collectRaw());
              datalist.replaceChildren(...values.map((v) => h("option", {value: v})));
            } catch (error) { /* a server without completions: nothing to offer */ }
          }, 150);
        };
        input.addEventListener("input", ask);
        input.addEventListener("focus", ask);
        form.append(datalist);
      }
    } else {
      kind = "json";
      input = h("textarea", {name: id, id, rows: 3, placeholder: type ? type + " as JSON" : "JSON"});
      if (prop.default !== undefined) input.value = JSON.stringify(prop.default);
    }
    const error = h("div", {className: "field-error"});
    form.append(h("label", {for: id}, prop.title || name, required.has(name) ? h("span", {className: "req", text: " *"}) : null),
      input);
    const hint = [type || "any", prop.description].filter(Boolean).join(" · ");
    form.append(h("div", {className: "hint", text: hint}), error);
    fields.push({name, kind, input, error, required: required.has(name)});
  }
  function collectRaw() {
    const raw = {};
    for (const field of fields) if (field.input.value !== "") raw[field.name] = field.input.value;
    return raw;
  }
  // The values, read by each field's type; null (and each bad field marked) when one does not read.
  function collect() {
    const values = {};
    let ok = true;
    for (const field of fields) {
      field.error.textContent = "";
      const text = field.input.value;
      try {
        if (field.kind === "multi") {
          const chosen = [...field.input.selectedOptions].map((o) => JSON.parse(o.value));
          if (chosen.length || field.required) values[field.name] = chosen;
          continue;
        }
        if (text === "" && field.kind !== "string") {
          if (field.required) throw new Error("required");
          continue;
        }
        if (text === "" && !field.required) continue;
        if (field.kind === "enum") values[field.name] = JSON.parse(text);
        else if (field.kind === "boolean") values[field.name] = text === "true";
        else if (field.kind === "integer") {
          const number = Number(text);
          if (!Number.isInteger(number)) throw new Error("not an integer");
          values[field.name] = number;
        } else if (field.kind === "number") {
          const number = Number(text);
          if (!Number.isFinite(number)) throw new Error("not a number");
          values[field.name] = number;
        } else if (field.kind === "json") {
          try { values[field.name] = JSON.parse(text); } catch (error) { throw new Error("not valid JSON: " + error.message); }
        } else values[field.name] = text;
      } catch (error) {
        field.error.textContent = error.message;
        ok = false;
      }
    }
    return ok ? values : null;
  }
  if (!fields.length) form.append(h("span", {className: "muted", text: "(no arguments)"}));
  return {form, collect, collectRaw};
}

// ---- results ----------------------------------------------------------------------------------------------
function contentBlock(block) {
  if (!block || typeof block !== "object") return h("pre", {text: pretty(block)});
  switch (block.type) {
    case "text":
      return h("pre", {className: "content-text", text: block.text});
    case "image":
      return h("img", {className: "content-image", alt: "image " + block.mimeType,
        src: "data:" + block.mimeType + ";base64," + block.data});
    case "audio":
      return h("audio", {className: "content-audio", controls: true, src: "data:" + block.mimeType + ";base64," + block.data});
    case "resource":
      return h("div", {className: "content-resource"}, h("span", {className: "badge", text: "embedded resource"}),
        resourceContents(block.resource));
    case "resource_link":
      return h("div", {className: "content-link"}, h("span", {className: "badge", text: "resource link"}),
        h("a", {href: "#", onclick: (event) => { event.preventDefault(); showResource({uri: block.uri, name: block.name}); },
          text: block.uri}), block.description ? h("span", {className: "muted", text: " " + block.description}) : null);
    default:
      return h("pre", {text: pretty(block)});
  }
}

function resourceContents(contents) {
  const parts = [h("div", {className: "muted", text: contents.uri + (contents.mimeType ? " · " + contents.mimeType : "")})];
  if (typeof contents.text === "string") parts.push(h("pre", {className: "content-text", text: contents.text}));
  else if (typeof contents.blob === "string") {
    const mime = contents.mimeType || "application/octet-stream";
    if (mime.startsWith("image/")) parts.push(h("img", {src: "data:" + mime + ";base64," + contents.blob, alt: contents.uri}));
    else if (mime.startsWith("audio/")) parts.push(h("audio", {controls: true, src: "data:" + mime + ";base64," + contents.blob}));
    else parts.push(h("pre", {text: "(" + Math.floor(contents.blob.length * 3 / 4) + " bytes, base64) " + contents.blob.slice(0, 200)}));
  }
  return h("div", {className: "block"}, parts);
}

function toolResult(result, tool) {
  const box = h("div", {className: "result" + (result.isError ? " error" : ""), id: "result"});
  if (result.isError) box.append(h("strong", {className: "error-text", text: "the tool returned an error (isError)"}));
  for (const block of result.content || []) box.append(h("div", {className: "block"}, contentBlock(block)));
  if (result.structuredContent !== undefined) {
    box.append(h("div", {className: "muted", text: "structured content"}),
      h("pre", {className: "structured", text: pretty(result.structuredContent)}));
    if (tool && tool.outputSchema) {
      // The client checked it against the output schema (a mismatch is an error, shown as one instead).
      box.append(h("div", {className: "ok-text schema-check", text: "✓ matches the tool's outputSchema"}));
    }
  }
  return box;
}

function errorBox(error) {
  return h("div", {className: "result error", id: "result"}, h("strong", {className: "error-text", text: String(error.message || error)}));
}

// ---- copy as command ------------------------------------------------------------------------------------
function copyBox(cli, python) {
  const target = (state.info && state.info.target) || {};
  const version = target.protocolVersion && target.protocolVersion !== "auto" ? "--protocol-version " + target.protocolVersion + " " : "";
  const line = "python3 -m mcplite " + version + cli + " " + (target.words || "-- SERVER");
  const connect = target.python || "Client(...)";
  const code = "from mcplite import Client\n\nwith " + connect.replace(/\)$/, version ? ", protocol_version=" + JSON.stringify(target.protocolVersion) + ")" : ")") +
    " as client:\n    print(" + python + ")\n";
  const copy = (text) => () => navigator.clipboard && navigator.clipboard.writeText(text);
  return h("details", {className: "copy"}, h("summary", {text: "copy as command"}),
    h("div", {className: "row"}, h("button", {type: "button", onclick: copy(line), text: "Copy command"}),
      h("button", {type: "button", onclick: copy(code), text: "Copy Python"})),
    h("pre", {className: "copy-cli", text: line}), h("pre", {className: "copy-python", text: code}));
}

// ---- the lists ----------------------------------------------------------------------------------------------
async function loadList(kind) {
  const capabilities = (state.info && state.info.capabilities) || {};
  const needs = {tools: "tools", resources: "resources", templates: "resources", prompts: "prompts"}[kind];
  if (!capabilities[needs]) state.lists[kind] = [];
  else {
    try {
      state.lists[kind] = await api("list", {kind});
    } catch (error) {
      state.lists[kind] = [];
      note("error", "listing " + kind + ": " + error.message);
    }
  }
  renderItems();
  if (kind === "tools") document.body.dataset.ready = "tools";  // (what the browser test times)
}

function label(item) { return item.title || (item.annotations && item.annotations.title) || item.name || item.uri; }

function renderItems() {
  for (const kind of KINDS) {
    $(`#lists .tabs [data-kind=${kind}] .count`).textContent = state.lists[kind].length || "";
  }
  const search = $("#search").value.trim().toLowerCase();
  const items = state.lists[state.kind].filter((item) => !search ||
    [item.name, item.title, item.description, item.uri, item.uriTemplate].some((v) => v && v.toLowerCase().includes(search)));
  $("#items").replaceChildren(...items.map((item) => {
    const key = item.name || item.uri || item.uriTemplate;
    const li = h("li", {"data-name": key, "data-uri": item.uri || item.uriTemplate, className: state.selected === item ? "selected" : "",
      onclick: () => select(state.kind, item)},
    h("span", {text: label(item)}), h("span", {className: "sub", text: item.uri || item.uriTemplate || item.description || ""}));
    return li;
  }));
}

function select(kind, item) {
  state.selected = item;
  renderItems();
  ({tools: showTool, resources: showResource, templates: showTemplate, prompts: showPrompt})[kind](item);
}

function heading(item, extra) {
  return [h("h2", {text: label(item)}), item.title && item.name ? h("div", {className: "muted", text: item.name}) : null,
    extra, item.description ? h("p", {text: item.description}) : null];
}

function showTool(tool) {
  const annotations = tool.annotations || {};
  const badges = [];
  for (const [key, text] of [["readOnlyHint", "read-only"], ["destructiveHint", "destructive"],
    ["idempotentHint", "idempotent"], ["openWorldHint", "open world"]]) {
    if (annotations[key] !== undefined) badges.push(h("span", {className: "badge" + (key === "destructiveHint" && annotations[key] ? " warn" : ""),
      title: key, text: (annotations[key] ? "" : "not ") + text}));
  }
  const support = tool.execution && tool.execution.taskSupport;
  if (support) badges.push(h("span", {className: "badge", text: "task: " + support}));
  const {form, collect} = schemaForm(tool.inputSchema, "arg-");
  const asTask = h("input", {type: "checkbox", id: "as-task", checked: support === "required"});
  const out = h("div", {id: "call-output"});
  const copy = h("div");
  const run = async () => {
    const args = collect();
    if (args === null) return;
    copy.replaceChildren(copyBox("call " + shellQuote(tool.name) + (Object.keys(args).length ? " --args " + shellQuote(JSON.stringify(args)) : ""),
      "client.call_tool(" + JSON.stringify(tool.name) + ", " + pyRepr(args) + ")"));
    const callId = "c" + (++state.calls);
    const bar = h("progress", {id: "progress"});
    const status = h("div", {className: "muted", id: "progress-text", text: "calling…"});
    const progressBox = h("div", {className: "progress-box", "data-call": callId}, bar, status);
    out.replaceChildren(progressBox);
    const started = performance.now();
    try {
      const result = await api("call", {name: tool.name, arguments: args, callId, task: asTask.checked});
      out.replaceChildren(h("div", {className: "muted", text: `answered in ${Math.round(performance.now() - started)} ms`}),
        toolResult(result, tool));
      if (status.textContent !== "calling…") out.prepend(progressBox);  // (it reported progress: keep the bar)
    } catch (error) {
      out.replaceChildren(errorBox(error));
    }
  };
  fill($("#detail"), ...heading(tool, h("div", {}, badges)), form,
    h("div", {className: "actions"}, h("button", {type: "button", className: "primary", id: "run", onclick: run, text: "Call tool"}),
      h("label", {}, asTask, " run as a task")),
    tool.outputSchema ? h("details", {}, h("summary", {text: "output schema"}), h("pre", {text: pretty(tool.outputSchema)})) : null,
    h("details", {}, h("summary", {text: "input schema"}), h("pre", {text: pretty(tool.inputSchema)})),
    copy, out);
}

async function showResource(resource) {
  const out = h("div", {id: "read-output"});
  const subscribable = state.info && state.info.capabilities && state.info.capabilities.resources &&
    state.info.capabilities.resources.subscribe;
  const read = async () => {
    try {
      const result = await api("read", {uri: resource.uri});
      out.replaceChildren(h("div", {className: "result", id: "result"}, (result.contents || []).map(resourceContents)));
    } catch (error) { out.replaceChildren(errorBox(error)); }
  };
  fill($("#detail"), ...heading(resource, h("div", {className: "muted", text: resource.uri + (resource.mimeType ? " · " + resource.mimeType : "")})),
    h("div", {className: "actions"}, h("button", {type: "button", className: "primary", id: "read", onclick: read, text: "Read"}),
      subscribable ? h("button", {type: "button", onclick: () => api("subscribe", {uri: resource.uri})
        .then(() => note("info", "subscribed to " + resource.uri), (e) => note("error", e.message)), text: "Subscribe"}) : null,
      subscribable ? h("button", {type: "button", onclick: () => api("unsubscribe", {uri: resource.uri})
        .then(() => note("info", "unsubscribed from " + resource.uri), (e) => note("error", e.message)), text: "Unsubscribe"}) : null),
    copyBox("read " + shellQuote(resource.uri), "client.read_resource(" + JSON.stringify(resource.uri) + ")"), out);
}

function templateVariables(template) {
  const names = [];
  for (const match of template.matchAll(/\{([^}]+)\}/g)) {
    for (const part of match[1].replace(/^[+#./;?&]/, "").split(",")) names.push(part.replace(/\*$|:\d+$/, ""));
  }
  return names;
}

function expandTemplate(template, values) {
  return template.replace(/\{([^}]+)\}/g, (_, expression) => {
    const operator = /^[+#./;?&]/.test(expression) ? expression[0] : "";
    const names = (operator ? expression.slice(1) : expression).split(",").map((n) => n.replace(/\*$|:\d+$/, ""));
    const present = names.filter((n) => values[n] !== undefined && values[n] !== "");
    const encode = operator === "+" || operator === "#" ? encodeURI : encodeURIComponent;
    if (operator === "?" || operator === "&") {
      return present.length ? operator + present.map((n) => n + "=" + encodeURIComponent(values[n])).join("&") : "";
    }
    const joined = present.map((n) => encode(values[n])).join(",");
    return joined && operator && operator !== "+" ? operator + joined : joined;
  });
}

function showTemplate(template) {
  const schema = {type: "object", properties: {}, required: []};
  for (const name of templateVariables(template.uriTemplate)) { schema.properties[name] = {type: "string"}; schema.required.push(name); }
  const completions = state.info && state.info.capabilities && state.info.capabilities.completions;
  const complete = completions ? async (argument, value, context) => {
    const answer = await api("complete", {ref: {type: "ref/resource", uri: template.uriTemplate}, argument, value, context});
    return answer.values || [];
  } : null;
  const {form, collect} = schemaForm(schema, "var-", complete);
  const out = h("div", {id: "read-output"});
  const copy = h("div");
  const read = async () => {
    const values = collect();
    if (values === null) return;
    const uri = expandTemplate(template.uriTemplate, values);
    copy.replaceChildren(copyBox("read " + shellQuote(uri), "client.read_resource(" + JSON.stringify(uri) + ")"));
    try {
      const result = await api("read", {uri});
      out.replaceChildren(h("div", {className: "result", id: "result"}, (result.contents || []).map(resourceContents)));
    } catch (error) { out.replaceChildren(errorBox(error)); }
  };
  fill($("#detail"), ...heading(template, h("div", {className: "muted", text: template.uriTemplate})), form,
    h("div", {className: "actions"}, h("button", {type: "button", className: "primary", id: "read", onclick: read, text: "Read"})),
    copy, out);
}

function showPrompt(prompt) {
  const schema = {type: "object", properties: {}, required: []};
  for (const argument of prompt.arguments || []) {
    schema.properties[argument.name] = {type: "string", title: argument.title, description: argument.description};
    if (argument.required) schema.required.push(argument.name);
  }
  const completions = state.info && state.info.capabilities && state.info.capabilities.completions;
  const complete = completions ? async (argument, value, context) => {
    const answer = await api("complete", {ref: {type: "ref/prompt", name: prompt.name}, argument, value, context});
    return answer.values || [];
  } : null;
  const {form, collect} = schemaForm(schema, "parg-", complete);
  const out = h("div", {id: "prompt-output"});
  const copy = h("div");
  const get = async () => {
    const values = collect();
    if (values === null) return;
    const pairs = Object.entries(values).map(([k, v]) => shellQuote(k + "=" + v)).join(" ");
    copy.replaceChildren(copyBox("prompt " + shellQuote(prompt.name) + (pairs ? " " + pairs : ""),
      "client.get_prompt(" + JSON.stringify(prompt.name) + ", " + pyRepr(values) + ")"));
    try {
      const result = await api("prompt", {name: prompt.name, arguments: values});
      out.replaceChildren(h("div", {className: "result", id: "result"},
        result.description ? h("p", {className: "muted", text: result.description}) : null,
        (result.messages || []).map((message) => h("div", {className: "block"}, h("span", {className: "badge", text: message.role}),
          contentBlock(message.content)))));
    } catch (error) { out.replaceChildren(errorBox(error)); }
  };
  fill($("#detail"), ...heading(prompt), form,
    h("div", {className: "actions"}, h("button", {type: "button", className: "primary", id: "get-prompt", onclick: get, text: "Get prompt"})),
    copy, out);
}

// ---- the connection ---------------------------------------------------------------------------------------
function showInfo(info) {
  state.info = info;
  const dot = $("#status-dot");
  dot.className = "dot " + (info.connected ? "on" : "off");
  if (!info.connected) {
    $("#server-name").textContent = "disconnected";
    $("#server-meta").textContent = info.error || "";
    for (const kind of KINDS) state.lists[kind] = [];
    renderItems();
    fill($("#connection"), h("p", {className: "muted", text: info.error || "Not connected."}));
    return;
  }
  const server = info.serverInfo || {};
  $("#server-name").textContent = (server.title || server.name || "server") + (server.version ? " " + server.version : "");
  $("#server-meta").textContent = info.transport + " · " + info.protocolVersion;
  const rows = [["transport", info.transport], ["revision", info.protocolVersion + " (" + info.era + ")"],
    ["server", pretty(server)], ["session", info.sessionId || "—"], ["command", (info.target && info.target.words) || ""]];
  fill($("#connection"), 
    h("dl", {className: "kv"}, rows.map(([k, v]) => [h("dt", {text: k}), h("dd", {}, h("pre", {text: v}))])),
    info.instructions ? [h("h4", {text: "instructions"}), h("pre", {id: "instructions", text: info.instructions})] : null,
    h("h4", {text: "server capabilities"}), h("pre", {text: pretty(info.capabilities)}),
    h("h4", {text: "client capabilities (ours)"}), h("pre", {text: pretty(info.clientCapabilities)}));
  $("#roots-text").value = (info.roots || []).map((r) => r.uri + (r.name ? " " + r.name : "")).join("\n");
}

async function refreshAll() {
  showInfo(await api("info"));
  if (state.info.connected) await Promise.all(KINDS.map(loadList));
}

// ---- events ------------------------------------------------------------------------------------------------
function messageLabel(entry) {
  const message = entry.message;
  if (entry.invalid) return "invalid: " + entry.invalid;
  if (Array.isArray(message)) return "batch of " + message.length;
  if (!message) return "";
  if (message.method) {
    const name = message.params && (message.params.name || message.params.uri);
    return message.method + (name ? " " + name : "") + (message.id !== undefined ? " #" + message.id : "");
  }
  const method = state.sentMethods.get(entry.dir + ":" + message.id);
  return (message.error ? "error" : "result") + (method ? " of " + method : "") + " #" + message.id;
}

// What an HTTP response is put with: the message its request carried (the inspector's _wire_key, in Python).
function wireKey(message) {
  if (Array.isArray(message)) message = message[0];
  if (!message || typeof message !== "object") return null;
  if (message.method === undefined) return "answer " + JSON.stringify(message.id === undefined ? null : message.id);
  return message.id !== undefined ? "request " + JSON.stringify(message.id) : "notification " + message.method;
}

function onHttp(data) {
  const entry = data.key !== null && state.httpPending.get(data.key);
  if (entry) {
    entry.http.push(data);  // (an auth flow's 401 and then its retry: both)
    if ($("#log-detail").dataset.shown === String(entry.seq)) showWire(entry);
    return;
  }
  // A request that carried no message (the listening GET, the closing DELETE): a row of its own.
  onWire(JSON.stringify({t: state.lastT, dir: "http", http: [data], label: "HTTP " + data.method + " " + data.status}));
}

function onWire(line) {
  const entry = JSON.parse(line);
  const message = entry.message;
  entry.seq = ++state.seq;
  entry.http = entry.http || [];
  state.lastT = entry.t;
  if (message && message.method && message.id !== undefined) {
    state.sentMethods.set((entry.dir === "send" ? "recv" : "send") + ":" + message.id, message.method);
  }
  if (entry.dir === "send" && message !== undefined) state.httpPending.set(wireKey(message), entry);
  entry.size = entry.dir === "http" ? 0 : new TextEncoder().encode(JSON.stringify(message === undefined ? entry.invalid : message)).length;
  entry.label = entry.label || messageLabel(entry);
  entry.methodName = message && message.method ? message.method : (entry.label.split(" of ")[1] || "").split(" ")[0];
  state.wire.push(entry);
  $("#log-count").textContent = state.wire.length;
  if (wireShown(entry)) $("#log tbody").append(wireRow(entry));
}

function wireShown(entry) {
  const direction = $("#log-direction").value;
  const method = $("#log-method").value.trim().toLowerCase();
  return (!direction || entry.dir === direction) && (!method || entry.label.toLowerCase().includes(method));
}

function wireRow(entry) {
  const arrow = entry.dir === "send" ? "→" : entry.dir === "recv" ? "←" : "⇄";
  return h("tr", {className: "wire-row dir-" + entry.dir, "data-dir": entry.dir, onclick: () => showWire(entry)},
    h("td", {text: entry.t.toFixed(3)}), h("td", {text: arrow, title: entry.dir === "send" ? "sent to the server" : "received from the server"}),
    h("td", {text: entry.label + (entry.headers || entry.http.length ? " ⓗ" : "")}), h("td", {text: entry.size + " B"}));
}

function showWire(entry) {
  $("#log-detail").hidden = false;
  $("#log-detail-title").textContent = (entry.dir === "send" ? "sent → " : entry.dir === "recv" ? "received ← " : "") + entry.label + " · " + entry.size + " bytes · t=" + entry.t;
  $("#log-detail").dataset.shown = String(entry.seq);
  const lines = (headers) => Object.entries(headers).map(([k, v]) => k + ": " + v);
  const http = entry.http.flatMap((seen) => ["request: " + seen.method, ...lines(seen.request), "",
                                              "response: " + seen.status, ...lines(seen.response), ""]);
  $("#log-detail-headers").textContent = http.length ? http.join("\n").trim()
    : entry.headers ? lines(entry.headers).join("\n") : "(no HTTP headers recorded)";
  $("#log-detail-body").textContent = pretty(entry.message === undefined ? entry.invalid : entry.message);
}

function redrawWire() {
  $("#log tbody").replaceChildren(...state.wire.filter(wireShown).map(wireRow));
}

function note(level, text, extra) {
  const li = h("li", {className: "note level-" + level}, h("span", {className: "badge", text: level}), text,
    extra ? h("pre", {text: typeof extra === "string" ? extra : pretty(extra)}) : null);
  $("#notifications").prepend(li);
  const count = $("#notifications").children.length;
  $("#note-count").textContent = count;
}

function onNotify({method, params}) {
  if (method === "notifications/message") {
    const data = params.data;
    note(params.level || "info", (params.logger ? "[" + params.logger + "] " : "") + (typeof data === "string" ? data : ""),
      typeof data === "string" ? null : data);
  } else if (method.endsWith("/list_changed")) {
    const kind = method.split("/")[1];
    note("notice", kind + " list changed: refreshed");
    for (const listed of kind === "resources" ? ["resources", "templates"] : [kind]) loadList(listed);
  } else if (method === "notifications/resources/updated") {
    note("notice", "resource updated: " + params.uri);
  } else {
    note("notice", method, params);
  }
}

function onProgress({callId, progress, total, message}) {
  const box = document.querySelector(`[data-call="${callId}"]`);
  if (!box) return;  // (another call's, no longer shown)
  const bar = box.querySelector("progress");
  if (total) { bar.max = total; bar.value = progress; } else bar.removeAttribute("value");
  box.querySelector("#progress-text").textContent = "progress " + progress + (total ? " / " + total : "") + (message ? ": " + message : "");
}

function onTask(task) {
  state.tasks.set(task.taskId, task);
  $("#tasks-empty").hidden = true;
  $("#tasks").replaceChildren(...[...state.tasks.values()].map((t) => h("li", {className: "task", "data-task": t.taskId},
    h("strong", {text: t.tool || "task"}), " ", h("code", {text: t.taskId}), " ",
    h("span", {className: "badge", text: t.status}), t.statusMessage ? h("span", {className: "muted", text: " " + t.statusMessage}) : null,
    h("div", {className: "row"},
      h("button", {type: "button", text: "Refresh", onclick: () => api("task_get", {taskId: t.taskId})
        .then((info) => { onTask(Object.assign({tool: t.tool}, info)); if (info.result) note("info", "task " + t.taskId + " result", info.result); },
          (e) => note("error", e.message))}),
      h("button", {type: "button", text: "Cancel", onclick: () => api("task_cancel", {taskId: t.taskId})
        .then((info) => onTask(Object.assign({tool: t.tool}, info)), (e) => note("error", e.message))})))));
}

// ---- the server's questions --------------------------------------------------------------------------------
function onInput({id, method, params}) {
  const answer = (result) => api("answer", {id, result}).catch((error) => note("error", error.message));
  let body;
  if (method === "elicitation/create" && params.mode === "url") {
    body = [h("p", {text: params.message}), h("p", {}, h("a", {href: params.url, target: "_blank", rel: "noopener noreferrer", text: params.url})),
      h("div", {className: "actions"},
        h("button", {type: "button", className: "primary", id: "q-accept", text: "Accept (I opened it)", onclick: () => answer({action: "accept"})}),
        h("button", {type: "button", id: "q-decline", text: "Decline", onclick: () => answer({action: "decline"})}),
        h("button", {type: "button", id: "q-cancel", text: "Cancel", onclick: () => answer({action: "cancel"})}))];
  } else if (method === "elicitation/create") {
    const {form, collect} = schemaForm(params.requestedSchema || {}, "q-");
    body = [h("p", {text: params.message}), form, h("div", {className: "actions"},
      h("button", {type: "button", className: "primary", id: "q-accept", text: "Accept", onclick: () => {
        const content = collect();
        if (content !== null) answer({action: "accept", content});
      }}),
      h("button", {type: "button", id: "q-decline", text: "Decline", onclick: () => answer({action: "decline"})}),
      h("button", {type: "button", id: "q-cancel", text: "Cancel", onclick: () => answer({action: "cancel"})}))];
  } else if (method === "sampling/createMessage") {
    const text = h("textarea", {id: "q-sample", rows: 4, placeholder: "the model's answer, written by you"});
    const model = h("input", {type: "text", id: "q-model", value: "a person"});
    body = [h("div", {}, (params.messages || []).map((m) => h("div", {className: "block"}, h("span", {className: "badge", text: m.role}),
      Array.isArray(m.content) ? m.content.map(contentBlock) : contentBlock(m.content)))),
      params.systemPrompt ? h("p", {className: "muted", text: "system prompt: " + params.systemPrompt}) : null,
      params.tools ? h("p", {className: "muted sampling-tools", text: "tools offered: " + params.tools.map((t) => t.name).join(", ")}) : null,
      h("p", {className: "muted", text: "maxTokens " + params.maxTokens}), text, h("label", {}, "model ", model),
      h("div", {className: "actions"}, h("button", {type: "button", className: "primary", id: "q-accept", text: "Send answer",
        onclick: () => answer({role: "assistant", content: {type: "text", text: text.value}, model: model.value, stopReason: "endTurn"})}))];
  } else {
    body = [h("pre", {text: pretty(params)})];
  }
  const box = h("div", {className: "question", "data-question": id, "data-method": method},
    h("strong", {text: method === "sampling/createMessage" ? "The server asks for a completion (sampling)" : "The server asks (" + method + ")"}), body);
  state.questions.set(id, box);
  $("#questions").append(box);
  const first = box.querySelector("input, select, textarea");
  if (first) first.focus();
}

function onInputDone({id}) {
  const box = state.questions.get(id);
  if (box) box.remove();
  state.questions.delete(id);
}

function listen() {
  const events = new EventSource("/events?token=" + encodeURIComponent(TOKEN));
  const handlers = {
    wire: onWire, http: (data) => onHttp(JSON.parse(data)), notify: (data) => onNotify(JSON.parse(data)), progress: (data) => onProgress(JSON.parse(data)),
    task: (data) => onTask(JSON.parse(data)), input: (data) => onInput(JSON.parse(data)),
    input_done: (data) => onInputDone(JSON.parse(data)),
    state: (data) => { const info = JSON.parse(data); if (!state.info || info.connected !== state.info.connected) refreshAll(); },
  };
  for (const [name, handler] of Object.entries(handlers)) {
    events.addEventListener(name, (event) => {
      try { handler(event.data); } catch (error) { console.error(name, error); }
    });
  }
}

// ---- wiring --------------------------------------------------------------------------------------------------
function wire() {
  for (const button of document.querySelectorAll("#lists .tabs button")) {
    button.addEventListener("click", () => {
      state.kind = button.dataset.kind;
      for (const other of document.querySelectorAll("#lists .tabs button")) other.classList.toggle("active", other === button);
      renderItems();
    });
  }
  for (const button of document.querySelectorAll("#side .tabs button")) {
    button.addEventListener("click", () => {
      for (const other of document.querySelectorAll("#side .tabs button")) other.classList.toggle("active", other === button);
      for (const pane of document.querySelectorAll("#side .pane")) pane.classList.toggle("active", pane.id === "pane-" + button.dataset.pane);
    });
  }
  $("#search").addEventListener("input", renderItems);
  $("#log-direction").addEventListener("change", redrawWire);
  $("#log-method").addEventListener("input", redrawWire);
  $("#log-clear").addEventListener("click", () => { state.wire = []; redrawWire(); $("#log-count").textContent = ""; });
  $("#log-detail-close").addEventListener("click", () => { $("#log-detail").hidden = true; });
  $("#notes-clear").addEventListener("click", () => { $("#notifications").replaceChildren(); $("#note-count").textContent = ""; });
  $("#log-level").addEventListener("change", (event) => api("log_level", {level: event.target.value})
    .then(() => note("info", "server log level: " + event.target.value), (e) => note("error", e.message)));
  $("#ping").addEventListener("click", () => api("ping").then((r) => note("info", "ping: " + r.ms + " ms"), (e) => note("error", e.message)));
  $("#reconnect").addEventListener("click", () => { $("#server-name").textContent = "connecting…"; api("connect").then(refreshAll, (e) => { note("error", e.message); refreshAll(); }); });
  $("#disconnect").addEventListener("click", () => api("disconnect").then(showInfo, (e) => note("error", e.message)));
  $("#roots-save").addEventListener("click", () => {
    const roots = $("#roots-text").value.split("\n").map((line) => line.trim()).filter(Boolean).map((line) => {
      const [uri, ...name] = line.split(/\s+/);
      return name.length ? {uri, name: name.join(" ")} : {uri};
    });
    api("roots", {roots}).then((r) => { $("#roots-said").textContent = r.roots.length + " root(s) offered"; },
      (e) => { $("#roots-said").textContent = e.message; });
  });
}

wire();
listen();
refreshAll().catch((error) => { $("#server-name").textContent = "error"; $("#server-meta").textContent = error.message; });
