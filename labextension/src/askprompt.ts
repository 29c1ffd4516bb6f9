/**
 * The prompt of the `%%claude` cell "Ask Claude" inserts (src/ask.ts): the failing cell named as
 * the user sees it (its execution count and its first line), in lines a cell shows whole, with
 * its id last for the notebook tool. Pure: unit-tested without JupyterLab.
 */

const CELL_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** The most of the failing cell's first line the prompt quotes. */
export const QUOTED_CHARS = 40;

/** What the prompt needs of the failing cell. */
export interface FailedCell {
  id: string;
  executionCount: number | null;
  source: string;
}

/** The cell's first non-blank line, as inert prompt text: a `%%claude` cell interpolates
 * `{name}` (so braces are doubled, `{{` being a literal brace), the line goes into a code span
 * (so backticks become quotes), control characters go, and a long line is cut with "…". */
export function quotedLine(source: string): string {
  const first = source.split('\n').find(line => line.trim() !== '') ?? '';
  // eslint-disable-next-line no-control-regex
  let line = first.trim().replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  line = line.replace(/`/g, "'");
  if (line.length > QUOTED_CHARS) {
    line = line.slice(0, QUOTED_CHARS - 1).trimEnd() + '…';
  }
  return line.replace(/\{/g, '{{').replace(/\}/g, '}}');
}

/** The prefilled `%%claude` cell for a cell's error; null for an id nbformat does not allow
 * (it goes into the prompt, so only a well-formed one is used). */
export function askSource(cell: FailedCell): string | null {
  if (!CELL_ID.test(cell.id)) {
    return null;
  }
  const count = cell.executionCount;
  const name = Number.isInteger(count) && count !== null && count > 0 ? `Cell [${count}]` : 'The cell';
  const line = quotedLine(cell.source);
  const quoted = line ? ` (\`${line}\`)` : '';
  return [
    '%%claude',
    `${name} above${quoted} ended in an error.`,
    'Read it, its traceback and the cells around it with the notebook tool,',
    'explain the cause briefly, and fix it.',
    `Its id, for the notebook tool: \`${cell.id}\`.`
  ].join('\n');
}
