// Runs real interpreters: the repository's venv (which has GradGuard), one without it,
// one that does not exist, and one that hangs.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { checkInterpreter } from '../../src/check';
import { launchFor } from '../../src/launch';

// out/unit/check.test.js -> the repository root
const repo = path.join(__dirname, '..', '..', '..');
const venvPython = process.env.GRADGUARD_TEST_PYTHON ?? path.join(repo, '.venv', 'bin', 'python');
const cwd = os.tmpdir();
// The check of an interpreter's own GradGuard (importStrategy fromEnvironment).
const args = launchFor('fromEnvironment', '/unused', false).checkArgs;

function hasGradguard(python: string): boolean {
  try {
    execFileSync(python, ['-c', 'import gradguard'], { stdio: 'ignore', cwd });
    return true;
  } catch {
    return false;
  }
}

describe('checkInterpreter', () => {
  it('finds GradGuard and its version in the venv it is installed in', { skip: !existsSync(venvPython) && 'no .venv' }, async () => {
    const result = await checkInterpreter(venvPython, args, { cwd });
    assert.ok(result.kind === 'ok', JSON.stringify(result));
    assert.match(result.version, /^\d+\.\d+/);
  });

  it('tells a missing gradguard module apart', async () => {
    // A clean venv-less interpreter: python3 with site-packages switched off.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gg-check-'));
    const wrapper = path.join(dir, 'python');
    writeFileSync(wrapper, '#!/bin/sh\nexec python3 -S -I "$@"\n');
    chmodSync(wrapper, 0o755);
    assert.equal(hasGradguard(wrapper), false);
    const result = await checkInterpreter(wrapper, args, { cwd });
    assert.ok(result.kind === 'no-gradguard', JSON.stringify(result));
    assert.match(result.detail, /No module named 'gradguard'/);
  });

  it('tells an interpreter that does not exist apart', async () => {
    const result = await checkInterpreter('/nonexistent/bin/python', args, { cwd });
    assert.equal(result.kind, 'no-interpreter');
  });

  it('gives up on one that does not answer', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gg-check-'));
    const slow = path.join(dir, 'python');
    writeFileSync(slow, '#!/bin/sh\nsleep 10\n');
    chmodSync(slow, 0o755);
    const result = await checkInterpreter(slow, args, { cwd, timeoutMs: 300 });
    assert.equal(result.kind, 'timeout');
  });

  it('does not import a gradguard module lying in the folder it runs in', async () => {
    // The check runs with cwd outside the workspace; a workspace file must not satisfy it.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gg-check-'));
    writeFileSync(path.join(dir, 'gradguard.py'), '__version__ = "evil"\n');
    const wrapper = path.join(dir, 'python');
    writeFileSync(wrapper, '#!/bin/sh\nexec python3 -S -I "$@"\n');
    chmodSync(wrapper, 0o755);
    const result = await checkInterpreter(wrapper, args, { cwd });
    assert.equal(result.kind, 'no-gradguard');
  });
});
