/**
 * "Claude waits for an answer in another tab" (docs/bridge.md, "Collaboration"): without
 * real-time collaboration each page has its own notebook model, and a cell's outputs, its
 * approval, question or plan card among them, show only in the page that ran the cell. The
 * kernel tells every page when a turn's card starts and stops waiting (`review.pending`, only
 * the cell id and a boolean); a page whose gate does not hold that turn marks the cell, so its
 * user knows why the turn does not go on. The page that holds the turn shows its card, and no
 * mark. With collaboration the card shows in every page and the other pages show the mark too:
 * harmless, and true (the turn runs from another tab).
 *
 * The mark is this page's own DOM, never the notebook's: nothing is saved with the notebook.
 * Its text is ours, set as text; the kernel sends no text for it. No JupyterLab import:
 * unit-tested in a small DOM (linkedom).
 */
import { isCellId, isObject } from './protocol';

export const WAITING_CLASS = 'byre-waiting-mark';
export const WAITING_TEXT = 'Claude waits for an answer in another tab';
const WAITING_TITLE =
  "This cell's turn runs from another tab or window of this notebook, where its card waits " +
  'for an answer (an approval, a question or a plan). Answer it there.';

export interface PendingMessage {
  cell: string;
  waiting: boolean;
}

/** `review.pending` from the kernel, or null for anything else. */
export function parsePending(data: unknown): PendingMessage | null {
  if (!isObject(data) || data.type !== 'notify' || data.method !== 'review.pending') {
    return null;
  }
  const params = data.params;
  if (!isObject(params) || !isCellId(params.cell) || typeof params.waiting !== 'boolean') {
    return null;
  }
  return { cell: params.cell, waiting: params.waiting };
}

/** The mark in `cellNode`: made when `waiting`, else removed. */
export function showWaiting(doc: Document, cellNode: HTMLElement, waiting: boolean): void {
  const host = (cellNode.querySelector('.jp-Cell-inputWrapper') as HTMLElement | null) ?? cellNode;
  let node = host.querySelector(`:scope > .${WAITING_CLASS}`) as HTMLElement | null;
  if (!waiting) {
    node?.remove();
    return;
  }
  if (node === null) {
    node = doc.createElement('span');
    node.className = WAITING_CLASS;
    node.setAttribute('role', 'status');
    const style = node.style;
    style.position = 'absolute';
    style.right = '6px';
    style.top = '2px';
    style.zIndex = '2';
    style.padding = '0 6px';
    style.font = 'var(--jp-ui-font-size1) var(--jp-ui-font-family)';
    style.color = 'var(--jp-warn-color0, var(--jp-ui-font-color1))';
    style.background = 'var(--jp-warn-color3, var(--jp-layout-color2))';
    style.border = 'var(--jp-border-width, 1px) solid var(--jp-warn-color2, var(--jp-border-color2))';
    style.borderRadius = 'var(--jp-border-radius, 2px)';
    style.cursor = 'default';
    if (!host.style.position) {
      host.style.position = 'relative'; // the mark sits in the input's upper right corner
    }
    host.appendChild(node);
  }
  node.textContent = WAITING_TEXT;
  node.title = WAITING_TITLE;
}

/** The marks of one page's notebook, by cell id. */
export class WaitingMarks {
  private readonly marked = new Set<string>();

  /** `node(cell)`: the cell's widget node on this page now, or null (deleted, not made yet). */
  constructor(
    private readonly doc: Document,
    private readonly node: (cell: string) => HTMLElement | null
  ) {}

  /** Mark cell `cell` (`waiting`) or unmark it. */
  show(cell: string, waiting: boolean): void {
    if (waiting) {
      this.marked.add(cell);
    } else {
      this.marked.delete(cell);
    }
    const node = this.node(cell);
    if (node !== null) {
      showWaiting(this.doc, node, waiting);
    }
  }

  /** The comm closed or another opened: no turn of the old one waits. */
  clear(): void {
    for (const cell of [...this.marked]) {
      this.show(cell, false);
    }
  }

  /** Whether cell `cell` is marked (tests). */
  has(cell: string): boolean {
    return this.marked.has(cell);
  }
}
