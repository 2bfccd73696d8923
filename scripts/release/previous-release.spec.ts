import { changelogReleases } from './previous-release';
import { sameInstall } from './release-checkout';

describe('changelogReleases', () => {
  it('reads each release and the commit on its Commit: line, newest first; Unreleased and entries without one aside', () => {
    const changelog = [
      '# Changelog',
      '## [Unreleased]',
      '### Added',
      '- Commit: not a release line',
      '## [1.1.0] - 2026-12-01',
      'Commit: 0123456789abcdef0123456789abcdef01234567',
      '### Fixed',
      '## [1.0.1] - 2026-11-30',
      'No commit line: skipped.',
      '## [1.0.0] - 2026-11-26',
      '',
      'Commit: d6708906c995dbe97879ee8cec4f8e432552cfd7',
    ].join('\n');
    expect(changelogReleases(changelog)).toEqual([
      { version: '1.1.0', commit: '0123456789abcdef0123456789abcdef01234567' },
      { version: '1.0.0', commit: 'd6708906c995dbe97879ee8cec4f8e432552cfd7' },
    ]);
  });
});

describe('sameInstall: may a release run with these node_modules', () => {
  const lock = (typebox: string, eslint = '9.0.0') => ({
    '': { version: '1.0.0' },
    'node_modules/@sinclair/typebox': { version: typebox, integrity: `sha512-${typebox}` },
    'node_modules/typescript': { version: '5.9.3', integrity: 'sha512-ts', dev: true },
    'node_modules/eslint': { version: eslint, integrity: `sha512-${eslint}`, dev: true },
    'node_modules/@cms/cli': { link: true },
  });

  it('yes when what it runs and builds with is locked the same (other dev tools may differ)', () => {
    expect(sameInstall(lock('0.34.52'), lock('0.34.52', '8.0.0'))).toBe(true);
  });

  it('no when a dependency differs, or the release has no lockfile', () => {
    expect(sameInstall(lock('0.34.52'), lock('0.34.41'))).toBe(false);
    expect(sameInstall(lock('0.34.52'), {})).toBe(false);
  });
});
