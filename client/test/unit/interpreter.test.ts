import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import {
  defaultCommands,
  expandPath,
  installCommand,
  isInsideAny,
  quoteForShell,
  resolveInterpreter,
  venvInterpreter,
  type InterpreterInputs,
} from '../../src/interpreter';

const base: InterpreterInputs = {
  setting: '',
  pythonExtension: undefined,
  defaultInterpreterPath: undefined,
  workspaceFolders: ['/work/project'],
  trusted: true,
  platform: 'linux',
  env: { VENVS: '/opt/venvs' },
  home: '/home/ada',
};

const pick = (overrides: Partial<InterpreterInputs>): [string, string] => {
  const { interpreter } = resolveInterpreter({ ...base, ...overrides });
  return [interpreter.command, interpreter.source];
};

describe('resolveInterpreter', () => {
  it('falls back to python3 then python, or on Windows the py launcher then python', () => {
    assert.deepEqual(pick({}), ['python3', 'default']);
    assert.deepEqual(resolveInterpreter(base).alternatives, ['python']);
    assert.deepEqual(pick({ platform: 'darwin' }), ['python3', 'default']);
    const windows = resolveInterpreter({ ...base, platform: 'win32', workspaceFolders: ['C:\\p'] });
    assert.deepEqual(windows.interpreter, { command: 'py', source: 'default' });
    assert.deepEqual(windows.alternatives, ['python', 'python3']);
    assert.deepEqual(defaultCommands('win32'), ['py', 'python', 'python3']);
  });

  it('has no alternatives to an interpreter the user named', () => {
    assert.deepEqual(resolveInterpreter({ ...base, setting: '/opt/py/bin/python' }).alternatives, []);
  });

  it('takes a virtual environment\'s folder for its interpreter: Scripts on Windows, bin elsewhere', () => {
    const isDirectory = (file: string): boolean => file.endsWith('env');
    assert.deepEqual(pick({ setting: '/opt/myenv', isDirectory }), ['/opt/myenv/bin/python', 'gradguard.interpreter']);
    assert.deepEqual(pick({ setting: '~/myenv', isDirectory, platform: 'darwin' }),
      ['/home/ada/myenv/bin/python', 'gradguard.interpreter']);
    assert.deepEqual(
      pick({ setting: 'C:\\envs\\myenv', isDirectory, platform: 'win32', workspaceFolders: ['C:\\p'] }),
      ['C:\\envs\\myenv\\Scripts\\python.exe', 'gradguard.interpreter']);
    assert.equal(venvInterpreter('/w/.venv', 'linux'), '/w/.venv/bin/python');
    assert.equal(venvInterpreter('C:\\w\\.venv', 'win32'), 'C:\\w\\.venv\\Scripts\\python.exe');
  });

  it('uses a workspace folder\'s .venv or venv before PATH, when the workspace is trusted', () => {
    const exists = (file: string): boolean =>
      file === '/work/project/venv/bin/python' || file === 'C:\\p\\.venv\\Scripts\\python.exe';
    assert.deepEqual(pick({ exists }), ['/work/project/venv/bin/python', 'workspace environment']);
    assert.deepEqual(pick({ exists, platform: 'win32', workspaceFolders: ['C:\\p'] }),
      ['C:\\p\\.venv\\Scripts\\python.exe', 'workspace environment']);
    // A Windows layout is not looked for on Linux, nor the other way round.
    assert.deepEqual(pick({ exists, workspaceFolders: ['C:\\p'] }), ['python3', 'default']);
    assert.deepEqual(pick({ exists, trusted: false }), ['python3', 'default']);
    assert.deepEqual(pick({ exists, pythonExtension: '/e/python' }), ['/e/python', 'python extension']);
  });

  it('takes the Python extension\'s interpreter', () => {
    assert.deepEqual(pick({ pythonExtension: '/opt/conda/bin/python' }), ['/opt/conda/bin/python', 'python extension']);
  });

  it('prefers an explicit gradguard.interpreter to the Python extension', () => {
    assert.deepEqual(pick({ setting: '/venv/bin/python', pythonExtension: '/opt/conda/bin/python' }),
      ['/venv/bin/python', 'gradguard.interpreter']);
  });

  it('uses python.defaultInterpreterPath without the extension, unless it is the "python" placeholder', () => {
    assert.deepEqual(pick({ defaultInterpreterPath: '/usr/bin/python3.12' }),
      ['/usr/bin/python3.12', 'python.defaultInterpreterPath']);
    assert.deepEqual(pick({ defaultInterpreterPath: 'python' }), ['python3', 'default']);
    assert.deepEqual(pick({ defaultInterpreterPath: '/usr/bin/python3.12', pythonExtension: '/e/python' }),
      ['/e/python', 'python extension']);
  });

  it('ignores blank values', () => {
    assert.deepEqual(pick({ setting: '   ', pythonExtension: '' }), ['python3', 'default']);
  });

  it('never runs an interpreter inside an untrusted workspace', () => {
    const resolution = resolveInterpreter({
      ...base,
      trusted: false,
      setting: '${workspaceFolder}/.venv/bin/python',
      pythonExtension: '/work/project/env/bin/python',
      defaultInterpreterPath: '/usr/bin/python3.11',
    });
    assert.deepEqual(resolution.interpreter, { command: '/usr/bin/python3.11', source: 'python.defaultInterpreterPath' });
    assert.equal(resolution.skipped.length, 2);
    assert.match(resolution.skipped[0] ?? '', /not trusted/);
    // Trusted, the same setting is used.
    assert.deepEqual(pick({ setting: '${workspaceFolder}/.venv/bin/python' }),
      ['/work/project/.venv/bin/python', 'gradguard.interpreter']);
    // Outside the workspace, untrusted is fine.
    assert.deepEqual(pick({ trusted: false, setting: '/opt/venv/bin/python' }), ['/opt/venv/bin/python', 'gradguard.interpreter']);
  });
});

