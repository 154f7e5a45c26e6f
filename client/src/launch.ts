// How the server is started: the GradGuard bundled in the .vsix, or the one installed in
// the interpreter. Pure (no `vscode` import), unit-tested.
//
// Either way the interpreter is the user's (gradguard.interpreter, the Python extension's
// choice...): the probe runs their code under *their* torch, and the server starts it with
// the interpreter it runs on. The bundled copy (bundled/server and bundled/libs, made by
// tools/package_vsix.py) is put first on that interpreter's sys.path by
// bundled/tool/gradguard_bundled.py, as Microsoft's python-tools template and the ruff
// extension do.

import * as path from 'node:path';
import type { ImportStrategy } from './settings';

export interface Launch {
  /** What `gradguard.importStrategy` asked for, and what is used. */
  readonly strategy: ImportStrategy;
  /** Arguments after the interpreter that start the server (stdio). */
  readonly serverArgs: readonly string[];
  /** Arguments after the interpreter that print GradGuard's version, or fail. */
  readonly checkArgs: readonly string[];
  /** For the log and the status bar tooltip. */
  readonly describe: string;
}

const FROM_ENVIRONMENT_CHECK =
  'import gradguard, sys; sys.stdout.write(getattr(gradguard, "__version__", "?"))';

/** The launcher script inside an installed extension. */
export function bundledLauncher(extensionPath: string): string {
  return path.join(extensionPath, 'bundled', 'tool', 'gradguard_bundled.py');
}

/**
 * The launch for a strategy. `bundleExists` says whether the extension carries a bundle:
 * a development build without one falls back to the interpreter's own GradGuard.
 */
export function launchFor(
  strategy: ImportStrategy,
  extensionPath: string,
  bundleExists: boolean,
): Launch {
  if (strategy === 'useBundled' && bundleExists) {
    const launcher = bundledLauncher(extensionPath);
    return {
      strategy,
      serverArgs: [launcher, 'serve'],
      checkArgs: [launcher, '--version'],
      describe: 'the GradGuard bundled with the extension',
    };
  }
  return {
    strategy: 'fromEnvironment',
    serverArgs: ['-m', 'gradguard', 'serve'],
    checkArgs: ['-c', FROM_ENVIRONMENT_CHECK],
    describe: strategy === 'useBundled'
      ? 'the GradGuard installed in the interpreter (this build of the extension has no bundle)'
      : 'the GradGuard installed in the interpreter',
  };
}
