// Which editor type a cell gets (node's own test runner, no JupyterLab): the plugin itself is
// checked in the browser (tests/integration/browser/test_highlight_browser.py).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { MARKDOWN_MIME, cellMime } from '../src/claudecell';

test('a %%claude cell is Markdown, any other cell keeps the notebook type', () => {
  assert.equal(cellMime('%%claude -s tree\nhello with from in', 'text/x-ipython'), MARKDOWN_MIME);
  assert.equal(cellMime('%%claude', 'text/x-ipython'), MARKDOWN_MIME);
  assert.equal(cellMime('%%clauded\nx', 'text/x-ipython'), 'text/x-ipython');
  assert.equal(cellMime('x = 1\n%%claude', 'text/x-ipython'), 'text/x-ipython');
  assert.equal(cellMime(' %%claude', 'text/x-ipython'), 'text/x-ipython');
});
