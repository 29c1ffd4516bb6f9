/**
 * Who changed what (docs/bridge.md, "Provenance marks"): a cell Claude inserted or changed
 * carries `metadata.byre = {conversation, turn, prompt?}` (edit.ts writes it with the edit), and
 * shows a small mark with the turn and the conversation, the prompt on hover. The metadata is
 * saved with the notebook, so the mark follows the cell through saves and reloads; a person's
 * edit of the cell removes it, so the mark never claims a text a person wrote since.
 *
 * A person's edit is told from byre's by what changed together: an edit of ours changes the
 * source and sets (or, for an undo, removes) `byre` in one transaction of the shared model
 * (index.ts, `splice`), while typing, a paste or another collaborator's keystrokes change the
 * source alone. That holds across tabs too: a remote transaction arrives as one change.
 *
 * The metadata is untrusted (a notebook from anywhere may carry any): it is parsed as strictly
 * as an edit's provenance, and the mark's texts are set as text, never as HTML. No JupyterLab
 * import: unit-tested in a small DOM.
 */
import { parseProvenance } from './edit';
import type { Provenance } from './edit';

export const MARK_CLASS = 'byre-provenance-mark';

export interface Mark {
  /** What the mark shows: "Claude #3 · 1a2b3c4d". */
  label: string;
  /** Its hover: the turn, the whole conversation id, the prompt. */
  title: string;
}

/** The mark of a cell whose metadata is `metadata`, or null: no (valid) provenance. */
export function markOf(metadata: unknown): Mark | null {
  const byre =
    typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)
      ? (metadata as { byre?: unknown }).byre
      : undefined;
  const provenance: Provenance | null = byre === undefined ? null : parseProvenance(byre);
  if (provenance === null) {
    return null;
  }
  const turn = provenance.turn === null ? 'Claude' : `Claude #${provenance.turn}`;
  const short = provenance.conversation.slice(0, 8);
  const label = short ? `${turn} · ${short}` : turn;
  const lines = [
    provenance.turn === null
      ? 'Changed by Claude (no cell owned the turn)'
      : `Changed by Claude in turn #${provenance.turn}`,
    provenance.conversation ? `conversation ${provenance.conversation}` : 'conversation not named yet',
    'A person editing the cell removes this mark; %claude undo takes the turn back.'
  ];
  if (typeof provenance.prompt === 'string' && provenance.prompt) {
    lines.splice(2, 0, `prompt: ${provenance.prompt}`);
  }
  return { label, title: lines.join('\n') };
}

/** One change of a cell's shared model: what changed in that one transaction. */
export interface CellChange {
  sourceChanged: boolean;
  /** `metadata.byre` was set or removed in the same transaction (an edit of byre's). */
  byreChanged: boolean;
  /** The cell carries `metadata.byre` now. */
  hasByre: boolean;
}

/** Whether this change is a person's edit of a cell with provenance: it must go. */
export function clearsProvenance(change: CellChange): boolean {
  return change.sourceChanged && !change.byreChanged && change.hasByre;
}

/** The mark's node in `cellNode`, made, updated or removed to match `mark`. */
export function showMark(doc: Document, cellNode: HTMLElement, mark: Mark | null): void {
  const host = (cellNode.querySelector('.jp-Cell-inputWrapper') as HTMLElement | null) ?? cellNode;
  let node = host.querySelector(`:scope > .${MARK_CLASS}`) as HTMLElement | null;
  if (mark === null) {
    node?.remove();
    return;
  }
  if (node === null) {
    node = doc.createElement('span');
    node.className = MARK_CLASS;
    const style = node.style;
    style.position = 'absolute';
    style.right = '6px';
    style.bottom = '2px';
    style.zIndex = '2';
    style.padding = '0 6px';
    style.font = 'var(--jp-ui-font-size0) var(--jp-ui-font-family)';
    style.color = 'var(--jp-ui-font-color2)';
    style.background = 'var(--jp-layout-color2)';
    style.border = 'var(--jp-border-width, 1px) solid var(--jp-border-color2)';
    style.borderRadius = 'var(--jp-border-radius, 2px)';
    style.opacity = '0.85';
    style.pointerEvents = 'auto';
    style.cursor = 'default';
    if (!host.style.position) {
      host.style.position = 'relative'; // the mark sits in the input's lower right corner
    }
    host.appendChild(node);
  }
  node.textContent = mark.label;
  node.title = mark.title;
  node.setAttribute('aria-label', mark.label);
}

/** A cell's model as the watcher needs it (Lab's ICellModel, structurally). */
export interface MarkedCellModel {
  readonly id: string;
  readonly sharedModel: {
    getMetadata(key?: string): unknown;
    deleteMetadata(key: string): void;
    changed: {
      connect(
        fn: (sender: unknown, change: { sourceChange?: unknown; metadataChange?: unknown }) => void
      ): unknown;
    };
  };
}

/** Whether a metadata change of one transaction touched the `byre` key. */
export function touchesByre(metadataChange: unknown): boolean {
  if (metadataChange instanceof Map) {
    return metadataChange.has('byre');
  }
  // Lab 4's ydoc hands a Map of the changed keys; anything else: assume it did, so the mark is
  // never removed on a change we cannot read.
  return metadataChange !== undefined && metadataChange !== null;
}

/** Follow one cell model: a person's edit of its source removes its provenance. */
export function watchCell(model: MarkedCellModel, onChange: () => void): void {
  model.sharedModel.changed.connect((_, change) => {
    const hasByre = model.sharedModel.getMetadata('byre') !== undefined;
    const byreChanged = touchesByre(change.metadataChange);
    if (clearsProvenance({ sourceChanged: !!change.sourceChange, byreChanged, hasByre })) {
      model.sharedModel.deleteMetadata('byre');
    }
    if (byreChanged || change.sourceChange) {
      onChange();
    }
  });
}

/** A notebook's cell widgets as the watcher needs them (Lab's Notebook, structurally). */
export interface MarkedCellWidget {
  readonly model: MarkedCellModel;
  readonly node: HTMLElement;
}

/** Keep the marks of `widgets()` in step with their cells' metadata; call the returned
 * function whenever the notebook's cells change (added, removed, moved, retyped). */
export function watchProvenance(
  doc: Document,
  widgets: () => readonly MarkedCellWidget[]
): () => void {
  const watched = new WeakSet<object>();
  const render = (widget: MarkedCellWidget): void =>
    showMark(doc, widget.node, markOf(widget.model.sharedModel.getMetadata()));
  const refresh = (): void => {
    for (const widget of widgets()) {
      const model = widget.model;
      if (!watched.has(model)) {
        watched.add(model);
        watchCell(model, () => {
          // The widget of the model now: a cell retyped or moved gets a new one.
          const now = widgets().find(w => w.model === model);
          if (now) {
            render(now);
          }
        });
      }
      render(widget);
    }
  };
  return refresh;
}
