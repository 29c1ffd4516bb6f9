// Unit tests of the bridge's messages (node's own test runner, no JupyterLab).
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import {
  MAX_TEXT,
  NotebookView,
  PROTOCOL,
  TARGET,
  VERSION,
  answer,
  hello,
  joinSource,
  parseRequest,
  snapshotCell,
  snapshotOutput
} from '../src/protocol';

const PNG = 'iVBORw0KGgo=';

function view(cells: Record<string, unknown>[], dirty = true): NotebookView {
  return {
    path: () => 'work/analysis.ipynb',
    dirty: () => dirty,
    cells: () => cells as never
  };
}

test('the hello names the protocol, the version, the frontend and the path', () => {
  assert.equal(TARGET, 'byre.bridge');
  assert.deepEqual(hello(view([]), 'lab'), {
    type: 'hello',
    protocol: PROTOCOL,
    version: VERSION,
    frontend: 'lab',
    path: 'work/analysis.ipynb'
  });
});

test('the version is package.json\'s', () => {
  const pkg = JSON.parse(readFileSync(`${__dirname}/../../package.json`, 'utf8'));
  assert.equal(VERSION, pkg.version);
});

test('only well-formed read requests are answered', () => {
  assert.deepEqual(parseRequest({ type: 'request', id: '7', method: 'read' }), {
    type: 'request',
    id: '7',
    method: 'read',
    images: false
  });
  assert.equal(parseRequest({ type: 'request', id: '7', method: 'read', params: { images: true } })?.images, true);
  assert.equal(parseRequest({ type: 'request', id: 7, method: 'read' }), null);
  assert.equal(parseRequest({ type: 'request', id: '7', method: 'write' }), null);
  assert.equal(parseRequest({ type: 'hello' }), null);
  assert.equal(parseRequest(null), null);
  assert.equal(parseRequest(['request']), null);
});

test('a source given as lines is joined', () => {
  assert.equal(joinSource(['a = 1\n', 'b = 2']), 'a = 1\nb = 2');
  assert.equal(joinSource('x'), 'x');
  assert.equal(joinSource(42), '');
});

test('a cell keeps id, type, source, count and outputs', () => {
  const cell = snapshotCell(
    {
      id: 'c1',
      cell_type: 'code',
      source: 'print(1)',
      execution_count: 3,
      metadata: { secret: 'left out' },
      outputs: [{ output_type: 'stream', name: 'stdout', text: ['1\n'] }]
    },
    false
  );
  assert.deepEqual(cell, {
    id: 'c1',
    cell_type: 'code',
    source: 'print(1)',
    execution_count: 3,
    outputs: [{ output_type: 'stream', name: 'stdout', text: '1\n' }]
  });
  const markdown = snapshotCell({ id: 'm', cell_type: 'markdown', source: '# t' }, false);
  assert.equal(markdown.execution_count, null);
  assert.deepEqual(markdown.outputs, []);
});

test('images are sent only when asked for, text is clipped', () => {
  const output = {
    output_type: 'display_data',
    data: { 'image/png': PNG, 'text/plain': 'x'.repeat(MAX_TEXT + 10) }
  };
  const without = snapshotOutput(output, false) as { data: Record<string, string> };
  assert.equal(without.data['image/png'], '');
  assert.equal(without.data['text/plain'].length, MAX_TEXT);
  const withImages = snapshotOutput(output, true) as { data: Record<string, string> };
  assert.equal(withImages.data['image/png'], PNG);
});

test("a %%claude record keeps only its answer's text of its metadata", () => {
  const record = {
    output_type: 'display_data',
    data: { 'text/plain': 'whole exchange' },
    metadata: { byre: { answer: 'The mean is 4.2.', session_id: 's' }, other: 1 }
  };
  const out = snapshotOutput(record, false) as { metadata: unknown };
  assert.deepEqual(out.metadata, { byre: { answer: 'The mean is 4.2.' } });
  const plain = snapshotOutput({ output_type: 'stream', text: 'x', metadata: {} }, false);
  assert.equal((plain as { metadata?: unknown }).metadata, undefined);
});

test('an error keeps its name, value and traceback', () => {
  const out = snapshotOutput(
    { output_type: 'error', ename: 'ZeroDivisionError', evalue: 'division by zero', traceback: ['a', 'b'] },
    false
  );
  assert.deepEqual(out, {
    output_type: 'error',
    ename: 'ZeroDivisionError',
    evalue: 'division by zero',
    traceback: ['a', 'b']
  });
});

test('the reply carries the request id, the path, the dirty flag and every cell', () => {
  const reply = answer(
    { type: 'request', id: '9', method: 'read', images: false },
    view([{ id: 'a', cell_type: 'code', source: 'x = 1 # typed, not saved', outputs: [] }])
  );
  assert.equal(reply.ok, true);
  assert.equal(reply.id, '9');
  if (reply.ok) {
    assert.equal(reply.result.path, 'work/analysis.ipynb');
    assert.equal(reply.result.dirty, true);
    assert.equal((reply.result.cells as { source: string }[])[0].source, 'x = 1 # typed, not saved');
  }
});

test('a failure to read is a reply with the error, not silence', () => {
  const broken: NotebookView = {
    path: () => 'n.ipynb',
    dirty: () => false,
    cells: () => {
      throw new Error('model gone');
    }
  };
  const reply = answer({ type: 'request', id: '1', method: 'read', images: false }, broken);
  assert.deepEqual(reply, { type: 'reply', id: '1', ok: false, error: 'Error: model gone' });
});