describe('expandPath', () => {
  it('expands variables, ~ and relative paths; leaves bare names for PATH', () => {
    assert.equal(expandPath('${userHome}/venv/bin/python', base), '/home/ada/venv/bin/python');
    assert.equal(expandPath('~/venv/bin/python', base), '/home/ada/venv/bin/python');
    assert.equal(expandPath('${env:VENVS}/torch/bin/python', base), '/opt/venvs/torch/bin/python');
    assert.equal(expandPath('.venv/bin/python', base), '/work/project/.venv/bin/python');
    assert.equal(expandPath('python3.11', base), 'python3.11');
    assert.equal(expandPath('.venv\\Scripts\\python.exe', { ...base, platform: 'win32', workspaceFolders: ['C:\\p'] }),
      'C:\\p\\.venv\\Scripts\\python.exe');
  });
});

describe('isInsideAny', () => {
  it('compares whole path segments', () => {
    assert.equal(isInsideAny('/work/project/.venv/bin/python', ['/work/project'], 'linux'), true);
    assert.equal(isInsideAny('/work/project-other/bin/python', ['/work/project'], 'linux'), false);
    assert.equal(isInsideAny('/work/project/../elsewhere/python', ['/work/project'], 'linux'), false);
    assert.equal(isInsideAny('python3', ['/work/project'], 'linux'), false);
    assert.equal(isInsideAny('C:\\P\\venv\\python.exe', ['c:\\p'], 'win32'), true);
  });
});

describe('installCommand', () => {
  it('is <interpreter> -m pip install <spec>', () => {
    const install = installCommand('/opt/venv/bin/python', 'gradguard', 'linux');
    assert.equal(install.command, '/opt/venv/bin/python');
    assert.deepEqual(install.args, ['-m', 'pip', 'install', 'gradguard']);
    assert.equal(install.display, '/opt/venv/bin/python -m pip install gradguard');
  });

  it('quotes what a shell would split', () => {
    assert.equal(installCommand('/home/a b/venv/bin/python', 'gradguard[probe]', 'linux').display,
      "'/home/a b/venv/bin/python' -m pip install 'gradguard[probe]'");
    assert.equal(installCommand('C:\\Program Files\\Python\\python.exe', 'gradguard', 'win32').display,
      "& 'C:\\Program Files\\Python\\python.exe' -m pip install gradguard");
    assert.equal(quoteForShell("it's", 'linux'), "'it'\\''s'");
    assert.equal(quoteForShell("it's", 'win32'), "'it''s'");
  });
});
