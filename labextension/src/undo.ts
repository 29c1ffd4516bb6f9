/**
 * "Undo this turn's edits" (docs/bridge.md, "Undo"): the kernel ends the record of a turn that
 * changed cells with a line naming the turn and its session (`data-byre-undo`, a turn number,
 * and `data-byre-session`, a session name; model HTML cannot carry `data-` attributes). While
 * byre_jupyter's comm is open, the bridge adds a button to that line which inserts a cell
 * `%claude undo #N -s NAME` below the turn's cell and runs it: the undo's review card appears
 * there, and the gate opens a turn for it as for a `%%claude` cell (claudecell.ts). The button
 * is offered only inside a `%%claude` cell's output, and only for a line of that exact shape.
 *
 * No JupyterLab import: the inserting and running are the caller's, so this is unit-tested in a
 * small DOM.
 */
import { bridgeButton } from './button';
import { isClaudeSource } from './claudecell';

export const UNDO_CLASS = 'byre-undo-button';
export const UNDO_LABEL = "Undo this turn's edits";
/** The kernel's line (ui/record.py, `UNDO_CLASS`). */
export const UNDO_SELECTOR = '.byre-undo[data-byre-undo][data-byre-session]';

const TURN = /^[0-9]{1,7}$/;
/** A session name as %claude accepts it (magics/magics.py). */
const SESSION = /^[A-Za-z0-9_-]{1,64}$/;

/** The `%claude undo` line that `mark` asks for, or null when its attributes are not of the
 * kernel's shape. */
export function undoLine(mark: Element): string | null {
  const turn = mark.getAttribute('data-byre-undo') ?? '';
  const session = mark.getAttribute('data-byre-session') ?? '';
  if (!TURN.test(turn) || !SESSION.test(session)) {
    return null;
  }
  return session === 'default' ? `%claude undo #${turn}` : `%claude undo #${turn} -s ${session}`;
}

/** The lines in `node` (itself included). */
export function undoMarksIn(node: Node): Element[] {
  if (node.nodeType !== 1) {
    return [];
  }
  const element = node as Element;
  return [
    ...(element.matches(UNDO_SELECTOR) ? [element] : []),
    ...Array.from(element.querySelectorAll(UNDO_SELECTOR))
  ];
}

/** Adds the button to `mark` if it is in the output of `cell`, a `%%claude` cell, and has none
 * yet; the button calls `insertAndRun(line)`. Returns whether it added one. */
export function offerUndo(
  mark: Element,
  cell: { source: string; node: Element },
  insertAndRun: (line: string) => void
): boolean {
  const line = undoLine(mark);
  if (line === null || mark.querySelector(`.${UNDO_CLASS}`)) {
    return false;
  }
  if (!cell.node.contains(mark) || !isClaudeSource(cell.source)) {
    return false;
  }
  const doc = mark.ownerDocument;
  const title = `Insert a cell "${line}" below and run it: you review the undo there`;
  mark.appendChild(bridgeButton(doc, UNDO_CLASS, UNDO_LABEL, title, () => insertAndRun(line)));
  return true;
}
