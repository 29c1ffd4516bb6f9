// Unit tests of run_cells' messages on the frontend (node's own test runner, no JupyterLab).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import type { Json } from '../src/protocol';
import { applyRunMessage, cleanOutput, findIn, parseRunMessage, renderMarkdown } from '../src/run';
import { MARKDOWN, SANITIZE, widget } from './fakes';

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
  const apply = (data: unknown) => applyRunMessage(parseRunMessage(data, SANITIZE)!, find);

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
    const reply = applyRunMessage(parseRunMessage(begin(id), SANITIZE)!, find);
    assert.equal(reply?.ok, false);
    assert.match(String(reply?.error), /no code cell with id/);
  }
  const stray = parseRunMessage(
    output('gone', { output_type: 'stream', name: 'stdout', text: 'x' }),
    SANITIZE
  );
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
    assert.equal(parseRunMessage(data, SANITIZE), null, JSON.stringify(data));
  }
});

test('an output is rebuilt from its type\'s fields: HTML sanitized, no script, no metadata, Markdown left to render', async () => {
  const html = "<script>window.x = 1</script><img src=x onerror='window.x = 2'>TABLE";
  const display = cleanOutput(
    {
      output_type: 'display_data',
      data: {
        'text/html': html,
        'text/plain': 'df',
        'application/javascript': 'window.x = 3',
        'text/javascript': 'window.x = 4',
        'text/markdown': '<img src=x onerror=alert(1)>',
        'image/svg+xml': '<svg onload="alert(1)"/>',
        'image/png': 'iVBORw0KGgo=',
        'application/vnd.jupyter.widget-view+json': { model_id: 'm1', version_major: 2 }
      },
      metadata: { isolated: false, 'text/html': { trusted: true } }
    },
    SANITIZE
  );
  assert.deepEqual(display, {
    output_type: 'display_data',
    data: {
      'text/html': 'sanitized:window.x = 1TABLE',
      'text/plain': 'df',
      'text/markdown': '<img src=x onerror=alert(1)>',
      'image/png': 'iVBORw0KGgo=',
      'application/vnd.jupyter.widget-view+json': { model_id: 'm1', version_major: 2 }
    },
    metadata: {}
  });
  const shown = await renderMarkdown(display!, MARKDOWN, SANITIZE);
  assert.deepEqual(shown?.data, {
    'text/html': 'sanitized:window.x = 1TABLE', // Lab shows the HTML: the Markdown goes
    'text/plain': 'df',
    'image/png': 'iVBORw0KGgo=',
    'application/vnd.jupyter.widget-view+json': { model_id: 'm1', version_major: 2 }
  });
  const onlyMarkdown = { output_type: 'display_data', data: { 'text/markdown': 'x' }, metadata: {} };
  assert.equal(await renderMarkdown(onlyMarkdown, () => null, SANITIZE), null); // no parser
  assert.deepEqual((await renderMarkdown(onlyMarkdown, MARKDOWN, SANITIZE))?.data, {
    'text/html': 'sanitized:x'
  });
  const result = cleanOutput(
    { output_type: 'execute_result', data: { 'text/plain': '3' }, execution_count: 4, extra: 1 },
    SANITIZE
  );
  assert.deepEqual(result, {
    output_type: 'execute_result',
    data: { 'text/plain': '3' },
    metadata: {},
    execution_count: 4
  });
});

test('an output of no type run_cells makes, or with nothing shown left, is refused', () => {
  for (const out of [
    { output_type: 'display_data', data: { 'application/javascript': 'alert(1)' }, metadata: {} },
    { output_type: 'display_data', data: { 'text/html': 42 }, metadata: {} },
    { output_type: 'display_data', data: { 'image/png': '"><script>' }, metadata: {} },
    { output_type: 'stream', name: 'stdin', text: 'x' },
    { output_type: 'stream', name: 'stdout', text: ['x'] },
    { output_type: 'error', ename: 'E', evalue: 'v', traceback: [1] },
    { output_type: 'update_display_data', data: { 'text/plain': 'x' }, metadata: {} },
    'text/html'
  ]) {
    assert.equal(cleanOutput(out, SANITIZE), null, JSON.stringify(out));
    assert.equal(parseRunMessage(output('c1', out as Json), SANITIZE), null, JSON.stringify(out));
  }
});
