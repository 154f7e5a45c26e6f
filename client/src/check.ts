// Runs the launch's check (`<interpreter> -c "import gradguard"`, or the bundled
// launcher's `--version`) before the server is started, so that a missing install or an
// interpreter the bundle cannot run on is told to the user instead of showing up as a
// crashed server. Node only (no `vscode` import).

import { execFile } from 'node:child_process';

export type CheckResult =
  | { readonly kind: 'ok'; readonly version: string }
  /** The interpreter itself could not be run (no such file, not executable). */
  | { readonly kind: 'no-interpreter'; readonly detail: string }
  /** It ran, and `import gradguard` failed. */
  | { readonly kind: 'no-gradguard'; readonly detail: string }
  /** It did not answer in time. */
  | { readonly kind: 'timeout'; readonly detail: string };

export interface CheckOptions {
  /** Where to run it: not a workspace folder, so that `-m`/`-c` do not import its files. */
  readonly cwd: string;
  readonly timeoutMs?: number;
  readonly env?: NodeJS.ProcessEnv;
}

export function checkInterpreter(
  command: string,
  args: readonly string[],
  options: CheckOptions,
): Promise<CheckResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      [...args],
      {
        cwd: options.cwd,
        timeout: options.timeoutMs ?? 20_000,
        env: options.env ?? process.env,
        windowsHide: true,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve({ kind: 'ok', version: stdout.trim() || '?' });
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'EACCES' || code === 'ENOTDIR') {
          resolve({ kind: 'no-interpreter', detail: `${command}: ${error.message}` });
        } else if (error.killed) {
          resolve({ kind: 'timeout', detail: `${command} did not answer within ${options.timeoutMs ?? 20_000} ms` });
        } else {
          resolve({ kind: 'no-gradguard', detail: lastLine(stderr) || error.message });
        }
      },
    );
  });
}

function lastLine(text: string): string {
  const lines = text.trim().split(/\r?\n/);
  return lines[lines.length - 1]?.trim() ?? '';
}
