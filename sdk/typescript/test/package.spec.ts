import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** `npm pack` in sdk/typescript builds the package and packs its JavaScript, its types and its README. */
describe('@cms/sdk package', () => {
  it('packs dist/ with .d.ts files and the README, and no sources or tests', () => {
    const destination = mkdtempSync(path.join(tmpdir(), 'sdk-pack-'));
    try {
      const output = execFileSync('npm', ['pack', '--json', '--pack-destination', destination], {
        cwd: path.resolve(__dirname, '..'),
        encoding: 'utf8',
        timeout: 120_000,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const [packed] = JSON.parse(output.slice(output.indexOf('['))) as Array<{
        name: string;
        files: Array<{ path: string }>;
      }>;
      const files = packed.files.map((file) => file.path);
      expect(packed.name).toBe('@cms/sdk');
      expect(files).toEqual(
        expect.arrayContaining([
          'README.md',
          'package.json',
          'dist/index.js',
          'dist/index.d.ts',
          'dist/generated/openapi.d.ts',
        ]),
      );
      expect(
        files.filter((file) => !file.startsWith('dist/') && !/^(README\.md|package\.json)$/.test(file)),
      ).toEqual([]);
    } finally {
      rmSync(destination, { recursive: true, force: true });
    }
  });
});
