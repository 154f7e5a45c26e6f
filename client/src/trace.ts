// `gradguard.trace.server` for vscode-languageclient 10+, which traces only while its trace
// channel's log level is Trace: this channel says Trace while the setting is not "off", and
// writes each traced message into the GradGuard output channel.

import * as vscode from 'vscode';
import { SECTION } from './settings';

export class TraceChannel implements vscode.LogOutputChannel {
  private readonly changed = new vscode.EventEmitter<vscode.LogLevel>();
  private readonly listener: vscode.Disposable;
  private level: vscode.LogLevel;
  readonly onDidChangeLogLevel = this.changed.event;

  constructor(private readonly target: vscode.LogOutputChannel) {
    this.level = TraceChannel.configured();
    this.listener = vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(`${SECTION}.trace.server`)) {
        const level = TraceChannel.configured();
        if (level !== this.level) {
          this.level = level;
          this.changed.fire(level);
        }
      }
    });
  }

  private static configured(): vscode.LogLevel {
    const value = vscode.workspace.getConfiguration(SECTION).get<string>('trace.server', 'off');
    return value === 'messages' || value === 'verbose' ? vscode.LogLevel.Trace : vscode.LogLevel.Off;
  }

  get name(): string {
    return this.target.name;
  }

  get logLevel(): vscode.LogLevel {
    return this.level;
  }

  trace(message: string, ...args: unknown[]): void {
    this.target.info(message, ...args);
  }

  debug(message: string, ...args: unknown[]): void {
    this.target.debug(message, ...args);
  }

  info(message: string, ...args: unknown[]): void {
    this.target.info(message, ...args);
  }

  warn(message: string, ...args: unknown[]): void {
    this.target.warn(message, ...args);
  }

  error(error: string | Error, ...args: unknown[]): void {
    this.target.error(error, ...args);
  }

  append(value: string): void {
    this.target.append(value);
  }

  appendLine(value: string): void {
    this.target.appendLine(value);
  }

  replace(value: string): void {
    this.target.replace(value);
  }

  clear(): void {
    this.target.clear();
  }

  show(columnOrPreserveFocus?: vscode.ViewColumn | boolean, preserveFocus?: boolean): void {
    // The column form is deprecated and ignored by VS Code: only the focus flag counts.
    this.target.show(typeof columnOrPreserveFocus === 'boolean' ? columnOrPreserveFocus : preserveFocus);
  }

  hide(): void {
    this.target.hide();
  }

  dispose(): void {
    this.listener.dispose();
    this.changed.dispose();
  }
}
