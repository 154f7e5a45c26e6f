// Bundles the extension into dist/extension.js (one CommonJS file; `vscode` is provided
// by the editor). `--unit` instead bundles each unit test into out/unit/ for `node --test`;
// those tests import only modules that do not import `vscode`.
import { build, context } from 'esbuild';
import { readdirSync } from 'node:fs';

const args = new Set(process.argv.slice(2));
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  logLevel: 'info',
};

if (args.has('--unit')) {
  const tests = readdirSync('test/unit').filter((name) => name.endsWith('.test.ts'));
  await build({
    ...common,
    entryPoints: tests.map((name) => `test/unit/${name}`),
    outdir: 'out/unit',
    external: ['vscode'],
    logLevel: 'warning',
  });
} else {
  const options = {
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    external: ['vscode'],
    minify: !args.has('--watch'),
    sourcemap: args.has('--watch') ? 'inline' : false,
  };
  if (args.has('--watch')) {
    const ctx = await context(options);
    await ctx.watch();
  } else {
    await build(options);
  }
}
