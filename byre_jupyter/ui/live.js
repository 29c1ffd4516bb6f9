// The live view of a running %%claude turn: draws the traits of byre_jupyter/ui/live.py
// (docs/kernel.md, sections 3 to 5). Every HTML string set here came from the kernel, where
// nh3 sanitized it; everything else is set as text. No inline handlers, nothing loaded.

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

function make(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

// The kernel's sanitized HTML as nodes (a <template> runs nothing): the one place HTML is set,
// and only with what nh3 let through in the kernel (docs/security.md).
function nodes(html) {
  const t = document.createElement("template");
  // eslint-disable-next-line no-restricted-syntax -- the kernel's sanitized HTML only
  t.innerHTML = html || "";
  return [...t.content.childNodes];
}

// Elements the cursor never goes into: it goes after them.
const VOID = new Set(["BR", "HR", "IMG", "INPUT", "WBR"]);

// The innermost element that ends the text, where the streaming cursor goes: the paragraph
// itself when its text ends in plain text after a bold, code or link (looking at elements
// alone put the cursor after the last of them while the text grew on after it). Whitespace
// between blocks and the cursor itself are not text.
function lastLeaf(node) {
  let el = node;
  for (;;) {
    let last = el.lastChild;
    while (last && !isText(last) && !(last.nodeType === 1 && !last.classList.contains("byre-cursor"))) {
      last = last.previousSibling;
    }
    if (!last || last.nodeType !== 1 || VOID.has(last.tagName)) return el;
    if (last.tagName === "PRE" || last.tagName === "CODE") return last;
    el = last;
  }
}

function isText(node) {
  return node.nodeType === 3 && node.textContent.trim() !== "";
}

// One view of the model: the frame, the pieces by id, the bar.
export class LiveTurn {
  constructor(model, el) {
    this.model = model;
    this.el = el;
    this.pieces = new Map();
    this.seq = 0;
    const head = model.get("head") || {};
    this.help = head.help || {};
    const outer = make("div", `byre-live ${head.frame || ""}`);
    this.frame = make("div", "byre-turn");
    this.frame.style.cssText = head.style || "";
    const prompt = make("div", "byre-prompt");
    prompt.append(...nodes(head.prompt));
    this.body = make("div", "byre-live-body");
    this.body.setAttribute("role", "log");
    this.body.setAttribute("aria-live", "polite");
    this.body.setAttribute("aria-label", "Answer");
    this.bar = this.makeBar();
    // The controls above the answer, where they stay while it grows (the status line is the
    // record's footer, below it; the running tasks just above it).
    this.frame.append(this.bar.head, prompt, this.body, this.bar.tasks, this.bar.node);
    outer.append(this.frame);
    el.replaceChildren(outer);
    this.cursor = make("span", "byre-cursor");
    this.cursor.setAttribute("aria-hidden", "true");
    this.onChanges = () => this.apply(model.get("changes"));
    this.onBar = () => this.drawBar({ ...model.get("menus"), ...model.get("bar") });
    model.on("change:changes", this.onChanges);
    model.on("change:bar", this.onBar);
    model.on("change:menus", this.onBar);
    this.onBar();
    const first = model.get("changes") || { seq: 0 };
    if (first.seq > 0) {
      this.apply(first); // what this view missed comes with the sync below
      this.resync();
    }
  }

  dispose() {
    this.model.off("change:changes", this.onChanges);
    this.model.off("change:bar", this.onBar);
    this.model.off("change:menus", this.onBar);
  }

  makeBar() {
    const node = make("div", "byre-bar");
    const spinner = make("span", "byre-spinner");
    spinner.setAttribute("aria-hidden", "true");
    const status = make("span", "byre-status");
    status.setAttribute("role", "status");
    status.setAttribute("aria-live", "polite");
    // How full the context window is (used / window), in the header beside the menus.
    const context = make("span", "byre-context");
    const model = this.menu("Model", "model");
    const mode = this.menu("Permissions", "mode");
    const effort = this.menu("Effort", "effort");
    const stop = make("button", "byre-stop jupyter-button widget-button", "Stop");
    stop.type = "button";
    stop.title = "Interrupt this turn";
    stop.addEventListener("click", () => {
      this.model.send({ event: "stop" });
      // The focus goes back to the cell, so Shift+Enter goes on working (the button is
      // disabled once the kernel took the click and would drop it to the page body).
      const cell = this.el.closest(".jp-Cell");
      if (cell) setTimeout(() => cell.focus(), 0);
    });
    node.append(spinner, status);
    // The header: each menu with its caption, whole (they wrap onto a second line rather than
    // cut a value short), the context meter, and Stop at the end of the first line.
    const head = make("div", "byre-head");
    const menus = make("div", "byre-menus");
    // The meter wraps with the menus (a sibling of theirs would narrow them and cut a value).
    menus.append(field("model", model), field("mode", mode), field("effort", effort), context);
    head.append(menus, stop);
    // The tasks running now (a long Bash call, a subagent), each with its own Stop.
    const tasks = make("div", "byre-tasks");
    tasks.hidden = true;
    return { node, head, spinner, status, context, model, mode, effort, stop, tasks };
  }

  menu(label, event) {
    const select = make("select", `byre-menu byre-${event}`);
    select.setAttribute("aria-label", label);
    select.title = label;
    select.addEventListener("change", () => {
      this.model.send({ event, value: select.value });
    });
    return select;
  }

  drawBar(bar) {
    const b = this.bar;
    b.spinner.hidden = !!bar.done;
    b.status.textContent = bar.status || "";
    b.status.title = bar.status || ""; // the whole line, when it is cut short
    b.status.classList.toggle("byre-waiting", !!bar.waiting);
    b.context.textContent = bar.context || "";
    b.context.title = bar.context_title || "";
    b.context.hidden = !bar.context;
    this.drawTasks(bar.tasks || []);
    options(b.model, bar.models || [], bar.model, (m) => m);
    b.model.title = `Model: ${bar.model || "default"} (from the next request)`;
    b.mode.parentNode.hidden = !bar.modes;
    options(b.mode, bar.modes || [], bar.mode, (m) => this.help[m] || m);
    b.mode.title = this.help[bar.mode] || "Permission mode";
    b.effort.parentNode.hidden = !bar.efforts;
    options(b.effort, bar.efforts || [], bar.effort, (e) => e);
    b.effort.title = `Effort: ${bar.effort || "default"} (from the next request)`;
    b.stop.textContent = bar.stopping ? "Stopping…" : "Stop";
    b.model.disabled = b.mode.disabled = b.effort.disabled = !!bar.disabled;
    b.stop.disabled = !!(bar.disabled || bar.stopping);
    this.frame.classList.toggle("byre-streaming", !bar.done);
    this.placeCursor();
  }

  drawTasks(tasks) {
    const box = this.bar.tasks;
    const key = JSON.stringify(tasks);
    if (box.dataset.key === key) return; // the bar redraws every second: keep the buttons
    box.dataset.key = key;
    box.replaceChildren();
    for (const [id, what] of tasks) {
      const line = make("div", "byre-task");
      const label = make("span", "byre-task-label", what);
      label.title = what;
      const stop = make("button", "byre-task-stop jupyter-button widget-button", "Stop");
      stop.type = "button";
      stop.title = "Stop this task (the turn goes on)";
      stop.addEventListener("click", () => {
        stop.disabled = true;
        this.model.send({ event: "stop_task", value: id });
      });
      line.append(label, stop);
      box.append(line);
    }
    box.hidden = tasks.length === 0;
  }

  apply(changes) {
    if (!changes || !changes.pieces || changes.seq <= this.seq) return;
    this.seq = changes.seq;
    for (const piece of changes.pieces) this.put(piece);
    this.placeCursor();
  }

  // A change went missing (a view opened late): ask the kernel for everything once.
  resync() {
    if (this.asked === this.seq) return;
    this.asked = this.seq;
    this.model.send({ event: "sync" });
  }

  put(piece) {
    let known = this.pieces.get(piece.id);
    if (!known && piece.keep !== undefined) {
      this.resync(); // a change of a block this view never got
      return;
    }
    if (!known) {
      known = this.create(piece);
      if (!known) return;
      const parent = this.pieces.get(piece.parent);
      if (piece.slot === "done") {
        if (!parent || !parent.insertDone) return;
        parent.insertDone(known.nodes);
      } else {
        const box = parent ? parent[piece.slot] : this.body;
        if (!box) return;
        box.append(...known.nodes);
      }
      this.pieces.set(piece.id, known);
    } else if (piece.slot === "done") {
      return; // a finished block never changes
    }
    known.update(piece);
  }

  create(piece) {
    const kind = LiveTurn.kinds[piece.kind];
    return kind ? kind(piece, this) : null;
  }

  placeCursor() {
    const streaming = this.frame.classList.contains("byre-streaming");
    let target = null;
    if (streaming) {
      for (const known of this.pieces.values()) {
        if (known.growing) target = known;
      }
    }
    const leaf = target ? lastLeaf(target.tailBox()) || target.box : null;
    // The cursor itself is the last leaf when it is in place already (a bar change after
    // the text's): appending it to itself would throw and stop the rest of the update.
    if (leaf === this.cursor) return;
    if (leaf) {
      if (this.cursor.parentNode !== leaf || leaf.lastChild !== this.cursor) {
        leaf.append(this.cursor);
      }
    } else {
      this.cursor.remove();
    }
  }
}

// A menu with its caption: a <label>, so a click on the word opens the menu too.
function field(caption, select) {
  const label = make("label", "byre-field");
  label.append(make("span", "byre-caption", caption), select);
  return label;
}

function options(select, values, value, label) {
  const have = [...select.querySelectorAll("option")].map((o) => o.value);
  if (have.join("\n") !== values.join("\n")) {
    select.replaceChildren(
      ...values.map((v) => {
        const option = make("option", "", v);
        option.value = v;
        option.title = label(v);
        return option;
      }),
    );
  }
  for (const option of select.querySelectorAll("option")) {
    if ((option.value === value) !== option.selected) option.selected = option.value === value;
  }
}

// What each kind of piece draws. A text's finished blocks ("done" pieces) go into its box in
// order, before the block being written, so it lays out as the record does.
LiveTurn.kinds = {
  text(piece, view) {
    const box = make("div");
    let tail = [];
    let html = ""; // the growing block's HTML as the kernel last sent it
    let seq = 0; // and the change that sent it
    return {
      nodes: [box],
      box,
      growing: false,
      tailBox: () => {
        const holder = tail.length ? tail[tail.length - 1] : null;
        return holder && holder.nodeType === 1 ? holder : box;
      },
      insertDone(added) {
        if (tail.length && tail[0].parentNode === box) tail[0].before(...added);
        else box.append(...added);
      },
      update(p) {
        if (p.keep !== undefined) {
          // A change of the HTML of change ``base``: its first ``keep`` units, then ``add``.
          // Only onto that very string, so what is shown is the kernel's sanitized HTML.
          const next = html.slice(0, p.keep) + p.add;
          if (p.base !== seq || html.length < p.keep || next.length !== p.size) {
            view.resync();
            return;
          }
          html = next;
        } else {
          html = p.html || "";
        }
        seq = view.seq;
        if (p.reset) {
          for (const id of [...view.pieces.keys()]) {
            if (id.startsWith(`${piece.id}/`)) view.pieces.delete(id);
          }
          box.replaceChildren();
          tail = [];
        }
        view.cursor.remove();
        for (const node of tail) node.remove();
        tail = nodes(html);
        box.append(...tail);
        if (p.growing !== undefined) this.growing = !!p.growing;
        markCopyButtons(box);
      },
    };
  },
  html(piece) {
    const added = nodes(piece.html);
    const holder = make("div", "byre-piece");
    return {
      nodes: piece.slot === "done" ? added : [holder],
      update(p) {
        if (piece.slot !== "done") holder.replaceChildren(...nodes(p.html));
        markCopyButtons(holder.parentNode ? holder : added[0]?.parentNode);
      },
    };
  },
  details() {
    const details = make("details");
    const summary = make("summary");
    const text = make("div", "byre-thought"); // a thinking card's text (a text piece)
    const before = make("div");
    const kids = make("div", "byre-kids");
    const after = make("div");
    details.append(summary, text, before, kids, after);
    const images = make("div", "byre-images");
    return {
      nodes: [details, images],
      text,
      kids,
      images,
      update(p) {
        summary.textContent = p.title || "";
        summary.classList.toggle("byre-error", !!p.error);
        before.replaceChildren(...nodes(p.html));
        after.replaceChildren(...nodes(p.after));
      },
    };
  },
  image(piece) {
    if (!IMAGE_TYPES.includes(piece.type) || !/^[A-Za-z0-9+/=]*$/.test(piece.data)) return null;
    const img = make("img", "byre-image");
    img.src = `data:${piece.type};base64,${piece.data}`;
    img.alt = "image";
    return { nodes: [img], update() {} };
  },
};

// The copy buttons of code boxes: focusable, Enter and Space click them.
function markCopyButtons(root) {
  if (!root || !root.querySelectorAll) return;
  for (const button of root.querySelectorAll(".byre-copy:not([role])")) {
    button.setAttribute("role", "button");
    button.setAttribute("tabindex", "0");
    button.title = "Copy code";
  }
}

function copy(button) {
  const pre = button.parentElement && button.parentElement.querySelector("pre");
  const done = (word) => {
    button.textContent = word;
    setTimeout(() => (button.textContent = "Copy"), 1500);
  };
  if (pre && navigator.clipboard) {
    navigator.clipboard.writeText(pre.innerText).then(
      () => done("Copied"),
      () => done("Copy failed"),
    );
  } else {
    done("Copy failed");
  }
}

// The turn's box (the approval cards, ipywidgets, are in it too): copy buttons, and the cards'
// reason box, roles and scrolling.
// How long a card just shown is kept in view while its rows render.
const SETTLE_MS = 1500;

function show(card) {
  const r = card.getBoundingClientRect();
  if (r.top < 0 || r.bottom > window.innerHeight) card.scrollIntoView({ block: "nearest" });
}

export function watchRoot(root) {
  if (root.byreLive) return () => {};
  root.byreLive = true;
  let syncing = false;
  // A card's text boxes: the reason, a question's "Other", a plan's feedback (not checkboxes).
  const TEXT_BOXES = 'input:not([type="checkbox"])';
  const reasonOf = (t) =>
    t && t.closest && t.tagName === "INPUT" && t.type !== "checkbox" && t.closest(".byre-approval-card");
  // A card's reason box syncs only when one of the card's buttons is clicked, just before the
  // click: ipywidgets holds a model's next update until the kernel acknowledged the last but
  // sends a click at once, so a sync on leaving the box let a click overtake the rest of the
  // reason when the kernel lagged. One update, sent first, arrives first.
  const onChange = (e) => {
    if (!syncing && reasonOf(e.target)) e.stopPropagation();
  };
  const onCardClick = (e) => {
    const button = e.target && e.target.closest && e.target.closest(".byre-approval-card button");
    const inputs = button ? button.closest(".byre-approval-card").querySelectorAll(TEXT_BOXES) : [];
    if (!inputs.length) return;
    syncing = true;
    try {
      for (const input of inputs) input.dispatchEvent(new Event("change", { bubbles: true }));
    } finally {
      syncing = false;
    }
  };
  const onClick = (e) => {
    const button = e.target && e.target.closest && e.target.closest(".byre-copy");
    if (button) copy(button);
  };
  const onKey = (e) => {
    const t = e.target;
    if ((e.key === "Enter" || e.key === " ") && t && t.classList && t.classList.contains("byre-copy")) {
      e.preventDefault();
      e.stopPropagation();
      copy(t);
    }
  };
  const mark = () => {
    for (const input of root.querySelectorAll(".byre-approval-card input:not([aria-label])")) {
      if (input.type === "checkbox") continue; // named by its own label
      // A question's or a plan's text box says what it is in its placeholder.
      const asks = input.closest(".byre-question-card, .byre-plan-card");
      const name = asks ? input.placeholder : "Reason for denying (optional, sent to Claude)";
      input.setAttribute("aria-label", name);
    }
    for (const card of root.querySelectorAll(".byre-approval-card")) {
      const title = card.querySelector(".byre-approval-title");
      // Whole (title, body and the answers' row rendered), so it is scrolled to its full size.
      if (card.byreSeen || !title || card.children.length < 3 || !card.querySelector("input")) {
        continue;
      }
      card.byreSeen = true;
      card.setAttribute("role", "alertdialog");
      card.setAttribute("aria-label", title.textContent.trim());
      show(card);
      // Its last rows (the reason box, what "Always allow" covers) may render a frame later
      // and make it taller: keep it whole in view while it settles. A card that no longer
      // changes size is never scrolled to again, so a user who scrolls away stays there.
      if (typeof ResizeObserver !== "undefined") {
        const settle = new ResizeObserver(() => show(card));
        settle.observe(card);
        setTimeout(() => settle.disconnect(), SETTLE_MS);
      }
    }
  };
  root.addEventListener("change", onChange, true);
  root.addEventListener("click", onCardClick, true);
  root.addEventListener("click", onClick);
  root.addEventListener("keydown", onKey);
  const observer = new MutationObserver(mark);
  observer.observe(root, { childList: true, subtree: true });
  mark();
  return () => {
    observer.disconnect();
    root.removeEventListener("change", onChange, true);
    root.removeEventListener("click", onCardClick, true);
    root.removeEventListener("click", onClick);
    root.removeEventListener("keydown", onKey);
    root.byreLive = false;
  };
}

function render({ model, el }) {
  const view = new LiveTurn(model, el);
  let unwatch = () => {};
  // The box is in the page only after render returns: watch it on the next frame.
  const start = () => {
    unwatch = watchRoot(el.closest(".byre-live-root") || el);
  };
  const frame = requestAnimationFrame(start);
  return () => {
    cancelAnimationFrame(frame);
    unwatch();
    view.dispose();
  };
}

export default { render };
