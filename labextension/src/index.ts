/**
 * byre_jupyter's frontend bridge: a JupyterLab 4 / Notebook 7 plugin that opens the
 * `byre.bridge` comm for every notebook whose kernel is ready (again after a restart) and
 * answers the kernel's requests from the notebook model on screen, unsaved edits included;
 * it applies the cell edits the user approved to that model (edit.ts), shows the cells the
 * kernel runs in place (run.ts), offers "Ask Claude" on errors (ask.ts) and "Run again" on
 * stale answers (rerun.ts) while the comm is open, and tells the kernel when a `%%claude` cell
 * that ran is being edited (editing.ts), and writes into a cell what a page that loaded late
 * missed of it (restore.ts), and marks a cell whose card waits in another tab (waiting.ts)
 * (docs/bridge.md). What the kernel may do, and when, is
 * gate.ts's: only byre_jupyter's announced comm, and edits and runs only in a `%%claude` turn
 * the user started on this page, or adopted here by clicking a button in its output (adopt).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel } from '@jupyterlab/services';

import { EditableNotebook } from './edit';
import { Served, TurnGate, acceptsKernelComm, inOrder, turnOpenedEvent } from './gate';
import highlight from './highlight';
import { JsonObject, NotebookView, TARGET, hello } from './protocol';
import { offerAskClaude } from './ask';
import { CodeCellWidget, findIn, runCellOf } from './run';
import { RestoreTarget, Restorer, isRestore } from './restore';
import { RERUN_CLASS, marksIn, offerRunAgain } from './rerun';
import { EditWatch } from './editing';
import { MarkedCellWidget, watchProvenance } from './marks';
import { UNDO_CLASS, offerUndo, undoMarksIn } from './undo';
import { WaitingMarks } from './waiting';

function viewOf(panel: NotebookPanel): NotebookView {
  return {
    path: () => panel.context.path,
    dirty: () => panel.context.model.dirty,
    cells: () => {
      const cells = panel.content.model?.cells;
      const out: JsonObject[] = [];
      if (cells) {
        for (let i = 0; i < cells.length; i++) {
          out.push(cells.get(i).toJSON() as unknown as JsonObject);
        }
      }
      return out;
    }
  };
}

/** The notebook model on screen, edited as a user's typing and Lab's own cell commands edit it
 * (so undo, the dirty marker, autosave and collaboration see a human's edit). */
function editableOf(panel: NotebookPanel): EditableNotebook {
  const shared = () => {
    const model = panel.content.model;
    if (!model) {
      throw new Error('the notebook has no model');
    }
    return model.sharedModel;
  };
  const cell = (id: string) => {
    const found = shared().cells.find(c => c.id === id);
    if (!found) {
      throw new Error(`no cell ${id}`);
    }
    return found;
  };
  return {
    ids: () => shared().cells.map(c => c.id),
    source: id => cell(id).getSource(),
    insert: (index, json) => {
      shared().insertCell(index, json as never);
    },
    splice: (id, start, end, text, provenance) => {
      const target = cell(id);
      target.transact(() => {
        target.updateSource(start, end, text);
        if (provenance === null) {
          target.deleteMetadata('byre'); // an undo: the cell is again as no turn made it
        } else {
          target.setMetadata('byre', provenance);
        }
      });
    },
    remove: id => {
      shared().deleteCell(shared().cells.findIndex(c => c.id === id));
    }
  };
}

/** Offers "Run again" on the stale marks rendered in `panel` while `connected()` (rerun.ts);
 * returns what to call when the comm opens (marks already on screen) and closes. */
