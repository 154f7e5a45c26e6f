// How the language client is set up: the server's command line, the documents it is
// given, the settings it is sent, and what happens when the server crashes.

import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  ResponseError,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import type { Interpreter } from './interpreter';
import type { Launch } from './launch';
import { SHOW_OUTPUT, showError } from './messages';
import { RestartPolicy } from './restartPolicy';
import { initializationOptions, mapConfigurationAnswer } from './settings';
import type { SettingsSource } from './settingsSource';
import type { StatusBar } from './status';

export const CLIENT_ID = 'gradguard';
export const CLIENT_NAME = 'GradGuard';

export interface ClientParts {
  readonly log: vscode.LogOutputChannel;
  readonly traceChannel: vscode.LogOutputChannel;
  readonly status: StatusBar;
  readonly source: SettingsSource;
  readonly policy: RestartPolicy;
  /** Restarts the server when the user asks for it after the client gave up. */
  readonly restart: (reason: string) => void;
}

export function createClient(interpreter: Interpreter, cwd: string, launch: Launch, parts: ClientParts): LanguageClient {
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
    outputChannel: parts.log,
    traceOutputChannel: parts.traceChannel,
    initializationOptions: () => initializationOptions(parts.source.read(), vscode.workspace.isTrusted),
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
      closed: () => serverClosed(parts),
    },
  };
  return new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
}

/** The crash policy: restart a crashed server, unless it crashed too often lately. */
function serverClosed(parts: ClientParts): { action: CloseAction; handled: boolean } {
  const { log, policy, status } = parts;
  const verdict = policy.crashed();
  const minutes = policy.windowMs / 60_000;
  if (verdict.restart) {
    log.warn(`The server stopped unexpectedly (${verdict.crashes} in the last ${minutes} minutes): restarting it`);
    return { action: CloseAction.Restart, handled: true };
  }
  status.setState({ kind: 'gave-up', crashes: verdict.crashes });
  const message = `GradGuard: the server stopped unexpectedly ${verdict.crashes} times in ` +
    `${minutes} minutes and will not be restarted.`;
  log.error(message);
  void showError(message, SHOW_OUTPUT, {
    title: 'Restart server',
    run: () => { parts.restart('asked for after the server gave up'); },
  });
  return { action: CloseAction.DoNotRestart, handled: true };
}
