// Unit tests of the `editing` event (node's own test runner, no JupyterLab).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { EditWatch, EditingEvent } from '../src/editing';

function watching(open = () => true): { watch: EditWatch; sent: EditingEvent[] } {
  const sent: EditingEvent[] = [];
  const watch = new EditWatch(event => {
    if (!open()) {
      return false;
    }
    sent.push(event);
    return true;
  });
  return { watch, sent };
}

test('the first change of a %%claude cell that ran is told once, until it runs again', () => {
  const { watch, sent } = watching();
  const cell = { id: 'cell-b', source: '%%claude\nPROMPT_B!', ran: true };
  assert.equal(watch.changed(cell), true);
  assert.equal(watch.changed({ ...cell, source: '%%claude\nPROMPT_B!!' }), false);
  assert.deepEqual(sent, [{ type: 'event', name: 'editing', cell: 'cell-b' }]);
  watch.ran('cell-b');
  assert.equal(watch.changed({ ...cell, source: '%%claude\nPROMPT_B?' }), true);
  assert.equal(watch.changed(cell), false);
  assert.equal(sent.length, 2);
});

test('no event for a cell that never ran, a code cell, or one no longer %%claude', () => {
  const { watch, sent } = watching();
  assert.equal(watch.changed({ id: 'new', source: '%%claude\nhi', ran: false }), false);
  assert.equal(watch.changed({ id: 'code', source: 'print(1)', ran: true }), false);
  assert.equal(watch.changed({ id: 'text', source: 'x = "%%claude"', ran: true }), false);
  assert.deepEqual(sent, []);
});

test('each edited cell is told once, and nothing while the comm is closed', () => {
  let open = false;
  const { watch, sent } = watching(() => open);
  const a = { id: 'cell-a', source: '%%claude\nA', ran: true };
  assert.equal(watch.changed(a), false); // closed: not sent, so not counted as told
  open = true;
  assert.equal(watch.changed(a), true);
  assert.equal(watch.changed({ id: 'cell-b', source: '%%claude -s x\nB', ran: true }), true);
  assert.equal(watch.changed(a), false);
  assert.deepEqual(
    sent.map(event => event.cell),
    ['cell-a', 'cell-b']
  );
});
