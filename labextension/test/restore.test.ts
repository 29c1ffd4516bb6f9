// Unit tests of `cell.restore` on the frontend (node's own test runner, no JupyterLab).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import type { Json } from '../src/protocol';
import { Restorer, parseRestore } from '../src/restore';
import { runCellOf } from '../src/run';
import { MARKDOWN, SANITIZE, widget } from './fakes';

// A record comes as a request (the kernel keeps it until a page says it has it), a live view
// as a notification.
const restore = (cell: string, outputs: Json[], final = true) => ({
  type: final ? 'request' : 'notify',
  id: final ? 'r1' : undefined,
  method: 'cell.restore',
  params: { cell, outputs, final }
});
const reply = (written: boolean) => ({ type: 'reply', id: 'r1', ok: true, result: { written } });
const RECORD = { output_type: 'display_data', data: { 'text/html': '<b>answer</b>' }, metadata: { byre: 1 } };

function page(sources: Record<string, string>) {
  const cells = Object.keys(sources).map(id => widget(id));
  let changed = 0;
  const restorer = new Restorer({
    find: id => {
      const found = cells.find(c => c.model.id === id);
      return found ? { run: runCellOf(found)!, source: () => sources[id] } : null;
    },
    sanitize: SANITIZE,
    markdown: MARKDOWN,
    changed: () => {
      changed += 1;
    }
  });
  return { cells, restorer, changed: () => changed };
}

test('a kept record lands in its cell once, cleaned, and marks the notebook changed', async () => {
  const { cells, restorer, changed } = page({ a: '%%claude\nhi', b: 'x = 1' });
  cells[0].outputs.push({ output_type: 'stream', name: 'stdout', text: 'old' });
  assert.deepEqual(await restorer.take(restore('a', [RECORD])), reply(true));
  assert.deepEqual(cells[0].outputs, [
    { output_type: 'display_data', data: { 'text/html': 'sanitized:answer' }, metadata: {} }
  ]);
  assert.equal(changed(), 1);
  // Only once: a second record for that cell (a replay, or hostile code) writes nothing.
  const again = [{ output_type: 'stream', name: 'stdout', text: 'again' }];
  assert.deepEqual(await restorer.take(restore('a', again)), reply(false));
  assert.equal(cells[0].outputs.length, 1);
  assert.deepEqual(cells[1].outputs, []); // only the cell with that id
  assert.equal(changed(), 1);
});

test('only the outputs run_cells may write are kept; a live view only in a %%claude cell', async () => {
  const { cells, restorer } = page({ a: '%%claude\nhi', b: 'x = 1' });
  const hostile: Json[] = [
    { output_type: 'display_data', data: { 'application/javascript': 'alert(1)' }, metadata: {} },
    { output_type: 'display_data', data: { 'image/svg+xml': '<svg onload=alert(1)>' }, metadata: {} },
    { output_type: 'clear_output', wait: false },
    { output_type: 'stream', name: 'stdout', text: 'kept' }
  ];
  assert.deepEqual(parseRestore(restore('b', hostile), SANITIZE)?.outputs, [
    { output_type: 'stream', name: 'stdout', text: 'kept' }
  ]);
  const view = { 'application/vnd.jupyter.widget-view+json': { model_id: 'm1' } };
  await restorer.take(restore('b', [{ output_type: 'display_data', data: view, metadata: {} }], false));
  assert.deepEqual(cells[1].outputs, []); // not a %%claude cell: no live view
  await restorer.take(restore('a', [{ output_type: 'display_data', data: view, metadata: {} }], false));
  assert.equal(cells[0].outputs.length, 1);
  await restorer.take(restore('a', [RECORD])); // the live view, then its record
  assert.deepEqual(cells[0].outputs, [
    { output_type: 'display_data', data: { 'text/html': 'sanitized:answer' }, metadata: {} }
  ]);
  await restorer.take(restore('a', [], false)); // no live view after the record
  assert.equal(cells[0].outputs.length, 1);
  for (const junk of [restore('<b>', []), restore('a', 'x' as unknown as Json[]), { method: 'x' }]) {
    assert.equal(parseRestore(junk, SANITIZE), null);
  }
  assert.deepEqual(await restorer.take(restore('nope', [RECORD])), reply(false)); // no such cell
});

test('a record keeps its metadata.byre, as the cell holds it when its page stayed', async () => {
  // The finding: the record landed without it, so the saved notebook had no answer's text for
  // the read tool and no portable record for `%claude resume --from`.
  const { cells, restorer } = page({ a: '%%claude\nhi', b: '%%claude\nho' });
  const byre = { session_id: 's', answer: 'the answer', portable: { format: 'f', data: 'AA==' } };
  const record = {
    output_type: 'display_data',
    data: { 'text/html': '<b>answer</b>' },
    metadata: { byre, 'text/html': { isolated: true }, other: 1 }
  };
  const image = { output_type: 'display_data', data: { 'image/png': 'AA==' }, metadata: {} };
  await restorer.take(restore('a', [record, image]));
  assert.deepEqual(cells[0].outputs, [
    { output_type: 'display_data', data: { 'text/html': 'sanitized:answer' }, metadata: { byre } },
    image
  ]);
  // Only the `byre` key, only an object, only in a record: a live view has none.
  const junk = { ...record, metadata: { byre: 'x' } };
  assert.deepEqual(parseRestore(restore('b', [junk]), SANITIZE)?.outputs[0].metadata, {});
  const live = parseRestore(restore('b', [record], false), SANITIZE);
  assert.deepEqual(live?.outputs[0].metadata, {});
});
