#!/usr/bin/env node
// `npx cms <command>`: the account CLI (scripts/cli.ts), built first when a source changed since
// the last build (scripts/build.js). The build reports on stderr, so stdout only ever carries the
// CLI's JSON.
const path = require('node:path');
const { build } = require('../scripts/build');

try {
  build({ log: (line) => process.stderr.write(`cms: ${line}\n`) });
} catch {
  // tsc has printed the errors.
  process.exit(1);
}
void require(path.join(__dirname, '..', 'dist', 'scripts', 'cli.js')).main();
