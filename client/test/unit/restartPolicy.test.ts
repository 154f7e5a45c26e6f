import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { RestartPolicy } from '../../src/restartPolicy';

describe('RestartPolicy', () => {
  it('restarts a bounded number of times inside the window, then gives up', () => {
    let now = 0;
    const policy = new RestartPolicy(4, 60_000, () => now);
    const verdicts = [1, 2, 3, 4, 5].map(() => { now += 1000; return policy.crashed(); });
    assert.deepEqual(verdicts.map((v) => v.restart), [true, true, true, true, false]);
    assert.equal(verdicts[4]?.crashes, 5);
  });

  it('forgets crashes older than the window', () => {
    let now = 0;
    const policy = new RestartPolicy(2, 60_000, () => now);
    policy.crashed();
    policy.crashed();
    now = 61_000;
    assert.deepEqual(policy.crashed(), { restart: true, crashes: 1 });
  });

  it('starts afresh after reset', () => {
    const policy = new RestartPolicy(1, 60_000, () => 0);
    policy.crashed();
    assert.equal(policy.crashed().restart, false);
    policy.reset();
    assert.equal(policy.crashed().restart, true);
  });
});
