// How the server is started for each gradguard.importStrategy, and the bundled launcher
// run for real on an interpreter that has no GradGuard of its own.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { checkInterpreter } from '../../src/check';
import { bundledLauncher, launchFor } from '../../src/launch';

// out/unit/launch.test.js -> the extension's folder (client/)
const extension = path.join(__dirname, '..', '..');
const bundled = existsSync(path.join(extension, 'bundled', 'server', 'gradguard'));

describe('launchFor', () => {
  it('runs the bundled launcher by default', () => {
    const launch = launchFor('useBundled', '/ext', true);
    const launcher = path.join('/ext', 'bundled', 'tool', 'gradguard_bundled.py');
    assert.deepEqual(launch.serverArgs, [launcher, 'serve']);
    assert.deepEqual(launch.checkArgs, [launcher, '--version']);
    assert.equal(launch.strategy, 'useBundled');
  });

  it('runs the interpreter\'s own gradguard with fromEnvironment', () => {
    const launch = launchFor('fromEnvironment', '/ext', true);
    assert.deepEqual(launch.serverArgs, ['-m', 'gradguard', 'serve']);
    assert.equal(launch.checkArgs[0], '-c');
  });

  it('falls back to the interpreter\'s gradguard in a build without a bundle', () => {
    const launch = launchFor('useBundled', '/ext', false);
    assert.equal(launch.strategy, 'fromEnvironment');
    assert.deepEqual(launch.serverArgs, ['-m', 'gradguard', 'serve']);
  });
});

describe('the bundled launcher', { skip: !bundled && 'no bundle: run npm run package first' }, () => {
  it('runs on an interpreter without gradguard and says it is the bundled one', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gg-launch-'));
    const bare = path.join(dir, 'python');
    writeFileSync(bare, '#!/bin/sh\nexec python3 -S -I "$@"\n');
    chmodSync(bare, 0o755);
    assert.throws(() => execFileSync(bare, ['-c', 'import gradguard'], { stdio: 'ignore', cwd: dir }));
    const result = await checkInterpreter(bare, launchFor('useBundled', extension, true).checkArgs, { cwd: dir });
    assert.ok(result.kind === 'ok', JSON.stringify(result));
    assert.match(result.version, /^\d+\.\d+\.\d+ \(bundled\)$/);
    assert.ok(existsSync(bundledLauncher(extension)));
  });

  it('keeps GradGuard apart from its dependencies, for the probe\'s PYTHONPATH', () => {
    // The probe's child gets the folder holding `gradguard` on PYTHONPATH: the user's code
    // it runs must import the user's packages (PyYAML, attrs...), not the bundled ones.
    const server = readdirSync(path.join(extension, 'bundled', 'server'));
    assert.deepEqual(server.filter((name) => !name.startsWith('gradguard')), []);
    assert.ok(existsSync(path.join(extension, 'bundled', 'libs', 'libcst')));
    assert.ok(!existsSync(path.join(extension, 'bundled', 'libs', 'gradguard')));
  });
});
