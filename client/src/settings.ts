// The extension's settings, and what of them the server is sent. Pure: no `vscode` import,
// so that `node --test` checks it without an editor.
//
// The server is sent only the keys it analyses with (see docs/vscode.md, "What the
// server is sent"): the same object at `initialize` (as `initializationOptions`, plus
// `trusted`), in `workspace/didChangeConfiguration` (as `{gradguard: ...}`) and as the
// answer to its `workspace/configuration` requests for the `gradguard` section.
// Client-only keys (enable, interpreter, importStrategy, installSpec, trace) never reach it.

// Every key's default, choices and range come from the settings schema
// (server/gradguard/settings_schema.py), through the generated settingsSchema.ts.

import * as schema from './settingsSchema';

export const SECTION = 'gradguard';

export const RULE_CODES = schema.RULE_CODES;

export const SEVERITIES = schema.SEVERITIES;
export type Severity = (typeof SEVERITIES)[number];

export type Trace = (typeof schema.TRACE_SERVER_CHOICES)[number];

/** Which GradGuard runs: the copy inside the .vsix, or the one installed in the interpreter. */
export type ImportStrategy = (typeof schema.IMPORT_STRATEGY_CHOICES)[number];
export const IMPORT_STRATEGIES: readonly ImportStrategy[] = schema.IMPORT_STRATEGY_CHOICES;

/** Whose diagnostics the server computes: the open files' (Pylance's default), or every
 * Python file of the workspace (answered to `workspace/diagnostic`, shown in Problems). */
export type DiagnosticMode = (typeof schema.DIAGNOSTIC_MODE_CHOICES)[number];
export const DIAGNOSTIC_MODES: readonly DiagnosticMode[] = schema.DIAGNOSTIC_MODE_CHOICES;

export interface ProbeSettings {
  /** Run the probe on a file each time it is saved (trusted workspaces only). */
  readonly onSave: boolean;
  /** Seconds a probe run may take before the server stops it. */
  readonly timeout: number;
}

export interface GradGuardSettings {
  readonly enable: boolean;
  readonly select: readonly string[];
  readonly ignore: readonly string[];
  readonly severity: Readonly<Record<string, Severity>>;
  readonly exclude: readonly string[];
  /** Also report findings that hold only if a tensor of unknown origin requires grad. */
  readonly uncertain: boolean;
  readonly diagnosticMode: DiagnosticMode;
  readonly interpreter: string;
  readonly importStrategy: ImportStrategy;
  readonly installSpec: string;
  readonly probe: ProbeSettings;
  readonly trace: Trace;
}

/** What the server is sent (the `gradguard` section as the server reads it). */
export interface ServerSettings {
  /** Absent: every rule (or what pyproject.toml's [tool.gradguard] selects). */
  select?: string[];
  ignore: string[];
  severity: Record<string, Severity>;
  exclude: string[];
  /** Sent only when true: false leaves pyproject.toml's `uncertain` in force. */
  uncertain?: true;
  /** Sent only when `workspace` (the server's default is `openFilesOnly`). */
  diagnosticMode?: 'workspace';
  probe: { onSave: boolean; timeout: number };
}

export interface InitializationOptions extends ServerSettings {
  /** Whether the workspace is trusted; later changes come as `gradguard/trustChanged`. */
  trusted: boolean;
}

export const TRUST_CHANGED_NOTIFICATION = 'gradguard/trustChanged';
export interface TrustChangedParams {
  trusted: boolean;
}

export const DEFAULT_PROBE_TIMEOUT = schema.DEFAULT_PROBE_TIMEOUT;
export const MIN_PROBE_TIMEOUT = schema.MIN_PROBE_TIMEOUT;
export const MAX_PROBE_TIMEOUT = schema.MAX_PROBE_TIMEOUT;

