// How the server is started for each gradguard.importStrategy, and the bundled launcher
// run for real on an interpreter that has no GradGuard of its own.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { checkInterpreter } from '../../src/check';
import { bundledLauncher, bundleManifest, launchFor } from '../../src/launch';

// out/unit/launch.test.js -> the extension's folder (client/)
const extension = path.join(__dirname, '..', '..');
const bundled = existsSync(bundleManifest(extension));

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

  it('finds the launcher with the platform\'s own paths', () => {
    const windows = launchFor('useBundled', 'C:\\Users\\ada\\.vscode\\extensions\\gradguard.gradguard-0.1.0-win32-x64', true, 'win32');
    assert.deepEqual(windows.serverArgs, [
      'C:\\Users\\ada\\.vscode\\extensions\\gradguard.gradguard-0.1.0-win32-x64\\bundled\\tool\\gradguard_bundled.py',
      'serve',
    ]);
    assert.equal(bundleManifest('C:\\ext', 'win32'), 'C:\\ext\\bundled\\wheels\\manifest.json');
    for (const platform of ['darwin', 'linux'] as const) {
      const launch = launchFor('useBundled', '/home/ada/.vscode/extensions/gradguard.gradguard-0.1.0', true, platform);
      assert.deepEqual(launch.checkArgs, [
        '/home/ada/.vscode/extensions/gradguard.gradguard-0.1.0/bundled/tool/gradguard_bundled.py',
        '--version',
      ]);
      assert.equal(bundleManifest('/ext', platform), '/ext/bundled/wheels/manifest.json');
    }
  });

  it('gives the bundle\'s first check time to unpack or install its dependencies', () => {
    assert.ok(launchFor('useBundled', '/ext', true).checkTimeoutMs >= 120_000);
    assert.ok(launchFor('fromEnvironment', '/ext', true).checkTimeoutMs <= 30_000);
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
    // The check above unpacked this Python's wheels into bundled/libs/<target>-<version>-cpython.
    const libs = path.join(extension, 'bundled', 'libs');
    const unpacked = readdirSync(libs).filter((name) => !name.startsWith('.'));
    assert.ok(unpacked.length > 0);
    for (const name of unpacked) {
      assert.ok(existsSync(path.join(libs, name, 'libcst')), name);
      assert.ok(!existsSync(path.join(libs, name, 'gradguard')), name);
    }
  });
});