function watchMarks(
  panel: NotebookPanel,
  connected: () => boolean
): { opened: () => void; closed: () => void } {
  const content = panel.content;
  const offer = (mark: Element): void => {
    const widget = content.widgets.find(w => w.node === mark.closest('.jp-Cell'));
    if (!widget || widget.model.type !== 'code') {
      return;
    }
    const cell = { id: widget.model.id, source: widget.model.sharedModel.getSource() };
    offerRunAgain(mark, { ...cell, node: widget.node }, () => {
      const index = content.widgets.indexOf(widget);
      if (index < 0 || !connected()) {
        return; // the cell was deleted, or byre_jupyter's kernel is gone
      }
      content.activeCellIndex = index;
      content.deselectAll();
      void NotebookActions.run(content, panel.sessionContext); // as Shift+Enter, in place
    });
  };
  // "Undo this turn's edits" (undo.ts): a `%claude undo` cell below the turn's, run at once.
  const offerUndoOn = (mark: Element): void => {
    const widget = content.widgets.find(w => w.node === mark.closest('.jp-Cell'));
    if (!widget || widget.model.type !== 'code') {
      return;
    }
    const cell = { source: widget.model.sharedModel.getSource(), node: widget.node };
    offerUndo(mark, cell, line => {
      const index = content.widgets.indexOf(widget);
      if (index < 0 || !connected()) {
        return;
      }
      content.activeCellIndex = index;
      content.deselectAll();
      NotebookActions.insertBelow(content);
      content.activeCell?.model.sharedModel.setSource(line);
      void NotebookActions.run(content, panel.sessionContext);
    });
  };
  const scan = (node: Node): void => {
    if (connected()) {
      marksIn(node).forEach(offer);
      undoMarksIn(node).forEach(offerUndoOn);
    }
  };
  // A marked record replaces the old one's rendering: its new nodes come through here.
  new MutationObserver(records => {
    records.forEach(record => record.addedNodes.forEach(scan));
  }).observe(content.node, { childList: true, subtree: true });
  return {
    opened: () => scan(content.node),
    closed: () =>
      content.node.querySelectorAll(`.${RERUN_CLASS}, .${UNDO_CLASS}`).forEach(b => b.remove())
  };
}

/** Tells the kernel, through `watch`, of each source change of `panel`'s code cells (those
 * added later too), and `gate` of each cell Lab runs in it and of each run that ends. */
function watchEdits(panel: NotebookPanel, watch: EditWatch, gate: TurnGate): void {
  const watched = new WeakSet<object>();
  const follow = (): void => {
    const cells = panel.content.model?.cells;
    for (let i = 0; cells && i < cells.length; i++) {
      const model = cells.get(i);
      if (model.type !== 'code' || watched.has(model)) {
        continue;
      }
      watched.add(model);
      model.sharedModel.changed.connect((shared, change) => {
        if (change.sourceChange) {
          // The code cell model's own count: no toJSON (it copies the outputs) per keystroke.
          const ran = (model as unknown as { executionCount?: number | null }).executionCount;
          watch.changed({ id: model.id, source: shared.getSource(), ran: typeof ran === 'number' });
        }
      });
    }
  };
  // Provenance marks (marks.ts): after Lab made the widgets of the cells that changed.
  const marks = watchProvenance(
    document,
    () => panel.content.widgets as unknown as readonly MarkedCellWidget[]
  );
  panel.context.ready.then(() => {
    follow();
    marks();
    panel.content.model?.cells.changed.connect(() => {
      follow();
      requestAnimationFrame(marks);
    });
  }).catch(() => undefined); // a notebook that failed to load has no cells to watch
  type Ran = { notebook: unknown; cell: { model: { id: string; sharedModel: Source } } };
  type Source = { getSource(): string };
  const scheduled = (_: unknown, args: Ran) => {
    if (args.notebook === panel.content) {
      const model = args.cell.model;
      watch.ran(model.id);
      gate.scheduled(model.id, model.sharedModel.getSource());
    }
  };
  const executed = (_: unknown, args: Ran) => {
    if (args.notebook === panel.content) {
      gate.executed(args.cell.model.id);
    }
  };
  NotebookActions.executionScheduled.connect(scheduled);
  NotebookActions.executed.connect(executed);
  panel.disposed.connect(() => {
    NotebookActions.executionScheduled.disconnect(scheduled);
    NotebookActions.executed.disconnect(executed);
  });
}

