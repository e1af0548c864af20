// Bundles the operator (operator/main.ts, lib/ and the two packages it loads, @kubernetes/client-node
// and prom-client) into one ES module with esbuild, for Dockerfile.operator: the image then carries
// Node and this file, not the repository's production dependencies. Fails if anything is left to
// load from node_modules at run time.
//   node scripts/bundle-operator.mjs <outfile>
import { builtinModules } from 'node:module';
import { build } from 'esbuild';

const outfile = process.argv[2];
if (!outfile) {
  console.error('usage: node scripts/bundle-operator.mjs <outfile>');
  process.exit(2);
}
const result = await build({
  entryPoints: ['operator/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  outfile,
  metafile: true,
  logLevel: 'warning',
  // CommonJS packages inside an ES module still call require() for Node's built-ins.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
});
// `ws` (under client-node) tries these native speed-ups inside a try/catch and runs without them.
const OPTIONAL = new Set(['bufferutil', 'utf-8-validate']);
const builtin = (path) => path.startsWith('node:') || builtinModules.includes(path);
const external = Object.values(result.metafile.outputs).flatMap((o) =>
  o.imports.filter((i) => i.external && !builtin(i.path) && !OPTIONAL.has(i.path)).map((i) => i.path),
);
if (external.length > 0) {
  console.error(`bundle-operator: left to load at run time: ${[...new Set(external)].join(', ')}`);
  process.exit(1);
}
const bytes = Object.values(result.metafile.outputs).reduce((a, o) => a + o.bytes, 0);
console.log(`bundle-operator: ${outfile} (${(bytes / 1048576).toFixed(1)} MiB)`);
