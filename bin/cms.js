#!/usr/bin/env node
// `npx cms <command>`: the account CLI (scripts/cli.ts), built first when the sources are newer
// than the build. The build reports on stderr, so stdout only ever carries the CLI's JSON.
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cli = path.join(root, 'dist', 'scripts', 'cli.js');

/** The newest modification time of the TypeScript sources the CLI is built from. */
function newestSource(directory) {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const file = path.join(directory, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(file));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(file).mtimeMs);
  }
  return newest;
}

const sources = ['libs', 'services', 'scripts'].map((dir) => newestSource(path.join(root, dir)));
if (!existsSync(cli) || statSync(cli).mtimeMs < Math.max(...sources)) {
  process.stderr.write('cms: building the project first (npm run build)...\n');
  execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '--silent', 'build'], {
    cwd: root,
    stdio: ['ignore', process.stderr, process.stderr],
  });
}
void require(cli).main();
