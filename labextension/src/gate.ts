/**
 * Who may drive the bridge, and when (docs/bridge.md, "Who drives the bridge"; docs/security.md,
 * "A hostile package and the bridge").
 *
 * Any code in the kernel can open a comm to `byre.bridge`, and the frontend cannot tell
 * byre_jupyter's Python from anyone else's. What it does know is what the user did on this
 * page: which `%%claude` cells they ran. So:
 *
 * - a comm the kernel opens never carries the bridge; it is answered with a comm of the page's
 *   own only when it carries byre_jupyter's announcement and no bridge comm is open for this
 *   notebook: a later one never replaces a live one (byre_jupyter closes stray comms of its
 *   target when it loads, bridge/channel.py);
 * - the kernel announces each `%%claude` turn (`turn.begin`, `turn.end`), and a turn opens only
 *   for a `%%claude` cell the user ran here and that has not finished without one (or a
 *   `%claude undo` cell: its one edit is the undo the user reviews in it), or that the user
 *   adopts here: a turn announced that this page did not start (a reload, a take-over) opens
 *   when the user clicks a button in that cell's output (its re-shown card: index.ts), an act
 *   of the user's that kernel code cannot make;
 * - the page tells the kernel each turn it opened (`turn.opened`), and the kernel sends that
 *   turn's edits and runs here (bridge/channel.py);
 * - edits and runs in place are refused outside an open turn, and the turn's own cell is not
 *   deleted; ids, provenance and outputs are checked by their parsers (edit.ts, run.ts).
 *
 * Reads stay open to the bridge: the kernel can read the saved notebook anyway. A card that
 * waits in a turn this page does not hold marks its cell here (`review.pending`, waiting.ts).
 *
 * No JupyterLab import: index.ts feeds it Lab's signals, so it is unit-tested in Node.
 */
import { isClaudeSource, isUndoSource } from './claudecell';
import { EditableNotebook, applyEdits, parseEdit } from './edit';
import {
  JsonObject,
  NotebookView,
  Reply,
  answer,
  isCellId,
  isObject,
  parseRequest,
  refuse
} from './protocol';
import {
  FindCell,
  RenderMarkdown,
  Sanitize,
  applyRunMessage,
  parseRunMessage,
  renderMarkdown
} from './run';
import { parsePending } from './waiting';

/** What an edit or a run outside a turn reads (the kernel passes it on to Claude). */
export const NO_TURN =
  'the notebook page refused it: no %%claude cell that the user ran is in a turn now';

/** Whether a comm the kernel opened (with `data`) makes this page open its bridge comm: only
 * byre_jupyter's announcement, and only while no bridge comm is open (`live`). */
export function acceptsKernelComm(data: unknown, live: boolean): boolean {
  return !live && isObject(data) && data.type === 'announce' && typeof data.protocol === 'number';
}

export interface TurnOpenedEvent extends JsonObject {
  type: 'event';
  name: 'turn.opened';
  cell: string;
}

/** What the page tells the kernel when its gate opened a turn: that turn's edits and runs
 * come to this page (docs/bridge.md, "Which page holds the bridge"). */
export function turnOpenedEvent(cell: string): TurnOpenedEvent {
  return { type: 'event', name: 'turn.opened', cell };
}

export type TurnMessage = { kind: 'begin' | 'end'; cell: string };

/** `turn.begin` / `turn.end` from the kernel, or null for anything else. */
export function parseTurnMessage(data: unknown): TurnMessage | null {
  if (!isObject(data) || data.type !== 'notify' || !isObject(data.params)) {
    return null;
  }
  const cell = data.params.cell;
  if (!isCellId(cell)) {
    return null;
  }
  if (data.method === 'turn.begin') {
    return { kind: 'begin', cell };
  }
  return data.method === 'turn.end' ? { kind: 'end', cell } : null;
}

