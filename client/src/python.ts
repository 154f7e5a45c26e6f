// The interpreter the Python extension (ms-python.python) selected, through its public
// `environments` API. The few types used are declared here rather than pulled from a
// package: the extension may be absent, and only these members are relied on.

import * as vscode from 'vscode';

const PYTHON_EXTENSION_ID = 'ms-python.python';

interface EnvironmentPath {
  readonly id: string;
  readonly path: string;
}

interface ResolvedEnvironment {
  readonly executable: { readonly uri?: vscode.Uri | undefined };
}

interface EnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
  resolveEnvironment(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
  readonly onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

interface PythonExtensionApi {
  readonly environments?: EnvironmentsApi;
}

const ACTIVATION_TIMEOUT_MS = 15_000;

async function environments(log: vscode.LogOutputChannel): Promise<EnvironmentsApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  try {
    const api = extension.isActive
      ? extension.exports
      : await Promise.race([
          extension.activate(),
          new Promise<undefined>((resolve) => setTimeout(() => { resolve(undefined); }, ACTIVATION_TIMEOUT_MS)),
        ]);
    return api?.environments;
  } catch (error) {
    log.warn(`The Python extension did not activate: ${String(error)}`);
    return undefined;
  }
}

/** The selected environment's executable for `resource`'s workspace, if the extension tells. */
export async function pythonExtensionInterpreter(
  resource: vscode.Uri | undefined,
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  const api = await environments(log);
  if (api === undefined) {
    return undefined;
  }
  try {
    const active = api.getActiveEnvironmentPath(resource);
    const resolved = await api.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath ?? (active.path || undefined);
  } catch (error) {
    log.warn(`The Python extension did not say which interpreter is selected: ${String(error)}`);
    return undefined;
  }
}

/** Calls `listener` when the user selects another interpreter in the Python extension. */
export async function onPythonInterpreterChanged(
  listener: () => void,
  log: vscode.LogOutputChannel,
): Promise<vscode.Disposable | undefined> {
  const api = await environments(log);
  return api?.onDidChangeActiveEnvironmentPath(() => { listener(); });
}

export function hasPythonExtension(): boolean {
  return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}
