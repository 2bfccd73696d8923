import { codeBlocks, commands, savedAs, shellRunner } from './markdown-examples';

const page = [
  '# Title',
  '```bash',
  'curl -s $API \\',
  '  -H "$AUTH"   # a comment',
  '```',
  'text',
  '```js file=receiver.mjs',
  'console.log(1);',
  '```',
  '```bash manual: takes an hour',
  'npm run bench',
  '```',
  '```bash nightly',
  'npm run soak',
  '```',
].join('\n');

describe('markdown examples', () => {
  const blocks = codeBlocks('page.md', page);

  it('finds each fenced block with its language, tag and line', () => {
    expect(blocks.map((block) => [block.line, block.language, block.tag])).toEqual([
      [2, 'bash', ''],
      [7, 'js', 'file=receiver.mjs'],
      [10, 'bash', 'manual: takes an hour'],
      [13, 'bash', 'nightly'],
    ]);
    expect(savedAs(blocks[1])).toBe('receiver.mjs');
    expect(savedAs(blocks[0])).toBeUndefined();
  });

  it('knows who runs a shell block, and refuses a tag it does not know', () => {
    expect(shellRunner(blocks[0])).toBe('docs-test');
    expect(shellRunner(blocks[2])).toBe('manual');
    expect(() => shellRunner(blocks[3])).toThrow('page.md:13: unknown tag "nightly"');
    expect(() => shellRunner({ ...blocks[2], tag: 'manual:' })).toThrow('unknown tag');
  });

  it('splits commands on lines and &&, joining continuations and dropping comments', () => {
    expect(commands(blocks[0].body)).toEqual(['curl -s $API -H "$AUTH"']);
    expect(commands('npm ci && npm start   # both\n\n# only a comment\nnpm test')).toEqual([
      'npm ci',
      'npm start',
      'npm test',
    ]);
  });

  it('refuses a block that is never closed', () => {
    expect(() => codeBlocks('open.md', 'text\n```bash\nnpm test\n')).toThrow(
      'open.md:2: code block never closed',
    );
  });
});
