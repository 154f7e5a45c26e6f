// Error messages with buttons, each button an action: the "Show output" and "Open
// settings" buttons are written here once.

import * as vscode from 'vscode';
import { COMMAND_SHOW_OUTPUT } from './status';

export interface Action {
  readonly title: string;
  run(): void;
}

export const SHOW_OUTPUT: Action = {
  title: 'Show output',
  run: () => { void vscode.commands.executeCommand(COMMAND_SHOW_OUTPUT); },
};

/** Opens the Settings editor at one `gradguard.*` setting. */
export function openSetting(key: string): Action {
  return {
    title: 'Open settings',
    run: () => { void vscode.commands.executeCommand('workbench.action.openSettings', key); },
  };
}

/** Shows an error with the actions' buttons and runs the one chosen, if any. */
export async function showError(message: string, ...actions: readonly Action[]): Promise<void> {
  const choice = await vscode.window.showErrorMessage(message, ...actions.map((action) => action.title));
  actions.find((action) => action.title === choice)?.run();
}
