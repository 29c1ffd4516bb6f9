// Unit tests of who may drive the bridge, and when (node's own test runner, no JupyterLab).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { NO_TURN, Served, TurnGate, acceptsKernelComm, handle, inOrder } from '../src/gate';
import type { JsonObject, NotebookView } from '../src/protocol';
import { findIn } from '../src/run';
import { MARKDOWN, SANITIZE, notebook, widget } from './fakes';

const ASKING = 'ask-1';
const VICTIM = 'victim';
const PROVENANCE = { conversation: '0f2d8c1e-7a41-4b7e-9a65-1c2d3e4f5a6b', turn: 3 };

function rig() {
  const cells = notebook([
    { id: VICTIM, source: "victim = 'untouched'", metadata: {} },
    { id: ASKING, source: '%%claude\nchange it', metadata: {} }
  ]);
  const code = widget(VICTIM);
  const view: NotebookView = { path: () => 'n.ipynb', dirty: () => false, cells: () => [] };
  const served: Served = {
    gate: new TurnGate(),
    view,
    editable: cells,
    find: findIn([code]),
    sanitize: SANITIZE,
    markdown: MARKDOWN,
    waiting: { show: () => undefined }
  };
  return { cells, code, served, send: (data: unknown) => handle(data, served) };
}

const turn = (method: string, cell: string) => ({ type: 'notify', method, params: { cell } });
const edit = (provenance: unknown = PROVENANCE, edits?: unknown[]) => ({
  type: 'request',
  id: 'e1',
  method: 'edit',
  params: {
    edits: edits ?? [
      { insert: { after: VICTIM, cell_type: 'code', source: 'FORGED', id: 'forged' } },
      { replace: { cell: VICTIM, old: 'untouched', new: 'FORGED' } }
    ],
    provenance
  }
});
const runBegin = { type: 'request', id: 'r1', method: 'run.begin', params: { cell: VICTIM, execution_count: 9 } };
const html = {
  type: 'notify',
  method: 'run.output',
  params: {
    cell: VICTIM,
    output: { output_type: 'display_data', data: { 'text/html': '<script>x()</script>HI' }, metadata: {} }
  }
};

test('a kernel-opened comm is taken only as byre\'s announcement, and never over a live one', () => {
  const announce = { type: 'announce', protocol: 3 };
  assert.equal(acceptsKernelComm(announce, false), true);
  assert.equal(acceptsKernelComm(announce, true), false); // a second one never replaces the first
  for (const data of [undefined, {}, { type: 'hello', protocol: 3 }, { type: 'announce' }, 'announce']) {
    assert.equal(acceptsKernelComm(data, false), false, JSON.stringify(data));
  }
});

test('a turn opens only for a %%claude cell the user ran, once per run', () => {
  const gate = new TurnGate();
  assert.equal(gate.begin(ASKING), false); // never ran
  gate.scheduled(VICTIM, "victim = 'untouched'");
  assert.equal(gate.begin(VICTIM), false); // not a %%claude cell
  gate.scheduled(ASKING, '%%claude\nchange it');
  assert.equal(gate.begin(ASKING), true);
  assert.equal(gate.inTurn, true);
  gate.end(ASKING);
  assert.equal(gate.begin(ASKING), false); // that run's turn is over
  assert.equal(gate.inTurn, false);

  gate.scheduled(ASKING, '%%claude\nagain');
  gate.executed(ASKING); // it ended without a turn (a kernel without byre_jupyter)
  assert.equal(gate.begin(ASKING), false);

  gate.scheduled(ASKING, '%%claude --bg\nlater');
  assert.equal(gate.begin(ASKING), true);
  gate.executed(ASKING); // a --bg turn outlives its cell's run
  assert.equal(gate.inTurn, true);
  gate.reset(); // the comm closed
  assert.equal(gate.inTurn, false);
});

