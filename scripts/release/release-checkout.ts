import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, type Release } from './previous-release';

/**
 * A release's sources in a git worktree of their own under a temporary directory, with their
 * modules: this checkout's node_modules linked in when the release's lockfile resolves every
 * package it runs or builds with to the same version, otherwise an `npm ci` of its own.
 */
export class ReleaseCheckout {
  private constructor(
    readonly release: Release,
    readonly dir: string,
    readonly sharedModules: boolean,
  ) {}

  static create(release: Release, log: (line: string) => void = () => undefined): ReleaseCheckout {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), 'cms-release-')), 'checkout');
    addWorktree(release, dir);
    const shared = sameInstall(readLock(ROOT), readLock(dir));
    try {
      if (shared) symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
      else install(release, dir, log);
    } catch (error) {
      new ReleaseCheckout(release, dir, shared).remove();
      throw error;
    }
    return new ReleaseCheckout(release, dir, shared);
  }

  /**
   * The release built (`npm ci`, then `npm run build` into its dist/) in a worktree kept under
   * `cacheRoot`, in a directory named by its commit: the first call builds it (minutes), later
   * ones find it ready. Never removed by the caller; delete the directory (then `git worktree
   * prune`) to rebuild it.
   */
  static built(
    release: Release,
    cacheRoot: string,
    log: (line: string) => void = () => undefined,
  ): ReleaseCheckout {
    const dir = path.join(cacheRoot, release.commit);
    const ready = path.join(dir, '.cms-release-built');
    if (existsSync(ready)) return new ReleaseCheckout(release, dir, false);
    rmSync(dir, { recursive: true, force: true });
    execFileSync('git', ['worktree', 'prune'], { cwd: ROOT, stdio: 'ignore' });
    mkdirSync(cacheRoot, { recursive: true });
    addWorktree(release, dir);
    install(release, dir, log);
    log(`${release.version}: building in ${dir}`);
    execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    writeFileSync(ready, `${new Date().toISOString()}\n`);
    return new ReleaseCheckout(release, dir, false);
  }

  /** Removes the worktree and its directory. */
  remove(): void {
    try {
      execFileSync('git', ['worktree', 'remove', '--force', this.dir], { cwd: ROOT, stdio: 'ignore' });
    } catch {
      // removed below; prune forgets it
    }
    rmSync(path.dirname(this.dir), { recursive: true, force: true });
    execFileSync('git', ['worktree', 'prune'], { cwd: ROOT, stdio: 'ignore' });
  }
}

function addWorktree(release: Release, dir: string): void {
  execFileSync('git', ['worktree', 'add', '--detach', dir, release.commit], { cwd: ROOT, stdio: 'ignore' });
}

function install(release: Release, dir: string, log: (line: string) => void): void {
  log(`${release.version}: npm ci in ${dir}`);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'ignore' });
}

interface LockEntry {
  version?: string;
  integrity?: string;
  dev?: boolean;
  devOptional?: boolean;
  link?: boolean;
}

/** What the build and the tooling used to run a release's sources need besides its dependencies. */
const TOOLS = ['typescript', 'tsc-alias', '@swc-node/register', '@swc/core'];

function readLock(dir: string): Record<string, LockEntry> {
  const file = path.join(dir, 'package-lock.json');
  if (!existsSync(file)) return {};
  return (JSON.parse(readFileSync(file, 'utf8')) as { packages?: Record<string, LockEntry> }).packages ?? {};
}

/**
 * Whether a release can run with this checkout's node_modules: every package of its production
 * dependency tree and of its build tools (local links aside) is locked at the same version and
 * integrity here.
 */
export function sameInstall(ours: Record<string, LockEntry>, theirs: Record<string, LockEntry>): boolean {
  if (Object.keys(theirs).length === 0) return false;
  const needed = Object.entries(theirs).filter(
    ([name, entry]) =>
      name !== '' &&
      !entry.link &&
      (!(entry.dev || entry.devOptional) || TOOLS.some((tool) => name === `node_modules/${tool}`)),
  );
  return needed.every(([name, entry]) => {
    const mine = ours[name];
    return !!mine && mine.version === entry.version && mine.integrity === entry.integrity;
  });
}
