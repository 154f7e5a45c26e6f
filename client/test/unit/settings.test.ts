import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  DEFAULTS,
  didChangeConfigurationSettings,
  initializationOptions,
  mapConfigurationAnswer,
  needsRestart,
  objectReader,
  readSettings,
  RULE_CODES,
  toServerSettings,
  type GradGuardSettings,
} from '../../src/settings';

const read = (raw: unknown, problems: string[] = []): GradGuardSettings =>
  readSettings(objectReader(raw), problems);

describe('readSettings', () => {
  it('gives the defaults for an empty section', () => {
    const problems: string[] = [];
    assert.deepEqual(read({}, problems), DEFAULTS);
    assert.deepEqual(read(undefined, problems), DEFAULTS);
    assert.deepEqual(problems, []);
  });

  it('reads every key, nested ones included', () => {
    const settings = read({
      enable: false,
      select: [' gg001', 'GG003', 'gg001', ''],
      ignore: ['gg004'],
      severity: { gg002: 'Warning', GG003: 'info' },
      exclude: [' third_party/** ', ''],
      uncertain: true,
      diagnosticMode: 'workspace',
      interpreter: ' /opt/venv/bin/python ',
      importStrategy: 'fromEnvironment',
      installSpec: '/src/gradguard',
      probe: { onSave: true, timeout: 12.5 },
      trace: { server: 'verbose' },
    });
    assert.deepEqual(settings, {
      enable: false,
      select: ['GG001', 'GG003'],
      ignore: ['GG004'],
      severity: { GG002: 'warning', GG003: 'information' },
      exclude: ['third_party/**'],
      uncertain: true,
      diagnosticMode: 'workspace',
      interpreter: '/opt/venv/bin/python',
      importStrategy: 'fromEnvironment',
      installSpec: '/src/gradguard',
      probe: { onSave: true, timeout: 12.5 },
      trace: 'verbose',
    });
  });

  it('falls back to the default of each bad value and names it', () => {
    const problems: string[] = [];
    const settings = read({
      enable: 'yes',
      select: 'GG001',
      ignore: [1],
      severity: { GG001: 'fatal', GG002: 'hint' },
      probe: { onSave: 1, timeout: -3 },
      interpreter: 42,
      importStrategy: 'bundled',
      diagnosticMode: 'everything',
    }, problems);
    assert.equal(settings.enable, true);
    assert.deepEqual(settings.select, []);
    assert.deepEqual(settings.ignore, []);
    assert.deepEqual(settings.severity, { GG002: 'hint' });
    assert.equal(settings.probe.onSave, false);
    assert.equal(settings.probe.timeout, DEFAULTS.probe.timeout);
    assert.equal(settings.interpreter, '');
    assert.equal(settings.importStrategy, 'useBundled');
    assert.equal(settings.diagnosticMode, 'openFilesOnly');
    assert.equal(problems.length, 9, problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('gradguard.severity.GG001')));
  });

  it('caps the probe timeout and keeps an empty installSpec at its default', () => {
    const settings = read({ probe: { timeout: 1e9 }, installSpec: '  ' });
    assert.equal(settings.probe.timeout, 3600);
    assert.equal(settings.installSpec, 'gradguard');
  });
});

describe('what the server is sent', () => {
  const settings = read({
    enable: true,
    select: ['GG001'],
    ignore: ['GG004'],
    severity: { GG001: 'warning' },
    exclude: ['build/**'],
    uncertain: true,
    diagnosticMode: 'workspace',
    interpreter: '/x/python',
    probe: { onSave: true, timeout: 30 },
    trace: { server: 'messages' },
  });

  it('initializationOptions: the server keys and trust, no client-only key', () => {
    assert.deepEqual(initializationOptions(settings, true), {
      select: ['GG001'],
      ignore: ['GG004'],
      severity: { GG001: 'warning' },
      exclude: ['build/**'],
      uncertain: true,
      diagnosticMode: 'workspace',
      probe: { onSave: true, timeout: 30 },
      trusted: true,
    });
  });

  it('turns probe.onSave off in an untrusted workspace', () => {
    assert.deepEqual(initializationOptions(settings, false).probe, { onSave: false, timeout: 30 });
    assert.equal(initializationOptions(settings, false).trusted, false);
  });

  it('leaves select, uncertain and diagnosticMode out when unset (the defaults decide)', () => {
    const server = toServerSettings(DEFAULTS, true);
    assert.equal('select' in server, false);
    assert.equal('uncertain' in server, false);
    assert.equal('diagnosticMode' in server, false);
    assert.deepEqual(server, { ignore: [], severity: {}, exclude: [], probe: { onSave: false, timeout: 60 } });
  });

  it('didChangeConfiguration carries the gradguard section', () => {
    assert.deepEqual(didChangeConfigurationSettings(settings, true), { gradguard: toServerSettings(settings, true) });
  });

  it('rewrites the workspace/configuration answers for the gradguard section only', () => {
    const raw = { enable: true, interpreter: '/x', select: ['gg002'], probe: { onSave: true }, trace: { server: 'off' } };
    const mapped = mapConfigurationAnswer(
      [{ section: 'gradguard' }, { section: 'python' }, { section: 'gradguard' }],
      [raw, { analysis: 1 }, null],
      false,
    );
    assert.deepEqual(mapped, [
      { select: ['GG002'], ignore: [], severity: {}, exclude: [], probe: { onSave: false, timeout: 60 } },
      { analysis: 1 },
      { ignore: [], severity: {}, exclude: [], probe: { onSave: false, timeout: 60 } },
    ]);
  });
});

