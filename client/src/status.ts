// The status bar item: the server's state, and a running probe (click to cancel it).

import * as vscode from 'vscode';

export type ServerState =
  | { readonly kind: 'starting'; readonly interpreter: string }
  | { readonly kind: 'running'; readonly interpreter: string; readonly version: string }
  | { readonly kind: 'disabled' }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'not-installed'; readonly interpreter: string }
  | { readonly kind: 'failed'; readonly reason: string }
  | { readonly kind: 'gave-up'; readonly crashes: number };

export const COMMAND_SHOW_OUTPUT = 'gradguard.showOutput';
export const COMMAND_CANCEL_PROBE = 'gradguard.cancelProbe';
export const COMMAND_RESTART = 'gradguard.restart';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private state: ServerState = { kind: 'stopped' };
  private probe: { file: string; message: string } | undefined;

  constructor() {
    this.item = vscode.window.createStatusBarItem('gradguard.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'GradGuard';
    this.render();
    this.item.show();
  }

  setState(state: ServerState): void {
    this.state = state;
    this.render();
  }

  get current(): ServerState {
    return this.state;
  }

  probeStarted(file: string): void {
    this.probe = { file, message: 'starting' };
    this.render();
  }

  probeProgress(message: string): void {
    if (this.probe !== undefined) {
      this.probe.message = message;
      this.render();
    }
  }

  probeEnded(): void {
    this.probe = undefined;
    this.render();
  }

  private render(): void {
    const item = this.item;
    item.backgroundColor = undefined;
    if (this.probe !== undefined) {
      item.text = '$(loading~spin) GradGuard: probing';
      item.tooltip = `Autograd probe running on ${this.probe.file}: ${this.probe.message}\nClick to cancel.`;
      item.command = { title: 'Cancel probe', command: COMMAND_CANCEL_PROBE };
      return;
    }
    item.command = { title: 'Show output', command: COMMAND_SHOW_OUTPUT };
    const state = this.state;
    switch (state.kind) {
      case 'starting':
        item.text = '$(sync~spin) GradGuard';
        item.tooltip = `GradGuard: starting the server with ${state.interpreter}`;
        break;
      case 'running':
        item.text = '$(check) GradGuard';
        item.tooltip = `GradGuard ${state.version}: server running (${state.interpreter})`;
        break;
      case 'disabled':
        item.text = '$(circle-slash) GradGuard';
        item.tooltip = 'GradGuard is disabled (gradguard.enable)';
        break;
      case 'stopped':
        item.text = '$(debug-stop) GradGuard';
        item.tooltip = 'GradGuard: server stopped';
        break;
      case 'not-installed':
        item.text = '$(warning) GradGuard';
        item.tooltip = `GradGuard is not installed in ${state.interpreter}`;
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        break;
      case 'failed':
        item.text = '$(error) GradGuard';
        item.tooltip = `GradGuard: the server could not start: ${state.reason}`;
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        break;
      case 'gave-up':
        item.text = '$(error) GradGuard';
        item.tooltip = `GradGuard: the server crashed ${state.crashes} times and was not restarted. Run "GradGuard: Restart server".`;
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        item.command = { title: 'Restart server', command: COMMAND_RESTART };
        break;
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}
