// Unit tests of "Run again" on a stale answer's mark (node's own test runner, linkedom's DOM).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { parseHTML } from 'linkedom';

import { MARK_SELECTOR, RERUN_CLASS, RERUN_LABEL, marksIn, offerRunAgain } from '../src/rerun';

/** A cell's node with the record the kernel publishes for a stale answer (ui/record.py). */
function cellWith(markCell: string | null): { node: Element; mark: Element } {
  const attribute = markCell === null ? '' : ` data-byre-rerun="${markCell}"`;
  const { document } = parseHTML(
    '<div class="jp-Cell"><div class="jp-OutputArea-output">' +
      `<div class="byre-stale" role="note"${attribute}>⚠ Out of date</div>` +
      '<div class="byre-stale-answer" style="opacity:0.55"><div class="byre-turn">A</div></div>' +
      '</div></div>'
  );
  const node = document.querySelector('.jp-Cell') as Element;
  return { node, mark: node.querySelector('.byre-stale') as Element };
}

test('a mark naming its own %%claude cell gets one button that runs it', () => {
  const { node, mark } = cellWith('cell-c');
  let runs = 0;
  const cell = { id: 'cell-c', source: '%%claude\nPROMPT_C', node };
  assert.deepEqual(marksIn(node), [mark]);
  assert.equal(offerRunAgain(mark, cell, () => runs++), true);
  assert.equal(offerRunAgain(mark, cell, () => runs++), false); // once
  const buttons = node.querySelectorAll(`.${RERUN_CLASS}`);
  assert.equal(buttons.length, 1);
  const button = buttons[0] as HTMLButtonElement;
  assert.equal(button.tagName, 'BUTTON');
  assert.equal(button.textContent, RERUN_LABEL);
  assert.equal(button.getAttribute('onclick'), null);
  button.click();
  assert.equal(runs, 1);
});

test('no button for a mark naming another cell, outside its cell, or on a code cell', () => {
  const other = cellWith('cell-b');
  const run = () => assert.fail('must not run');
  assert.equal(offerRunAgain(other.mark, { id: 'cell-c', source: '%%claude\nx', node: other.node }, run), false);
  const elsewhere = cellWith('cell-c');
  const stranger = cellWith('cell-c').node;
  assert.equal(offerRunAgain(elsewhere.mark, { id: 'cell-c', source: '%%claude\nx', node: stranger }, run), false);
  const code = cellWith('cell-c');
  assert.equal(offerRunAgain(code.mark, { id: 'cell-c', source: 'print(1)', node: code.node }, run), false);
  for (const c of [other, elsewhere, code]) {
    assert.equal(c.node.querySelector(`.${RERUN_CLASS}`), null);
  }
});

test('a mark that names no cell is not one the bridge acts on', () => {
  const { node } = cellWith(null);
  assert.deepEqual(marksIn(node), []);
  assert.equal(node.querySelector(MARK_SELECTOR), null);
});
