/**
 * The `editing` event (docs/bridge.md): when the user starts changing a `%%claude` cell that
 * already ran, the bridge tells the kernel once, so it can start the spare CLI that cell's
 * re-run will adopt (a re-run branches the conversation, and the CLI takes its branch point at
 * launch: byre_jupyter/app/spare.py). Once per cell until it runs again: typing sends nothing
 * more. Nothing is sent while the comm is closed (the next change tries again).
 *
 * No JupyterLab import: the signals are the caller's (index.ts), so this is unit-tested in Node.
 */
import type { JsonObject } from './protocol';
import { isClaudeSource } from './claudecell';

export interface EditingEvent extends JsonObject {
  type: 'event';
  name: 'editing';
  cell: string;
}

export function editingEvent(cell: string): EditingEvent {
  return { type: 'event', name: 'editing', cell };
}

/** One cell whose source just changed: its nbformat id, its source now, and whether it ran
 * (it has an execution count: only such a cell can have a turn in a conversation). */
export interface ChangedCell {
  id: string;
  source: string;
  ran: boolean;
}

/** Which cells were told to the kernel as being edited since they last ran. */
export class EditWatch {
  private readonly told = new Set<string>();

  /** `send` sends one event over the comm; false when the comm is not open. */
  constructor(private readonly send: (event: EditingEvent) => boolean) {}

  /** A cell's source changed: sends the event if this is the first change of a `%%claude`
   * cell that ran since it last ran (or since the notebook opened). Returns whether it sent. */
  changed(cell: ChangedCell): boolean {
    if (!cell.ran || this.told.has(cell.id) || !isClaudeSource(cell.source)) {
      return false;
    }
    if (!this.send(editingEvent(cell.id))) {
      return false;
    }
    this.told.add(cell.id);
    return true;
  }

  /** The cell runs (again): its next change is a new edit. */
  ran(id: string): void {
    this.told.delete(id);
  }
}
