/**
 * "Run again" on a stale answer (docs/bridge.md): the kernel marks an answer left on an older
 * branch of its conversation with a note at the top of its record, which names the cell that
 * shows it (`data-byre-rerun`, a validated nbformat id; model HTML cannot carry the attribute).
 * While byre_jupyter's comm is open, the bridge adds a button to that note which runs the cell
 * as Shift+Enter would. The button runs only the cell whose output holds the mark, and only
 * when the mark names that very cell and it is a `%%claude` cell: a mark copied elsewhere, or
 * naming another cell, gets no button.
 *
 * No JupyterLab import: the running is the caller's, so this is unit-tested in a small DOM.
 */
import { bridgeButton } from './button';
import { isClaudeSource } from './claudecell';

/** The class of the button (tests and the screenshot find it by it). */
export const RERUN_CLASS = 'byre-rerun';
export const RERUN_LABEL = 'Run again';
/** The kernel's mark (ui/record.py, `STALE_CLASS`) when it names a cell. */
export const MARK_SELECTOR = '.byre-stale[data-byre-rerun]';

/** One cell on screen, structurally: its nbformat id, its source and its node. */
export interface RerunCell {
  id: string;
  source: string;
  node: Element;
}

/** Whether `mark` may run `cell`: it names that very cell, a `%%claude` cell. */
export function mayRerun(mark: Element, cell: RerunCell): boolean {
  return (
    mark.getAttribute('data-byre-rerun') === cell.id &&
    cell.node.contains(mark) &&
    isClaudeSource(cell.source)
  );
}

/** The marks in `node` (itself included). */
export function marksIn(node: Node): Element[] {
  if (node.nodeType !== 1) {
    return [];
  }
  const element = node as Element;
  return [
    ...(element.matches(MARK_SELECTOR) ? [element] : []),
    ...Array.from(element.querySelectorAll(MARK_SELECTOR))
  ];
}

/** Adds "Run again" to `mark` if it may run `cell` and has none yet; the button calls
 * `run()`. Returns whether it added one. */
export function offerRunAgain(mark: Element, cell: RerunCell, run: () => void): boolean {
  if (mark.querySelector(`.${RERUN_CLASS}`) || !mayRerun(mark, cell)) {
    return false;
  }
  const doc = mark.ownerDocument;
  mark.appendChild(
    bridgeButton(doc, RERUN_CLASS, RERUN_LABEL, 'Run this cell again to update its answer', run)
  );
  return true;
}
