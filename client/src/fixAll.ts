// "GradGuard: Fix all in-place hazards": applies the server's `source.fixAll.gradguard`
// code action to the active file (the same action `editor.codeActionsOnSave` can run).

import * as vscode from 'vscode';

export const FIX_ALL_KIND = vscode.CodeActionKind.SourceFixAll.append('gradguard');

export async function fixAll(target: vscode.Uri | undefined, serverRunning: boolean): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const document = target instanceof vscode.Uri ? await vscode.workspace.openTextDocument(target) : editor?.document;
  if (document?.languageId !== 'python') {
    void vscode.window.showWarningMessage('GradGuard: open a Python file to fix.');
    return;
  }
  if (!serverRunning) {
    void vscode.window.showWarningMessage('GradGuard: the server is not running, so there is nothing to fix with.');
    return;
  }
  const whole = new vscode.Range(0, 0, document.lineCount, 0);
  const actions =
    (await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[] | undefined>(
      'vscode.executeCodeActionProvider',
      document.uri,
      whole,
      FIX_ALL_KIND.value,
    )) ?? [];
  const action = actions.find((item): item is vscode.CodeAction => {
    const kind = (item as Partial<vscode.CodeAction>).kind;
    return kind !== undefined && FIX_ALL_KIND.contains(kind);
  });
  if (action === undefined) {
    void vscode.window.showInformationMessage('GradGuard: no in-place hazard with a safe fix in this file.');
    return;
  }
  if (action.edit !== undefined && !(await vscode.workspace.applyEdit(action.edit))) {
    void vscode.window.showErrorMessage('GradGuard: the fixes could not be applied (the file changed meanwhile?).');
    return;
  }
  if (action.command !== undefined) {
    await vscode.commands.executeCommand(action.command.command, ...((action.command.arguments ?? []) as unknown[]));
  }
}
