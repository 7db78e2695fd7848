/**
 * Issue 18, "the status lists each role's printer": an agent with two printers, the counter
 * (receipt role) and the kitchen (kitchen and bar roles), each on its own emulator over TCP, a
 * real Mosquitto and the agent's local API. The retained status on the broker, the agent's own
 * status (what the local API and the status page show) and `printer-agent status` (text and
 * --json) all name each printer's roles.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skipWithoutMosquitto } from '../../harness/mosquitto.js';
import { waitFor } from '../../harness/waiting.js';
import { generateKeyPair } from '../../src/protocol/signing.js';
import { type AgentRig, startAgentRig } from '../helpers/agent-rig.js';
import { runCliInProcess } from '../helpers/cli.js';

/** The printers' ids and roles, in config order. */
const EXPECTED = [
  ['counter', ['receipt']],
  ['kitchen', ['kitchen', 'bar']],
];

describe('the status names each printer and the roles it serves', {
  skip: skipWithoutMosquitto(),
}, () => {
  let rig: AgentRig;

  before(async () => {
    rig = await startAgentRig({
      appId: 'A-roles-status',
      storeKey: 'sk-roles-status-secret-7731-do-not-leak',
      header: 'Roles Grill',
      servicePublicPem: generateKeyPair().publicPem,
      printers: [
        { id: 'counter', roles: ['receipt'] },
        { id: 'kitchen', profile: 'generic-80mm-buzzer', roles: ['kitchen', 'bar'] },
      ],
      settings: () => ({
        routing: [
          { role: 'receipt', layout: 'receipt', orderTypes: null, items: null, skus: null },
          { role: 'kitchen', layout: 'kitchen', orderTypes: null, items: null, skus: null },
        ],
      }),
      console: true,
      logLevel: 'warn',
    });
    await waitFor('the retained status with both printers ready', () => {
      const retained = rig.status();
      return (
        retained?.online === true &&
        retained.printers.length === 2 &&
        retained.printers.every((p) => p.state === 'ready')
      );
    });
  });

  after(async () => rig?.stop());

  it("the retained status and the agent's own status list each printer's roles", () => {
    const retained = rig.status();
    assert.ok(retained?.online);
    assert.deepEqual(
      retained.printers.map((p) => [p.id, p.roles]),
      EXPECTED,
    );
    const own = rig.agent.health.status();
    assert.ok(own.online);
    assert.deepEqual(
      own.printers.map((p) => [p.id, p.roles]),
      EXPECTED,
    );
  });

  it('`printer-agent status` names the roles on each printer line', async () => {
    const run = await runCliInProcess(['status', '--config', rig.configPath]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^printer counter \(receipt\): ready \(paper ok\), 0 pending,/m);
    assert.match(run.stdout, /^printer kitchen \(kitchen, bar\): ready \(paper ok\), 0 pending,/m);
    assert.equal(run.stdout.match(/^printer /gm)?.length, 2, 'one line per printer');
    const json = await runCliInProcess(['status', '--config', rig.configPath, '--json']);
    assert.equal(json.status, 0, json.stderr);
    const status = JSON.parse(json.stdout) as { printers: Array<{ id: string; roles: string[] }> };
    assert.deepEqual(
      status.printers.map((p) => [p.id, p.roles]),
      EXPECTED,
    );
  });
});