test('a %claude undo cell alone opens a turn (its one edit is the undo); other %claude lines do not', () => {
  const gate = new TurnGate();
  for (const source of ['%claude undo', '  %claude undo 3\n', '%claude undo -s other #2']) {
    gate.scheduled(ASKING, source);
    assert.equal(gate.begin(ASKING), true, source);
    gate.end(ASKING);
  }
  for (const source of ['%claude history', '%claude undone', '%claude undo\nx = 1', 'print(1) # %claude undo']) {
    gate.scheduled(VICTIM, source);
    assert.equal(gate.begin(VICTIM), false, source);
  }
});

test('a %%claude cell Run all scheduled before byre_jupyter loaded still opens its turn', () => {
  const gate = new TurnGate();
  gate.scheduled('load', '%load_ext byre_jupyter');
  gate.scheduled(ASKING, '%%claude\nchange it');
  gate.executed('load');
  gate.reset(); // the comm byre_jupyter announced as it loaded replaces none: no turn carries over
  assert.equal(gate.begin(ASKING), true);
});

test('edits and runs outside a turn are refused and change nothing', async () => {
  const { cells, code, send } = rig();
  const before = JSON.stringify(cells.cells);
  assert.deepEqual(await send(edit()), { type: 'reply', id: 'e1', ok: false, error: NO_TURN });
  await send(turn('turn.begin', ASKING)); // announced, but the user never ran that cell
  assert.deepEqual(await send(edit()), { type: 'reply', id: 'e1', ok: false, error: NO_TURN });
  assert.deepEqual(await send(runBegin), { type: 'reply', id: 'r1', ok: false, error: NO_TURN });
  assert.equal(await send(html), null);
  assert.equal(JSON.stringify(cells.cells), before);
  assert.deepEqual(code.outputs, []);
  assert.deepEqual(code.prompts, []);
});

test('in a turn the user started, edits and runs apply; after it, they are refused again', async () => {
  const { cells, code, served, send } = rig();
  served.gate.scheduled(ASKING, '%%claude\nchange it');
  assert.equal(await send(html), null); // no run began: an output has nowhere to go
  await send(turn('turn.begin', ASKING));
  const applied = await send(edit()) as JsonObject;
  assert.deepEqual(applied.result, { applied: ['forged', VICTIM] });
  assert.deepEqual(cells.cells[0].metadata, { byre: PROVENANCE });
  assert.equal(await send(html), null);
  assert.deepEqual(code.outputs, []); // still no run.begin for that cell
  assert.equal((await send(runBegin) as JsonObject).ok, true);
  await send(html);
  assert.deepEqual(code.outputs, [
    { output_type: 'display_data', data: { 'text/html': 'sanitized:x()HI' }, metadata: {} }
  ]);
  await send(turn('turn.end', ASKING));
  await send(html);
  assert.equal(code.outputs.length, 1);
  assert.deepEqual(await send(edit()), { type: 'reply', id: 'e1', ok: false, error: NO_TURN });
});

test('in a turn, bad ids, made-up provenance and deleting the asking cell are refused', async () => {
  const { cells, served, send } = rig();
  served.gate.scheduled(ASKING, '%%claude\nchange it');
  await send(turn('turn.begin', ASKING));
  const before = JSON.stringify(cells.cells);
  for (const request of [
    edit({ conversation: 'made-up', turn: 666, by: '<b>x</b>' }),
    edit({ conversation: '<img src=x>', turn: 1 }),
    edit(PROVENANCE, [{ insert: { after: VICTIM, cell_type: 'code', source: '', id: 'a b' } }]),
    edit(PROVENANCE, [{ delete: { cell: ASKING } }])
  ]) {
    const reply = await send(request) as JsonObject;
    assert.equal(reply.ok, false, JSON.stringify(request));
  }
  const missing = await send(edit(PROVENANCE, [{ delete: { cell: 'no-such-cell' } }])) as JsonObject;
  assert.match(String((missing.result as JsonObject).refused), /no longer in the notebook/);
  assert.equal(JSON.stringify(cells.cells), before);
});

