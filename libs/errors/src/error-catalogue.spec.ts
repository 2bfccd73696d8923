import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOGUE, type ErrorCode } from './error-codes';
import { problemType } from './problem-details';

/** docs/errors.md and the catalogue cannot drift: every code, its status, title and help, nothing else. */
describe('docs/errors.md', () => {
  const doc = readFileSync(path.resolve(__dirname, '../../../docs/errors.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| (\d{3}) +\| \[`(\w+)`\]\(#[\w-]+\) +\| (.+?) +\|$/gm)].map(
    ([, status, code, title]) => ({
      status: Number(status),
      code,
      title,
    }),
  );

  it('lists every code once with its status and title, in the catalogue order', () => {
    expect(rows).toEqual(
      Object.entries(ERROR_CATALOGUE).map(([code, { status, title }]) => ({ status, code, title })),
    );
  });

  it.each(Object.keys(ERROR_CATALOGUE) as ErrorCode[])('explains %s as its problem page does', (code) => {
    const { status, title, help } = ERROR_CATALOGUE[code];
    expect(doc).toContain(`### ${code.replace(/_/g, '-')}\n\n**${status} \`${code}\`: ${title}.** ${help}`);
    expect(doc).toContain(`Served at \`${problemType(code)}\`.`);
  });
});
