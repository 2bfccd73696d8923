#!/usr/bin/env bash
# `npm run test:upgrade`: builds HEAD, then runs scripts/upgrade/rolling-upgrade.upgrade-spec.ts,
# which builds the previous release in a git worktree of its own (cached by commit) and upgrades a
# running fleet of it to HEAD, in both orders. Exits 77 (skipped, with a message) when this
# checkout has no git history to build the previous release from (a copy, or a shallow clone).
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! git rev-parse --git-dir >/dev/null 2>&1 || [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  echo "test:upgrade: SKIPPED: no git history here (a copy or a shallow clone); the previous release cannot be checked out" >&2
  exit 77
fi
node scripts/build.js
exec npx jest -c jest.upgrade.config.js --runInBand --forceExit
