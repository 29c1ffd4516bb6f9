/**
 * byre_jupyter's frontend bridge: a JupyterLab 4 / Notebook 7 plugin that opens the
 * `byre.bridge` comm for every notebook whose kernel is ready (again after a restart) and
 * answers the kernel's requests from the notebook model on screen, unsaved edits included
 * (docs/bridge.md).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel } from '@jupyterlab/services';

import highlight from './highlight';
import {
  JsonObject,
  NotebookView,
  TARGET,
  answer,
  hello,
  parseRequest
} from './protocol';

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

function serve(panel: NotebookPanel, frontend: string): void {
  const view = viewOf(panel);
  const context = panel.sessionContext;
  const registered = new WeakSet<Kernel.IKernelConnection>();
  let comm: Kernel.IComm | null = null;

  const attach = (opened: Kernel.IComm): void => {
    if (comm && comm !== opened && !comm.isDisposed) {
      comm.dispose();
    }
    comm = opened;
    opened.onMsg = msg => {
      const request = parseRequest(msg.content.data);
      if (request && !opened.isDisposed) {
        opened.send(answer(request, view) as unknown as JsonObject);
      }
    };
    opened.onClose = () => {
      if (comm === opened) {
        comm = null;
      }
    };
  };

  const connect = (kernel: Kernel.IKernelConnection | null | undefined): void => {
    if (!kernel || kernel.isDisposed) {
      return;
    }
    if (!registered.has(kernel)) {
      registered.add(kernel);
      // The kernel opens the comm itself when byre_jupyter loads after the kernel started.
      kernel.registerCommTarget(TARGET, (opened: Kernel.IComm) => {
        attach(opened);
        opened.send(hello(view, frontend));
      });
    }
    // A kernel without byre_jupyter loaded closes this comm at once; that is harmless.
    const opened = kernel.createComm(TARGET);
    attach(opened);
    opened.open(hello(view, frontend));
  };

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
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'byre-jupyter-bridge:plugin',
  description: 'Lets byre_jupyter read the notebook on screen over a comm.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    const frontend = app.name.toLowerCase().includes('notebook') ? 'notebook' : 'lab';
    tracker.widgetAdded.connect((_, panel) => serve(panel, frontend));
  }
};

export default [plugin, highlight];
