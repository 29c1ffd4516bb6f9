/**
 * `mcp__byre__run_cells` on the frontend (docs/bridge.md, "run_cells"): the kernel runs a
 * cell's code itself while the `%%claude` cell awaits, and tells the bridge what to show in
 * that cell: `run.begin` (a request: clear the outputs, show the cell as running), then each
 * output as it comes (`run.output`) and the execution count at the end (`run.end`), both
 * notifications. Nothing here renders: outputs go into the cell's output model, which
 * JupyterLab renders as it renders the outputs of a cell the user ran.
 *
 * The message logic imports nothing of JupyterLab at run time, so it is unit-tested in Node.
 */
import { isCellId, isObject } from './protocol';
import type { Json, JsonObject } from './protocol';

export type RunMessage =
  | { kind: 'begin'; id: string; cell: string; count: number }
  | { kind: 'output'; cell: string; output: JsonObject }
  | { kind: 'end'; cell: string; count: number };

/** What a run needs of one code cell on screen. */
export interface RunCell {
  begin(count: number): void;
  add(output: JsonObject): void;
  clear(wait: boolean): void;
  end(count: number): void;
}

/** The code cell with this nbformat id, or null (gone, or not a code cell). */
export type FindCell = (id: string) => RunCell | null;

/** Turns untrusted HTML into HTML without script, as JupyterLab renders untrusted output (the
 * notebook's own sanitizer, `rendermime.sanitizer`, in index.ts). */
export type Sanitize = (html: string) => string;

/** Markdown to (unsanitized) HTML: Lab's own parser (`rendermime.markdownParser`); null when
 * the page has none. */
export type RenderMarkdown = (source: string) => Promise<string> | null;

const MARKDOWN = 'text/markdown';

/** The media types a cell run in place legitimately shows (tools/notebook_run.py `_bundle`:
 * text, Markdown, images, JSON and a widget's view) and the bridge writes into the cell. An
 * output is saved with the notebook and rendered as trusted when it is reopened, so anything
 * else (`application/javascript`, SVG, LaTeX) is left out, HTML is kept only sanitized, and
 * Markdown only as HTML rendered and sanitized as Lab renders untrusted Markdown
 * (`renderMarkdown`). */
const TEXT_MIMES = new Set(['text/plain', 'text/html', MARKDOWN]);
const IMAGE_MIMES = new Set(['image/png', 'image/jpeg', 'image/gif']);
const JSON_MIMES = new Set(['application/json', 'application/vnd.jupyter.widget-view+json']);
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(item => typeof item === 'string');
}

/** A display's bundle with only the media types above, HTML sanitized (Markdown is left for
 * `renderMarkdown`); null if none is left. */
function cleanBundle(data: unknown, sanitize: Sanitize): JsonObject | null {
  if (!isObject(data)) {
    return null;
  }
  const out: JsonObject = {};
  for (const [mime, value] of Object.entries(data)) {
    if (TEXT_MIMES.has(mime) && typeof value === 'string') {
      out[mime] = mime === 'text/html' ? sanitize(value) : value;
    } else if (IMAGE_MIMES.has(mime) && typeof value === 'string' && BASE64.test(value)) {
      out[mime] = value;
    } else if (JSON_MIMES.has(mime) && (isObject(value) || Array.isArray(value))) {
      out[mime] = value as Json;
    }
  }
  return Object.keys(out).length ? out : null;
}

/** One output of a run as the bridge writes it into the cell: rebuilt from the fields of its
 * nbformat type only (no metadata), or null when it is not a well-formed output of run_cells. */