/** The `%%claude` turns the user started in one notebook, as the kernel announced them. */
export class TurnGate {
  /** `%%claude` cells the user ran whose turn the kernel has not announced yet. */
  private readonly ran = new Set<string>();
  /** Cells whose turn is running (a `--bg` turn outlives its cell's execution). */
  private readonly turns = new Set<string>();
  /** Cells that a turn's `run.begin` is showing as running. */
  private readonly runs = new Set<string>();
  /** Running turns the kernel announced that this page did not start (it loaded, or took the
   * bridge over, during them): the user may adopt one (`adopt`). */
  private readonly adoptable = new Set<string>();

  /** Lab scheduled cell `id` to run (the user's Shift+Enter, Run all, a button of ours). */
  scheduled(id: string, source: string): void {
    if (isClaudeSource(source) || isUndoSource(source)) {
      this.ran.add(id);
    }
  }

  /** Lab's run of cell `id` finished: a turn it did not announce can no longer begin. */
  executed(id: string): void {
    this.ran.delete(id);
  }

  /** The kernel announces cell `cell`'s turn; whether it opened (once per run of that cell). */
  begin(cell: string): boolean {
    if (!this.ran.delete(cell)) {
      if (!this.turns.has(cell)) {
        this.adoptable.add(cell);
      }
      return false;
    }
    this.adoptable.delete(cell);
    this.turns.add(cell);
    return true;
  }

  /** The user clicked in cell `cell`'s output (a trusted click on a button: index.ts), whose
   * source is `source` now: whether that opened its turn here. Only a running turn the kernel
   * announced and this page did not start, of a `%%claude` or `%claude undo` cell, once. */
  adopt(cell: string, source: string): boolean {
    if (!this.adoptable.has(cell) || !(isClaudeSource(source) || isUndoSource(source))) {
      return false;
    }
    this.adoptable.delete(cell);
    this.turns.add(cell);
    return true;
  }

  /** Whether a click in cell `cell` could adopt its turn (index.ts looks no further if not). */
  canAdopt(cell: string): boolean {
    return this.adoptable.has(cell);
  }

  end(cell: string): void {
    this.adoptable.delete(cell);
    this.turns.delete(cell);
    if (this.turns.size === 0) {
      this.runs.clear();
    }
  }

  /** The comm closed or another opened: no turn of the old one goes on. The cells the user
   * ran stay (Run all schedules `%load_ext` and the `%%claude` cells after it at once: their
   * turns come on the comm byre_jupyter opens as it loads). */
  reset(): void {
    this.adoptable.clear();
    this.turns.clear();
    this.runs.clear();
  }

  get inTurn(): boolean {
    return this.turns.size > 0;
  }

  isTurnCell(id: string): boolean {
    return this.turns.has(id);
  }

  runBegan(cell: string): void {
    this.runs.add(cell);
  }

  /** Whether outputs for `cell` are expected: inside a turn, after its `run.begin`. */
  running(cell: string): boolean {
    return this.inTurn && this.runs.has(cell);
  }

  runEnded(cell: string): void {
    this.runs.delete(cell);
  }
}

/** What the bridge serves one notebook with (index.ts builds it over Lab's model). */
export interface Served {
  gate: TurnGate;
  view: NotebookView;
  editable: EditableNotebook;
  find: FindCell;
  sanitize: Sanitize;
  markdown: RenderMarkdown;
  /** The "waits in another tab" marks of this page (waiting.ts's `WaitingMarks`). */
  waiting: { show(cell: string, waiting: boolean): void };
}

type Answer = Reply | JsonObject | null;
/** One kernel message's handler: `data` is the whole message, not parsed yet. */
type Handler = (data: unknown, served: Served) => Answer | Promise<Answer>;

function turn(data: unknown, served: Served): Answer {
  const message = parseTurnMessage(data);
  if (message?.kind === 'begin' && served.gate.begin(message.cell)) {
    // The kernel sends this turn's edits and runs here from now on (bridge/channel.py).
    return turnOpenedEvent(message.cell);
  }
  if (message?.kind === 'end') {
    served.gate.end(message.cell);
    served.waiting.show(message.cell, false); // its cards wait no more
  }
  return null;
}

