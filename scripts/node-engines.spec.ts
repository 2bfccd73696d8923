import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';

const ROOT = path.resolve(__dirname, '..');

interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
}

const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};
const supported = (
  JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
).engines.node;

/** The locked packages that refuse `node` (`npm ci` warns EBADENGINE for each), as `path@version (range)`. */
function refusing(node: string, packages: Record<string, LockedPackage>): string[] {
  return Object.entries(packages).flatMap(([where, locked]) => {
    const range = Array.isArray(locked.engines) ? undefined : locked.engines?.node;
    return where !== '' && range !== undefined && !semver.satisfies(node, range)
      ? [`${where}@${locked.version} (${range})`]
      : [];
  });
}

describe('the Node versions package.json supports (engines)', () => {
  it('are the ones every locked package supports: npm ci warns no EBADENGINE on the oldest', () => {
    const oldest = semver.minVersion(supported)!.version;
    expect(refusing(oldest, lock.packages)).toEqual([]);
  });

  it('would see a package that needs a newer Node', () => {
    const packages = { 'node_modules/new-tool': { version: '1.0.0', engines: { node: '>=24.18' } } };
    expect(refusing('20.19.0', packages)).toEqual(['node_modules/new-tool@1.0.0 (>=24.18)']);
  });
});
