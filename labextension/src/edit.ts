/**
 * The bridge's `edit` request (docs/bridge.md): a batch of cell edits the user approved in the
 * kernel, applied to the notebook model on screen, kept apart from JupyterLab's APIs so that it
 * is unit-tested in plain Node.
 *
 * The kernel checked the batch against the cells it read; the user may have typed since, or
 * another person on the same shared notebook (real-time collaboration). So the whole batch is
 * checked again here against the model as it is now, and applied only if every edit still
 * holds: each cell it replaces or deletes must still hold exactly the text the review showed
 * (`reviewed`), and a `replace`'s `old` must occur exactly once; else nothing of the batch is
 * applied, so the other person's text is kept and never merged into an edit nobody reviewed.
 */
import { isCellId, isObject } from './protocol';
import type { Json, JsonObject, Reply } from './protocol';

export type EditOp =
  | { kind: 'insert'; after: string; cellType: 'code' | 'markdown'; source: string; id: string }
  | { kind: 'replace'; cell: string; old: string; new: string; whole?: true }
  | { kind: 'delete'; cell: string };

export interface EditRequest {
  type: 'request';
  id: string;
  method: 'edit';
  edits: EditOp[];
  /** Each cell the batch replaces or deletes, with its source as the user's review showed it
   * (empty from a kernel before this check). */
  reviewed: Map<string, string>;
  /** `metadata.byre` of every cell the batch touches: `{conversation, turn, prompt?}`; null
   * for an undo, whose restored cells carry none (the cells are again as no turn made them). */
  provenance: Provenance | null;
}

/** Which turn of which conversation made an edit, and the turn's prompt (clipped, for the
 * mark's hover): exactly these fields, as the kernel writes them (app/approvals.py), since they
 * are saved into the notebook. */
export interface Provenance extends JsonObject {
  conversation: string;
  turn: number | null;
  // and `prompt`, a string of at most MAX_PROMPT characters, when the kernel knew it
}

/** What applying needs of the notebook model (index.ts implements it over Lab's model). */
export interface EditableNotebook {
  ids(): string[];
  source(id: string): string;
  insert(index: number, cell: JsonObject): void;
  /** Replace `[start, end)` of the cell's source, as typing would (Lab's undo sees it), and
   * set its provenance (null: remove it), in one step of the cell's undo. */
  splice(id: string, start: number, end: number, text: string, provenance: JsonObject | null): void;
  remove(id: string): void;
}

/** A CLI session id (a UUID), or "" before the CLI named one. */
const CONVERSATION = /^[A-Za-z0-9-]{0,64}$/;
/** More turns than any conversation has: the number is a counter, not a payload. */
const MAX_TURN = 1_000_000;
/** The kernel clips the prompt it stores to this many characters (app/approvals.py). */
export const MAX_PROMPT = 200;
const FIELDS = new Set(['conversation', 'turn', 'prompt']);

/** The provenance of an edit request (or of a cell's `metadata.byre`, marks.ts), or null when
 * it is not of that exact shape. */
export function parseProvenance(value: unknown): Provenance | null {
  if (!isObject(value) || Object.keys(value).some(k => !FIELDS.has(k))) {
    return null;
  }
  const { conversation, turn, prompt } = value;
  if (typeof conversation !== 'string' || !CONVERSATION.test(conversation)) {
    return null;
  }
  if (prompt !== undefined && (typeof prompt !== 'string' || prompt.length > MAX_PROMPT)) {
    return null;
  }
  let parsed: Provenance;
  if (turn === null || turn === undefined) {
    parsed = { conversation, turn: null };
  } else if (typeof turn !== 'number' || !Number.isInteger(turn) || turn < 0 || turn > MAX_TURN) {
    return null;
  } else {
    parsed = { conversation, turn };
  }
  if (typeof prompt === 'string') {
    parsed.prompt = prompt;
  }
  return parsed;
}

function parseOp(item: unknown): EditOp | null {
  if (!isObject(item)) {
    return null;
  }
  const insert = item.insert;
  const replace = item.replace;
  const remove = item.delete;
  if (isObject(insert)) {
    const { after, cell_type: cellType, source, id } = insert;
    if (!isCellId(after) || typeof source !== 'string' || !isCellId(id)) {
      return null;
    }
    if (cellType !== 'code' && cellType !== 'markdown') {
      return null;
    }
    return { kind: 'insert', after, cellType, source, id };
  }
  if (isObject(replace)) {
    // `whole`: an undo's restore, whose `old` is the cell's whole text as the turn left it
    // (it may be empty); anything else around it means someone changed the cell since.
    const { cell, old, new: text, whole } = replace;
    if (!isCellId(cell) || typeof old !== 'string' || typeof text !== 'string') {
      return null;
    }
    if (whole === true) {
      return { kind: 'replace', cell, old, new: text, whole };
    }
    if (whole !== undefined || !old) {
      return null;
    }
    return { kind: 'replace', cell, old, new: text };
  }
  if (isObject(remove) && isCellId(remove.cell)) {
    return { kind: 'delete', cell: remove.cell };
  }
  return null;
}

