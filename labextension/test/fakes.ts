// Fakes of the notebook model shared by the bridge's unit tests (no JupyterLab).
import type { EditableNotebook } from '../src/edit';
import type { Json, JsonObject } from '../src/protocol';
import type { CodeCellWidget } from '../src/run';

export interface FakeCell {
  id: string;
  source: string;
  metadata: JsonObject;
  cell_type?: string;
}

export function notebook(cells: FakeCell[]): EditableNotebook & { cells: FakeCell[] } {
  const find = (id: string): FakeCell => {
    const cell = cells.find(c => c.id === id);
    if (!cell) {
      throw new Error(`no cell ${id}`);
    }
    return cell;
  };
  return {
    cells,
    ids: () => cells.map(c => c.id),
    source: id => find(id).source,
    insert: (index, json) => {
      cells.splice(index, 0, {
        id: String(json.id),
        source: String(json.source),
        cell_type: String(json.cell_type),
        metadata: json.metadata as JsonObject
      });
    },
    splice: (id, start, end, text, provenance) => {
      const cell = find(id);
      cell.source = cell.source.slice(0, start) + text + cell.source.slice(end);
      const { byre: _old, ...rest } = cell.metadata;
      void _old;
      cell.metadata = provenance === null ? rest : { ...rest, byre: provenance };
    },
    remove: id => {
      cells.splice(cells.indexOf(find(id)), 1);
    }
  };
}

export function widget(id: string, type = 'code'): CodeCellWidget & { outputs: Json[]; prompts: string[] } {
  const outputs: Json[] = [];
  const prompts: string[] = [];
  let clearNext = false;
  return {
    outputs,
    prompts,
    model: {
      id,
      type,
      executionCount: 7,
      outputs: {
        add: output => {
          if (clearNext) {
            outputs.length = 0;
            clearNext = false;
          }
          return outputs.push(output);
        },
        clear: wait => {
          if (wait) {
            clearNext = true;
          } else {
            outputs.length = 0;
          }
        }
      }
    },
    setPrompt: value => {
      prompts.push(value);
    }
  };
}

/** Stands for Lab's sanitizer: marks what went through it, and drops every tag. */
export const SANITIZE = (html: string): string => `sanitized:${html.replace(/<[^>]*>/g, '')}`;

/** Stands for Lab's Markdown parser: wraps the source in a paragraph, HTML left in. */
export const MARKDOWN = (source: string): Promise<string> => Promise.resolve(`<p>${source}</p>`);
