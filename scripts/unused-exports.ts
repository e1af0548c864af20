/**
 * Fails on an export that nothing imports (issue 39: dead code hides behind `export`). Product, test
 * and bench files all count as importers; what is imported only by tests still counts as used.
 * Entry files and public APIs that are imported from outside this tree are allowed below, each
 * with its reason. Run by the lint step of scripts/test.sh; `node scripts/unused-exports.ts`.
 *
 * What counts as a use: a named or default import, `export … from` (a re-export is a use of the
 * original), `import type`, `typeof import('…').name`; a namespace import, `export *` and a dynamic
 * `import('…')` of a literal path use every export of that module.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_DIRS = ['lib', 'api-stub', 'worker', 'operator', 'sdk', 'speech', 'test', 'bench', 'scripts'];

/** Exports used from outside the TypeScript import graph, by file (all its exports) or by name. */
const ALLOWED: ReadonlyArray<{ file: string; names?: readonly string[]; reason: string }> = [
  { file: 'sdk/server/index.ts', reason: 'the server SDK: its public API, imported by customers' },
  { file: 'sdk/browser/index.ts', reason: 'the browser SDK: its public API, served as /sdk/browser.js' },
  { file: 'vitest.config.ts', reason: 'read by vitest' },
  { file: 'test/harness/global-setup.ts', reason: 'a vitest globalSetup (vitest.config.ts): vitest calls its exports' },
  { file: 'test/harness/kube-global-setup.ts', reason: 'a vitest globalSetup (vitest.config.ts): vitest calls its exports' },
  { file: 'test/cluster/cluster-global-setup.ts', reason: 'a vitest globalSetup (vitest.config.ts): vitest calls its exports' },
  {
    file: 'api-stub/respondent/client/daily-room.ts',
    names: ['joinDailyRoom'],
    reason: 'a page bundle loaded by URL (api-stub/respondent/assets.ts); main.ts calls it by name after import()',
  },
  {
    file: 'api-stub/respondent/client/livekit-room.ts',
    names: ['joinLiveKitRoom'],
    reason: 'a page bundle loaded by URL (api-stub/respondent/assets.ts); main.ts calls it by name after import()',
  },
];

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) found.push(...sourceFiles(path));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

const rootFiles = readdirSync(root)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => join(root, f));
const files = [...rootFiles, ...SOURCE_DIRS.flatMap((d) => sourceFiles(join(root, d)))];
const config = ts.parseJsonConfigFileContent(JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')), ts.sys, root);
const program = ts.createProgram(files, config.options);
const checker = program.getTypeChecker();
const ours = new Set(files);

/** "file\0name" of every export that something uses; "file\0*" when all of them are. */
const used = new Set<string>();
const mark = (file: string | undefined, name: string) => {
  if (file && ours.has(file)) used.add(`${file}\0${name}`);
};

function targetFile(from: ts.SourceFile, specifier: ts.Expression | undefined): string | undefined {
  if (!specifier || !ts.isStringLiteralLike(specifier)) return undefined;
  const resolved = ts.resolveModuleName(specifier.text, from.fileName, config.options, ts.sys).resolvedModule;
  return resolved?.resolvedFileName;
}

function visit(sourceFile: ts.SourceFile, node: ts.Node): void {
  if (ts.isImportDeclaration(node)) {
    const target = targetFile(sourceFile, node.moduleSpecifier);
    const clause = node.importClause;
    if (clause?.name) mark(target, 'default');
    const bindings = clause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) mark(target, '*');
    if (bindings && ts.isNamedImports(bindings)) for (const s of bindings.elements) mark(target, (s.propertyName ?? s.name).text);
  } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
    const target = targetFile(sourceFile, node.moduleSpecifier);
    const clause = node.exportClause;
    if (!clause || ts.isNamespaceExport(clause)) mark(target, '*');
    else for (const s of clause.elements) mark(target, (s.propertyName ?? s.name).text);
  } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
    mark(targetFile(sourceFile, node.arguments[0]), '*');
  } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
    const target = targetFile(sourceFile, node.argument.literal);
    if (node.qualifier)
      mark(target, (ts.isIdentifier(node.qualifier) ? node.qualifier : node.qualifier.left).getText(sourceFile).split('.')[0]!);
    else mark(target, '*');
  }
  ts.forEachChild(node, (child) => visit(sourceFile, child));
}

for (const sourceFile of program.getSourceFiles()) if (ours.has(sourceFile.fileName)) visit(sourceFile, sourceFile);

/** Declarations that an identifier of their own file refers to (other than their own name). */
function usedInFile(sourceFile: ts.SourceFile): Set<ts.Declaration> {
  const found = new Set<ts.Declaration>();
  const walk = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) {
      const symbol = checker.getSymbolAtLocation(node);
      const declarations = symbol ? [...(symbol.declarations ?? []), ...(checker.getExportSymbolOfSymbol(symbol).declarations ?? [])] : [];
      for (const d of declarations) if ((d as ts.NamedDeclaration).name !== node) found.add(d);
    }
    ts.forEachChild(node, walk);
  };
  walk(sourceFile);
  return found;
}

const unused: string[] = [];
for (const file of files) {
  const sourceFile = program.getSourceFile(file);
  const moduleSymbol = sourceFile && checker.getSymbolAtLocation(sourceFile);
  if (!moduleSymbol || used.has(`${file}\0*`)) continue;
  const path = relative(root, file);
  const allowed = ALLOWED.filter((a) => a.file === path);
  let local: Set<ts.Declaration> | undefined;
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const name = symbol.getName();
    if (used.has(`${file}\0${name}`)) continue;
    if (allowed.some((a) => !a.names || a.names.includes(name))) continue;
    // Used in its own file: the code lives; only the `export` is one too many (not failed here).
    local ??= usedInFile(sourceFile);
    if (symbol.declarations?.some((d) => local!.has(d))) continue;
    const declaration = symbol.declarations?.[0];
    const line =
      declaration && declaration.getSourceFile() === sourceFile
        ? sourceFile.getLineAndCharacterOfPosition(declaration.getStart()).line + 1
        : 1;
    unused.push(`${path}:${line}: ${name}`);
  }
}

// An allowance that names nothing any more is stale: it must go too.
for (const a of ALLOWED) {
  const sourceFile = program.getSourceFile(join(root, a.file));
  const moduleSymbol = sourceFile && checker.getSymbolAtLocation(sourceFile);
  const exported = new Set(moduleSymbol ? checker.getExportsOfModule(moduleSymbol).map((s) => s.getName()) : []);
  for (const name of a.names ?? (moduleSymbol ? [] : ['(the file)'])) {
    if (!exported.has(name)) unused.push(`${a.file}: ${name} is listed in ALLOWED (scripts/unused-exports.ts) but not exported there`);
  }
}

if (unused.length > 0) {
  console.error(
    `unused-exports: ${unused.length} export(s) that nothing imports (remove the export, or allow it with a reason in scripts/unused-exports.ts):`,
  );
  for (const line of unused) console.error(`  ${line}`);
  process.exit(1);
}
console.log(`unused-exports: every export of ${files.length} files is imported somewhere`);
