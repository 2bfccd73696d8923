import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { previousRelease, ROOT } from '../release/previous-release';
import { ReleaseCheckout } from '../release/release-checkout';
import { compareSnapshots, type ContractSnapshot } from './schema-compat';

/**
 * `npm run check:compat`: compares HEAD's schemas (OpenAPI, RPC commands and replies, events) with
 * those of the previous release (scripts/release/previous-release.ts), each read by
 * contract-snapshot.ts in its own checkout, and fails on what would break a fleet running both
 * (schema-compat.ts; docs/scaling.md, "Upgrading").
 */
const SNAPSHOT_SCRIPT = path.join(__dirname, 'contract-snapshot.ts');

/**
 * Changes the check reports that were found harmless, each with its reason, as `<where>: <problem>`
 * (an RPC operation no caller of the previous release sends, for one). An entry that matches
 * nothing any more (the next release no longer has what it names) is reported, to be removed.
 */
const ACCEPTED_FILE = path.join(__dirname, 'accepted-changes.json');

function snapshotOf(dir: string, out: string): ContractSnapshot {
  execFileSync(process.execPath, ['-r', '@swc-node/register', SNAPSHOT_SCRIPT, out], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, SWC_NODE_PROJECT: path.join(dir, 'tsconfig.json'), LOG_LEVEL: 'silent' },
  });
  return JSON.parse(readFileSync(out, 'utf8')) as ContractSnapshot;
}

function main(): number {
  const release = previousRelease();
  const say = (line: string) => process.stdout.write(`check:compat: ${line}\n`);
  say(`comparing HEAD with ${release.version} (${release.commit.slice(0, 12)})`);
  const scratch = mkdtempSync(path.join(tmpdir(), 'cms-compat-'));
  const checkout = ReleaseCheckout.create(release, say);
  try {
    const before = snapshotOf(checkout.dir, path.join(scratch, 'before.json'));
    const after = snapshotOf(ROOT, path.join(scratch, 'after.json'));
    const accepted = JSON.parse(readFileSync(ACCEPTED_FILE, 'utf8')) as Record<string, string>;
    const found = compareSnapshots(before, after).map((change) => ({
      ...change,
      line: `${change.where}: ${change.problem}`,
    }));
    for (const { line } of found.filter(({ line }) => accepted[line]))
      say(`accepted: ${line} (${accepted[line]})`);
    for (const line of Object.keys(accepted).filter((key) => !found.some((change) => change.line === key)))
      say(`${path.relative(ROOT, ACCEPTED_FILE)} accepts "${line}", which no longer happens: remove it`);
    const broken = found.filter(({ line }) => !accepted[line]);
    if (broken.length === 0) {
      say(
        `compatible: ${Object.keys(before.rpc).length} RPC operations, ${Object.keys(before.events).length} event types and the HTTP API of ${release.version} still hold`,
      );
      return 0;
    }
    say(`${broken.length} incompatible change(s) since ${release.version}:`);
    for (const { line } of broken) say(`  ${line}`);
    say('see docs/scaling.md, "Upgrading": fields are only added, and optional; nothing is narrowed');
    return 1;
  } finally {
    checkout.remove();
    rmSync(scratch, { recursive: true, force: true });
  }
}

process.exitCode = main();
