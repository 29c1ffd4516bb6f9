/**
 * The messages of the `byre.bridge` comm (docs/bridge.md), kept apart from JupyterLab's APIs
 * so that they are unit-tested in plain Node.
 *
 * The frontend answers; it never decides anything: the kernel asks for the notebook as it is
 * on screen and bounds, summarises and redacts what it gets before Claude sees it.
 */

import MESSAGES from './messages.json';

/** Every message of the comm as the kernel describes it (byre_jupyter/bridge/messages.py,
 * rendered by `python -m byre_jupyter.bridge --schema`): gate.ts's handler table and
 * the builders here are held to it by test/messages.test.ts, and the file to the Python by
 * tests/unit/bridge/test_messages.py, so neither side drifts alone. */
export { MESSAGES };

/** The comm target both sides register. */
export const TARGET = 'byre.bridge';
/** This extension's version (package.json's; a unit test holds them equal). */
export const VERSION = '0.1.0';
/** Bumped when a message changes shape; the kernel refuses a bridge it does not speak.
 * 3: the kernel announces its `%%claude` turns (`turn.begin`, `turn.end`), and the frontend
 * refuses edits and runs outside them. */
export const PROTOCOL = 3;
/** Longest text kept of one output field: the kernel bounds again, this only keeps the comm
 * message small when a cell printed megabytes. */
export const MAX_TEXT = 65536;
/** Longest base64 image kept (about 3 MB decoded). */
export const MAX_IMAGE = 4_000_000;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** One cell as the kernel receives it: nbformat's fields, source always one string. */
export interface CellSnapshot extends JsonObject {
  id: string;
  cell_type: string;
  source: string;
  execution_count: number | null;
  outputs: Json[];
}

/** What the frontend knows of the notebook it serves. */
export interface NotebookView {
  path(): string;
  dirty(): boolean;
  cells(): JsonObject[];
}

export interface Hello extends JsonObject {
  type: 'hello';
  protocol: number;
  version: string;
  frontend: string;
  path: string;
}

export interface ReadRequest {
  type: 'request';
  id: string;
  method: 'read';
  images: boolean;
}

export type Reply =
  | { type: 'reply'; id: string; ok: true; result: JsonObject }
  | { type: 'reply'; id: string; ok: false; error: string };

export function hello(view: NotebookView, frontend: string): Hello {
  return { type: 'hello', protocol: PROTOCOL, version: VERSION, frontend, path: view.path() };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An nbformat cell id (1 to 64 letters, digits, `-`, `_`): tools/notebook_edit.py's rule. */
const CELL_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function isCellId(value: unknown): value is string {
  return typeof value === 'string' && CELL_ID.test(value);
}

/** The reply that refuses a request: the kernel reads `error`, and never waits in vain. */
export function refuse(id: string, error: string): Reply {
  return { type: 'reply', id, ok: false, error };
}

/** A request from the kernel, or null for anything else (ignored, never thrown on). */
export function parseRequest(data: unknown): ReadRequest | null {
  if (!isObject(data) || data.type !== 'request' || typeof data.id !== 'string') {
    return null;
  }
  if (data.method !== 'read') {
    return null;
  }
  const params = isObject(data.params) ? data.params : {};
  return { type: 'request', id: data.id, method: 'read', images: params.images === true };
}

/** nbformat allows a multiline string as a list of lines. */
export function joinSource(source: unknown): string {
  if (typeof source === 'string') {
    return source;
  }
  if (Array.isArray(source)) {
    return source.filter((line): line is string => typeof line === 'string').join('');
  }
  return '';
}

function clip(text: string): string {
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}

/** One output with its text fields joined and clipped, and images dropped unless asked for
 * (a placeholder keeps the media type, so the kernel can say an image is there). */
export function snapshotOutput(output: unknown, images: boolean): Json {
  if (!isObject(output)) {
    return null;
  }
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(output)) {
    if (key === 'data' && isObject(value)) {
      const data: JsonObject = {};
      for (const [mime, payload] of Object.entries(value)) {
        if (mime.startsWith('image/') && mime !== 'image/svg+xml') {
          data[mime] = images ? clipImage(payload) : '';
        } else {
          data[mime] = typeof payload === 'string' || Array.isArray(payload)
            ? clip(joinSource(payload))
            : '';
        }
      }
      out.data = data;
    } else if (key === 'text') {
      out.text = clip(joinSource(value));
    } else if (key === 'traceback' && Array.isArray(value)) {
      out.traceback = value.filter((l): l is string => typeof l === 'string').map(clip);
    } else if (key === 'output_type' || key === 'name' || key === 'ename' || key === 'evalue') {
      out[key] = typeof value === 'string' ? clip(value) : '';
    } else if (key === 'execution_count') {
      out[key] = typeof value === 'number' ? value : null;
    } else if (key === 'metadata' && isObject(value) && isObject(value.byre)) {
      // A %%claude record: the kernel reads its answer's text, not its tool cards.
      const answer = value.byre.answer;
      out.metadata = { byre: { answer: typeof answer === 'string' ? clip(answer) : null } };
    }
  }
  return out;
}

function clipImage(payload: unknown): string {
  // A larger image is not worth a model's context; an empty one tells the kernel it was there.
  const text = joinSource(payload);
  return text.length > MAX_IMAGE ? '' : text;
}

/** A cell of the notebook model (its toJSON()) as the kernel receives it. */
export function snapshotCell(cell: JsonObject, images: boolean): CellSnapshot {
  const outputs = Array.isArray(cell.outputs) ? cell.outputs : [];
  const count = cell.execution_count;
  return {
    id: typeof cell.id === 'string' ? cell.id : '',
    cell_type: typeof cell.cell_type === 'string' ? cell.cell_type : 'code',
    source: joinSource(cell.source),
    execution_count: typeof count === 'number' ? count : null,
    outputs: outputs.map(output => snapshotOutput(output, images))
  };
}

/** The reply to one request; a failure is a reply too, so the kernel never waits in vain. */
export function answer(request: ReadRequest, view: NotebookView): Reply {
  try {
    const cells = view.cells().map(cell => snapshotCell(cell, request.images));
    return {
      type: 'reply',
      id: request.id,
      ok: true,
      result: { path: view.path(), dirty: view.dirty(), cells }
    };
  } catch (error) {
    return { type: 'reply', id: request.id, ok: false, error: String(error) };
  }
}
