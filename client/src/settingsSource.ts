// The extension's settings as VS Code holds them, read and checked by settings.ts.

import * as vscode from 'vscode';
import { readSettings, SECTION, type GradGuardSettings } from './settings';

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
