import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** The pages a reader follows: the README, the benchmarks and every docs/*.md page. */
const PAGES = [
  'README.md',
  'BENCHMARKS.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The repository's top-level folders and files a page may name by path (not what a build or install makes). */
const BUILT = ['node_modules', 'dist', 'coverage'];
const TOP_LEVEL = readdirSync(ROOT).filter((name) => !name.startsWith('.') && !BUILT.includes(name));

/**
 * A repository path written in a page: it starts with a top-level folder (`libs/config/src/x.ts`)
 * and names a file or folder, not a pattern (`services/<name>`, `*.spec.ts`, `cms_test_<id>`).
 */
const PATH_IN_TEXT = new RegExp(
  `(?<![\\w./-])((?:${TOP_LEVEL.map((name) => name.replace(/[.]/g, '\\.')).join('|')})/[\\w./@%-]*[\\w/])`,
  'g',
);

/** A file named alone in code (`main.ts`, `receiver.mjs`): it must exist somewhere in the repository. */
const FILE_NAME_IN_CODE = /`([\w.@-]+\.(?:ts|mjs|cjs|js|json|sh|ya?ml))`/g;

/** The names of every file in the repository's folders (not what a build or install makes). */
function repositoryFileNames(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    // Dot folders (.git, .ci) hold no named files; dotfiles (.spectral.yaml) are named.
    if ((entry.name.startsWith('.') && entry.isDirectory()) || BUILT.includes(entry.name)) return [];
    return entry.isDirectory() ? repositoryFileNames(path.join(dir, entry.name)) : [entry.name];
  });
}
const FILE_NAMES = new Set(repositoryFileNames());

/** The files the pages' examples write (a `js file=NAME` block): they exist once a reader follows them. */
const EXAMPLE_FILES = new Set(
  PAGES.flatMap((page) =>
    [...readFileSync(path.join(ROOT, page), 'utf8').matchAll(/^```\w+ file=(\S+)/gm)].map(
      (match) => match[1],
    ),
  ),
);

/** GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens. */
function headingId(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#+ (.+)$/gm)].map((match) => headingId(match[1].trim())));
}

/** Every path a page names that does not exist, and every link to a heading that is not there. */
function brokenReferences(page: string): string[] {
  const text = readFileSync(path.join(ROOT, page), 'utf8');
  const broken: string[] = [];
  for (const [, named] of text.matchAll(PATH_IN_TEXT)) {
    // What a build writes (`sdk/typescript/dist/`) exists only after that build.
    const built = named.split('/').some((segment) => BUILT.includes(segment));
    if (built || /[<>*{}]/.test(named) || named.startsWith('bench/results/')) continue;
    if (!existsSync(path.join(ROOT, named))) broken.push(`${page}: ${named}`);
  }
  for (const [, named] of text.matchAll(FILE_NAME_IN_CODE)) {
    if (!FILE_NAMES.has(named) && !EXAMPLE_FILES.has(named)) broken.push(`${page}: ${named} (no such file)`);
  }
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target)) continue;
    const [file, anchor] = target.split('#');
    const resolved = file ? path.resolve(path.dirname(path.join(ROOT, page)), file) : path.join(ROOT, page);
    if (!existsSync(resolved)) broken.push(`${page}: link ${target}`);
    else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
      broken.push(`${page}: link ${target} (no such heading)`);
    }
  }
  return broken;
}

describe('paths and links in the docs', () => {
  it.each(PAGES)('%s names only paths and headings that exist', (page) => {
    expect(brokenReferences(page)).toEqual([]);
  });

  it('finds the paths a page names', () => {
    // The scan itself: a sentence naming a real file and a missing one.
    const found = [
      ...'see libs/config/src/configuration-table.spec.ts and libs/config/src/readme-configuration.spec.ts'.matchAll(
        PATH_IN_TEXT,
      ),
    ].map((match) => match[1]);
    expect(found).toEqual([
      'libs/config/src/configuration-table.spec.ts',
      'libs/config/src/readme-configuration.spec.ts',
    ]);
    expect(found.map((named) => existsSync(path.join(ROOT, named)))).toEqual([true, false]);
  });

  it('finds the file names a page names alone, and knows the files of the repository', () => {
    const found = [
      ...'`main.ts` and `openapi-conventions.ts`, not `/openapi.json`'.matchAll(FILE_NAME_IN_CODE),
    ].map((match) => match[1]);
    expect(found).toEqual(['main.ts', 'openapi-conventions.ts']);
    expect(found.map((named) => FILE_NAMES.has(named))).toEqual([true, false]);
  });
});
