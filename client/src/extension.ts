// The extension's entry point: wires the server manager, the commands and the status bar.

import * as vscode from 'vscode';
import { fixAll } from './fixAll';
import { Probe } from './probe';
import { CLIENT_NAME } from './clientOptions';
import { ServerManager } from './server';
import { SettingsSource } from './settingsSource';
import { COMMAND_CANCEL_PROBE, COMMAND_RESTART, COMMAND_SHOW_OUTPUT, StatusBar } from './status';

export const COMMAND_RUN_PROBE = 'gradguard.runProbe';
export const COMMAND_FIX_ALL = 'gradguard.fixAll';

let manager: ServerManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel(CLIENT_NAME, { log: true });
  const status = new StatusBar();
  const source = new SettingsSource(log);
  const server = new ServerManager(context, log, status, source);
  const probe = new Probe(status, log);
  manager = server;
  context.subscriptions.push(
    log,
    status,
    probe,
    vscode.commands.registerCommand(COMMAND_SHOW_OUTPUT, () => { log.show(); }),
    vscode.commands.registerCommand(COMMAND_RESTART, () => server.restart('asked for by the user')),
    vscode.commands.registerCommand(COMMAND_RUN_PROBE, (uri?: vscode.Uri) => probe.run(server.running, uri)),
    vscode.commands.registerCommand(COMMAND_CANCEL_PROBE, () => { probe.cancel(); }),
    vscode.commands.registerCommand(COMMAND_FIX_ALL, (uri?: vscode.Uri) => fixAll(uri, server.running !== undefined)),
  );
  log.info(`GradGuard extension ${String((context.extension.packageJSON as { version?: unknown }).version)} ` +
    `(workspace ${vscode.workspace.isTrusted ? 'trusted' : 'not trusted: the probe is off'})`);
  void server.start();
}

export async function deactivate(): Promise<void> {
  const server = manager;
  manager = undefined;
  await server?.dispose();
}