/** An edit request from the kernel, or null for anything else: another message, or an edit
 * whose ids or provenance are not of the kernel's shape (refused whole, never thrown on). */
export function parseEdit(data: unknown): EditRequest | null {
  if (!isObject(data) || data.type !== 'request' || typeof data.id !== 'string') {
    return null;
  }
  if (data.method !== 'edit' || !isObject(data.params) || !Array.isArray(data.params.edits)) {
    return null;
  }
  const edits: EditOp[] = [];
  for (const item of data.params.edits) {
    const op = parseOp(item);
    if (op === null) {
      return null;
    }
    edits.push(op);
  }
  // null only as itself: an undo (kernel: tools/edit_log.py); anything else must parse.
  const raw = data.params.provenance;
  const provenance = raw === null ? null : parseProvenance(raw);
  if (provenance === null && raw !== null) {
    return null;
  }
  const reviewed = parseReviewed(data.params.reviewed);
  if (reviewed === null) {
    return null;
  }
  return { type: 'request', id: data.id, method: 'edit', edits, reviewed, provenance };
}

/** `{cell id: source}`, or null when it is not of that shape; absent is empty. */
function parseReviewed(value: unknown): Map<string, string> | null {
  if (value === undefined) {
    return new Map();
  }
  if (!isObject(value)) {
    return null;
  }
  const reviewed = new Map<string, string>();
  for (const [id, text] of Object.entries(value)) {
    if (!isCellId(id) || typeof text !== 'string') {
      return null;
    }
    reviewed.set(id, text);
  }
  return reviewed;
}

function quoted(text: string): string {
  const line = text.split('\n')[0];
  return JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line);
}

function count(text: string, part: string): number {
  let found = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + 1)) {
    found++;
  }
  return found;
}

/** Why the batch no longer holds on the notebook as it is now, or null: it holds. */
export function refusal(
  edits: EditOp[],
  notebook: EditableNotebook,
  reviewed: Map<string, string> = new Map()
): string | null {
  const order = notebook.ids();
  const sources = new Map(order.map(id => [id, notebook.source(id)]));
  // Typing that leaves `old` whole still changed the cell: applying would land a text the
  // review never showed (and a delete would drop what was typed).
  for (const [id, text] of reviewed) {
    const now = sources.get(id);
    if (now === undefined) {
      return `cell ${id} is no longer in the notebook`;
    }
    if (now !== text) {
      return `cell ${id} changed since you read it: it no longer holds the text the review showed`;
    }
  }
  for (const op of edits) {
    if (op.kind === 'insert') {
      if (!sources.has(op.after)) {
        return `cell ${op.after} is no longer in the notebook`;
      }
      if (sources.has(op.id)) {
        return `the id ${op.id} is now used by another cell`;
      }
      sources.set(op.id, op.source);
    } else if (op.kind === 'replace') {
      const source = sources.get(op.cell);
      if (source === undefined) {
        return `cell ${op.cell} is no longer in the notebook`;
      }
      if (op.whole && source !== op.old) {
        return `cell ${op.cell} changed since the turn you undo: its text is not what the turn left`;
      }
      const found = op.whole ? 1 : count(source, op.old);
      if (found !== 1) {
        const times = found === 0 ? 'no longer occurs' : `now occurs ${found} times`;
        return `cell ${op.cell} changed since you read it: ${quoted(op.old)} ${times} in it`;
      }
      sources.set(op.cell, op.whole ? op.new : source.replace(op.old, () => op.new));
    } else {
      if (!sources.has(op.cell)) {
        return `cell ${op.cell} is no longer in the notebook`;
      }
      sources.delete(op.cell);
    }
  }
  return null;
}

/** Check the batch again, then apply it in order; the reply says which, never throws. */
export function applyEdits(request: EditRequest, notebook: EditableNotebook): Reply {
  try {
    const refused = refusal(request.edits, notebook, request.reviewed);
    if (refused !== null) {
      return { type: 'reply', id: request.id, ok: true, result: { refused } };
    }
    const touched: Json[] = [];
    for (const op of request.edits) {
      if (op.kind === 'insert') {
        const index = notebook.ids().indexOf(op.after) + 1;
        notebook.insert(index, {
          id: op.id,
          cell_type: op.cellType,
          source: op.source,
          metadata: request.provenance === null ? {} : { byre: request.provenance }
        });
        touched.push(op.id);
      } else if (op.kind === 'replace') {
        const source = notebook.source(op.cell);
        const start = op.whole ? 0 : source.indexOf(op.old);
        const end = op.whole ? source.length : start + op.old.length;
        notebook.splice(op.cell, start, end, op.new, request.provenance);
        touched.push(op.cell);
      } else {
        notebook.remove(op.cell);
        touched.push(op.cell);
      }
    }
    return { type: 'reply', id: request.id, ok: true, result: { applied: touched } };
  } catch (error) {
    return { type: 'reply', id: request.id, ok: false, error: String(error) };
  }
}
