import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The code blocks of the README and docs/*.md, as the docs test runs them. A fence's info string
 * says what a block is and who runs it (docs/development.md, "How the docs are tested"):
 *
 * - `bash`: run by the docs test, in order, in one shell per page, against a real stack;
 * - `bash ci`, `bash cluster`, `bash compose`: run by `.ci/run` itself, by the cluster suite (the
 *   supervisor `npm start` runs) and by the compose suite; the docs test checks each command is
 *   one those runners actually run;
 * - `bash manual: <why>`: not run by any test (a long benchmark, say); the reason is required;
 * - `js file=NAME` (or any language with `file=`): written to NAME before the page's blocks run;
 * - anything else (`json` output samples, `mermaid`, `yaml` excerpts): not a command.
 */
export interface CodeBlock {
  /** Repository-relative path of the Markdown file. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  /** The rest of the info string after the language (`ci`, `file=receiver.mjs`, `manual: why`). */
  tag: string;
  body: string;
}

export type ShellRunner = 'docs-test' | 'ci' | 'cluster' | 'compose' | 'manual';

const FENCE = /^```(.*)$/;

export function codeBlocks(file: string, markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const opening = FENCE.exec(lines[i]);
    if (!opening) continue;
    const [language = '', ...rest] = opening[1].trim().split(/\s+/);
    const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
    if (end === -1) throw new Error(`${file}:${i + 1}: code block never closed`);
    blocks.push({
      file,
      line: i + 1,
      language,
      tag: rest.join(' '),
      body: lines.slice(i + 1, end).join('\n'),
    });
    i = end;
  }
  return blocks;
}

/** Who runs a shell block; throws on a tag nobody understands, so a block cannot slip through. */
export function shellRunner(block: CodeBlock): ShellRunner {
  if (block.tag === '') return 'docs-test';
  if (block.tag === 'ci' || block.tag === 'cluster' || block.tag === 'compose') return block.tag;
  if (/^manual: \S/.test(block.tag)) return 'manual';
  throw new Error(`${block.file}:${block.line}: unknown tag "${block.tag}" on a ${block.language} block`);
}

/** The file a block asks to be saved as (`file=NAME`), if any. */
export function savedAs(block: CodeBlock): string | undefined {
  return /(?:^|\s)file=(\S+)/.exec(block.tag)?.[1];
}

/** The commands of a shell block: one per line (continuations joined), comments and `&&` split. */
export function commands(body: string): string[] {
  return body
    .replace(/\s*\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter(Boolean)
    .flatMap((line) => line.split('&&').map((part) => part.trim()));
}

/** README.md and every docs/*.md page, found anew on each run (pages added later are covered). */
export function documentationPages(root: string): Array<{ file: string; markdown: string }> {
  const files = [
    'README.md',
    ...readdirSync(path.join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => `docs/${name}`),
  ];
  return files.map((file) => ({ file, markdown: readFileSync(path.join(root, file), 'utf8') }));
}
