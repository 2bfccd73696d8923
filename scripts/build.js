#!/usr/bin/env node
// `npm run build`: compiles into dist/ only when a source changed. The sources' paths and contents
// (plus the compiler settings and the lockfile) are fingerprinted; with the fingerprint of the
// last build unchanged there is nothing to do (a checkout that rewrote files with the same
// content included), and otherwise tsc compiles
// incrementally (dist/tsconfig.build.tsbuildinfo) and tsc-alias rewrites the `@app/` imports.
// Output whose source is gone is deleted, so dist/ holds what a full build would.
// Plain JavaScript, so that it runs before anything is compiled (bin/cms.js uses it too).
'use strict';
const { execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const FINGERPRINT_FILE = path.join(DIST, '.build-fingerprint');
const SOURCE_DIRS = ['libs', 'services', 'scripts', 'bench', 'sdk'];
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

/** Every .ts file under the source folders (tests included: cheap to over-approximate). */
function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist') return [];
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** A hash of what the build reads: each input's path and content. */
function fingerprint() {
  const hash = createHash('sha256');
  const inputs = [
    ...SETTINGS.map((name) => path.join(ROOT, name)),
    ...SOURCE_DIRS.flatMap((dir) => sourceFiles(path.join(ROOT, dir))),
  ];
  for (const file of inputs.sort()) {
    hash
      .update(`${path.relative(ROOT, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  }
  return hash.digest('hex');
}

function isUpToDate(current = fingerprint()) {
  return existsSync(FINGERPRINT_FILE) && readFileSync(FINGERPRINT_FILE, 'utf8') === current;
}

/** Deletes compiled files whose TypeScript source no longer exists (a file moved or removed). */
function removeOrphans(dir = DIST) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      removeOrphans(full);
      if (readdirSync(full).length === 0) rmSync(full, { recursive: true });
      continue;
    }
    const match = /^(.*)\.js(\.map)?$/.exec(entry.name);
    if (!match || dir === DIST) continue;
    const source = path.join(ROOT, path.relative(DIST, dir), `${match[1]}.ts`);
    if (!existsSync(source)) rmSync(full);
  }
}

/** Compiles what changed; returns false when nothing had to be done. */
function build({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const current = fingerprint();
  if (isUpToDate(current)) return false;
  const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);
  const started = Date.now();
  log('build: compiling what changed (tsc --incremental)...');
  const run = (name, args) =>
    execFileSync(bin(name), args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  run('tsc', ['-p', 'tsconfig.build.json']);
  run('tsc-alias', ['-p', 'tsconfig.build.json']);
  mkdirSync(DIST, { recursive: true });
  removeOrphans();
  writeFileSync(FINGERPRINT_FILE, current);
  log(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return true;
}

module.exports = { build, isUpToDate };

if (require.main === module) {
  try {
    build();
  } catch {
    // tsc has printed the errors.
    process.exit(1);
  }
}
