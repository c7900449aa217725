// weblica viewer: lists a run's episodes (or two runs' episodes paired by task) and shows one step by step.
// Plain DOM; every text goes through textContent, since responses and pages are untrusted model output.
"use strict";

const state = { runs: [], viewport: { width: 1280, height: 720 }, rows: [], active: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "style") node.style.cssText = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function getJSON(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

function compareMode() { return state.runs.length > 1; }

function filterQuery() {
  const params = new URLSearchParams();
  for (const [k, v] of new FormData(document.getElementById("filters"))) if (v) params.set(k, v);
  return params.toString();
}

function fillFilters() {
  const union = (key) => [...new Set(state.runs.flatMap((r) => r.facets[key]))].sort();
  const form = document.getElementById("filters");
  for (const [name, values] of [["outcome", ["success", "failure", "aborted"]], ["skill", union("skill")],
                                ["termination", union("termination")]]) {
    const select = form.elements[name];
    for (const v of values) select.append(el("option", { value: v }, v));
    if (!values.length) select.disabled = true;
  }
  form.addEventListener("change", loadList);
}

async function loadList() {
  const query = filterQuery();
  state.rows = compareMode() ? await getJSON(`/api/compare?${query}`)
                             : await getJSON(`/api/runs/0/episodes?${query}`);
  const list = document.getElementById("episodes");
  list.replaceChildren();
  state.rows.forEach((row, i) => {
    const episodes = compareMode() ? row.episodes : [row];
    const first = episodes.find((e) => e) || {};
    const badges = episodes.map((e) => el("span", { class: `badge ${e ? e.outcome : "none"}`,
                                                    title: e ? `${e.outcome} (${e.termination_reason})` : "missing" }));
    const meta = episodes.map((e) => (e ? `${e.steps} step${e.steps === 1 ? "" : "s"}` : "–")).join(" | ");
    list.append(el("li", { "data-key": key(i), onclick: () => { location.hash = key(i); } }, badges,
                   taskLabel(first.task_id, first.repeat, first.instruction),
                   el("span", { class: "meta" }, meta)));
  });
  document.getElementById("count").textContent =
    `${state.rows.length} ${compareMode() ? "tasks × repeats" : "episodes"} shown`;
  route();
}

// A long task id is cut in its middle, never at its end: tasks of one site share a long prefix and differ in
// their last characters (forms-travel-2a9523da-t01, -t02, ...), so the end always stays in view.
const ID_TAIL = 12;

function taskLabel(id, repeat, instruction) {
  const text = String(id ?? "");
  const cut = Math.max(0, text.length - ID_TAIL);
  return el("span", { class: "task", title: `${text} #${repeat}${instruction ? `\n${instruction}` : ""}` },
            el("span", { class: "head" }, text.slice(0, cut)),
            el("span", { class: "tail" }, `${text.slice(cut)} #${repeat}`));
}

function key(i) {
  if (compareMode()) return `#pair/${i}`;
  return `#episode/0/${state.rows[i].index}`;
}

async function route() {
  const hash = location.hash;
  for (const li of document.querySelectorAll("#episodes li")) li.classList.toggle("active", li.dataset.key === hash);
  let refs = null;
  let match = hash.match(/^#episode\/(\d+)\/(\d+)$/);
  if (match) refs = [[+match[1], +match[2]]];
  match = hash.match(/^#pair\/(\d+)$/);
  if (match && state.rows[+match[1]]) refs = state.rows[+match[1]].episodes.map((e) => (e ? [e.run, e.index] : null));
  if (!refs) return;
  const episodes = await Promise.all(refs.map((r) => (r ? getJSON(`/api/runs/${r[0]}/episodes/${r[1]}`) : null)));
  const panes = el("div", { class: "panes", style: `--panes:${episodes.length}` },
                   episodes.map((ep, i) => renderEpisode(ep, state.runs[refs[i] ? refs[i][0] : i])));
  document.getElementById("detail").replaceChildren(panes);
}

function renderEpisode(ep, run) {
  if (!ep) return el("section", { class: "pane" }, el("p", { class: "empty" }, "No such episode in this run."));
  const fact = (text) => (text === null ? null : el("span", {}, text));
  const judge = ep.metadata && ep.metadata.judge;
  const facts = el("div", { class: "facts" },
    el("span", { class: `outcome-${ep.outcome}` }, ep.outcome), fact(`termination: ${ep.termination_reason}`),
    fact(`reward: ${ep.reward}`), fact(`${ep.steps} steps`), fact(ep.skill ? `skill: ${ep.skill}` : null),
    fact(ep.answer !== null && ep.answer !== undefined ? `answer: ${ep.answer}` : null),
    fact(ep.metadata && ep.metadata.fault ? `fault: ${ep.metadata.fault}` : null),
    fact(judge ? `judge (${judge.protocol}): ${judge.reason}` : null));
  const checks = (ep.check_results || []).map((c) =>
    el("li", { class: c.passed ? "pass" : "fail" }, `${c.passed ? "✓" : "✗"} ${c.type}: ${c.detail}`));
  return el("section", { class: "pane", "data-run": run ? run.index : "", "data-episode": ep.index },
    el("h2", {}, `${run ? run.name + " · " : ""}${ep.task_id} #${ep.repeat}`),
    ep.instruction ? el("div", { class: "instruction" }, ep.instruction) : null,
    facts,
    ep.error ? el("div", { class: "errors" }, `error: ${ep.error}`) : null,
    checks.length ? el("ul", { class: "checks" }, checks) : null,
    ep.steps_detail.map((s, i) => renderStep(s, i)),
    ep.final_screenshot ? el("div", { class: "step final" }, el("h3", {}, "final page"),
                             el("div", { class: "shot" }, el("img", { src: ep.final_screenshot, alt: "final page" })))
                        : null);
}

// The points an action acts on, in viewport pixels: [x, y, kind, label].
function actionPoints(action) {
  const a = action.arguments || {};
  const num = (v) => (typeof v === "number" ? v : v !== undefined && v !== null && v !== "" ? Number(v) : NaN);
  const point = (x, y, kind) => (Number.isFinite(num(x)) && Number.isFinite(num(y)) ? [[num(x), num(y), kind]] : []);
  switch (action.name) {
    case "click": return point(a.x, a.y, "click");
    case "hover": return point(a.x, a.y, "hover");
    case "drag": return [...point(a.x1, a.y1, "drag-start"), ...point(a.x2, a.y2, "drag-end")];
    case "scroll": return point(a.x, a.y, "scroll");
    case "write": return point(a.x ?? a._x, a.y ?? a._y, "write");  // write clicks its field first when given one
    default: return [];
  }
}

function renderShot(src, actions) {
  const { width, height } = state.viewport;
  // width/height reserve the image's box before it loads, so lazy images do not shift the markers' page
  const shot = el("div", { class: "shot" }, el("img", { src, alt: "screenshot the agent saw", loading: "lazy",
                                                        width, height }));
  const lines = [];
  actions.forEach((action, i) => {
    const points = actionPoints(action);
    for (const [x, y, kind] of points) {
      // percentages of the wrapper, which is exactly the displayed image: the marker scales with it
      shot.append(el("div", { class: `marker ${kind}`, "data-action": i, "data-kind": kind, "data-x": x, "data-y": y,
                              title: `${action.name} (${Math.round(x)}, ${Math.round(y)})`,
                              style: `left:${(100 * x) / width}%;top:${(100 * y) / height}%` }, String(i + 1)));
    }
    if (action.name === "drag" && points.length === 2) lines.push(points);
  });
  if (lines.length) {
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("class", "drag-lines");
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("preserveAspectRatio", "none");
    for (const [[x1, y1], [x2, y2]] of lines) {
      const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
      Object.entries({ x1, y1, x2, y2, stroke: "#286ee6", "stroke-width": 3, "stroke-dasharray": "8 5" })
        .forEach(([k, v]) => line.setAttribute(k, v));
      svg.append(line);
    }
    shot.append(svg);
  }
  return shot;
}

function callText(action) {
  const args = Object.entries(action.arguments || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `${action.name}(${args.join(", ")})`;
}

function renderStep(step, i) {
  const calls = step.actions.map((a, j) => el("li", {}, el("span", { class: "n" }, String(j + 1)), callText(a)));
  return el("div", { class: "step", "data-step": i },
    el("h3", {}, el("span", {}, `step ${i + 1}`), el("span", { class: "url", title: step.url }, step.url)),
    step.screenshot ? renderShot(step.screenshot, step.actions) : el("p", { class: "empty" }, "no screenshot"),
    calls.length ? el("ol", { class: "calls" }, calls) : el("p", { class: "empty" }, "no tool call parsed"),
    step.parse_errors && step.parse_errors.length ? el("div", { class: "errors" }, step.parse_errors.join("; ")) : null,
    step.response ? el("pre", { class: "response" }, step.response) : null,
    step.feedback.length ? el("ul", { class: "feedback" }, step.feedback.map((f) => el("li", {}, f))) : null);
}

// j / k (or the arrow keys) move to the next / previous episode in the list
function stepThrough(event) {
  if (event.target.closest("select, input, textarea")) return;
  const delta = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 }[event.key];
  if (!delta || !state.rows.length) return;
  const keys = state.rows.map((_, i) => key(i));
  const next = Math.min(Math.max(keys.indexOf(location.hash) + delta, 0), keys.length - 1);
  event.preventDefault();
  location.hash = keys[next];
  const li = document.querySelector(`#episodes li[data-key="${keys[next]}"]`);
  if (li) li.scrollIntoView({ block: "nearest" });
}

async function main() {
  const data = await getJSON("/api/runs");
  state.runs = data.runs;
  state.viewport = data.viewport;
  document.getElementById("runs").replaceChildren(...state.runs.map((r) =>
    el("span", { title: r.path }, `${r.name}: ${r.episodes} episodes` +
       (r.summary && r.summary.success_rate !== undefined ? `, success ${(100 * r.summary.success_rate).toFixed(1)}%` : ""))));
  fillFilters();
  window.addEventListener("hashchange", route);
  document.addEventListener("keydown", stepThrough);
  await loadList();
  document.body.dataset.ready = "1";  // lets tests and scripts know the first render is done
}

main().catch((err) => {
  document.getElementById("detail").replaceChildren(el("p", { class: "errors" }, String(err)));
});
