/**
 * Which editor type a code cell gets (src/highlight.ts applies it): a `%%claude` cell's body is
 * a prompt, so it gets the type Markdown cells have. Pure: unit-tested without JupyterLab.
 */

/** What Markdown cells use: GitHub Markdown with the notebook's math. */
export const MARKDOWN_MIME = 'text/x-ipythongfm';

const MAGIC = /^%%claude(\s|$)/;

/** The editor type a code cell should have: Markdown for a `%%claude` cell, else `codeMime`. */
export function cellMime(source: string, codeMime: string): string {
  return MAGIC.test(source) ? MARKDOWN_MIME : codeMime;
}
