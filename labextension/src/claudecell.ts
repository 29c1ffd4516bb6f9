/**
 * What makes a cell a `%%claude` cell, and which editor type a code cell gets (src/highlight.ts
 * applies it): a `%%claude` cell's body is a prompt, so it gets the type Markdown cells have.
 * Pure: unit-tested without JupyterLab.
 */

/** What Markdown cells use: GitHub Markdown with the notebook's math. */
export const MARKDOWN_MIME = 'text/x-ipythongfm';

const MAGIC = /^%%claude(\s|$)/;

/** Whether a cell's source is a `%%claude` cell (the bridge's buttons act only on those). */
export function isClaudeSource(source: string): boolean {
  return source.trimStart().startsWith('%%claude');
}

/** `%claude undo [ARGS]` alone in a cell: a turn of its own that the kernel runs as a `%%claude`
 * cell's (byre_jupyter/magics/transform.py), whose one edit is the undo batch the user reviews. */
const UNDO = /^%claude[ \t]+undo([ \t][^\n]*)?$/;

export function isUndoSource(source: string): boolean {
  return UNDO.test(source.trim());
}

/** The editor type a code cell should have: Markdown for a `%%claude` cell, else `codeMime`. */
export function cellMime(source: string, codeMime: string): string {
  return MAGIC.test(source) ? MARKDOWN_MIME : codeMime;
}