export function cleanOutput(output: unknown, sanitize: Sanitize): JsonObject | null {
  if (!isObject(output)) {
    return null;
  }
  const type = output.output_type;
  if (type === 'stream') {
    const { name, text } = output;
    return (name === 'stdout' || name === 'stderr') && typeof text === 'string'
      ? { output_type: type, name, text }
      : null;
  }
  if (type === 'error') {
    const { ename, evalue, traceback } = output;
    return typeof ename === 'string' && typeof evalue === 'string' && isStrings(traceback)
      ? { output_type: type, ename, evalue, traceback }
      : null;
  }
  if (type === 'clear_output') {
    return { output_type: type, wait: output.wait === true };
  }
  if (type === 'display_data' || type === 'execute_result') {
    const data = cleanBundle(output.data, sanitize);
    if (data === null) {
      return null;
    }
    if (type === 'display_data') {
      return { output_type: type, data, metadata: {} };
    }
    const count = isCount(output.execution_count) ? output.execution_count : null;
    return { output_type: type, data, metadata: {}, execution_count: count };
  }
  return null;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

/** `output` with its Markdown turned into sanitized HTML, as Lab renders untrusted Markdown (a
 * bundle that has HTML already shows that, as Lab prefers it); null when nothing is left. */
export async function renderMarkdown(
  output: JsonObject,
  render: RenderMarkdown,
  sanitize: Sanitize
): Promise<JsonObject | null> {
  const data = output.data;
  if (!isObject(data) || typeof data[MARKDOWN] !== 'string') {
    return output;
  }
  const { [MARKDOWN]: source, ...rest } = data;
  if (typeof rest['text/html'] !== 'string') {
    const rendering = render(source as string);
    const html = rendering === null ? null : await rendering.catch(() => null);
    if (html !== null) {
      rest['text/html'] = sanitize(html);
    }
  }
  return Object.keys(rest).length ? { ...output, data: rest as JsonObject } : null;
}

/** A run message from the kernel, or null for anything else (another module's, junk, or an
 * output that is not one run_cells makes: `cleanOutput`). */
export function parseRunMessage(data: unknown, sanitize: Sanitize): RunMessage | null {
  if (!isObject(data) || typeof data.method !== 'string' || !isObject(data.params)) {
    return null;
  }
  const { cell, execution_count: count, output } = data.params;
  if (!isCellId(cell)) {
    return null;
  }
  if (data.type === 'request' && data.method === 'run.begin' && typeof data.id === 'string') {
    return isCount(count) ? { kind: 'begin', id: data.id, cell, count } : null;
  }
  if (data.type !== 'notify') {
    return null;
  }
  if (data.method === 'run.output') {
    const clean = cleanOutput(output, sanitize);
    return clean === null ? null : { kind: 'output', cell, output: clean };
  }
  if (data.method === 'run.end' && isCount(count)) {
    return { kind: 'end', cell, count };
  }
  return null;
}

/** Applies one run message; a `begin` returns the reply the kernel awaits (ok when the
 * cell is on screen), the notifications return null. */
export function applyRunMessage(message: RunMessage, find: FindCell): JsonObject | null {
  const cell = find(message.cell);
  if (message.kind === 'begin') {
    if (!cell) {
      const error = `there is no code cell with id ${JSON.stringify(message.cell.slice(0, 100))}`;
      return { type: 'reply', id: message.id, ok: false, error };
    }
    cell.begin(message.count);
    return { type: 'reply', id: message.id, ok: true, result: {} };
  }
  if (!cell) {
    return null; // the user deleted the cell while it ran: its outputs have nowhere to go
  }
  if (message.kind === 'end') {
    cell.end(message.count);
  } else if (message.output.output_type === 'clear_output') {
    cell.clear(message.output.wait === true);
  } else {
    cell.add(message.output);
  }
  return null;
}

/** The JupyterLab side of a cell, structurally (the notebook's CodeCell widget and model). */
export interface CodeCellWidget {
  model: {
    id: string;
    type: string;
    executionCount?: number | null;
    outputs?: { add(output: Json): number; clear(wait?: boolean): void };
  };
  setPrompt?(value: string): void;
}

export function runCellOf(widget: CodeCellWidget): RunCell | null {
  const model = widget.model;
  const outputs = model.outputs;
  if (model.type !== 'code' || !outputs) {
    return null;
  }
  return {
    begin: () => {
      outputs.clear();
      model.executionCount = null;
      widget.setPrompt?.('*'); // as a queued or running cell shows
    },
    add: output => {
      outputs.add(output);
    },
    clear: wait => outputs.clear(wait),
    end: count => {
      model.executionCount = count;
      widget.setPrompt?.(String(count));
    }
  };
}

/** The code cell with nbformat id `id` among the notebook's cell widgets. */
export function findIn(widgets: readonly CodeCellWidget[]): FindCell {
  return id => {
    const widget = widgets.find(w => w.model.id === id);
    return widget ? runCellOf(widget) : null;
  };
}
