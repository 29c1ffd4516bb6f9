// Unit tests of what a `%%claude` cell is (node's own test runner, no JupyterLab): the
// bridge's buttons, its turn gate and the editor type ask one definition.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { MARKDOWN_MIME, cellMime, isClaudeSource } from '../src/claudecell';
import { TurnGate } from '../src/gate';

const CODE = 'text/x-ipython';

test('a %%claude cell is the magic on the first line, and nothing longer', () => {
  for (const source of ['%%claude', '%%claude\nhi', '%%claude -s tree\nhi', '%%claude\tx', '\n%%claude\nhi']) {
    assert.equal(isClaudeSource(source), true, source);
    assert.equal(cellMime(source, CODE), MARKDOWN_MIME, source);
  }
  for (const source of ['%%claudex\nhi', '%%clauded', '%%claude_fake', 'x = 1\n%%claude', ' %%claude', '%claude x']) {
    assert.equal(isClaudeSource(source), false, source);
    assert.equal(cellMime(source, CODE), CODE, source);
  }
});

test('a %%claudex cell the user ran opens no turn', () => {
  const gate = new TurnGate();
  gate.scheduled('x', '%%claudex\nnot byre');
  assert.equal(gate.begin('x'), false);
  gate.scheduled('c', '%%claude\nbyre');
  assert.equal(gate.begin('c'), true);
});
