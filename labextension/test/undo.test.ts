// Unit tests of "Undo this turn's edits" on a turn's undo line (node's test runner, linkedom).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { parseHTML } from 'linkedom';

import { UNDO_CLASS, offerUndo, undoLine, undoMarksIn } from '../src/undo';

function cellWith(attributes: string): { node: Element; mark: Element } {
  const { document } = parseHTML(
    '<div class="jp-Cell"><div class="jp-OutputArea-output">' +
      `<div class="byre-undo" role="note" ${attributes}>This turn changed notebook cells</div>` +
      '</div></div>'
  );
  const node = document.querySelector('.jp-Cell') as Element;
  return { node, mark: node.querySelector('.byre-undo') as Element };
}

test("a turn's line gets one button that inserts and runs its %claude undo line", () => {
  const { node, mark } = cellWith('data-byre-undo="3" data-byre-session="default"');
  const ran: string[] = [];
  const cell = { source: '%%claude\nfix it', node };
  assert.deepEqual(undoMarksIn(node), [mark]);
  assert.equal(offerUndo(mark, cell, line => ran.push(line)), true);
  assert.equal(offerUndo(mark, cell, line => ran.push(line)), false); // once
  const button = node.querySelector(`.${UNDO_CLASS}`) as unknown as { click(): void; textContent: string };
  assert.equal(button.textContent, "Undo this turn's edits");
  button.click();
  assert.deepEqual(ran, ['%claude undo #3']);
  const other = cellWith('data-byre-undo="12" data-byre-session="side_2"').mark;
  assert.equal(undoLine(other), '%claude undo #12 -s side_2');
});

test('no button for a line not of the kernel\'s shape, or outside a %%claude cell', () => {
  for (const attributes of [
    'data-byre-undo="3; import os" data-byre-session="default"',
    'data-byre-undo="3" data-byre-session="a b"',
    'data-byre-undo="3" data-byre-session="-s x\nimport os"',
    'data-byre-undo="" data-byre-session="default"'
  ]) {
    const { node, mark } = cellWith(attributes);
    assert.equal(offerUndo(mark, { source: '%%claude\nx', node }, () => undefined), false, attributes);
  }
  const { node, mark } = cellWith('data-byre-undo="3" data-byre-session="default"');
  assert.equal(offerUndo(mark, { source: 'print(1)', node }, () => undefined), false);
});
