/**
 * What makes a cell a `%%claude` cell, and which editor type a code cell gets (src/highlight.ts
 * applies it): a `%%claude` cell's body is a prompt, so it gets the type Markdown cells have.
 * Pure: unit-tested without JupyterLab.
 */

/** What Markdown cells use: GitHub Markdown with the notebook's math. */
export const MARKDOWN_MIME = 'text/x-ipythongfm';

/** `%%claude` on the cell's first line that is not blank (IPython drops leading blank lines,
 * `leading_empty_lines`), followed by whitespace or the end: `%%claudex` is another magic. */
const MAGIC = /^(?:[ \t]*\r?\n)*%%claude(?:\s|$)/;

/** Whether a cell's source is a `%%claude` cell: the one definition the turn gate, the
 * buttons, the `editing` event and the editor type all ask. */
export function isClaudeSource(source: string): boolean {
  return MAGIC.test(source);
}

/** `%claude undo [ARGS]` alone in a cell: a turn of its own that the kernel runs as a `%%claude`
 * cell's (byre_jupyter/magics/transform.py), whose one edit is the undo batch the user reviews. */
const UNDO = /^%claude[ \t]+undo([ \t][^\n]*)?$/;

export function isUndoSource(source: string): boolean {
  return UNDO.test(source.trim());
}

/** The editor type a code cell should have: Markdown for a `%%claude` cell, else `codeMime`. */
export function cellMime(source: string, codeMime: string): string {
  return isClaudeSource(source) ? MARKDOWN_MIME : codeMime;
}
