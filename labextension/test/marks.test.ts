// Unit tests of the provenance marks (node's own test runner, linkedom's DOM).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { parseHTML } from 'linkedom';

import { MARK_CLASS, clearsProvenance, markOf, showMark, touchesByre, watchCell } from '../src/marks';
import type { MarkedCellModel } from '../src/marks';

const BYRE = { conversation: '0f3c2a9e-1111-2222-3333-444455556666', turn: 3, prompt: 'tidy <b>up</b>' };

test('a cell with provenance gets a mark: turn, short conversation, the prompt on hover', () => {
  const mark = markOf({ byre: BYRE, tags: [] });
  assert.ok(mark);
  assert.equal(mark.label, 'Claude #3 · 0f3c2a9e');
  assert.match(mark.title, /turn #3\nconversation 0f3c2a9e-1111-2222-3333-444455556666\nprompt: tidy <b>up<\/b>/);
  assert.equal(markOf({ byre: { conversation: '', turn: null } })?.label, 'Claude');
});

test('no mark without provenance, or with provenance not of the kernel\'s shape', () => {
  for (const metadata of [
    {},
    null,
    'byre',
    [BYRE],
    { byre: null },
    { byre: { ...BYRE, html: '<img src=x onerror=alert(1)>' } },
    { byre: { ...BYRE, conversation: '<script>' } },
    { byre: { ...BYRE, prompt: 'x'.repeat(201) } },
    { byre: { ...BYRE, turn: '3' } }
  ]) {
    assert.equal(markOf(metadata), null, JSON.stringify(metadata));
  }
});

test("a person's edit clears the provenance; byre's own edit (source and byre at once) keeps it", () => {
  assert.equal(clearsProvenance({ sourceChanged: true, byreChanged: false, hasByre: true }), true);
  assert.equal(clearsProvenance({ sourceChanged: true, byreChanged: true, hasByre: true }), false);
  assert.equal(clearsProvenance({ sourceChanged: true, byreChanged: false, hasByre: false }), false);
  assert.equal(clearsProvenance({ sourceChanged: false, byreChanged: false, hasByre: true }), false);
  assert.equal(touchesByre(new Map([['byre', {}]])), true);
  assert.equal(touchesByre(new Map([['tags', {}]])), false);
  assert.equal(touchesByre(undefined), false);
});

/** A cell model whose shared model emits one change per transaction, as Lab's ydoc does. */
function fakeCell(metadata: Record<string, unknown>) {
  const listeners: ((s: unknown, c: { sourceChange?: unknown; metadataChange?: unknown }) => void)[] = [];
  const model: MarkedCellModel = {
    id: 'c',
    sharedModel: {
      getMetadata: (key?: string) => (key === undefined ? metadata : metadata[key]),
      deleteMetadata: (key: string) => {
        delete metadata[key];
      },
      changed: { connect: fn => listeners.push(fn) }
    }
  };
  const emit = (change: { sourceChange?: unknown; metadataChange?: unknown }) =>
    listeners.forEach(fn => fn(null, change));
  return { model, metadata, emit };
}

test('watchCell: typing removes byre, an edit of ours does not, other metadata stays', () => {
  const { model, metadata, emit } = fakeCell({ byre: { ...BYRE }, tags: ['t'] });
  let shown = 0;
  watchCell(model, () => shown++);
  emit({ sourceChange: [{ insert: 'x' }], metadataChange: new Map([['byre', { action: 'update' }]]) });
  assert.ok(metadata.byre, 'byre kept after its own edit');
  emit({ metadataChange: new Map([['tags', { action: 'update' }]]) });
  assert.ok(metadata.byre);
  emit({ sourceChange: [{ insert: 'typed' }] });
  assert.equal(metadata.byre, undefined);
  assert.deepEqual(metadata.tags, ['t']);
  assert.equal(shown, 2);
});

test('the mark is text (never HTML), updated in place and removed', () => {
  const { document } = parseHTML(
    '<div class="jp-Cell"><div class="jp-Cell-inputWrapper"><div class="jp-InputArea"></div></div></div>'
  );
  const cell = document.querySelector('.jp-Cell') as unknown as HTMLElement;
  const hostile = { byre: { conversation: 'c-1', turn: 1, prompt: '<img src=x onerror=alert(1)>' } };
  showMark(document as unknown as Document, cell, markOf(hostile));
  showMark(document as unknown as Document, cell, markOf(hostile));
  const marks = cell.querySelectorAll(`.${MARK_CLASS}`);
  assert.equal(marks.length, 1);
  assert.equal(marks[0].textContent, 'Claude #1 · c-1');
  assert.equal(cell.querySelector('img'), null);
  assert.match(String(marks[0].getAttribute('title')), /prompt: <img src=x/);
  showMark(document as unknown as Document, cell, null);
  assert.equal(cell.querySelectorAll(`.${MARK_CLASS}`).length, 0);
});
