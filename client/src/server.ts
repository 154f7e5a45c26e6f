// Starts, restarts and stops the language server, one operation at a time.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  LanguageClient,
  ResponseError,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { checkInterpreter, type CheckResult } from './check';
import { installCommand, resolveInterpreter, type Interpreter } from './interpreter';
import { bundledLauncher, launchFor, type Launch } from './launch';
import { onPythonInterpreterChanged, pythonExtensionInterpreter } from './python';
import { RestartPolicy } from './restartPolicy';
import {
  didChangeConfigurationSettings,
  initializationOptions,
  mapConfigurationAnswer,
  needsRestart,
  readSettings,
  SECTION,
  TRUST_CHANGED_NOTIFICATION,
  type GradGuardSettings,
  type TrustChangedParams,
} from './settings';
import { COMMAND_SHOW_OUTPUT, type StatusBar } from './status';
import { TraceChannel } from './trace';

export const CLIENT_ID = 'gradguard';
export const CLIENT_NAME = 'GradGuard';

/** Reads the settings through VS Code, reporting bad values once each. */
export class SettingsSource {
  private readonly reported = new Set<string>();

  constructor(private readonly log: vscode.LogOutputChannel) {}

  read(): GradGuardSettings {
    const configuration = vscode.workspace.getConfiguration(SECTION);
    const problems: string[] = [];
    const settings = readSettings((key) => configuration.get(key), problems);
    const fresh = problems.filter((problem) => !this.reported.has(problem));
    for (const problem of fresh) {
      this.reported.add(problem);
      this.log.warn(`Setting ignored: ${problem}`);
    }
    if (fresh.length > 0) {
      void vscode.window.showWarningMessage(`GradGuard settings: ${fresh.join('; ')} (the default is used).`);
    }
    return settings;
  }
}

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private interpreter: Interpreter | undefined;
  private settings: GradGuardSettings;
  private queue: Promise<void> = Promise.resolve();
  private readonly policy = new RestartPolicy();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly clientChanged = new vscode.EventEmitter<LanguageClient | undefined>();
  private readonly traceChannel: TraceChannel;
  /** Fires with the running client, or undefined when there is none. */
  readonly onDidChangeClient = this.clientChanged.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly status: StatusBar,
    private readonly source: SettingsSource,
  ) {
    this.settings = source.read();
    this.traceChannel = new TraceChannel(log);
    this.disposables.push(
      new vscode.Disposable(() => { this.traceChannel.dispose(); }),
      new vscode.Disposable(() => { this.clientChanged.dispose(); }),
      vscode.workspace.onDidChangeConfiguration((event) => { this.configurationChanged(event); }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => { this.trustGranted(); }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        // Relative interpreter paths and ${workspaceFolder} depend on the folders.
        void this.restartIfInterpreterChanged('workspace folders changed');
      }),
    );
    void onPythonInterpreterChanged(() => {
      void this.restartIfInterpreterChanged('the Python extension selected another interpreter');
    }, log).then((disposable) => {
      if (disposable !== undefined) {
        this.disposables.push(disposable);
      }
    });
  }

  /** The running client, if the server is up. */
  get running(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  /** Stops and starts again, with the settings and interpreter as they are now. */
  restart(reason: string): Promise<void> {
    return this.enqueue(async () => {
      this.log.info(`Restarting the server: ${reason}`);
      this.policy.reset();
      await this.doStop();
      await this.doStart();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  private enqueue(operation: () => Promise<void>): Promise<void> {
    const next = this.queue.then(operation).catch((error: unknown) => {
      this.log.error(`GradGuard: ${String(error)}`);
    });
    this.queue = next;
    return next;
  }

  private folders(): readonly vscode.WorkspaceFolder[] {
    return vscode.workspace.workspaceFolders ?? [];
  }

  private async resolve(): Promise<Interpreter> {
    const folders = this.folders();
    const resource = folders[0]?.uri ?? vscode.window.activeTextEditor?.document.uri;
    const pythonExtension = await pythonExtensionInterpreter(resource, this.log);
    const defaultInterpreterPath = vscode.workspace
      .getConfiguration('python', resource)
      .get<string>('defaultInterpreterPath');
    const { interpreter, skipped } = resolveInterpreter({
      setting: this.settings.interpreter,
      pythonExtension,
      defaultInterpreterPath,
      workspaceFolders: folders.filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
      trusted: vscode.workspace.isTrusted,
      platform: process.platform,
      env: process.env,
      home: os.homedir(),
    });
    for (const reason of skipped) {
      this.log.warn(`Interpreter skipped: ${reason}`);
    }
    return interpreter;
  }

  private async doStart(): Promise<void> {
    this.settings = this.source.read();
    if (!this.settings.enable) {
      this.log.info('gradguard.enable is false: the server is not started');
      this.status.setState({ kind: 'disabled' });
      return;
    }
    const interpreter = await this.resolve();
    this.interpreter = interpreter;
    this.status.setState({ kind: 'starting', interpreter: interpreter.command });
    this.log.info(`Interpreter: ${interpreter.command} (from ${interpreter.source})`);
    // Not a workspace folder: `python -m` puts the current folder first on sys.path.
    const cwd = this.context.extensionUri.fsPath;
    const launch = this.launch();
    this.log.info(`Running ${launch.describe} (gradguard.importStrategy: ${this.settings.importStrategy})`);
    const check = await checkInterpreter(interpreter.command, launch.checkArgs, { cwd });
    if (check.kind !== 'ok') {
      this.reportCheck(interpreter, check, launch);
      return;
    }
    this.log.info(`GradGuard ${check.version} found in ${interpreter.command}`);
    const client = this.createClient(interpreter, cwd, launch);
    this.client = client;
    client.onDidChangeState((event) => {
      if (this.client !== client) {
        return;
      }
      if (event.newState === State.Running) {
        this.status.setState({ kind: 'running', interpreter: interpreter.command, version: check.version });
        this.clientChanged.fire(client);
      } else if (event.newState === State.Starting) {
        this.status.setState({ kind: 'starting', interpreter: interpreter.command });
      } else if (this.status.current.kind === 'running' || this.status.current.kind === 'starting') {
        this.status.setState({ kind: 'stopped' });
        this.clientChanged.fire(undefined);
      }
    });
    try {
      await client.start();
    } catch (error) {
      if (this.status.current.kind !== 'gave-up') {
        const reason = error instanceof Error ? error.message : String(error);
        this.status.setState({ kind: 'failed', reason });
        this.log.error(`The server did not start: ${reason}`);
        void this.offerOutput(`GradGuard: the server did not start (${reason}).`);
      }
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.clientChanged.fire(undefined);
    if (client === undefined) {
      return;
    }
    try {
      if (client.needsStop()) {
        await client.stop(3000);
      }
    } catch (error) {
      this.log.warn(`Stopping the server: ${String(error)}`);
    }
    await client.dispose(1000).catch(() => undefined);
    if (this.status.current.kind !== 'disabled') {
      this.status.setState({ kind: 'stopped' });
    }
  }

  private launch(): Launch {
    const extensionPath = this.context.extensionUri.fsPath;
    return launchFor(this.settings.importStrategy, extensionPath, fs.existsSync(bundledLauncher(extensionPath)));
  }

  private createClient(interpreter: Interpreter, cwd: string, launch: Launch): LanguageClient {
    const serverOptions: ServerOptions = {
      command: interpreter.command,
      args: [...launch.serverArgs],
      options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
        // Notebook cells (synced as notebooks, per the server's notebookDocumentSync): so
        // that VS Code pulls their diagnostics and asks them for code actions.
        { notebook: '*', language: 'python' },
      ],
      outputChannel: this.log,
      traceOutputChannel: this.traceChannel,
      initializationOptions: () => initializationOptions(this.source.read(), vscode.workspace.isTrusted),
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (answers instanceof ResponseError || !Array.isArray(answers)) {
              return answers;
            }
            return mapConfigurationAnswer(params.items, answers, vscode.workspace.isTrusted);
          },
        },
      },
      errorHandler: {
        error: (_error, _message, count) =>
          (count ?? 0) <= 3 ? { action: ErrorAction.Continue } : { action: ErrorAction.Shutdown },
        closed: () => {
          const verdict = this.policy.crashed();
          if (verdict.restart) {
            this.log.warn(`The server stopped unexpectedly (${verdict.crashes} in the last ` +
              `${this.policy.windowMs / 60_000} minutes): restarting it`);
            return { action: CloseAction.Restart, handled: true };
          }
          this.status.setState({ kind: 'gave-up', crashes: verdict.crashes });
          const message = `GradGuard: the server stopped unexpectedly ${verdict.crashes} times in ` +
            `${this.policy.windowMs / 60_000} minutes and will not be restarted.`;
          this.log.error(message);
          void vscode.window
            .showErrorMessage(message, 'Show output', 'Restart server')
            .then((choice) => {
              if (choice === 'Show output') {
                this.log.show();
              } else if (choice === 'Restart server') {
                void this.restart('asked for after the server gave up');
              }
            });
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    return new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
  }

  private reportCheck(
    interpreter: Interpreter,
    check: Exclude<CheckResult, { kind: 'ok' }>,
    launch: Launch,
  ): void {
    this.log.error(`Cannot start the server with ${interpreter.command}: ${check.detail}`);
    if (check.kind === 'no-gradguard' && launch.strategy === 'useBundled') {
      // The bundle runs, but not on this interpreter (a Python version it has no build for).
      this.status.setState({ kind: 'failed', reason: `${interpreter.command}: ${check.detail}` });
      void this.offerOutput(
        `GradGuard: the bundled server cannot run on ${interpreter.command} (${check.detail}). ` +
          'Choose another interpreter, or install GradGuard into this one and set ' +
          'gradguard.importStrategy to fromEnvironment.',
      );
      return;
    }
    if (check.kind === 'no-gradguard') {
      this.status.setState({ kind: 'not-installed', interpreter: interpreter.command });
      void this.offerInstall(interpreter, check.detail);
      return;
    }
    const reason = check.kind === 'timeout' ? 'it did not answer' : 'it cannot be run';
    this.status.setState({ kind: 'failed', reason: `${interpreter.command}: ${reason}` });
    void vscode.window
      .showErrorMessage(
        `GradGuard: the Python interpreter ${interpreter.command} (from ${interpreter.source}) ` +
          `${reason}. Set gradguard.interpreter, or select an interpreter in the Python extension.`,
        'Open settings',
        'Show output',
      )
      .then((choice) => {
        if (choice === 'Open settings') {
          void vscode.commands.executeCommand('workbench.action.openSettings', 'gradguard.interpreter');
        } else if (choice === 'Show output') {
          this.log.show();
        }
      });
  }

  private async offerInstall(interpreter: Interpreter, detail: string): Promise<void> {
    const install = installCommand(interpreter.command, this.settings.installSpec, process.platform);
    const choice = await vscode.window.showErrorMessage(
      `GradGuard is not installed in ${interpreter.command} (${detail}). Install it with: ${install.display}`,
      'Install in terminal',
      'Open settings',
      'Show output',
    );
    if (choice === 'Install in terminal') {
      await this.installInTerminal(interpreter, install.display);
    } else if (choice === 'Open settings') {
      void vscode.commands.executeCommand('workbench.action.openSettings', 'gradguard.interpreter');
    } else if (choice === 'Show output') {
      this.log.show();
    }
  }

  private async installInTerminal(interpreter: Interpreter, commandLine: string): Promise<void> {
    const terminal = vscode.window.createTerminal({ name: 'GradGuard: install', cwd: os.homedir() });
    terminal.show();
    this.log.info(`Running in a terminal: ${commandLine}`);
    // With shell integration the end of the command (and its exit code) is seen; without,
    // the interpreter is asked again every few seconds until it has gradguard.
    const integration = await shellIntegrationOf(terminal, 15_000);
    if (integration === undefined) {
      terminal.sendText(commandLine, true);
      this.startWhenInstalled(interpreter, terminal);
      const choice = await vscode.window.showInformationMessage(
        'GradGuard: the server starts when the install in the terminal has finished.',
        'Restart server',
      );
      if (choice === 'Restart server') {
        await this.restart('asked for after the install');
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
        void this.restart('GradGuard was installed');
      } else {
        void vscode.window.showErrorMessage(
          `GradGuard: the install failed (exit code ${event.exitCode ?? 'unknown'}); see the terminal.`,
        );
      }
    });
    this.disposables.push(listener);
  }

  /** Polls `import gradguard` (every 3 s, 10 minutes at most) and starts the server once it works. */
  private startWhenInstalled(interpreter: Interpreter, terminal: vscode.Terminal): void {
    const deadline = Date.now() + 10 * 60_000;
    const cwd = this.context.extensionUri.fsPath;
    const poll = async (): Promise<void> => {
      if (this.status.current.kind !== 'not-installed' || this.interpreter?.command !== interpreter.command) {
        return; // started (or restarted with another interpreter) meanwhile
      }
      const check = await checkInterpreter(interpreter.command, this.launch().checkArgs, { cwd, timeoutMs: 10_000 });
      if (check.kind === 'ok') {
        await this.restart('GradGuard was installed');
      } else if (Date.now() < deadline && terminal.exitStatus === undefined) {
        setTimeout(() => { void poll(); }, 3000);
      }
    };
    setTimeout(() => { void poll(); }, 3000);
  }

  private async offerOutput(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, 'Show output');
    if (choice === 'Show output') {
      void vscode.commands.executeCommand(COMMAND_SHOW_OUTPUT);
    }
  }

  private configurationChanged(event: vscode.ConfigurationChangeEvent): void {
    const python = event.affectsConfiguration('python.defaultInterpreterPath');
    if (!event.affectsConfiguration(SECTION) && !python) {
      return;
    }
    const before = this.settings;
    const after = this.source.read();
    this.log.info('Settings changed');
    if (needsRestart(before, after)) {
      this.settings = after;
      void this.restart('gradguard.enable, gradguard.interpreter or gradguard.importStrategy changed');
      return;
    }
    this.settings = after;
    if (python) {
      void this.restartIfInterpreterChanged('python.defaultInterpreterPath changed');
    }
    this.sendSettings();
  }

  /** Sends the current settings; a server that can pull them asks again with workspace/configuration. */
  private sendSettings(): void {
    const client = this.running;
    if (client === undefined) {
      return;
    }
    void client
      .sendNotification(DidChangeConfigurationNotification.type, {
        settings: didChangeConfigurationSettings(this.settings, vscode.workspace.isTrusted),
      })
      .catch((error: unknown) => { this.log.warn(`didChangeConfiguration: ${String(error)}`); });
  }

  private trustGranted(): void {
    this.log.info('The workspace is now trusted');
    void this.enqueue(async () => {
      const interpreter = await this.resolve();
      if (interpreter.command !== this.interpreter?.command) {
        // An interpreter inside the workspace may now be used.
        this.policy.reset();
        await this.doStop();
        await this.doStart();
        return;
      }
      const client = this.running;
      if (client !== undefined) {
        const params: TrustChangedParams = { trusted: true };
        await client.sendNotification(TRUST_CHANGED_NOTIFICATION, params);
        this.sendSettings();
      }
    });
  }

  private restartIfInterpreterChanged(reason: string): Promise<void> {
    return this.enqueue(async () => {
      if (!this.settings.enable) {
        return;
      }
      const interpreter = await this.resolve();
      if (interpreter.command !== this.interpreter?.command || this.client === undefined) {
        this.log.info(`Restarting the server: ${reason}`);
        this.policy.reset();
        await this.doStop();
        await this.doStart();
      }
    });
  }

  async dispose(): Promise<void> {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
    await this.stop();
  }
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