/** Lets the user of this page adopt a running turn it did not start (a reload, a take-over:
 * gate.ts), by an act of their own: a trusted click on a button inside that `%%claude` cell's
 * output, its re-shown card's *Allow* for one. Seen in the capture phase, before the button's
 * own handler sends the answer to the kernel, so `turn.opened` reaches the kernel first (one
 * websocket, in order) and the edit the answer lets go comes to this page, whose gate takes it
 * (docs/bridge.md, "Which page holds the bridge"; docs/security.md). */
function adopt(
  panel: NotebookPanel,
  gate: TurnGate,
  send: (event: JsonObject) => boolean
): void {
  const clicked = (event: MouseEvent): void => {
    const target = event.target instanceof Element ? event.target : null;
    if (!event.isTrusted || !target?.closest('button')) {
      return;
    }
    const output = target.closest('.jp-Cell-outputWrapper');
    const widget = (panel.content.widgets as unknown as readonly MarkedCellWidget[]).find(
      cell => output !== null && cell.node.contains(output)
    );
    if (widget === undefined || !gate.canAdopt(widget.model.id)) {
      return;
    }
    const model = widget.model as unknown as { id: string; sharedModel: { getSource(): string } };
    if (gate.adopt(model.id, model.sharedModel.getSource())) {
      send(turnOpenedEvent(model.id));
    }
  };
  panel.content.node.addEventListener('click', clicked, true);
  panel.disposed.connect(() => panel.content.node.removeEventListener('click', clicked, true));
}

