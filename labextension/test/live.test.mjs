// The live view's module (byre_jupyter/ui/live.js) in a small DOM (linkedom): it draws the
// kernel's traits, applies a growing block's changes, puts the streaming cursor at the end of
// the text, keeps the bar on one line with the whole status in its title, and never applies
// a change to HTML it does not hold.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseHTML } from "linkedom";

const { document } = parseHTML("<!doctype html><html><body></body></html>");
globalThis.document = document;
const { LiveTurn } = await import("../../byre_jupyter/ui/live.js");

class FakeModel {
  constructor(state) {
    this.state = { changes: { seq: 0, pieces: [] }, ...state };
    this.handlers = new Map();
    this.sent = [];
  }
  get(key) {
    return this.state[key];
  }
  set(key, value) {
    this.state[key] = value;
    for (const handler of this.handlers.get(`change:${key}`) || []) handler();
  }
  on(event, handler) {
    this.handlers.set(event, [...(this.handlers.get(event) || []), handler]);
  }
  off(event, handler) {
    this.handlers.set(event, (this.handlers.get(event) || []).filter((h) => h !== handler));
  }
  send(message) {
    this.sent.push(message);
  }
}

const HEAD = {
  style: "border-left:3px solid #d97757",
  prompt: '<div style="opacity:0.7"><b>s</b> ▸ hello</div>',
  frame: "jp-RenderedHTMLCommon",
  help: { default: "default: asks", dontAsk: "dontAsk: never asks" },
};
const BAR = {
  status: "writing · 5.1 s · default from the next request · 31,836 in / 224 out",
  waiting: false,
  done: false,
  models: ["default", "opus"],
  model: "default",
  modes: ["default", "dontAsk"],
  mode: "default",
  stopping: false,
  disabled: false,
};

function mount(extra = {}) {
  const model = new FakeModel({ head: HEAD, bar: BAR, ...extra });
  const el = document.createElement("div");
  document.body.append(el);
  const view = new LiveTurn(model, el);
  return { model, el, view };
}

const text = (id, html, more = {}) => ({
  id, parent: "", slot: "body", kind: "text", growing: true, reset: false, html, ...more,
});

test("renders the frame, the record's prompt line and one bar", () => {
  const { el } = mount();
  const turn = el.querySelector(".byre-live.jp-RenderedHTMLCommon > .byre-turn");
  assert.ok(turn);
  assert.match(turn.getAttribute("style"), /border-left/);
  assert.equal(turn.querySelector(".byre-prompt b").textContent, "s");
  assert.equal(el.querySelectorAll(".byre-bar").length, 1);
  const body = el.querySelector(".byre-live-body");
  assert.equal(body.getAttribute("role"), "log");
  assert.equal(body.getAttribute("aria-live"), "polite");
});

test("the status is one line cut short, its whole text in its title", () => {
  const { el } = mount();
  const status = el.querySelector(".byre-bar .byre-status");
  assert.equal(status.textContent, BAR.status);
  assert.equal(status.getAttribute("title"), BAR.status);
  assert.equal(status.getAttribute("role"), "status");
  // the menus are named, and each permission mode says what it does
  const mode = el.querySelector('select[aria-label="Permissions"]');
  assert.deepEqual([...mode.querySelectorAll("option")].map((o) => o.getAttribute("title")),
    ["default: asks", "dontAsk: never asks"]);
  assert.equal(mode.getAttribute("title"), "default: asks");
  assert.ok(el.querySelector('select[aria-label="Model"]'));
});

test("a growing block is changed in place and a finished block goes before it", () => {
  const { model, el } = mount();
  model.set("changes", { seq: 1, pieces: [text("b1", "<p>Hel</p>")] });
  assert.equal(el.querySelector(".byre-live-body").textContent, "Hel");
  // the kernel sends what the new HTML keeps of the last and the rest
  model.set("changes", {
    seq: 2,
    pieces: [{ id: "b1", keep: 6, add: "lo, world</p>", size: 19, base: 1 }],
  });
  const body = el.querySelector(".byre-live-body");
  assert.equal(body.querySelector("p").textContent, "Hello, world");
  model.set("changes", {
    seq: 3,
    pieces: [
      { id: "b1", keep: 3, add: "Next</p>", size: 11, base: 2 },
      { id: "b1/0", parent: "b1", slot: "done", kind: "html", html: "<p>Hello, world</p>" },
    ],
  });
  assert.deepEqual([...body.querySelectorAll("p")].map((p) => p.textContent.trim()),
    ["Hello, world", "Next"]);
  assert.equal(model.sent.length, 0);
});

