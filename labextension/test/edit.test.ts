// Unit tests of the bridge's edit request (node's own test runner, no JupyterLab).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { applyEdits, parseEdit } from '../src/edit';
import { notebook } from './fakes';

const PROVENANCE = { conversation: 'c-1', turn: 2 };

function request(edits: unknown[]): unknown {
  return { type: 'request', id: '9', method: 'edit', params: { edits, provenance: PROVENANCE } };
}

test('only well-formed edit requests are parsed', () => {
  assert.equal(parseEdit({ type: 'request', id: '1', method: 'read' }), null);
  assert.equal(parseEdit(request([{ insert: { after: 'a', cell_type: 'raw', source: '', id: 'x' } }])), null);
  assert.equal(parseEdit(request([{ replace: { cell: 'a', old: '', new: 'x' } }])), null);
  assert.equal(parseEdit(request([{ frobnicate: {} }])), null);
  const parsed = parseEdit(request([{ delete: { cell: 'a' } }]));
  assert.deepEqual(parsed?.edits, [{ kind: 'delete', cell: 'a' }]);
  assert.deepEqual(parsed?.provenance, PROVENANCE);
});

test('an edit with ids or provenance not of the kernel\'s shape is not parsed', () => {
  const insert = (id: string, after = 'a') => [{ insert: { after, cell_type: 'code', source: '', id } }];
  for (const edits of [
    insert('has space'),
    insert('x'.repeat(65)),
    insert(''),
    insert('ok', '<img>'),
    [{ replace: { cell: 'a"b', old: 'x', new: 'y' } }],
    [{ delete: { cell: '' } }]
  ]) {
    assert.equal(parseEdit(request(edits)), null, JSON.stringify(edits));
  }
  const withProvenance = (provenance: unknown) => ({
    type: 'request',
    id: '9',
    method: 'edit',
    params: { edits: [{ delete: { cell: 'a' } }], provenance }
  });
  for (const provenance of [
    undefined,
    {},
    { conversation: 'c-1', turn: 2, by: 'someone' },
    { conversation: '<b>x</b>', turn: 2 },
    { conversation: 'c'.repeat(65), turn: 2 },
    { conversation: 'c-1', turn: -1 },
    { conversation: 'c-1', turn: 1.5 },
    { conversation: 'c-1', turn: '2' },
    { conversation: 7, turn: 2 }
  ]) {
    assert.equal(parseEdit(withProvenance(provenance)), null, JSON.stringify(provenance));
  }
  assert.deepEqual(parseEdit(withProvenance({ conversation: '', turn: null }))?.provenance, {
    conversation: '',
    turn: null
  });
});

test('a batch applies in order: insert below, replace, delete, provenance on each', () => {
  const nb = notebook([
    { id: 'a', source: 'x = 1', metadata: {} },
    { id: 'ask', source: '%%claude\nfix it', metadata: {} },
    { id: 'b', source: 'print(x)', metadata: { tags: ['keep'] } },
    { id: 'c', source: 'old()', metadata: {} }
  ]);
  const edit = parseEdit(
    request([
      { insert: { after: 'ask', cell_type: 'code', source: 'y = $& 2', id: 'new-1' } },
      { replace: { cell: 'b', old: 'x', new: 'y' } },
      { delete: { cell: 'c' } }
    ])
  );
  assert.ok(edit);
  const reply = applyEdits(edit, nb);
  assert.deepEqual(reply, { type: 'reply', id: '9', ok: true, result: { applied: ['new-1', 'b', 'c'] } });
  assert.deepEqual(nb.ids(), ['a', 'ask', 'new-1', 'b']);
  assert.equal(nb.source('new-1'), 'y = $& 2');
  assert.equal(nb.source('b'), 'print(y)');
  assert.deepEqual(nb.cells[2].metadata, { byre: PROVENANCE });
  assert.deepEqual(nb.cells[3].metadata, { tags: ['keep'], byre: PROVENANCE });
});

test('a replace whose old no longer occurs once refuses the whole batch, the text kept', () => {
  const cells = [
    { id: 'a', source: 'typed by the user meanwhile', metadata: {} },
    { id: 'b', source: 'z = 1\nz = 1', metadata: {} }
  ];
  const nb = notebook(cells.map(c => ({ ...c })));
  const changed = parseEdit(
    request([
      { insert: { after: 'a', cell_type: 'markdown', source: '# hi', id: 'n' } },
      { replace: { cell: 'a', old: 'what Claude read', new: 'x' } }
    ])
  );
  assert.ok(changed);
  const reply = applyEdits(changed, nb);
  assert.equal(reply.ok, true);
  const refused = reply.ok ? reply.result.refused : null;
  assert.equal(refused, 'cell a changed since you read it: "what Claude read" no longer occurs in it');
  assert.deepEqual(nb.cells, cells);

  const twice = parseEdit(request([{ replace: { cell: 'b', old: 'z = 1', new: 'z = 2' } }]));
  assert.ok(twice);
  const again = applyEdits(twice, nb);
  assert.match(String(again.ok ? again.result.refused : ''), /now occurs 2 times/);
  const gone = parseEdit(request([{ delete: { cell: 'zz' } }]));
  assert.ok(gone);
  const missing = applyEdits(gone, nb);
  assert.match(String(missing.ok ? missing.result.refused : ''), /no longer in the notebook/);
  assert.deepEqual(nb.cells, cells);
});