/** Serves `panel`'s notebook; returns whether byre_jupyter's comm is open for it now. */
function serve(panel: NotebookPanel, frontend: string): () => boolean {
  const gate = new TurnGate();
  const widgets = () => panel.content.widgets as unknown as readonly CodeCellWidget[];
  // "Claude waits for an answer in another tab" (waiting.ts), on the cell's widget now.
  const waiting = new WaitingMarks(
    document,
    id => panel.content.widgets.find(w => w.model.id === id)?.node ?? null
  );
  const served: Served = {
    gate,
    view: viewOf(panel),
    editable: editableOf(panel),
    find: id => findIn(widgets())(id),
    // Outputs of a run in place are saved and trusted when the notebook is reopened: their
    // HTML goes through the sanitizer Lab applies to untrusted output (run.ts).
    sanitize: html => panel.content.rendermime.sanitizer.sanitize(html),
    markdown: source => panel.content.rendermime.markdownParser?.render(source) ?? null,
    waiting
  };
  const view = served.view;
  // Outputs a page that loaded late never received (restore.ts), written into the cell's
  // model: they come with the hello, before Lab may have made the cell's widget.
  const restoring: RestoreTarget = {
    find: id => {
      const cells = panel.content.model?.cells;
      for (let i = 0; cells && i < cells.length; i++) {
        const model = cells.get(i);
        if (model.id === id) {
          const run = runCellOf({ model: model as unknown as CodeCellWidget['model'] });
          return run ? { run, source: () => model.sharedModel.getSource() } : null;
        }
      }
      return null;
    },
    sanitize: served.sanitize,
    markdown: served.markdown,
    changed: () => {
      panel.context.model.dirty = true;
    }
  };
  const context = panel.sessionContext;
  const registered = new WeakSet<Kernel.IKernelConnection>();
  let comm: Kernel.IComm | null = null;
  const marks = watchMarks(panel, () => comm !== null && !comm.isDisposed);
  watchEdits(
    panel,
    new EditWatch(event => {
      if (comm === null || comm.isDisposed) {
        return false;
      }
      comm.send(event);
      return true;
    }),
    gate
  );
  const live = () => comm !== null && !comm.isDisposed;
  adopt(panel, gate, event => {
    if (comm === null || comm.isDisposed) {
      return false;
    }
    comm.send(event);
    return true;
  });

  /** Serve over `opened` from now on (this page opened it: a comm of ours replaces its own
   * older one, after a restart or a kernel change, and on opening, where Lab's `ready` and
   * `kernelChanged` both connect). The older one is closed, not only dropped: the kernel keeps
   * every page's open comm and falls back to it when the newest closes (docs/bridge.md). */
  const attach = (opened: Kernel.IComm): void => {
    const older = comm;
    comm = opened;
    if (older && older !== opened && !older.isDisposed) {
      older.close();
    }
    gate.reset();
    waiting.clear();
    const receive = inOrder(served);
    const restorer = new Restorer(restoring);
    opened.onMsg = msg => {
      if (comm !== opened) {
        return; // a comm of ours that another replaced: nothing of it is served
      }
      if (isRestore(msg.content.data)) {
        restorer
          .take(msg.content.data)
          .then(reply => reply && !opened.isDisposed && opened.send(reply))
          .catch(error => console.error('byre bridge: a restore failed', error));
        return;
      }
      receive(msg.content.data)
        .then(reply => {
          if (reply && !opened.isDisposed) {
            opened.send(reply as unknown as JsonObject);
          }
        })
        .catch(error => console.error('byre bridge: a message failed', error));
    };
    marks.opened(); // a kernel without byre_jupyter closes the comm at once: they go again
    opened.onClose = () => {
      if (comm === opened) {
        comm = null;
        gate.reset();
        waiting.clear();
        marks.closed();
      }
    };
  };

  /** A comm of this page's own, its hello riding on the open. */
  const open = (kernel: Kernel.IKernelConnection): void => {
    const opened = kernel.createComm(TARGET);
    attach(opened);
    opened.open(hello(view, frontend));
  };

  const connect = (kernel: Kernel.IKernelConnection | null | undefined): void => {
    if (!kernel || kernel.isDisposed) {
      return;
    }
    if (!registered.has(kernel)) {
      registered.add(kernel);
      // The kernel opens a comm itself when byre_jupyter loads after the kernel started. It
      // reaches every page on the kernel, so no page serves over it (two pages answering one
      // request could apply an edit and report it refused): it only says byre_jupyter is there,
      // and, as gate.ts says (never in place of a live one), this page answers with a comm of
      // its own. Closed either way: the kernel forgets it.
      kernel.registerCommTarget(TARGET, (announced: Kernel.IComm, msg) => {
        const take = acceptsKernelComm(msg.content.data, live());
        announced.close();
        if (take) {
          open(kernel);
        }
      });
    }
    // A kernel without byre_jupyter loaded closes this comm at once; that is harmless.
    open(kernel);
  };

  // Every page showing the notebook has a comm, and the kernel serves over the newest; it
  // learns that a page went away only from the page's comm_close (a closed tab sends nothing
  // by itself), so the page says it as it goes: then the next page takes over
  // (docs/bridge.md, "Which page holds the bridge").
  const goodbye = (): void => {
    if (comm !== null && !comm.isDisposed) {
      comm.close();
    }
  };
  window.addEventListener('pagehide', goodbye);
  panel.disposed.connect(() => {
    window.removeEventListener('pagehide', goodbye);
    goodbye();
  });

  let restarting = false;
  context.statusChanged.connect((_, status) => {
    if (status === 'restarting' || status === 'autorestarting') {
      restarting = true;
    } else if (restarting && status === 'idle') {
      restarting = false;
      connect(context.session?.kernel);
    }
  });
  context.kernelChanged.connect((_, change) => {
    void context.ready.then(() => connect(change.newValue));
  });
  void context.ready.then(() => connect(context.session?.kernel));
  return live;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'byre-jupyter-bridge:plugin',
  description: 'Lets byre_jupyter read, edit and run the notebook on screen over a comm.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    const frontend = app.name.toLowerCase().includes('notebook') ? 'notebook' : 'lab';
    const served = new WeakMap<NotebookPanel, () => boolean>();
    tracker.widgetAdded.connect((_, panel) => served.set(panel, serve(panel, frontend)));
    offerAskClaude(
      notebook => tracker.find(panel => panel.content === notebook) ?? null,
      panel => served.get(panel)?.() === true
    );
  }
};

export default [plugin, highlight];