describe('needsRestart', () => {
  it('only for enable, interpreter, importStrategy and diagnosticMode', () => {
    assert.equal(needsRestart(DEFAULTS, { ...DEFAULTS, enable: false }), true);
    assert.equal(needsRestart(DEFAULTS, { ...DEFAULTS, importStrategy: 'fromEnvironment' }), true);
    assert.equal(needsRestart(DEFAULTS, { ...DEFAULTS, interpreter: '/venv/bin/python' }), true);
    assert.equal(needsRestart(DEFAULTS, { ...DEFAULTS, diagnosticMode: 'workspace' }), true);
    assert.equal(needsRestart(DEFAULTS, { ...DEFAULTS, select: ['GG001'] }), false);
    assert.equal(needsRestart(DEFAULTS, { ...DEFAULTS, probe: { onSave: true, timeout: 5 } }), false);
    assert.equal(needsRestart(DEFAULTS, { ...DEFAULTS, trace: 'verbose' }), false);
  });
});

describe('the manifest', () => {
  // out/unit/settings.test.js -> client/package.json
  const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    contributes: {
      configuration: { properties: Record<string, { default: unknown; markdownDescription?: string }> };
      commands: { command: string; title: string; category: string }[];
    };
    capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
    activationEvents: string[];
  };
  const properties = manifest.contributes.configuration.properties;

  it('contributes every setting, documented, with the defaults the code uses', () => {
    const expected: Record<string, unknown> = {
      'gradguard.enable': DEFAULTS.enable,
      'gradguard.select': DEFAULTS.select,
      'gradguard.ignore': DEFAULTS.ignore,
      'gradguard.severity': DEFAULTS.severity,
      'gradguard.exclude': DEFAULTS.exclude,
      'gradguard.uncertain': DEFAULTS.uncertain,
      'gradguard.interpreter': DEFAULTS.interpreter,
      'gradguard.importStrategy': DEFAULTS.importStrategy,
      'gradguard.installSpec': DEFAULTS.installSpec,
      'gradguard.probe.onSave': DEFAULTS.probe.onSave,
      'gradguard.probe.timeout': DEFAULTS.probe.timeout,
      'gradguard.trace.server': DEFAULTS.trace,
      'gradguard.diagnosticMode': DEFAULTS.diagnosticMode,
    };
    assert.deepEqual(Object.keys(properties).sort(), Object.keys(expected).sort());
    for (const [key, value] of Object.entries(expected)) {
      assert.deepEqual(properties[key]?.default, value, key);
      assert.ok((properties[key]?.markdownDescription ?? '').length > 20, `${key} is documented`);
    }
  });

  it('offers a severity for each rule code', () => {
    const severity = properties['gradguard.severity'] as unknown as { properties: Record<string, unknown> };
    assert.deepEqual(Object.keys(severity.properties), [...RULE_CODES]);
  });

  it('declares limited support for untrusted workspaces and restricts the interpreter', () => {
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
    assert.ok(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes('gradguard.interpreter'));
  });

  it('has the four commands of the issue, and activates on Python files', () => {
    const titles = manifest.contributes.commands.map((c) => `${c.category}: ${c.title}`);
    for (const title of [
      'GradGuard: Run autograd probe on this file',
      'GradGuard: Fix all in-place hazards',
      'GradGuard: Restart server',
      'GradGuard: Show output',
    ]) {
      assert.ok(titles.includes(title), title);
    }
    // The server's own command id is registered by the language client: no clash.
    assert.ok(!manifest.contributes.commands.some((c) => c.command === 'gradguard.probe'));
    assert.deepEqual(manifest.activationEvents, ['onLanguage:python']);
  });
});