test('a failure while applying is a failed reply, never a throw', () => {
  const nb = notebook([{ id: 'a', source: 'x', metadata: {} }]);
  nb.remove = () => {
    throw new Error('read-only notebook');
  };
  const edit = parseEdit(request([{ delete: { cell: 'a' } }]));
  assert.ok(edit);
  assert.deepEqual(applyEdits(edit, nb), {
    type: 'reply',
    id: '9',
    ok: false,
    error: 'Error: read-only notebook'
  });
});

test("the turn's prompt rides in the provenance, clipped by the kernel; longer is refused", () => {
  const withProvenance = (provenance: unknown) => ({
    type: 'request',
    id: '9',
    method: 'edit',
    params: { edits: [{ delete: { cell: 'a' } }], provenance }
  });
  const prompt = 'make <b>it</b> faster'; // text: marks.ts sets it as a title, never HTML
  assert.deepEqual(parseEdit(withProvenance({ conversation: 'c-1', turn: 2, prompt }))?.provenance, {
    conversation: 'c-1',
    turn: 2,
    prompt
  });
  for (const bad of ['x'.repeat(201), 7, null, ['a']]) {
    assert.equal(parseEdit(withProvenance({ conversation: 'c-1', turn: 2, prompt: bad })), null);
  }
});

test('an undo: no provenance (the byre mark goes), a whole-text replace refused if typed in', () => {
  const nb = notebook([
    { id: 'a', source: 'x = 2', metadata: { byre: PROVENANCE, tags: ['t'] } },
    { id: 'b', source: 'y = 1', metadata: { byre: PROVENANCE } }
  ]);
  const undo = (edits: unknown[]) => ({
    type: 'request',
    id: '9',
    method: 'edit',
    params: { edits, provenance: null }
  });
  const restore = parseEdit(
    undo([
      { replace: { cell: 'a', old: 'x = 2', new: 'x = 1', whole: true } },
      { delete: { cell: 'b' } },
      { insert: { after: 'a', cell_type: 'code', source: 'gone = 1', id: 'g' } }
    ])
  );
  assert.ok(restore);
  assert.equal(restore.provenance, null);
  assert.deepEqual(applyEdits(restore, nb).ok, true);
  assert.deepEqual(nb.cells, [
    { id: 'a', source: 'x = 1', metadata: { tags: ['t'] } },
    { id: 'g', source: 'gone = 1', cell_type: 'code', metadata: {} }
  ]);
  // The user typed around the turn's text: `old` still occurs once, but it is not the whole.
  const typed = notebook([{ id: 'a', source: '# mine\nx = 2', metadata: {} }]);
  const again = parseEdit(undo([{ replace: { cell: 'a', old: 'x = 2', new: 'x = 1', whole: true } }]));
  assert.ok(again);
  const reply = applyEdits(again, typed);
  assert.match(String(reply.ok ? reply.result.refused : ''), /cell a changed since the turn/);
  assert.equal(typed.source('a'), '# mine\nx = 2');
  assert.equal(parseEdit(undo([{ replace: { cell: 'a', old: 'x', new: 'y', whole: 'yes' } }])), null);
});

test('a cell typed into since the review refuses the batch though its old text is whole', () => {
  // Another person on the shared notebook typed at the end of the cell: `old` still occurs
  // once, but what would land is not what the review showed, and a delete would drop it.
  const cells = [
    { id: 'a', source: 'x = 1\nprint(x)  # typed meanwhile', metadata: {} },
    { id: 'b', source: 'y = 2 # typed', metadata: {} }
  ];
  const nb = notebook(cells.map(c => ({ ...c })));
  const withReviewed = (edits: unknown[], reviewed: unknown) => ({
    type: 'request',
    id: '9',
    method: 'edit',
    params: { edits, reviewed, provenance: PROVENANCE }
  });
  const replace = parseEdit(
    withReviewed([{ replace: { cell: 'a', old: 'x = 1', new: 'x = 9' } }], { a: 'x = 1\nprint(x)' })
  );
  assert.ok(replace);
  const reply = applyEdits(replace, nb);
  assert.equal(
    reply.ok ? reply.result.refused : null,
    'cell a changed since you read it: it no longer holds the text the review showed'
  );
  const remove = parseEdit(withReviewed([{ delete: { cell: 'b' } }], { b: 'y = 2' }));
  assert.ok(remove);
  const removed = applyEdits(remove, nb);
  assert.match(String(removed.ok ? removed.result.refused : ''), /cell b changed since you read it/);
  assert.deepEqual(nb.cells, cells);
  const same = parseEdit(withReviewed([{ delete: { cell: 'b' } }], { b: 'y = 2 # typed' }));
  assert.ok(same);
  assert.deepEqual(applyEdits(same, nb), { type: 'reply', id: '9', ok: true, result: { applied: ['b'] } });
  for (const reviewed of [[], 'a', { 'bad id': 'x' }, { a: 1 }]) {
    assert.equal(parseEdit(withReviewed([{ delete: { cell: 'a' } }], reviewed)), null, JSON.stringify(reviewed));
  }
});
