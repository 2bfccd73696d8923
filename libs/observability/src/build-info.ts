import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The release this process runs: the `version` of the repository's package.json (the one file a
 * release sets it in, docs/development.md "Releases"), read once when the process loads this
 * module. The nearest package.json above this file is the repository's, from the sources and from
 * `dist/` alike (the image copies it beside `dist/`).
 */
export const VERSION: string = readVersion(__dirname);

function readVersion(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
