/**
 * "Ask Claude" on an error (docs/bridge.md): when a cell that is not a `%%claude` cell ends in
 * an error, and byre_jupyter is loaded in the notebook's kernel (the bridge's comm is open), a
 * small button under the error output inserts a `%%claude` cell below, prefilled to fix that
 * cell's error (src/askprompt.ts: the cell named by its count and first line), and runs it. The model then reads the cell, its traceback and the code
 * around it with the notebook tool.
 *
 * The button is the bridge's own (button.ts).
 */
import { NotebookActions, NotebookPanel } from '@jupyterlab/notebook';

import { askSource } from './askprompt';
import { bridgeButton } from './button';
import { isClaudeSource } from './claudecell';

/** The class of the affordance (tests and the screenshot find it by it). */
export const ASK_CLASS = 'byre-ask-claude';
export const ASK_LABEL = 'Ask Claude';
const ASK_TITLE = 'Insert a %%claude cell below that asks Claude to fix this error, and run it';

interface OutputAreaLike {
  model: { length: number; get(index: number): { type: string } };
  widgets: ReadonlyArray<{ node: HTMLElement }>;
}

/** The rendered node of the cell's last error output (below its prompt), or null. */
function errorNode(area: OutputAreaLike): HTMLElement | null {
  for (let i = area.model.length - 1; i >= 0; i--) {
    if (area.model.get(i).type === 'error') {
      const child = area.widgets[i]?.node;
      return child?.querySelector<HTMLElement>('.jp-OutputArea-output') ?? child ?? null;
    }
  }
  return null;
}

/** Offers "Ask Claude" under the errors of cells run in the notebooks `panelOf` knows while
 * `connected(panel)` says byre_jupyter's comm is open. */
export function offerAskClaude(
  panelOf: (notebook: unknown) => NotebookPanel | null,
  connected: (panel: NotebookPanel) => boolean
): void {
  NotebookActions.executed.connect((_, { notebook, cell, success }) => {
    const panel = panelOf(notebook);
    if (success || !panel || !connected(panel) || cell.model.type !== 'code') {
      return;
    }
    if (isClaudeSource(cell.model.sharedModel.getSource())) {
      return;
    }
    const source = askSource({
      id: cell.model.id,
      // A code cell's model (the type above) has it; @jupyterlab/cells is not our dependency.
      executionCount: (cell.model as unknown as { executionCount?: number | null }).executionCount ?? null,
      source: cell.model.sharedModel.getSource()
    });
    const area = (cell as unknown as { outputArea?: OutputAreaLike }).outputArea;
    const node = area ? errorNode(area) : null;
    if (source === null || !node || node.querySelector(`.${ASK_CLASS}`)) {
      return;
    }
    node.appendChild(
      bridgeButton(document, ASK_CLASS, ASK_LABEL, ASK_TITLE, () => {
        const content = panel.content;
        const index = content.widgets.indexOf(cell);
        if (index < 0) {
          return; // the cell was deleted
        }
        content.activeCellIndex = index;
        NotebookActions.insertBelow(content);
        const asking = content.activeCell;
        if (!asking) {
          return;
        }
        asking.model.sharedModel.setSource(source);
        void NotebookActions.run(content, panel.sessionContext);
      })
    );
  });
}
