/**
 * `cell.restore` (docs/bridge.md, "Pending answers"): the kernel writes outputs into a code
 * cell that this page never received them for. A page that loaded while a `%%claude` turn ran
 * gets the turn's live view again (`final: false`), so a review card that waits is there to
 * click; a turn that ended while no page was open (or after the page that showed it went away)
 * gets its finished record (`final: true`), and the notebook is marked changed, so the user
 * saves it.
 *
 * The message is untrusted, as every message on the comm is (any code in the kernel can send
 * on it): each output is rebuilt as run.ts rebuilds the outputs of a run in place
 * (`cleanOutput`, Markdown rendered and sanitized; a record keeps its `metadata.byre`), only
 * into the code cell with that id, a live view only into a `%%claude` cell, and each cell at
 * most once per comm for each kind (a live view, then its record).
 *
 * No JupyterLab import: index.ts passes the cells, so it is unit-tested in Node.
 */
import { isClaudeSource } from './claudecell';
import { JsonObject, isCellId, isObject } from './protocol';
import { RenderMarkdown, RunCell, Sanitize, cleanOutput, renderMarkdown } from './run';

/** Most outputs one restore writes (a record is one bundle and its images). */
export const MAX_OUTPUTS = 64;

/** `id`: a record comes as a request, and the kernel keeps it until the page says it has it
 * (a page makes a second comm as it loads, and a notification on the first one is lost). */
export type RestoreMessage = {
  id: string | null;
  cell: string;
  outputs: JsonObject[];
  final: boolean;
};

/** Whether `data` is a `cell.restore` message (well formed or not). */
export function isRestore(data: unknown): boolean {
  return isObject(data) && data.method === 'cell.restore';
}

/** A `cell.restore` notification, its outputs cleaned (those that are not run_cells' kinds are
 * left out); null for anything else. */
export function parseRestore(data: unknown, sanitize: Sanitize): RestoreMessage | null {
  if (!isObject(data) || data.method !== 'cell.restore') {
    return null;
  }
  const id = data.type === 'request' && typeof data.id === 'string' ? data.id : null;
  if (id === null && data.type !== 'notify') {
    return null;
  }
  const params = data.params;
  if (!isObject(params) || !isCellId(params.cell) || !Array.isArray(params.outputs)) {
    return null;
  }
  if (typeof params.final !== 'boolean' || params.outputs.length > MAX_OUTPUTS) {
    return null;
  }
  const outputs: JsonObject[] = [];
  for (const output of params.outputs) {
    const clean = cleanOutput(output, sanitize);
    if (clean !== null && clean.output_type !== 'clear_output') {
      outputs.push(params.final ? withRecord(clean, output) : clean);
    }
  }
  return { id, cell: params.cell, outputs, final: params.final };
}

/** A record's output keeps its `metadata.byre` (ui/record.py: the session, the answer's text,
 * the portable record), so a notebook saved after a restore reads as one whose page stayed: the
 * read tool gives the answer's text and `%claude resume --from` finds its conversation. Only
 * that key, only a JSON object: Lab draws nothing from it, and the kernel reads it as it reads
 * any notebook, as untrusted input. */
function withRecord(clean: JsonObject, output: unknown): JsonObject {
  const metadata = isObject(output) ? output.metadata : null;
  const byre = isObject(metadata) ? metadata.byre : null;
  if (clean.output_type !== 'display_data' || !isObject(byre)) {
    return clean;
  }
  return { ...clean, metadata: { byre: JSON.parse(JSON.stringify(byre)) as JsonObject } };
}

/** A code cell on the page, as a restore needs it. */
export interface RestoreCell {
  run: RunCell;
  source(): string;
}

export interface RestoreTarget {
  find(id: string): RestoreCell | null;
  sanitize: Sanitize;
  markdown: RenderMarkdown;
  /** The notebook changed: the user is to save it. */
  changed(): void;
}

/** The restores one comm may still make (a new comm: a new `Restorer`). */
export class Restorer {
  private readonly done = new Set<string>();

  constructor(private readonly target: RestoreTarget) {}

  /** Writes a restore when allowed; resolves to the reply a request gets (`written`: whether
   * this page wrote it), null for a notification or junk. */
  async take(data: unknown): Promise<JsonObject | null> {
    const message = parseRestore(data, this.target.sanitize);
    const id = isObject(data) && data.type === 'request' && typeof data.id === 'string' ? data.id : null;
    const written = message !== null && (await this.write(message));
    return id === null ? null : { type: 'reply', id, ok: true, result: { written } };
  }

  private async write(message: RestoreMessage): Promise<boolean> {
    const { target } = this;
    const key = `${message.final ? 'final' : 'live'}:${message.cell}`;
    const cell = target.find(message.cell);
    if (cell === null || this.done.has(key) || this.done.has(`final:${message.cell}`)) {
      return false;
    }
    if (!message.final && !isClaudeSource(cell.source())) {
      return false; // a live view is a %%claude turn's only
    }
    this.done.add(key);
    const shown: JsonObject[] = [];
    for (const output of message.outputs) {
      const rendered = await renderMarkdown(output, target.markdown, target.sanitize);
      if (rendered !== null) {
        shown.push(rendered);
      }
    }
    cell.run.clear(false);
    shown.forEach(output => cell.run.add(output));
    if (message.final) {
      target.changed();
    }
    return true;
  }
}
