// skiff's demo pages: one tab per endpoint `skiff serve` runs (GET /v1/endpoints).
// Endpoints that take an image get a drop zone and the result drawn on the image;
// streaming ones (nlp/generate) a prompt box whose answer arrives piece by piece.
// Plain JS, no dependencies: everything is served by skiff itself.
"use strict";

const TEXT = {
  en: { loading: "Loading…", drop: "Drop an image here, or pick one", copy: "Copy text", json: "Download JSON",
        prompt: "Prompt", max_tokens: "Max new tokens", temperature: "Temperature", generate: "Generate",
        running: "Running…", done: "{n} results in {ms} ms (server {server} ms)", threshold: "Score threshold",
        models: "Models", none: "Nothing is served: start skiff serve with an endpoint, e.g. skiff serve ocr",
        copied: "Copied", tokens: "{n} tokens in {ms} ms ({reason})", input: "inputs", output: "outputs" },
  zh: { loading: "加载中…", drop: "把图像拖到这里，或点击选择", copy: "复制文本", json: "下载 JSON",
        prompt: "提示词", max_tokens: "最多生成词元", temperature: "温度", generate: "生成",
        running: "运行中…", done: "{n} 个结果，用时 {ms} 毫秒（服务端 {server} 毫秒）", threshold: "分数阈值",
        models: "模型", none: "没有可用的服务：启动 skiff serve 时请指定端点，例如 skiff serve ocr",
        copied: "已复制", tokens: "{n} 个词元，用时 {ms} 毫秒（{reason}）", input: "输入", output: "输出" },
};
let lang = localStorage.getItem("skiff-lang") || (navigator.language.startsWith("zh") ? "zh" : "en");
const t = (key, args = {}) => TEXT[lang][key].replace(/\{(\w+)\}/g, (_, k) => args[k]);

function translate(root = document) {
  document.documentElement.lang = lang;
  document.getElementById("lang").textContent = lang === "en" ? "中文" : "English";
  root.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
}

async function post(route, body) {
  const res = await fetch("/" + route, { method: "POST", headers: { "Content-Type": "application/json" },
                                         body: JSON.stringify(body) });
  const answer = await res.json();
  if (answer.errorCode !== 0) throw new Error(`${answer.errorCode}: ${answer.errorMsg}`);
  return answer.result;
}

function readBase64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result.slice(reader.result.indexOf(",") + 1));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

// ---- results drawn on the image --------------------------------------------------

/// The items of an answer, whatever the endpoint: {label, score, polygon: [[x, y], ...]}.
function itemsOf(result) {
  if (result.ocrResults) {
    const r = result.ocrResults[0].prunedResult;
    return r.rec_texts.map((text, i) => ({ label: text, score: r.rec_scores[i], polygon: r.rec_polys[i] }));
  }
  if (result.detectedObjects) {
    return result.detectedObjects.map((o) => {
      const [x0, y0, x1, y1] = o.bbox;
      return { label: o.categoryName, score: o.score, polygon: [[x0, y0], [x1, y0], [x1, y1], [x0, y1]] };
    });
  }
  return [];
}

function serverMs(result) {
  const timings = result.ocrResults && result.ocrResults[0].prunedResult.timings_ms;
  return timings ? Math.round(timings.total) : "–";
}

function draw(canvas, image, items) {
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const g = canvas.getContext("2d");
  g.drawImage(image, 0, 0);
  g.lineWidth = Math.max(2, image.naturalWidth / 400);
  g.font = `${Math.max(12, image.naturalWidth / 60)}px sans-serif`;
  items.forEach((item, i) => {
    const hue = (i * 67) % 360;
    g.strokeStyle = `hsl(${hue} 80% 45%)`;
    g.beginPath();
    item.polygon.forEach(([x, y], k) => (k ? g.lineTo(x, y) : g.moveTo(x, y)));
    g.closePath();
    g.stroke();
    g.fillStyle = g.strokeStyle;
    g.fillText(String(i + 1), item.polygon[0][0] + 2, item.polygon[0][1] - 3);
  });
}

