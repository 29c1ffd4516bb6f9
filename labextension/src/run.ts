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

const OUTPUT_TYPES = new Set(['stream', 'display_data', 'execute_result', 'error', 'clear_output']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

/** A run message from the kernel, or null for anything else (another module's, or junk). */
export function parseRunMessage(data: unknown): RunMessage | null {
  if (!isObject(data) || typeof data.method !== 'string' || !isObject(data.params)) {
    return null;
  }
  const { cell, execution_count: count, output } = data.params;
  if (typeof cell !== 'string') {
    return null;
  }
  if (data.type === 'request' && data.method === 'run.begin' && typeof data.id === 'string') {
    return isCount(count) ? { kind: 'begin', id: data.id, cell, count } : null;
  }
  if (data.type !== 'notify') {
    return null;
  }
  if (data.method === 'run.output' && isObject(output)) {
    const type = output.output_type;
    return typeof type === 'string' && OUTPUT_TYPES.has(type)
      ? { kind: 'output', cell, output: output as JsonObject }
      : null;
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
