// When the server cannot start on the interpreter: say why, and offer to install
// GradGuard into it (in a terminal), starting the server once the install is done.

import * as os from 'node:os';
import * as vscode from 'vscode';
import { checkInterpreter, type CheckResult } from './check';
import { installCommand, type Interpreter } from './interpreter';
import type { Launch } from './launch';
import { openSetting, SHOW_OUTPUT, showError } from './messages';
import type { StatusBar } from './status';

export interface InstallParts {
  readonly log: vscode.LogOutputChannel;
  readonly status: StatusBar;
  /** Where the check runs (not a workspace folder). */
  readonly cwd: string;
  /** The launch the server would use now. */
  readonly launch: () => Launch;
  /** The interpreter the server was last started with. */
  readonly interpreter: () => Interpreter | undefined;
  readonly installSpec: () => string;
  readonly restart: (reason: string) => Promise<void>;
  readonly disposables: vscode.Disposable[];
}

/** Tells the user why the interpreter cannot run the server, and what to do. */
export function reportCheck(
  interpreter: Interpreter,
  check: Exclude<CheckResult, { kind: 'ok' }>,
  parts: InstallParts,
): void {
  const { log, status } = parts;
  log.error(`Cannot start the server with ${interpreter.command}: ${check.detail}`);
  if (check.kind === 'no-gradguard' && parts.launch().strategy === 'useBundled') {
    // The bundle runs, but not on this interpreter (a Python version it has no build for).
    status.setState({ kind: 'failed', reason: `${interpreter.command}: ${check.detail}` });
    void showError(
      `GradGuard: the bundled server cannot run on ${interpreter.command} (${check.detail}). ` +
        'Choose another interpreter, or install GradGuard into this one and set ' +
        'gradguard.importStrategy to fromEnvironment.',
      SHOW_OUTPUT,
    );
    return;
  }
  if (check.kind === 'no-gradguard') {
    status.setState({ kind: 'not-installed', interpreter: interpreter.command });
    offerInstall(interpreter, check.detail, parts);
    return;
  }
  const reason = check.kind === 'timeout' ? 'it did not answer' : 'it cannot be run';
  status.setState({ kind: 'failed', reason: `${interpreter.command}: ${reason}` });
  void showError(
    `GradGuard: the Python interpreter ${interpreter.command} (from ${interpreter.source}) ` +
      `${reason}. Set gradguard.interpreter, or select an interpreter in the Python extension.`,
    openSetting('gradguard.interpreter'),
    SHOW_OUTPUT,
  );
}

function offerInstall(interpreter: Interpreter, detail: string, parts: InstallParts): void {
  const install = installCommand(interpreter.command, parts.installSpec(), process.platform);
  void showError(
    `GradGuard is not installed in ${interpreter.command} (${detail}). Install it with: ${install.display}`,
    { title: 'Install in terminal', run: () => { void installInTerminal(interpreter, install.display, parts); } },
    openSetting('gradguard.interpreter'),
    SHOW_OUTPUT,
  );
}

async function installInTerminal(interpreter: Interpreter, commandLine: string, parts: InstallParts): Promise<void> {
  const terminal = vscode.window.createTerminal({ name: 'GradGuard: install', cwd: os.homedir() });
  terminal.show();
  parts.log.info(`Running in a terminal: ${commandLine}`);
  // With shell integration the end of the command (and its exit code) is seen; without,
  // the interpreter is asked again every few seconds until it has gradguard.
  const integration = await shellIntegrationOf(terminal, 15_000);
  if (integration === undefined) {
    terminal.sendText(commandLine, true);
    startWhenInstalled(interpreter, terminal, parts);
    const choice = await vscode.window.showInformationMessage(
      'GradGuard: the server starts when the install in the terminal has finished.',
      'Restart server',
    );
    if (choice === 'Restart server') {
      await parts.restart('asked for after the install');
    }
    return;
  }
  const execution = integration.executeCommand(commandLine);
  const listener = vscode.window.onDidEndTerminalShellExecution((event) => {
    if (event.execution !== execution) {
      return;
    }
    listener.dispose();
    if (event.exitCode === 0) {
      void parts.restart('GradGuard was installed');
    } else {
      void vscode.window.showErrorMessage(
        `GradGuard: the install failed (exit code ${event.exitCode ?? 'unknown'}); see the terminal.`,
      );
    }
  });
  parts.disposables.push(listener);
}

/** Polls `import gradguard` (every 3 s, 10 minutes at most) and starts the server once it works. */
function startWhenInstalled(interpreter: Interpreter, terminal: vscode.Terminal, parts: InstallParts): void {
  const deadline = Date.now() + 10 * 60_000;
  const poll = async (): Promise<void> => {
    if (parts.status.current.kind !== 'not-installed' || parts.interpreter()?.command !== interpreter.command) {
      return; // started (or restarted with another interpreter) meanwhile
    }
    const check = await checkInterpreter(interpreter.command, parts.launch().checkArgs,
      { cwd: parts.cwd, timeoutMs: 10_000 });
    if (check.kind === 'ok') {
      await parts.restart('GradGuard was installed');
    } else if (Date.now() < deadline && terminal.exitStatus === undefined) {
      setTimeout(() => { void poll(); }, 3000);
    }
  };
  setTimeout(() => { void poll(); }, 3000);
}

/** The terminal's shell integration, if it comes up within `timeoutMs`. */
function shellIntegrationOf(
  terminal: vscode.Terminal,
  timeoutMs: number,
): Promise<vscode.TerminalShellIntegration | undefined> {
  if (terminal.shellIntegration !== undefined) {
    return Promise.resolve(terminal.shellIntegration);
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      listener.dispose();
      resolve(undefined);
    }, timeoutMs);
    const listener = vscode.window.onDidChangeTerminalShellIntegration((event) => {
      if (event.terminal === terminal) {
        clearTimeout(timer);
        listener.dispose();
        resolve(event.shellIntegration);
      }
    });
  });
}
