// How the server is started: the GradGuard bundled in the .vsix, or the one installed in
// the interpreter. Pure (no `vscode` import), unit-tested.
//
// Either way the interpreter is the user's (gradguard.interpreter, the Python extension's
// choice...): the probe runs their code under *their* torch, and the server starts it with
// the interpreter it runs on. The bundled copy (bundled/server, and bundled/wheels
// unpacked into bundled/libs on first use; made by tools/package_vsix.py) is put first on
// that interpreter's sys.path by bundled/tool/gradguard_bundled.py, as Microsoft's
// python-tools template and the ruff extension do.

import * as path from 'node:path';
import type { ImportStrategy } from './settings';

export interface Launch {
  /** What `gradguard.importStrategy` asked for, and what is used. */
  readonly strategy: ImportStrategy;
  /** Arguments after the interpreter that start the server (stdio). */
  readonly serverArgs: readonly string[];
  /** Arguments after the interpreter that print GradGuard's version, or fail. */
  readonly checkArgs: readonly string[];
  /** How long the check may take: the bundle's first run unpacks its wheels, or installs
   * its dependencies with the interpreter's pip (the universal package). */
  readonly checkTimeoutMs: number;
  /** For the log and the status bar tooltip. */
  readonly describe: string;
}

const FROM_ENVIRONMENT_CHECK =
  'import gradguard, sys; sys.stdout.write(getattr(gradguard, "__version__", "?"))';

/** The launcher script inside an installed extension. */
export function bundledLauncher(extensionPath: string, platform: NodeJS.Platform = process.platform): string {
  return pathFor(platform).join(extensionPath, 'bundled', 'tool', 'gradguard_bundled.py');
}

/** What says which wheels each Python uses; present only in a packaged extension. */
export function bundleManifest(extensionPath: string, platform: NodeJS.Platform = process.platform): string {
  return pathFor(platform).join(extensionPath, 'bundled', 'wheels', 'manifest.json');
}

function pathFor(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/**
 * The launch for a strategy. `bundleExists` says whether the extension carries a bundle:
 * a development build without one falls back to the interpreter's own GradGuard.
 */
export function launchFor(
  strategy: ImportStrategy,
  extensionPath: string,
  bundleExists: boolean,
  platform: NodeJS.Platform = process.platform,
): Launch {
  if (strategy === 'useBundled' && bundleExists) {
    const launcher = bundledLauncher(extensionPath, platform);
    return {
      strategy,
      serverArgs: [launcher, 'serve'],
      checkArgs: [launcher, '--version'],
      checkTimeoutMs: 300_000,
      describe: 'the GradGuard bundled with the extension',
    };
  }
  return {
    strategy: 'fromEnvironment',
    serverArgs: ['-m', 'gradguard', 'serve'],
    checkArgs: ['-c', FROM_ENVIRONMENT_CHECK],
    checkTimeoutMs: 20_000,
    describe: strategy === 'useBundled'
      ? 'the GradGuard installed in the interpreter (this build of the extension has no bundle)'
      : 'the GradGuard installed in the interpreter',
  };
}
