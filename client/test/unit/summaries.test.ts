import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { probeSummary } from '../../src/summaries';

describe('probeSummary', () => {
  it('says what the server returned', () => {
    assert.equal(probeSummary('  2 writes '), '2 writes');
    assert.equal(probeSummary({ message: 'ran main() in 1.2 s' }), 'ran main() in 1.2 s');
    assert.equal(probeSummary({ findings: [] }), 'no in-place write clobbered a saved tensor');
    assert.equal(probeSummary({ findings: [{}] }), '1 in-place write clobbered a saved tensor (see Problems)');
    assert.equal(probeSummary({ count: 3 }), '3 in-place writes clobbered a saved tensor (see Problems)');
    assert.equal(probeSummary(null), 'finished (its findings are in the Problems view)');
  });
});
