// Starts, restarts and stops the language server, one operation at a time, and follows
// the settings, the interpreter and workspace trust. How the client is set up and what a
// crash does: clientOptions.ts; a server that cannot start: install.ts.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { DidChangeConfigurationNotification, LanguageClient, State } from 'vscode-languageclient/node';
import { checkInterpreter } from './check';
import { createClient } from './clientOptions';
import { reportCheck, type InstallParts } from './install';
import { resolveInterpreter, type Interpreter, type Resolution } from './interpreter';
import { bundleManifest, launchFor, type Launch } from './launch';
import { SHOW_OUTPUT, showError } from './messages';
import { onPythonInterpreterChanged, pythonExtensionInterpreter } from './python';
import { RestartPolicy } from './restartPolicy';
import {
  didChangeConfigurationSettings,
  needsRestart,
  SECTION,
  TRUST_CHANGED_NOTIFICATION,
  type GradGuardSettings,
  type TrustChangedParams,
} from './settings';
import type { SettingsSource } from './settingsSource';
import type { StatusBar } from './status';
import { TraceChannel } from './trace';

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private interpreter: Interpreter | undefined;
  /** What `resolve` chose when the server was last started (before any alternative). */
  private resolved: string | undefined;
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
    return this.enqueue(() => this.doRestart(reason));
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

  /** A restart the user (or a change they made) asked for: past crashes are forgotten. */
  private async doRestart(reason: string): Promise<void> {
    this.log.info(`Restarting the server: ${reason}`);
    this.policy.reset();
    await this.doStop();
    await this.doStart();
  }

  private folders(): readonly vscode.WorkspaceFolder[] {
    return vscode.workspace.workspaceFolders ?? [];
  }

  private async resolve(): Promise<Resolution> {
    const folders = this.folders();
    const resource = folders[0]?.uri ?? vscode.window.activeTextEditor?.document.uri;
    const pythonExtension = await pythonExtensionInterpreter(resource, this.log);
    const defaultInterpreterPath = vscode.workspace
      .getConfiguration('python', resource)
      .get<string>('defaultInterpreterPath');
    const resolution = resolveInterpreter({
      setting: this.settings.interpreter,
      pythonExtension,
      defaultInterpreterPath,
      workspaceFolders: folders.filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
      trusted: vscode.workspace.isTrusted,
      platform: process.platform,
      env: process.env,
      home: os.homedir(),
      isDirectory: (file) => fs.statSync(file, { throwIfNoEntry: false })?.isDirectory() === true,
      exists: (file) => fs.existsSync(file),
    });
    for (const reason of resolution.skipped) {
      this.log.warn(`Interpreter skipped: ${reason}`);
    }
    return resolution;
  }

  /** Not a workspace folder: `python -m` puts the current folder first on sys.path. */
  private get cwd(): string {
    return this.context.extensionUri.fsPath;
  }

  private async doStart(): Promise<void> {
    this.settings = this.source.read();
    if (!this.settings.enable) {
      this.log.info('gradguard.enable is false: the server is not started');
      this.status.setState({ kind: 'disabled' });
      return;
    }
    const resolution = await this.resolve();
    this.resolved = resolution.interpreter.command;
    let interpreter = resolution.interpreter;
    this.interpreter = interpreter;
    this.status.setState({ kind: 'starting', interpreter: interpreter.command });
    this.log.info(`Interpreter: ${interpreter.command} (from ${interpreter.source})`);
    const launch = this.launch();
    this.log.info(`Running ${launch.describe} (gradguard.importStrategy: ${this.settings.importStrategy})`);
    const options = { cwd: this.cwd, timeoutMs: launch.checkTimeoutMs };
    let check = await checkInterpreter(interpreter.command, launch.checkArgs, options);
    for (const command of resolution.alternatives) {
      if (check.kind !== 'no-interpreter') {
        break;
      }
      this.log.info(`${interpreter.command} cannot be run; trying ${command}`);
      interpreter = { command, source: interpreter.source };
      this.interpreter = interpreter;
      check = await checkInterpreter(command, launch.checkArgs, options);
    }
    if (check.kind !== 'ok') {
      reportCheck(interpreter, check, this.installParts());
      return;
    }
    this.log.info(`GradGuard ${check.version} found in ${interpreter.command}`);
    const client = createClient(interpreter, this.cwd, launch, {
      log: this.log,
      traceChannel: this.traceChannel,
      status: this.status,
      source: this.source,
      policy: this.policy,
      restart: (reason) => { void this.restart(reason); },
    });
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
        void showError(`GradGuard: the server did not start (${reason}).`, SHOW_OUTPUT);
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
    return launchFor(this.settings.importStrategy, this.cwd, fs.existsSync(bundleManifest(this.cwd)));
  }

  private installParts(): InstallParts {
    return {
      log: this.log,
      status: this.status,
      cwd: this.cwd,
      launch: () => this.launch(),
      interpreter: () => this.interpreter,
      installSpec: () => this.settings.installSpec,
      restart: (reason) => this.restart(reason),
      disposables: this.disposables,
    };
  }

  private configurationChanged(event: vscode.ConfigurationChangeEvent): void {
    const python = event.affectsConfiguration('python.defaultInterpreterPath');
    if (!event.affectsConfiguration(SECTION) && !python) {
      return;
    }
    const before = this.settings;
    const after = this.source.read();
    this.log.info('Settings changed');
    this.settings = after;
    if (needsRestart(before, after)) {
      void this.restart('gradguard.enable, gradguard.interpreter or gradguard.importStrategy changed');
      return;
    }
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
      const { interpreter } = await this.resolve();
      if (interpreter.command !== this.resolved) {
        await this.doRestart('an interpreter inside the workspace may now be used');
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
      const { interpreter } = await this.resolve();
      if (interpreter.command !== this.resolved || this.client === undefined) {
        await this.doRestart(reason);
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
