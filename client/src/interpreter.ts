// Which Python runs the server, and the command that installs GradGuard into it. Pure: no
// `vscode` import (the extension gathers the inputs; `node --test` checks the choice).

import * as path from 'node:path';

export type InterpreterSource =
  | 'gradguard.interpreter'
  | 'python extension'
  | 'python.defaultInterpreterPath'
  | 'workspace environment'
  | 'default';

export interface InterpreterInputs {
  /** The `gradguard.interpreter` setting ('' when unset). */
  readonly setting: string;
  /** The executable of the environment the Python extension selected, if it is installed. */
  readonly pythonExtension?: string | undefined;
  /** The `python.defaultInterpreterPath` setting, if any. */
  readonly defaultInterpreterPath?: string | undefined;
  /** Workspace folders (file system paths); the first one anchors relative paths. */
  readonly workspaceFolders: readonly string[];
  readonly trusted: boolean;
  readonly platform: NodeJS.Platform;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
  /** Whether a path is a directory (a setting may name a virtual environment's folder). */
  readonly isDirectory?: (file: string) => boolean;
  /** Whether a file exists (a workspace folder's `.venv` or `venv`). */
  readonly exists?: (file: string) => boolean;
}

export interface Interpreter {
  /** The executable to run (a path, or a bare name looked up on PATH). */
  readonly command: string;
  readonly source: InterpreterSource;
}

export interface Resolution {
  readonly interpreter: Interpreter;
  /** Commands to try, in order, when `interpreter.command` cannot be run (the default only). */
  readonly alternatives: readonly string[];
  /** Candidates passed over, and why (shown in the output channel). */
  readonly skipped: readonly string[];
}

/** The Python extension's own default for python.defaultInterpreterPath: means "unset". */
const UNSET_DEFAULT_PATHS = new Set(['', 'python']);

/**
 * The interpreter, in this order:
 * 1. `gradguard.interpreter`, when set: an explicit choice for this tool wins (as in
 *    Microsoft's python-tools extension template and in ruff's extension);
 * 2. the environment the Python extension selected for the workspace;
 * 3. `python.defaultInterpreterPath` (what the Python extension would start from);
 * 4. a virtual environment in a workspace folder (`.venv`, `venv`), when trusted;
 * 5. the platform's usual names on PATH (`defaultCommands`), the first that runs.
 *
 * A setting may name a virtual environment's folder instead of its interpreter. In an
 * untrusted workspace an interpreter inside a workspace folder is never run: a
 * checked-out `.venv/bin/python` is the workspace's code too.
 */
export function resolveInterpreter(inputs: InterpreterInputs): Resolution {
  const skipped: string[] = [];
  const candidates: [string | undefined, InterpreterSource][] = [
    [inputs.setting, 'gradguard.interpreter'],
    [inputs.pythonExtension, 'python extension'],
    [
      inputs.defaultInterpreterPath !== undefined &&
      UNSET_DEFAULT_PATHS.has(inputs.defaultInterpreterPath.trim())
        ? undefined
        : inputs.defaultInterpreterPath,
      'python.defaultInterpreterPath',
    ],
  ];
  for (const [raw, source] of candidates) {
    if (raw === undefined || raw.trim() === '') {
      continue;
    }
    let command = expandPath(raw.trim(), inputs);
    if (inputs.isDirectory?.(command) === true) {
      command = venvInterpreter(command, inputs.platform);
    }
    if (!inputs.trusted && isInsideAny(command, inputs.workspaceFolders, inputs.platform)) {
      skipped.push(
        `${source} (${command}) is inside the workspace, which is not trusted: not run`,
      );
      continue;
    }
    return { interpreter: { command, source }, alternatives: [], skipped };
  }
  if (inputs.trusted) {
    for (const folder of inputs.workspaceFolders) {
      for (const name of WORKSPACE_ENVIRONMENTS) {
        const pathApi = inputs.platform === 'win32' ? path.win32 : path.posix;
        const command = venvInterpreter(pathApi.join(folder, name), inputs.platform);
        if (inputs.exists?.(command) === true) {
          return { interpreter: { command, source: 'workspace environment' }, alternatives: [], skipped };
        }
      }
    }
  }
  const [first = 'python', ...alternatives] = defaultCommands(inputs.platform);
  return { interpreter: { command: first, source: 'default' }, alternatives, skipped };
}

