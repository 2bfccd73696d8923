import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { API_ENDPOINTS } from '../../../services/gateway/src/api-docs/serve-api-docs';
import { openApiDocument } from '../../../services/gateway/src/api-docs/openapi-document';

/**
 * `npm run lint:openapi`: writes the gateway's OpenAPI document (what /openapi.json serves) and
 * lints it with Spectral's `spectral:oas` (.spectral.yaml) and Redocly's recommended rules
 * (redocly.yaml). Any error or warning of either fails it (docs/development.md, "The API
 * description").
 */
const ROOT = path.resolve(__dirname, '../../..');
const bin = (name: string) => path.join(ROOT, 'node_modules/.bin', name);

function run(command: string, args: string[]): { status: number; stdout: string } {
  const result = spawnSync(bin(command), args, { cwd: ROOT, encoding: 'utf8' });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  return { status: result.status ?? 1, stdout: result.stdout };
}

function lint(): number {
  const directory = mkdtempSync(path.join(tmpdir(), 'openapi-lint-'));
  try {
    const file = path.join(directory, 'openapi.json');
    writeFileSync(file, JSON.stringify(openApiDocument(API_ENDPOINTS), null, 2));
    const spectral = run('spectral', [
      'lint',
      file,
      '--ruleset',
      '.spectral.yaml',
      '--fail-severity',
      'hint',
    ]);
    // Redocly fails on errors only; its summary line counts the warnings too.
    const redocly = run('redocly', ['lint', file, '--config', 'redocly.yaml']);
    const redoclyWarned = /warning/i.test(redocly.stdout);
    return spectral.status === 0 && redocly.status === 0 && !redoclyWarned ? 0 : 1;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

process.exitCode = lint();