/** A turn's card starts or stops waiting: marked here only when this page does not hold the
 * turn (it shows no card of it: docs/bridge.md, "Collaboration"). */
function pending(data: unknown, served: Served): Answer {
  const message = parsePending(data);
  if (message !== null) {
    served.waiting.show(message.cell, message.waiting && !served.gate.isTurnCell(message.cell));
  }
  return null;
}

async function run(data: unknown, served: Served): Promise<Answer> {
  const { gate } = served;
  const message = parseRunMessage(data, served.sanitize);
  if (message === null) {
    return null;
  }
  if (message.kind === 'begin') {
    if (!gate.inTurn) {
      return refuse(message.id, NO_TURN);
    }
    const reply = applyRunMessage(message, served.find);
    if (reply?.ok === true) {
      gate.runBegan(message.cell);
    }
    return reply;
  }
  if (!gate.running(message.cell)) {
    return null;
  }
  if (message.kind === 'end') {
    gate.runEnded(message.cell);
    return applyRunMessage(message, served.find);
  }
  const shown = await renderMarkdown(message.output, served.markdown, served.sanitize);
  if (shown === null || !gate.running(message.cell)) {
    return null;
  }
  return applyRunMessage({ ...message, output: shown }, served.find);
}

function read(data: unknown, served: Served): Answer {
  const request = parseRequest(data);
  return request === null ? null : answer(request, served.view);
}

function edit(data: unknown, served: Served): Answer {
  const { gate } = served;
  const request = parseEdit(data);
  if (request === null) {
    return null;
  }
  if (!gate.inTurn) {
    return refuse(request.id, NO_TURN);
  }
  const own = request.edits.find(op => op.kind === 'delete' && gate.isTurnCell(op.cell));
  if (own !== undefined) {
    return refuse(request.id, 'the notebook page refused it: it deletes the asking %%claude cell');
  }
  return applyEdits(request, served.editable);
}

/** What the page does with each message of the kernel, by its method: one entry for each
 * method of messages.json (the kernel's description, byre_jupyter/bridge/messages.py; a unit
 * test holds the keys equal to it). Each handler parses its message strictly. */
export const HANDLERS: Readonly<Record<string, Handler>> = Object.freeze({
  'turn.begin': turn,
  'turn.end': turn,
  'review.pending': pending,
  'run.begin': run,
  'run.output': run,
  'run.end': run,
  read,
  edit,
  // Served by restore.ts before the gate (index.ts): one that reaches the gate is malformed,
  // and a request gets the refusal below.
  'cell.restore': () => null,
  // Answered by that refusal: any reply tells the kernel a page is there (pending answers).
  ping: () => null
});

/** Handles one message of the kernel on the bridge comm; resolves to the reply (or event) to
 * send, or null. A request it cannot serve (unknown, malformed, or refused) still gets a reply, so the
 * kernel never waits in vain. Async only for Markdown's rendering: the caller handles messages
 * one after the other, in order. */
export async function handle(data: unknown, served: Served): Promise<Answer> {
  const method = isObject(data) ? data.method : undefined;
  const handler =
    typeof method === 'string' && Object.prototype.hasOwnProperty.call(HANDLERS, method)
      ? HANDLERS[method]
      : undefined;
  const reply = handler ? await handler(data, served) : null;
  if (reply === null && isObject(data) && data.type === 'request' && typeof data.id === 'string') {
    return refuse(data.id, 'the notebook page refused a request it does not accept');
  }
  return reply;
}

/** `handle` for one comm: each message after the one before, in the kernel's order (the
 * comm delivers the next one while a Markdown output still renders). */
export function inOrder(served: Served): (data: unknown) => Promise<Answer> {
  let last: Promise<unknown> = Promise.resolve();
  return data => {
    const reply = last.then(() => handle(data, served));
    last = reply.catch(() => undefined);
    return reply;
  };
}
