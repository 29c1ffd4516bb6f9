// Unit tests of the prompt "Ask Claude" writes (node's own test runner).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { QUOTED_CHARS, askSource, quotedLine } from '../src/askprompt';

const UUID = '3f2a9c1d-8b10-4e4a-9c7d-2f0196b1c0de';

test('the prompt names the cell by its count and first line, in short lines', () => {
  const source = askSource({ id: UUID, executionCount: 4, source: '\n  df = load(path)\nplot(df)' });
  assert.equal(
    source,
    '%%claude\n' +
      'Cell [4] above (`df = load(path)`) ended in an error.\n' +
      'Read it, its traceback and the cells around it with the notebook tool,\n' +
      'explain the cause briefly, and fix it.\n' +
      `Its id, for the notebook tool: \`${UUID}\`.`
  );
  const lines = (source ?? '').split('\n');
  assert.ok(lines.every(line => line.length <= 80), lines.join('\n'));
  assert.ok(!lines[1].includes(UUID)); // the user's name for the cell comes first, not its id
});

test('a cell without a count or source is "the cell above"', () => {
  const source = askSource({ id: 'broken', executionCount: null, source: '   \n' }) ?? '';
  assert.equal(source.split('\n')[1], 'The cell above ended in an error.');
});

test('the quoted line is inert: no interpolation, no code-span break, no control characters', () => {
  assert.equal(quotedLine('print(f"{total}")'), 'print(f"{{total}}")');
  assert.equal(quotedLine('x = `cmd` # `'), "x = 'cmd' # '");
  assert.equal(quotedLine('a\u0007b\u2028c\rd'), 'a b c d');
  const long = quotedLine('y = ' + 'x'.repeat(200));
  assert.equal(long.length, QUOTED_CHARS);
  assert.ok(long.endsWith('…'));
  const source = askSource({ id: 'c', executionCount: 2, source: '{secret}\n' }) ?? '';
  assert.ok(source.includes('(`{{secret}}`)'), source);
});

test('an id nbformat does not allow gives no prompt', () => {
  assert.equal(askSource({ id: 'a b', executionCount: 1, source: 'x' }), null);
  assert.equal(askSource({ id: 'x'.repeat(65), executionCount: 1, source: 'x' }), null);
  assert.equal(askSource({ id: '`); evil', executionCount: 1, source: 'x' }), null);
});
