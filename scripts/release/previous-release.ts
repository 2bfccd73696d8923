import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The release a change must stay compatible with (docs/development.md, "Releases"): the newest
 * release in CHANGELOG.md whose commit is an ancestor of HEAD (HEAD itself aside), or the commit
 * given in `UPGRADE_FROM`. Read from the changelog's `Commit:` lines, never from git tags.
 */
export interface Release {
  /** `1.0.0`, or what `UPGRADE_FROM` said. */
  version: string;
  /** The full commit hash. */
  commit: string;
}

export const ROOT = path.resolve(__dirname, '../..');

/** Every release CHANGELOG.md names, newest first: `## [1.0.0] - date` and its `Commit: <hash>` line. */
export function changelogReleases(changelog: string): Release[] {
  const releases: Release[] = [];
  for (const section of changelog.split(/^## /m).slice(1)) {
    const version = /^\[(\d+\.\d+\.\d+[^\]]*)\]/.exec(section)?.[1];
    const commit = /^Commit: ([0-9a-f]{7,40})\s*$/m.exec(section)?.[1];
    if (version && commit) releases.push({ version, commit });
  }
  return releases;
}

const git = (...args: string[]) =>
  execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

function isAncestor(commit: string, of: string): boolean {
  try {
    git('merge-base', '--is-ancestor', commit, of);
    return true;
  } catch {
    return false;
  }
}

export function previousRelease(env: NodeJS.ProcessEnv = process.env): Release {
  const head = git('rev-parse', 'HEAD');
  if (env.UPGRADE_FROM) {
    const commit = git('rev-parse', '--verify', `${env.UPGRADE_FROM}^{commit}`);
    return { version: env.UPGRADE_FROM, commit };
  }
  const releases = changelogReleases(readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8'));
  for (const release of releases) {
    let commit: string;
    try {
      commit = git('rev-parse', '--verify', `${release.commit}^{commit}`);
    } catch {
      throw new Error(
        `CHANGELOG.md names ${release.commit} for ${release.version}, which this clone does not have (a shallow clone? fetch the history)`,
      );
    }
    if (commit !== head && isAncestor(commit, head)) return { version: release.version, commit };
  }
  throw new Error('CHANGELOG.md names no release older than HEAD (set UPGRADE_FROM=<commit>)');
}
