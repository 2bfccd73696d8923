import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { readFileSync } from 'node:fs';

/**
 * The SDK's committed types are what the current OpenAPI document generates (`npm run sdk:types`).
 * Generated in a child process: openapi-typescript loads ES modules that Jest's module system cannot.
 */
describe('SDK types', () => {
  it('match the OpenAPI document (else run `npm run sdk:types` and commit the result)', () => {
    const root = path.resolve(__dirname, '../..');
    const generated = execFileSync(
      process.execPath,
      ['-r', '@swc-node/register', path.join(__dirname, 'sdk-types.ts'), '--print'],
      { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
    );
    const committed = readFileSync(path.join(root, 'sdk/typescript/src/generated/openapi.ts'), 'utf8');
    expect(generated === committed).toBe(true);
  });
});