function imageDemo(route, info) {
  const node = document.getElementById("image-demo").content.cloneNode(true).firstElementChild;
  const drop = node.querySelector(".drop"), input = node.querySelector("input[type=file]");
  const status = node.querySelector(".status"), canvas = node.querySelector("canvas");
  const list = node.querySelector(".items"), controls = node.querySelector(".controls");
  let last = null, image = null, items = [];
  let floor = info.settings && info.settings.threshold !== undefined ? info.settings.threshold : null;
  let threshold = floor;
  const render = () => {
    const shown = threshold === null ? items : items.filter((it) => it.score >= threshold);
    draw(canvas, image, shown);
    list.replaceChildren(...shown.map((it) => {
      const li = document.createElement("li");
      li.textContent = it.label;
      const score = document.createElement("span");
      score.className = "score";
      score.textContent = it.score.toFixed(3);
      li.append(score);
      return li;
    }));
  };
  if (floor !== null) {
    // Detection: the slider re-filters what the server sent, without another request.
    const label = document.createElement("label");
    label.innerHTML = `<span data-i18n="threshold"></span> <input type="range" min="${floor}" max="1" step="0.01" value="${floor}"> <output>${floor.toFixed(2)}</output>`;
    const slider = label.querySelector("input"), out = label.querySelector("output");
    slider.addEventListener("input", () => {
      threshold = Number(slider.value);
      out.textContent = threshold.toFixed(2);
      if (image) render();
    });
    controls.append(label);
  }
  const run = async (file) => {
    status.className = "status";
    status.textContent = t("running");
    try {
      const started = performance.now();
      const body = { [info.imageField]: await readBase64(file) };
      const result = await post(route, body);
      const ms = Math.round(performance.now() - started);
      image = new Image();
      image.src = URL.createObjectURL(file);
      await image.decode();
      last = result;
      items = itemsOf(result);
      render();
      status.textContent = t("done", { n: items.length, ms, server: serverMs(result) });
    } catch (e) {
      status.className = "status error";
      status.textContent = e.message;
    }
  };
  input.addEventListener("change", () => input.files[0] && run(input.files[0]));
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    if (e.dataTransfer.files[0]) run(e.dataTransfer.files[0]);
  });
  node.querySelector(".copy").addEventListener("click", async () => {
    await navigator.clipboard.writeText(items.map((it) => it.label).join("\n"));
    status.textContent = t("copied");
  });
  node.querySelector(".download").addEventListener("click", () => {
    if (!last) return;
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([JSON.stringify(last, null, 1)], { type: "application/json" }));
    a.download = route.replace(/\//g, "_") + "_result.json";
    a.click();
  });
  return node;
}

// ---- streamed generation ---------------------------------------------------------

function generateDemo(route) {
  const node = document.getElementById("generate-demo").content.cloneNode(true).firstElementChild;
  const status = node.querySelector(".status"), output = node.querySelector(".output");
  node.querySelector(".run").addEventListener("click", async () => {
    output.textContent = "";
    status.className = "status";
    status.textContent = t("running");
    const started = performance.now();
    try {
      const res = await fetch("/" + route, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ prompt: node.querySelector("textarea").value, stream: true,
                               maxNewTokens: Number(node.querySelector(".max").value),
                               temperature: Number(node.querySelector(".temp").value) }) });
      const reader = res.body.getReader(), decoder = new TextDecoder();
      let buffer = "", final = null;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const event = JSON.parse(buffer.slice(buffer.indexOf("data: ") + 6, end));
          buffer = buffer.slice(end + 2);
          if (event.errorCode !== undefined) final = event;
          else output.textContent += event.text;
        }
      }
      if (!final || final.errorCode !== 0) throw new Error(final ? `${final.errorCode}: ${final.errorMsg}` : "no answer");
      status.textContent = t("tokens", { n: final.result.newTokens, ms: Math.round(performance.now() - started),
                                         reason: final.result.stopReason });
    } catch (e) {
      status.className = "status error";
      status.textContent = e.message;
    }
  });
  return node;
}

function modelsTable(models) {
  const el = (tag, text, cls) => Object.assign(document.createElement(tag), text ? { textContent: text } : {},
                                               cls ? { className: cls } : {});
  const table = el("table", "", "models");
  const head = el("tr"), inputs = el("th"), outputs = el("th");
  inputs.dataset.i18n = "input";
  outputs.dataset.i18n = "output";
  head.append(el("th"), inputs, outputs);
  table.append(head);
  const io = (list) => list.map((v) => `${v.name} ${v.dtype} [${(v.shape || []).join(", ")}]`).join("\n");
  for (const [name, m] of Object.entries(models)) {
    const row = el("tr"), what = el("td");
    what.append(el("code", `POST /v1/models/${name}:predict`), el("div", m.source));
    row.append(what, el("td", io(m.inputs), "io"), el("td", io(m.outputs), "io"));
    table.append(row);
  }
  return table;
}

// ---- the page --------------------------------------------------------------------

async function main() {
  document.getElementById("lang").addEventListener("click", () => {
    lang = lang === "en" ? "zh" : "en";
    localStorage.setItem("skiff-lang", lang);
    translate();
  });
  translate();
  const served = (await (await fetch("/v1/endpoints")).json()).result;
  const tabs = document.getElementById("tabs"), main = document.getElementById("main");
  const pages = [];
  for (const [route, info] of Object.entries(served.endpoints)) {
    if (info.imageField) pages.push([route, () => imageDemo(route, info)]);
    else if (info.streams) pages.push([route, () => generateDemo(route)]);
  }
  if (Object.keys(served.models).length) pages.push(["models", () => modelsTable(served.models), "models"]);
  if (!pages.length) {
    main.replaceChildren(Object.assign(document.createElement("p"), { textContent: t("none") }));
    return;
  }
  const views = new Map();
  const show = (route) => {
    if (!views.has(route)) views.set(route, pages.find((p) => p[0] === route)[1]());
    main.replaceChildren(views.get(route));
    tabs.querySelectorAll("button").forEach((b) => b.setAttribute("aria-selected", String(b.dataset.route === route)));
    translate(main);
    history.replaceState(null, "", "#" + route);
  };
  for (const [route, , key] of pages) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.route = route;
    if (key) b.dataset.i18n = key;
    else b.textContent = "/" + route;
    b.addEventListener("click", () => show(route));
    tabs.append(b);
  }
  translate();
  const wanted = decodeURIComponent(location.hash.slice(1));
  show(pages.some((p) => p[0] === wanted) ? wanted : pages[0][0]);
}

main();