/** Folder names of a workspace's own virtual environment, as `python -m venv` users call it. */
const WORKSPACE_ENVIRONMENTS = ['.venv', 'venv'];

/**
 * The interpreter of a virtual environment: `Scripts\python.exe` on Windows, `bin/python`
 * elsewhere (where venv, virtualenv, uv and conda put it).
 */
export function venvInterpreter(folder: string, platform: NodeJS.Platform): string {
  return platform === 'win32'
    ? path.win32.join(folder, 'Scripts', 'python.exe')
    : path.posix.join(folder, 'bin', 'python');
}

/**
 * The names tried on PATH when nothing names an interpreter, in order. On Windows the `py`
 * launcher (python.org's installers put it on PATH) runs the newest Python 3, where
 * `python` may be the Microsoft Store's installer stub; elsewhere `python3`, since
 * `python` is Python 2 or absent on many systems.
 */
export function defaultCommands(platform: NodeJS.Platform): readonly string[] {
  return platform === 'win32' ? ['py', 'python', 'python3'] : ['python3', 'python'];
}

/**
 * Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`, and makes
 * a relative path (one with a separator, like `.venv/bin/python`) absolute against the
 * first workspace folder. A bare name (`python3`) stays as it is, for PATH lookup.
 */
export function expandPath(value: string, inputs: InterpreterInputs): string {
  const pathApi = inputs.platform === 'win32' ? path.win32 : path.posix;
  const folder = inputs.workspaceFolders[0];
  let expanded = value
    .replace(/\$\{userHome\}/g, inputs.home)
    .replace(/\$\{env:([^}]+)\}/g, (_match, name: string) => inputs.env[name] ?? '');
  if (folder !== undefined) {
    expanded = expanded.replace(/\$\{workspaceFolder\}/g, folder);
  }
  if (expanded === '~' || expanded.startsWith('~/') || expanded.startsWith('~\\')) {
    expanded = inputs.home + expanded.slice(1);
  }
  const hasSeparator = expanded.includes('/') || (inputs.platform === 'win32' && expanded.includes('\\'));
  if (hasSeparator && !pathApi.isAbsolute(expanded) && folder !== undefined) {
    expanded = pathApi.resolve(folder, expanded);
  }
  return expanded;
}

export function isInsideAny(
  file: string,
  folders: readonly string[],
  platform: NodeJS.Platform,
): boolean {
  const pathApi = platform === 'win32' ? path.win32 : path.posix;
  if (!pathApi.isAbsolute(file)) {
    return false;
  }
  const fold = (p: string): string => (platform === 'win32' || platform === 'darwin' ? p.toLowerCase() : p);
  const target = fold(pathApi.normalize(file));
  return folders.some((folder) => {
    const relative = pathApi.relative(fold(pathApi.normalize(folder)), target);
    return relative === '' || (!relative.startsWith('..') && !pathApi.isAbsolute(relative));
  });
}

export interface InstallCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** The same, as one line to type into the platform's usual shell. */
  readonly display: string;
}

/** `<interpreter> -m pip install <spec>`. */
export function installCommand(
  interpreter: string,
  spec: string,
  platform: NodeJS.Platform,
): InstallCommand {
  const args = ['-m', 'pip', 'install', spec];
  const words = [interpreter, ...args].map((word) => quoteForShell(word, platform));
  // PowerShell runs a quoted path only through the call operator.
  const display =
    platform === 'win32' && words[0]?.startsWith("'") === true ? `& ${words.join(' ')}` : words.join(' ');
  return { command: interpreter, args, display };
}

/** Quotes a word for a POSIX shell, or for PowerShell on Windows, only when needed. */
export function quoteForShell(word: string, platform: NodeJS.Platform): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./\\-]+$/.test(word)) {
    return word;
  }
  return `'${word.replace(/'/g, platform === 'win32' ? "''" : "'\\''")}'`;
}