export const DEFAULTS: GradGuardSettings = {
  enable: schema.DEFAULT_ENABLE,
  select: schema.DEFAULT_SELECT,
  ignore: schema.DEFAULT_IGNORE,
  severity: schema.DEFAULT_SEVERITY,
  exclude: schema.DEFAULT_EXCLUDE,
  uncertain: schema.DEFAULT_UNCERTAIN,
  diagnosticMode: schema.DEFAULT_DIAGNOSTIC_MODE,
  interpreter: schema.DEFAULT_INTERPRETER,
  importStrategy: schema.DEFAULT_IMPORT_STRATEGY,
  installSpec: schema.DEFAULT_INSTALL_SPEC,
  probe: { onSave: schema.DEFAULT_PROBE_ON_SAVE, timeout: DEFAULT_PROBE_TIMEOUT },
  trace: schema.DEFAULT_TRACE_SERVER,
};

/** Reads one setting by its key relative to the `gradguard` section ("probe.onSave"). */
export type SettingReader = (key: string) => unknown;

/** A reader over a plain object, as a `workspace/configuration` answer gives it. */
export function objectReader(raw: unknown): SettingReader {
  return (key) => {
    let value: unknown = raw;
    for (const part of key.split('.')) {
      if (value === null || typeof value !== 'object') {
        return undefined;
      }
      value = (value as Record<string, unknown>)[part];
    }
    return value;
  };
}

/**
 * The settings, checked: a value of the wrong type falls back to its default and is named
 * in `problems`, so one typo in settings.json does not switch the extension off.
 */
export function readSettings(
  get: SettingReader,
  problems: string[] = [],
): GradGuardSettings {
  const bool = (key: string, fallback: boolean): boolean => {
    const value = get(key);
    if (value === undefined || value === null) {
      return fallback;
    }
    if (typeof value === 'boolean') {
      return value;
    }
    problems.push(`gradguard.${key} must be true or false`);
    return fallback;
  };
  const text = (key: string, fallback: string): string => {
    const value = get(key);
    if (value === undefined || value === null) {
      return fallback;
    }
    if (typeof value === 'string') {
      return value.trim();
    }
    problems.push(`gradguard.${key} must be a string`);
    return fallback;
  };
  const codes = (key: string): string[] => {
    const value = get(key);
    if (value === undefined || value === null) {
      return [];
    }
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
      problems.push(`gradguard.${key} must be a list of rule codes such as "GG001"`);
      return [];
    }
    return normalizeCodes(value);
  };
  const globs = (key: string): string[] => {
    const value = get(key);
    if (value === undefined || value === null) {
      return [];
    }
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
      problems.push(`gradguard.${key} must be a list of globs`);
      return [];
    }
    return value.map((glob) => glob.trim()).filter((glob) => glob !== '');
  };
  const trace = get('trace.server');
  const traces: readonly unknown[] = schema.TRACE_SERVER_CHOICES;
  return {
    enable: bool('enable', DEFAULTS.enable),
    select: codes('select'),
    ignore: codes('ignore'),
    severity: readSeverity(get('severity'), problems),
    exclude: globs('exclude'),
    uncertain: bool('uncertain', DEFAULTS.uncertain),
    diagnosticMode: readDiagnosticMode(get('diagnosticMode'), problems),
    interpreter: text('interpreter', DEFAULTS.interpreter),
    importStrategy: readImportStrategy(get('importStrategy'), problems),
    installSpec: text('installSpec', DEFAULTS.installSpec) || DEFAULTS.installSpec,
    probe: {
      onSave: bool('probe.onSave', DEFAULTS.probe.onSave),
      timeout: readTimeout(get('probe.timeout'), problems),
    },
    trace: traces.includes(trace) ? (trace as Trace) : DEFAULTS.trace,
  };
}

function readImportStrategy(value: unknown, problems: string[]): ImportStrategy {
  if (value === undefined || value === null) {
    return DEFAULTS.importStrategy;
  }
  if ((IMPORT_STRATEGIES as readonly unknown[]).includes(value)) {
    return value as ImportStrategy;
  }
  problems.push(`gradguard.importStrategy must be one of ${IMPORT_STRATEGIES.join(', ')}`);
  return DEFAULTS.importStrategy;
}

function readDiagnosticMode(value: unknown, problems: string[]): DiagnosticMode {
  if (value === undefined || value === null) {
    return DEFAULTS.diagnosticMode;
  }
  if ((DIAGNOSTIC_MODES as readonly unknown[]).includes(value)) {
    return value as DiagnosticMode;
  }
  problems.push(`gradguard.diagnosticMode must be one of ${DIAGNOSTIC_MODES.join(', ')}`);
  return DEFAULTS.diagnosticMode;
}

