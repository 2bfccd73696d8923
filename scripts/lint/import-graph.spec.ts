import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The files of a small service: the wiring at the top, core/ at the bottom, two feature folders. */
const CLEAN = {
  'app.module.ts': `import { a } from './a/a';\nimport { TOKEN } from './core/tokens';`,
  'core/tokens.ts': `export const TOKEN = 1;`,
  'a/a.ts': `import { b } from '../b/b';\nimport { TOKEN } from '../core/tokens';\nexport const a = b;`,
  'b/b.ts': `export const b = 2;`,
};

const CASES = {
  clean: {},
  wiringImportedBack: { 'b/b.ts': `import { a } from '../app.module';\nexport const b = 2;` },
  foldersInACircle: { 'b/b.ts': `import type { a } from '../a/a';\nexport const b = 2;` },
  typeOnlyFileCycle: {
    'b/b.ts': `import type { C } from './c';\nexport type B = 1;\nexport const b = 2;`,
    'b/c.ts': `import type { B } from './b';\nexport type C = B;`,
  },
};

/**
 * The one-way-imports rule on a small service per case, written to a temporary folder. The rule
 * module is ESM, so one child node runs it on every case.
 */
describe('import graph rule', () => {
  let root: string;
  let found: Record<keyof typeof CASES, string[]>;

  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'import-graph-'));
    for (const [name, files] of Object.entries(CASES)) {
      const src = path.join(root, name, 'services/demo/src');
      for (const [file, text] of Object.entries({ ...CLEAN, ...files })) {
        mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
        writeFileSync(path.join(src, file), text);
      }
    }
    const script = `
      import { backArrow, fileGraph } from ${JSON.stringify(path.join(__dirname, 'import-graph.mjs'))};
      const found = {};
      for (const name of ${JSON.stringify(Object.keys(CASES))}) {
        const src = ${JSON.stringify(root)} + '/' + name + '/services/demo/src';
        const graph = fileGraph(src);
        found[name] = [];
        for (const [file, imports] of graph)
          for (const target of imports) {
            const problem = backArrow(src, true, graph, file, target);
            if (problem) found[name].push(file.slice(src.length + 1) + ': ' + problem);
          }
        found[name].sort();
      }
      console.log(JSON.stringify(found));`;
    found = JSON.parse(
      execFileSync('node', ['--input-type=module', '-e', script], { encoding: 'utf8' }),
    ) as typeof found;
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('accepts imports that point down', () => {
    expect(found.clean).toEqual([]);
  });

  it('rejects a folder importing the top-level wiring', () => {
    // It also closes a file cycle (app.module -> a -> b -> app.module), reported on the other two.
    expect(found.wiringImportedBack).toEqual([
      'a/a.ts: import cycle: a/a.ts -> b/b.ts -> app.module.ts -> a/a.ts.',
      'app.module.ts: import cycle: app.module.ts -> a/a.ts -> b/b.ts -> app.module.ts.',
      expect.stringMatching(/^b\/b\.ts: app\.module\.ts is the service's top-level wiring/),
    ]);
  });

  it('rejects two folders importing each other, on both arrows', () => {
    expect(found.foldersInACircle).toEqual([
      expect.stringMatching(/^a\/a\.ts: folder b\/ already imports a\/ \(b -> a\)/),
      expect.stringMatching(/^b\/b\.ts: folder a\/ already imports b\/ \(a -> b\)/),
    ]);
  });

  it('rejects a type-only cycle between two files of one folder', () => {
    expect(found.typeOnlyFileCycle).toEqual([
      'b/b.ts: import cycle: b/b.ts -> b/c.ts -> b/b.ts.',
      'b/c.ts: import cycle: b/c.ts -> b/b.ts -> b/c.ts.',
    ]);
  });
});
