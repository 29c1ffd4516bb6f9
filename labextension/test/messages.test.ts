// The extension against the kernel's description of the messages (src/messages.json,
// rendered from byre_jupyter/bridge/messages.py): a message added, renamed or reshaped on
// one side fails here until the other side follows.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { editingEvent } from '../src/editing';
import { HANDLERS, turnOpenedEvent } from '../src/gate';
import { MESSAGES, PROTOCOL, TARGET, hello, refuse } from '../src/protocol';

const fields = (type: string, name?: string): string[] => {
  const entry = MESSAGES.page.find(m => m.type === type && (name === undefined || m.name === name));
  assert.ok(entry, `${type} is described`);
  return Object.keys(entry.fields).sort();
};

test('the description is of this protocol and target', () => {
  assert.equal(MESSAGES.protocol, PROTOCOL);
  assert.equal(MESSAGES.target, TARGET);
});

test('every method the kernel sends has a handler, and no handler serves another', () => {
  const methods = MESSAGES.kernel.flatMap(m => ('method' in m ? [m.method] : []));
  assert.deepEqual(Object.keys(HANDLERS).sort(), [...new Set(methods)].sort());
});

test('what the page sends carries exactly the described fields', () => {
  const view = { path: () => 'a.ipynb', dirty: () => false, cells: () => [] };
  const said = hello(view, 'lab');
  assert.deepEqual(Object.keys(said).filter(k => k !== 'type').sort(), fields('hello'));
  assert.equal(said.type, 'hello');
  const event = editingEvent('c1');
  assert.deepEqual(
    Object.keys(event).filter(k => k !== 'type' && k !== 'name').sort(),
    fields('event', 'editing')
  );
  const opened = turnOpenedEvent('c1');
  assert.deepEqual(
    Object.keys(opened).filter(k => k !== 'type' && k !== 'name').sort(),
    fields('event', 'turn.opened')
  );
  const reply = fields('reply');
  for (const sent of [refuse('1', 'no'), { type: 'reply', id: '1', ok: true, result: {} }]) {
    for (const key of Object.keys(sent).filter(k => k !== 'type')) {
      assert.ok(reply.includes(key), `reply field ${key} is described`);
    }
  }
});
