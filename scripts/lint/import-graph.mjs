// @ts-check
// The import graph inside each package (services/<name>/src, libs/<name>/src) and the ESLint rule
// that keeps it pointing one way (docs/architecture.md, "Inside a service"):
// - a file in a service's folder never imports a file at the top of the service's src/ (the
//   top-level files are the wiring: main, the app module, the service's start);
// - the folders of a service never import each other in a circle;
// - no file imports itself back through others (a cycle, type-only ones included).
// Run as a script (`node scripts/lint/import-graph.mjs`) it prints every package's folder arrows
// and the ones that point back.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TEST_FILE = /\.(spec|e2e-spec|int-spec|ha-spec|compose-spec)\.ts$/;

/** The package a file belongs to: its src/ folder and whether it is a service. */
function packageOf(file) {
  const match = /^(.*\/(services|libs)\/[^/]+\/src)\//.exec(file);
  return match ? { src: match[1], isService: match[2] === 'services' } : undefined;
}

/** The top-level folder of a file inside its package, or undefined for a file at the top. */
function folderOf(src, file) {
  const parts = path.relative(src, file).split(path.sep);
  return parts.length > 1 ? parts[0] : undefined;
}

/** A relative import resolved to the .ts file it names, or undefined (a package, a missing file). */
function resolveImport(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) {
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Relative imports (type-only ones included) of one source text, resolved. */
function importsOf(file, text) {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((imported) => resolveImport(file, imported.fileName))
    .filter((target) => target !== undefined && !TEST_FILE.test(target));
}

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !TEST_FILE.test(entry.name) ? [full] : [];
  });
}

/** Per package: each file's imports, re-read only for files whose modification time changed. */
const cache = new Map();

/** @returns {Map<string, string[]>} file -> the files of its package it imports */
export function fileGraph(src) {
  const known = cache.get(src) ?? new Map();
  const graph = new Map();
  for (const file of sourceFiles(src)) {
    const mtime = statSync(file).mtimeMs;
    const cached = known.get(file);
    const imports = cached?.mtime === mtime ? cached.imports : importsOf(file, readFileSync(file, 'utf8'));
    known.set(file, { mtime, imports });
    graph.set(file, imports);
  }
  cache.set(src, known);
  return graph;
}

/** The folder arrows of a package: "from -> to" with the file imports behind each. */
export function folderArrows(src, graph = fileGraph(src)) {
  const arrows = new Map();
  for (const [file, imports] of graph) {
    const from = folderOf(src, file) ?? '(top)';
    for (const target of imports) {
      const to = folderOf(src, target) ?? '(top)';
      if (from === to) continue;
      const key = `${from} -> ${to}`;
      arrows.set(key, [
        ...(arrows.get(key) ?? []),
        `${path.relative(src, file)} -> ${path.relative(src, target)}`,
      ]);
    }
  }
  return arrows;
}

/** A path of nodes from `start` to `goal` along `next`, or undefined. */
function pathBetween(start, goal, next) {
  const cameFrom = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    if (node === goal) {
      const found = [];
      for (let at = node; at !== undefined; at = cameFrom.get(at)) found.unshift(at);
      return found;
    }
    for (const following of next(node)) {
      if (!cameFrom.has(following)) {
        cameFrom.set(following, node);
        queue.push(following);
      }
    }
  }
  return undefined;
}

/** The folders each folder imports (arrows into the top-level wiring are reported on their own). */
function folderNeighbours(arrows) {
  const next = new Map();
  for (const key of arrows.keys()) {
    const [from, to] = key.split(' -> ');
    if (from !== '(top)' && to !== '(top)') next.set(from, [...(next.get(from) ?? []), to]);
  }
  return (folder) => next.get(folder) ?? [];
}

/**
 * What is wrong with `file` importing `target` (both in one package), or undefined.
 * @param {Map<string, string[]>} graph
 */
export function backArrow(src, isService, graph, file, target) {
  const rel = (f) => path.relative(src, f);
  const from = folderOf(src, file);
  const to = folderOf(src, target);
  if (isService && from !== undefined && to === undefined) {
    return `${rel(target)} is the service's top-level wiring: a folder never imports it back (move what the folders share into a folder they all import, such as core/).`;
  }
  if (isService && from !== undefined && to !== undefined && from !== to) {
    const back = pathBetween(to, from, folderNeighbours(folderArrows(src, graph)));
    if (back) return `folder ${to}/ already imports ${from}/ (${back.join(' -> ')}): folders import one way.`;
  }
  const cycle = pathBetween(target, file, (node) => graph.get(node) ?? []);
  if (cycle) return `import cycle: ${[file, ...cycle].map(rel).join(' -> ')}.`;
  return undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
const oneWayImports = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports inside a package point one way: no arrow back to the wiring, no cycle.' },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const pkg = packageOf(file);
    if (!pkg || TEST_FILE.test(file)) return {};
    let graph;
    return {
      'ImportDeclaration, ExportNamedDeclaration, ExportAllDeclaration'(node) {
        if (!node.source || typeof node.source.value !== 'string') return;
        const target = resolveImport(file, node.source.value);
        if (!target || !target.startsWith(`${pkg.src}/`)) return;
        if (!graph) {
          graph = fileGraph(pkg.src);
          // The file as it is being linted, not as it was last saved.
          graph.set(file, importsOf(file, context.sourceCode.text));
        }
        const problem = backArrow(pkg.src, pkg.isService, graph, file, target);
        if (problem) context.report({ node: node.source, message: problem });
      },
    };
  },
};

export const importGraphPlugin = { rules: { 'one-way-imports': oneWayImports } };

/** Prints each package's folder arrows and counts those that point back. */
function report() {
  let arrowsTotal = 0;
  let backTotal = 0;
  for (const kind of ['services', 'libs']) {
    for (const name of readdirSync(path.join(ROOT, kind))) {
      const src = path.join(ROOT, kind, name, 'src');
      if (!existsSync(src)) continue;
      const graph = fileGraph(src);
      const arrows = folderArrows(src, graph);
      const back = [];
      for (const [file, imports] of graph) {
        for (const target of imports) {
          const problem = backArrow(src, kind === 'services', graph, file, target);
          if (problem) back.push(`  ${path.relative(src, file)}: ${problem}`);
        }
      }
      arrowsTotal += arrows.size;
      backTotal += back.length;
      const folders = kind === 'services' ? ` ${arrows.size} folder arrows,` : '';
      console.log(`${kind}/${name}: ${graph.size} files,${folders} ${back.length} back`);
      if (process.argv.includes('--arrows'))
        for (const key of [...arrows.keys()].sort()) console.log(`  ${key}`);
      for (const line of back) console.log(line);
    }
  }
  console.log(`total: ${arrowsTotal} folder arrows in the services, ${backTotal} back arrows or cycles`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) report();