test("a change of HTML this view does not hold is not applied: it asks for everything", () => {
  const { model, el } = mount();
  model.set("changes", { seq: 1, pieces: [text("b1", "<p>one</p>")] });
  // change 2 went missing; change 3 edits what change 2 sent
  model.set("changes", {
    seq: 3,
    pieces: [{ id: "b1", keep: 6, add: "<b>x</b></p>", size: 18, base: 2 }],
  });
  assert.equal(el.querySelector(".byre-live-body").textContent, "one");
  assert.deepEqual(model.sent, [{ event: "sync" }]);
});

test("the cursor sits at the end of the growing text, and goes when the turn is done", () => {
  const { model, el } = mount();
  model.set("changes", { seq: 1, pieces: [text("b1", "<p>a</p><ul><li>b</li><li>c</li></ul>")] });
  const cursor = el.querySelector(".byre-cursor");
  assert.ok(cursor, "a cursor while streaming");
  assert.equal(cursor.parentNode.tagName, "LI");
  assert.equal(cursor.parentNode.textContent, "c");
  assert.equal(cursor.getAttribute("aria-hidden"), "true");
  model.set("changes", { seq: 2, pieces: [text("b1", "<p>a</p>", { growing: false })] });
  assert.equal(el.querySelector(".byre-cursor"), null);
  model.set("bar", { ...BAR, done: true, status: "✓ done" });
  assert.equal(el.querySelector(".byre-cursor"), null);
  assert.equal(el.querySelector(".byre-spinner").hidden, true);
});

test("a status tick after the text leaves the cursor where it is", () => {
  // The bar's change can come before the text's in one state update, and every second
  // alone: the cursor already at the end must not be appended to itself (a DOM error that
  // stopped the rest of the update, so the text stopped growing).
  const { model, el } = mount();
  model.set("changes", { seq: 1, pieces: [text("b1", "<p>a <b>bold</b></p>")] });
  model.set("bar", { ...BAR, status: "writing · 6.1 s" });
  model.set("menus", { ...BAR });
  const cursor = el.querySelector(".byre-cursor");
  assert.ok(cursor);
  assert.equal(cursor.parentNode.tagName, "B");
  model.set("changes", { seq: 2, pieces: [text("b1", "<p>a <b>bold</b> <i>it</i></p>")] });
  assert.equal(el.querySelectorAll(".byre-cursor").length, 1);
  assert.equal(el.querySelector(".byre-cursor").parentNode.textContent, "it");
});

test("cards keep their open state when their content changes; images stay in the frame", () => {
  const { model, el } = mount();
  const card = { id: "c1", parent: "", slot: "body", kind: "details", title: "Bash · ls · running",
    html: "<pre>$ ls</pre>", after: "" };
  model.set("changes", { seq: 1, pieces: [card] });
  const details = el.querySelector("details");
  details.open = true;
  model.set("changes", { seq: 2, pieces: [
    { ...card, title: "Bash · ls · 0.1 s", after: "<pre>a.py</pre>" },
    { id: "i1", parent: "c1", slot: "images", kind: "image", type: "image/png", data: "iVBORw0KGgo=" },
  ] });
  assert.equal(el.querySelector("details"), details);
  assert.equal(details.open, true);
  assert.equal(details.querySelector("summary").textContent, "Bash · ls · 0.1 s");
  const img = el.querySelector(".byre-turn img");
  assert.ok(img && img.getAttribute("src").startsWith("data:image/png;base64,"));
  // an image of a type the kernel would not send is not shown at all
  model.set("changes", { seq: 3, pieces: [
    { id: "i2", parent: "", slot: "body", kind: "image", type: "image/svg+xml", data: "PHN2Zz4=" },
  ] });
  assert.equal(el.querySelectorAll("img").length, 1);
});