test('a request the bridge does not serve gets a refusal, not silence', async () => {
  const { send } = rig();
  const reply = await send({ type: 'request', id: 'x', method: 'eval', params: {} }) as JsonObject;
  assert.equal(reply.ok, false);
  assert.equal(await send({ type: 'notify', method: 'eval', params: {} }), null);
});

test('a Markdown output lands as HTML rendered and sanitized, in the order it came', async () => {
  const { code, served, send } = rig();
  served.gate.scheduled(ASKING, '%%claude\nrun it');
  await send(turn('turn.begin', ASKING));
  await send(runBegin);
  const markdown = (text: string) => ({
    type: 'notify',
    method: 'run.output',
    params: {
      cell: VICTIM,
      output: {
        output_type: 'display_data',
        data: { 'text/markdown': text, 'text/plain': '<Markdown>' },
        metadata: {}
      }
    }
  });
  const receive = inOrder(served); // as index.ts receives the comm's messages
  await Promise.all([receive(markdown("**RICH** <img src=x onerror='x()'>")), receive(html)]);
  assert.deepEqual(code.outputs, [
    {
      output_type: 'display_data',
      data: { 'text/plain': '<Markdown>', 'text/html': 'sanitized:**RICH** ' },
      metadata: {}
    },
    { output_type: 'display_data', data: { 'text/html': 'sanitized:x()HI' }, metadata: {} }
  ]);
});

test('a turn the gate opens is told to the kernel (turn.opened), one it refuses is not', async () => {
  const { served, send } = rig();
  assert.equal(await send(turn('turn.begin', ASKING)), null); // not run here
  served.gate.scheduled(ASKING, '%%claude\nchange it');
  assert.deepEqual(await send(turn('turn.begin', ASKING)), {
    type: 'event',
    name: 'turn.opened',
    cell: ASKING
  });
  assert.equal(await send(turn('turn.end', ASKING)), null);
});

test('a turn this page did not start opens only when its user adopts it, once', async () => {
  const { cells, served, send } = rig();
  const gate = served.gate;
  assert.equal(gate.adopt(ASKING, '%%claude\nchange it'), false); // no turn announced
  await send(turn('turn.begin', ASKING)); // a reload, a take-over: not run on this page
  assert.equal(gate.inTurn, false);
  assert.deepEqual(await send(edit()), { type: 'reply', id: 'e1', ok: false, error: NO_TURN });
  assert.equal(gate.canAdopt(ASKING), true);
  assert.equal(gate.adopt(ASKING, "victim = 'untouched'"), false); // not a %%claude cell now
  assert.equal(gate.adopt(ASKING, '%%claude\nchange it'), true);
  assert.equal(gate.adopt(ASKING, '%%claude\nchange it'), false); // once
  const applied = await send(edit()) as JsonObject;
  assert.deepEqual(applied.result, { applied: ['forged', VICTIM] });
  assert.equal(cells.cells.length, 3);
  await send(turn('turn.end', ASKING));
  assert.equal(gate.inTurn, false);
  assert.equal(gate.adopt(ASKING, '%%claude\nchange it'), false); // the turn is over
});

test('an undo cell\'s turn can be adopted; a turn is not adoptable after its end or a reset', async () => {
  const gate = new TurnGate();
  gate.begin('undo');
  assert.equal(gate.adopt('undo', '%claude undo'), true);
  gate.begin('gone');
  gate.end('gone');
  assert.equal(gate.adopt('gone', '%%claude\nx'), false);
  gate.begin('reset');
  gate.reset(); // the comm closed: the next one's hello tells the running turns again
  assert.equal(gate.adopt('reset', '%%claude\nx'), false);
  gate.scheduled('own', '%%claude\nx');
  gate.begin('own');
  assert.equal(gate.canAdopt('own'), false); // opened already
  gate.begin('own'); // told again (a second hello): still open, not adoptable
  assert.equal(gate.canAdopt('own'), false);
  assert.equal(gate.isTurnCell('own'), true);
});
