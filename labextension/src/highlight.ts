/**
 * `%%claude` cells highlighted as Markdown (their body is a prompt, not Python).
 *
 * JupyterLab 4 and Notebook 7 pick a cell editor's language from its model's `mimeType`: the
 * notebook sets every code cell to the kernel's (`text/x-ipython`) when a cell is added and when
 * the kernel's language arrives, and the CodeMirror 6 editor loads the language the editor
 * language registry has for that type. So a code cell whose first line starts with `%%claude`
 * gets the type Markdown cells have, again whenever the notebook or an edit would change it,
 * and goes back to the notebook's own type when it stops being a `%%claude` cell (README,
 * "Highlighting"). Nothing is sent to the kernel.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { cellMime } from './claudecell';

/** The part of a cell model this plugin reads and sets. */
interface CellModelLike {
  readonly type: string;
  mimeType: string;
  readonly sharedModel: { getSource(): string };
  readonly contentChanged: { connect(fn: () => void): unknown };
  readonly mimeTypeChanged: { connect(fn: () => void): unknown };
}

function follow(panel: NotebookPanel): void {
  const seen = new WeakSet<CellModelLike>();
  const update = (cell: CellModelLike): void => {
    if (cell.type !== 'code') {
      return;
    }
    const want = cellMime(cell.sharedModel.getSource(), panel.content.codeMimetype);
    if (cell.mimeType !== want) {
      cell.mimeType = want;
    }
  };
  const watchAll = (): void => {
    const cells = panel.content.model?.cells;
    if (!cells) {
      return;
    }
    for (let i = 0; i < cells.length; i++) {
      const cell = cells.get(i) as unknown as CellModelLike;
      if (!seen.has(cell)) {
        seen.add(cell);
        // An edit of the first line, or the notebook setting the kernel's type again.
        cell.contentChanged.connect(() => update(cell));
        cell.mimeTypeChanged.connect(() => update(cell));
      }
      update(cell);
    }
  };
  const attach = (): void => {
    panel.content.model?.cells.changed.connect(watchAll);
    watchAll();
  };
  panel.content.modelChanged.connect(attach);
  attach();
}

const highlight: JupyterFrontEndPlugin<void> = {
  id: 'byre-jupyter-bridge:highlight',
  description: 'Highlights %%claude cells as Markdown.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker) => {
    tracker.forEach(follow);
    tracker.widgetAdded.connect((_, panel) => follow(panel));
  }
};

export default highlight;
