import { readFileSync } from 'node:fs';
import path from 'node:path';
import { INSTALL_EVERYTHING, isExecutable, requireExecutable } from './prerequisites';

describe('prerequisites of npm test', () => {
  it('the README gives the same install command the failures name', () => {
    const readme = readFileSync(path.resolve(__dirname, '../../../README.md'), 'utf8');
    expect(readme).toContain(`\n${INSTALL_EVERYTHING}\n`);
  });

  it('finds commands on PATH and by path', () => {
    expect(isExecutable('node')).toBe(true);
    expect(isExecutable(process.execPath)).toBe(true);
    expect(isExecutable('no-such-command-here')).toBe(false);
  });

  it('names what is missing, who needs it and how to install it', () => {
    expect(() => requireExecutable('/nowhere/chromium', 'The browser test', 'install it with `x`')).toThrow(
      'The browser test needs `/nowhere/chromium`, which is not installed here: install it with `x`.',
    );
  });
});
