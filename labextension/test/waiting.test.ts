// Unit tests of the "waits in another tab" mark (node's own test runner, linkedom's DOM).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { parseHTML } from 'linkedom';

import { Served, TurnGate, handle } from '../src/gate';
import { WAITING_CLASS, WAITING_TEXT, WaitingMarks, parsePending } from '../src/waiting';
import { MARKDOWN, SANITIZE, notebook } from './fakes';

const CELL = 'ask-1';
const pending = (cell: unknown, waiting: unknown) => ({
  type: 'notify',
  method: 'review.pending',
  params: { cell, waiting }
});
const turn = (method: string) => ({ type: 'notify', method, params: { cell: CELL } });

/** One page: a notebook of one `%%claude` cell, its DOM, its gate and its marks. */
function page() {
  const { document } = parseHTML(
    `<div class="jp-Cell" id="${CELL}"><div class="jp-Cell-inputWrapper"></div></div>`
  );
  const node = document.getElementById(CELL) as unknown as HTMLElement;
  const waiting = new WaitingMarks(document as unknown as Document, id => (id === CELL ? node : null));
  const served: Served = {
    gate: new TurnGate(),
    view: { path: () => 'n.ipynb', dirty: () => false, cells: () => [] },
    editable: notebook([{ id: CELL, source: '%%claude\nchange it', metadata: {} }]),
    find: () => null,
    sanitize: SANITIZE,
    markdown: MARKDOWN,
    waiting
  };
  const found = () => Array.from(node.querySelectorAll(`.${WAITING_CLASS}`));
  const marks = () => found().map(m => m.textContent);
  return { served, waiting, marks, found, send: (data: unknown) => handle(data, served) };
}

test("another page's waiting card marks the cell until it stops waiting", async () => {
  const other = page();
  await other.send(turn('turn.begin')); // announced; this page did not run the cell
  await other.send(pending(CELL, true));
  assert.deepEqual(other.marks(), [WAITING_TEXT]);
  await other.send(pending(CELL, true)); // told again (a hello): still one mark
  assert.deepEqual(other.marks(), [WAITING_TEXT]);
  await other.send(pending(CELL, false));
  assert.deepEqual(other.marks(), []);
});

test("the turn's end, and the comm's close, remove the mark", async () => {
  const other = page();
  await other.send(turn('turn.begin'));
  await other.send(pending(CELL, true));
  await other.send(turn('turn.end'));
  assert.deepEqual(other.marks(), []);
  await other.send(turn('turn.begin'));
  await other.send(pending(CELL, true));
  other.waiting.clear(); // index.ts, when the comm closes or another replaces it
  assert.deepEqual(other.marks(), []);
  assert.equal(other.waiting.has(CELL), false);
});

test('the page that holds the turn shows its card, and no mark', async () => {
  const own = page();
  own.served.gate.scheduled(CELL, '%%claude\nchange it'); // the user ran it here
  assert.ok(await own.send(turn('turn.begin'))); // turn.opened goes back to the kernel
  await own.send(pending(CELL, true));
  assert.deepEqual(own.marks(), []);
});

test('the mark is text of the page, never HTML from the kernel; a malformed message is dropped', async () => {
  const other = page();
  await other.send(turn('turn.begin'));
  for (const bad of [
    pending('<img src=x onerror=alert(1)>', true),
    pending(CELL, 'yes'),
    pending(CELL, '<b>true</b>'),
    { type: 'notify', method: 'review.pending', params: [CELL, true] },
    { type: 'request', id: '1', method: 'review.pending', params: { cell: CELL, waiting: true } }
  ]) {
    assert.equal(parsePending(bad), null, JSON.stringify(bad));
    await other.send(bad);
  }
  assert.deepEqual(other.marks(), []);
  await other.send({ ...pending(CELL, true), html: '<script>x</script>' });
  assert.deepEqual(other.marks(), [WAITING_TEXT]);
  assert.equal(other.found()[0].children.length, 0); // one text node: nothing parsed as HTML
});
