// "GradGuard: Run autograd probe on this file": asks the server to run the file's code
// under torch (`workspace/executeCommand` `gradguard.probe` with the document URI), shows
// its work-done progress in a notification and in the status bar, and cancels it on request.

import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  WorkDoneProgress,
  type ExecuteCommandParams,
  type LanguageClient,
} from 'vscode-languageclient/node';
import { probeSummary } from './summaries';
import type { StatusBar } from './status';

export const PROBE_COMMAND = 'gradguard.probe';

export const UNTRUSTED_PROBE_MESSAGE =
  'GradGuard: the autograd probe runs this workspace\'s code, so it is off in Restricted Mode. ' +
  'Trust the workspace to run it; diagnostics and fixes work without it.';

export class Probe implements vscode.Disposable {
  private running: vscode.CancellationTokenSource | undefined;
  private counter = 0;

  constructor(
    private readonly status: StatusBar,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  cancel(): void {
    if (this.running !== undefined) {
      this.log.info('Probe cancelled');
      this.running.cancel();
    }
  }

  async run(client: LanguageClient | undefined, target: vscode.Uri | undefined): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      const choice = await vscode.window.showWarningMessage(UNTRUSTED_PROBE_MESSAGE, 'Manage Workspace Trust');
      if (choice === 'Manage Workspace Trust') {
        void vscode.commands.executeCommand('workbench.trust.manage');
      }
      return;
    }
    const document = await documentFor(target);
    if (document === undefined) {
      void vscode.window.showWarningMessage('GradGuard: open a Python file to run the probe on.');
      return;
    }
    if (client === undefined) {
      void vscode.window.showWarningMessage('GradGuard: the server is not running; the probe needs it.');
      return;
    }
    const commands = client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    if (!commands.includes(PROBE_COMMAND)) {
      void vscode.window.showWarningMessage(
        'GradGuard: this version of the server has no autograd probe (it does not offer gradguard.probe).',
      );
      return;
    }
    if (this.running !== undefined) {
      void vscode.window.showInformationMessage('GradGuard: a probe is already running (click the status bar item to cancel it).');
      return;
    }
    if (document.isDirty) {
      // The probe runs the file as it is on disk.
      await document.save();
    }
    const source = new vscode.CancellationTokenSource();
    this.running = source;
    const token = `gradguard-probe-${process.pid}-${++this.counter}`;
    const name = vscode.workspace.asRelativePath(document.uri);
    this.status.probeStarted(name);
    void vscode.commands.executeCommand('setContext', 'gradguard.probeRunning', true);
    try {
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `GradGuard probe: ${name}`, cancellable: true },
        async (progress, cancelled) => {
          cancelled.onCancellationRequested(() => { source.cancel(); });
          const subscription = client.onProgress(WorkDoneProgress.type, token, (value) => {
            if (value.kind !== 'end' && value.message !== undefined) {
              progress.report({ message: value.message });
              this.status.probeProgress(value.message);
            }
          });
          try {
            const params: ExecuteCommandParams = {
              command: PROBE_COMMAND,
              arguments: [document.uri.toString()],
              workDoneToken: token,
            };
            const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, params, source.token);
            if (source.token.isCancellationRequested) {
              return;
            }
            const summary = probeSummary(result);
            this.log.info(`Probe of ${name}: ${summary}`);
            void vscode.window.showInformationMessage(`GradGuard probe of ${name}: ${summary}`);
          } finally {
            subscription.dispose();
          }
        },
      );
    } catch (error) {
      if (!source.token.isCancellationRequested) {
        const message = error instanceof Error ? error.message : String(error);
        this.log.error(`Probe of ${name} failed: ${message}`);
        void vscode.window.showErrorMessage(`GradGuard probe of ${name} failed: ${message}`);
      }
    } finally {
      source.dispose();
      this.running = undefined;
      this.status.probeEnded();
      void vscode.commands.executeCommand('setContext', 'gradguard.probeRunning', false);
    }
  }

  dispose(): void {
    this.running?.cancel();
  }
}

async function documentFor(target: vscode.Uri | undefined): Promise<vscode.TextDocument | undefined> {
  if (target instanceof vscode.Uri) {
    return vscode.workspace.openTextDocument(target);
  }
  const document = vscode.window.activeTextEditor?.document;
  return document?.languageId === 'python' ? document : undefined;
}