test("a thinking card's text streams inside the card, dimmed, as a text does", () => {
  const { model, el } = mount();
  const card = { id: "t1", parent: "", slot: "body", kind: "details", title: "Thinking…", html: "" };
  const thought = { ...text("t1/t", "<p>Fir</p>"), parent: "t1", slot: "text" };
  model.set("changes", { seq: 1, pieces: [card, thought] });
  model.set("changes", { seq: 2, pieces: [
    { id: "t1/t", keep: 6, add: "st step</p>", size: 17, base: 1 },
  ] });
  const dimmed = el.querySelector("details .byre-thought");
  assert.ok(dimmed, "the thought's box in the card");
  assert.equal(dimmed.textContent, "First step");
  model.set("changes", { seq: 3, pieces: [{ ...card, title: "Thinking" }] });
  assert.equal(el.querySelector("details .byre-thought").textContent, "First step");
  assert.equal(el.querySelector("summary").textContent, "Thinking");
  assert.equal(model.sent.length, 0);
});

test("the controls send the user's choice, and only that", () => {
  const { model, el } = mount();
  el.querySelector(".byre-stop").dispatchEvent(new document.defaultView.Event("click"));
  const menu = el.querySelector('select[aria-label="Model"]');
  menu.querySelectorAll("option")[1].selected = true; // the user picks "opus"
  menu.dispatchEvent(new document.defaultView.Event("change"));
  assert.deepEqual(model.sent, [{ event: "stop" }, { event: "model", value: "opus" }]);
  model.set("bar", { ...BAR, stopping: true });
  const stop = el.querySelector(".byre-stop");
  assert.equal(stop.textContent, "Stopping…");
  assert.equal(stop.disabled, true);
});

test("the cursor follows plain text after the last bold, code or link of a paragraph", () => {
  // lastLeaf looked at elements only: the cursor sat after "bold" while " and more" grew.
  const { model, el } = mount();
  for (const [seq, html, tail] of [
    [1, "<p>Some <b>bold</b> and more</p>", " and more"],
    [2, "<p>Call <code>f()</code> then this</p>", " then this"],
    [3, '<p>See <a href="#x">the docs</a>, then</p>', ", then"],
    [4, "<ul><li>one</li><li>two <em>2</em> tail</li></ul>\n", " tail"],
  ]) {
    model.set("changes", { seq, pieces: [text("b1", html)] });
    const cursor = el.querySelector(".byre-cursor");
    assert.ok(cursor, html);
    const before = cursor.previousSibling;
    assert.equal(before && before.nodeType, 3, html); // right after a text node
    assert.equal(before.textContent, tail, html);
    assert.equal(cursor.parentNode.lastChild, cursor, html);
  }
  // text that ends inside an element still gets the cursor there
  model.set("changes", { seq: 5, pieces: [text("b1", "<p>a <b>bold</b></p>")] });
  assert.equal(el.querySelector(".byre-cursor").parentNode.tagName, "B");
});

test("the header: labelled model, mode and effort menus, a context slot, and Stop", () => {
  const { model, el } = mount({
    menus: { ...BAR, efforts: ["default", "low", "high"], effort: "high" },
  });
  const head = el.querySelector(".byre-head");
  assert.ok(head, "a header");
  // above the answer: the frame starts with it, the body comes after
  const turn = el.querySelector(".byre-turn");
  assert.equal(turn.firstElementChild, head);
  assert.ok(head.querySelector(".byre-stop"), "Stop is in the header");
  assert.equal(el.querySelectorAll(".byre-stop").length, 1);
  assert.ok(head.querySelector(".byre-context"), "a slot for the context meter");
  const captions = [...head.querySelectorAll(".byre-field")].map((f) => [
    f.querySelector(".byre-caption").textContent,
    f.querySelector("select").getAttribute("aria-label"),
  ]);
  assert.deepEqual(captions, [["model", "Model"], ["mode", "Permissions"], ["effort", "Effort"]]);
  const effort = head.querySelector('select[aria-label="Effort"]');
  assert.deepEqual([...effort.querySelectorAll("option")].map((o) => o.value),
    ["default", "low", "high"]);
  assert.equal(effort.value, "high");
  effort.querySelectorAll("option")[1].selected = true;
  effort.dispatchEvent(new document.defaultView.Event("change"));
  assert.deepEqual(model.sent, [{ event: "effort", value: "low" }]);
  // no efforts: no effort field (a surface that cannot change it)
  model.set("menus", { ...BAR, efforts: null });
  assert.equal(effort.closest(".byre-field").hidden, true);
});
