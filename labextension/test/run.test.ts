// Unit tests of run_cells' messages on the frontend (node's own test runner, no JupyterLab).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { Json } from '../src/protocol';
import { CodeCellWidget, applyRunMessage, findIn, parseRunMessage } from '../src/run';

function widget(id: string, type = 'code'): CodeCellWidget & { outputs: Json[]; prompts: string[] } {
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

const begin = (cell: string, count: unknown = 12) => ({
  type: 'request',
  id: '5',
  method: 'run.begin',
  params: { cell, execution_count: count }
});
const output = (cell: string, out: Json) => ({
  type: 'notify',
  method: 'run.output',
  params: { cell, output: out }
});
const end = (cell: string) => ({
  type: 'notify',
  method: 'run.end',
  params: { cell, execution_count: 12 }
});

test('a run clears the cell, streams its outputs into it and ends with the count', () => {
  const cell = widget('c1');
  cell.outputs.push({ output_type: 'stream', name: 'stdout', text: 'old' });
  const find = findIn([widget('other'), cell]);
  const apply = (data: unknown) => applyRunMessage(parseRunMessage(data)!, find);

  assert.deepEqual(apply(begin('c1')), { type: 'reply', id: '5', ok: true, result: {} });
  assert.deepEqual(cell.outputs, []);
  assert.equal(cell.model.executionCount, null);
  assert.equal(apply(output('c1', { output_type: 'stream', name: 'stdout', text: 'hi\n' })), null);
  apply(output('c1', { output_type: 'clear_output', wait: true }));
  assert.equal(cell.outputs.length, 1); // a waiting clear lands with the next output
  apply(output('c1', { output_type: 'display_data', data: { 'text/plain': 'x' }, metadata: {} }));
  assert.deepEqual(cell.outputs, [{ output_type: 'display_data', data: { 'text/plain': 'x' }, metadata: {} }]);
  apply(end('c1'));
  assert.equal(cell.model.executionCount, 12);
  assert.deepEqual(cell.prompts, ['*', '12']);
});

test('a run on a cell that is gone or not code is refused, and stray outputs are dropped', () => {
  const markdown = widget('md', 'markdown');
  const find = findIn([markdown]);
  for (const id of ['gone', 'md']) {
    const reply = applyRunMessage(parseRunMessage(begin(id))!, find);
    assert.equal(reply?.ok, false);
    assert.match(String(reply?.error), /no code cell with id/);
  }
  const stray = parseRunMessage(output('gone', { output_type: 'stream', name: 'stdout', text: 'x' }));
  assert.equal(applyRunMessage(stray!, find), null);
  assert.deepEqual(markdown.outputs, []);
});

test('anything else is not a run message', () => {
  for (const data of [
    null,
    'run.begin',
    { type: 'request', id: '1', method: 'read', params: {} },
    begin('c1', 0),
    begin('c1', '3'),
    { ...begin('c1'), id: 5 },
    { type: 'notify', method: 'run.output', params: { cell: 'c1', output: { output_type: 'html' } } },
    { type: 'notify', method: 'run.output', params: { cell: 3, output: { output_type: 'stream' } } },
    { type: 'request', id: '1', method: 'run.end', params: { cell: 'c1', execution_count: 3 } }
  ]) {
    assert.equal(parseRunMessage(data), null, JSON.stringify(data));
  }
});