/** Upper-cased, trimmed, without blanks or repeats, in the order given. */
export function normalizeCodes(values: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const value of values) {
    const code = value.trim().toUpperCase();
    if (code !== '') {
      seen.add(code);
    }
  }
  return [...seen];
}

function readSeverity(value: unknown, problems: string[]): Record<string, Severity> {
  if (value === undefined || value === null) {
    return {};
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push('gradguard.severity must map rule codes to error, warning, information or hint');
    return {};
  }
  const chosen: Record<string, Severity> = {};
  for (const [rawCode, rawLevel] of Object.entries(value as Record<string, unknown>)) {
    const code = rawCode.trim().toUpperCase();
    const level = typeof rawLevel === 'string' ? rawLevel.trim().toLowerCase() : rawLevel;
    if (level === 'info') {
      chosen[code] = 'information';
    } else if (typeof level === 'string' && (SEVERITIES as readonly string[]).includes(level)) {
      chosen[code] = level as Severity;
    } else {
      problems.push(
        `gradguard.severity.${rawCode}: ${JSON.stringify(rawLevel)} is not one of ${SEVERITIES.join(', ')}`,
      );
    }
  }
  return chosen;
}

function readTimeout(value: unknown, problems: string[]): number {
  if (value === undefined || value === null) {
    return DEFAULT_PROBE_TIMEOUT;
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value < MIN_PROBE_TIMEOUT) {
    problems.push(
      `gradguard.probe.timeout must be a number of seconds from ${MIN_PROBE_TIMEOUT} to ${MAX_PROBE_TIMEOUT}`,
    );
    return DEFAULT_PROBE_TIMEOUT;
  }
  return Math.min(value, MAX_PROBE_TIMEOUT);
}

/**
 * The server's part of the settings. In an untrusted workspace `probe.onSave` is sent as
 * false whatever the setting says: the probe runs the workspace's code.
 */
export function toServerSettings(settings: GradGuardSettings, trusted: boolean): ServerSettings {
  const server: ServerSettings = {
    ignore: [...settings.ignore],
    severity: { ...settings.severity },
    exclude: [...settings.exclude],
    probe: { onSave: settings.probe.onSave && trusted, timeout: settings.probe.timeout },
  };
  if (settings.select.length > 0) {
    server.select = [...settings.select];
  }
  if (settings.uncertain) {
    server.uncertain = true;
  }
  if (settings.diagnosticMode === 'workspace') {
    server.diagnosticMode = 'workspace';
  }
  return server;
}

export function initializationOptions(
  settings: GradGuardSettings,
  trusted: boolean,
): InitializationOptions {
  return { ...toServerSettings(settings, trusted), trusted };
}

/** The `settings` of a `workspace/didChangeConfiguration` notification. */
export function didChangeConfigurationSettings(
  settings: GradGuardSettings,
  trusted: boolean,
): { [SECTION]: ServerSettings } {
  return { [SECTION]: toServerSettings(settings, trusted) };
}

/**
 * Rewrites the editor's answer to the server's `workspace/configuration` request: each
 * item asking for the whole `gradguard` section gets the server's part of it; other items
 * are left as the editor answered them.
 */
export function mapConfigurationAnswer(
  items: readonly { section?: string | undefined }[],
  answers: readonly unknown[],
  trusted: boolean,
): unknown[] {
  return answers.map((answer, index) => {
    const section = items[index]?.section;
    if (section === SECTION) {
      return toServerSettings(readSettings(objectReader(answer)), trusted);
    }
    return answer;
  });
}

/**
 * Whether going from `before` to `after` needs a new server process (not just new settings).
 * The server says at `initialize` whether it answers `workspace/diagnostic`, so a new
 * `diagnosticMode` takes a new one.
 */
export function needsRestart(before: GradGuardSettings, after: GradGuardSettings): boolean {
  return before.enable !== after.enable || before.interpreter !== after.interpreter ||
    before.importStrategy !== after.importStrategy || before.diagnosticMode !== after.diagnosticMode;
}
