import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAccountWithCli, requireExecutable, TestStack } from '@app/testing';
import {
  CodeBlock,
  codeBlocks,
  commands,
  documentationPages,
  savedAs,
  shellRunner,
} from './markdown-examples';

/**
 * The README and docs/*.md as a new user follows them (docs/development.md, "How the docs are
 * tested"): every `bash` block runs as written against a real stack, every program the docs ask to
 * save is saved and run by them, and every block run elsewhere names a command that runner runs.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const PAGES = documentationPages(ROOT);
const PROGRAM_LANGUAGES = new Set(['js', 'mjs', 'javascript', 'ts', 'typescript', 'python', 'py']);
const SHELL_LANGUAGES = new Set(['bash', 'sh', 'shell', 'console', 'zsh']);
/** `npm start` and `npm run start:cluster [-- --gateway N ...]`: the supervisor the cluster suite runs. */
const SUPERVISOR_COMMAND =
  /^npm (start|run start:cluster)( -- (--(gateway|conversations|webhooks) \d+ ?)+)?$/;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** Runs a bash script (bounded), collecting its output. */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, detached: true });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** What a page's shell blocks need besides themselves: the README's variables, for the other pages. */
const prelude = (vars: Record<string, string>) =>
  Object.entries(vars)
    .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
    .join('\n');

describe('README and docs, followed as written', () => {
  let stack: TestStack;
  let substitutions: Array<[string, string]>;
  let readmeVariables: Record<string, string>;
  const workdirs: string[] = [];

  beforeAll(async () => {
    // The pages' examples use curl and jq, as a reader would.
    for (const tool of ['curl', 'jq'])
      requireExecutable(
        tool,
        "The docs test (README's examples)",
        `install it with \`sudo apt-get install ${tool}\``,
      );
    stack = await TestStack.start({ webhooks: true, gateway: { CORS_ORIGINS: 'https://app.example.com' } });
    const [receiverPort, libraryReceiverPort] = [await freePort(), await freePort()];
    substitutions = [
      ['http://127.0.0.1:3000', stack.url],
      ['127.0.0.1:4000', `127.0.0.1:${receiverPort}`],
      ['listen(4000,', `listen(${receiverPort},`],
      ['127.0.0.1:4001', `127.0.0.1:${libraryReceiverPort}`],
      ['listen(4001,', `listen(${libraryReceiverPort},`],
    ];
    const { apiKey } = await createAccountWithCli('docs');
    const conversation = await stack
      .api(apiKey)
      .post('/v1/conversations', { subject: 'Docs', message: { sender: 'visitor', content: 'Hello' } });
    readmeVariables = {
      API: `${stack.url}/v1`,
      AUTH: `Authorization: Bearer ${apiKey}`,
      JSON: 'Content-Type: application/json',
      KEY: apiKey,
      ID: (conversation.body as { id: string }).id,
    };
  });

  afterAll(async () => {
    await stack?.close();
    workdirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
  });

  const substitute = (text: string) =>
    substitutions.reduce((result, [from, to]) => result.split(from).join(to), text);

  /** An empty directory that runs `npx cms` as the checkout does. */
  function workdir(): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'cms-docs-'));
    workdirs.push(dir);
    for (const entry of ['package.json', 'bin', 'node_modules']) {
      symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
    }
    return dir;
  }

  it.each(PAGES.map((page) => [page.file, page.markdown]))(
    '%s: its shell blocks run as written',
    async (file, markdown) => {
      const blocks = codeBlocks(file, markdown);
      const shell = blocks.filter((block) => block.language === 'bash' && shellRunner(block) === 'docs-test');
      const programs = blocks.filter((block) => savedAs(block));
      if (shell.length === 0) {
        expect(programs).toEqual([]); // a program nobody runs would be untested
        return;
      }
      const dir = workdir();
      for (const program of programs)
        writeFileSync(path.join(dir, savedAs(program)!), substitute(program.body));
      const script = [
        'set -euo pipefail',
        file === 'README.md' ? '' : prelude(readmeVariables),
        ...shell.map((block) => `echo "[docs] ${block.file}:${block.line}" >&2\n${substitute(block.body)}`),
      ].join('\n');
      const { code, output } = await bash(script, dir, { ...process.env, LOG_LEVEL: 'warn' }, 150_000);
      if (code !== 0)
        throw new Error(`${file} stopped with exit code ${code}; the last lines:\n${output.slice(-3000)}`);
      for (const program of programs) {
        const runs = shell.some((block) => block.body.includes(savedAs(program)!));
        if (!runs)
          throw new Error(`${file}:${program.line}: ${savedAs(program)} is saved but no block runs it`);
      }
    },
    180_000,
  );

  const allBlocks = PAGES.flatMap((page) => codeBlocks(page.file, page.markdown));
  const located = (block: CodeBlock) => `${block.file}:${block.line}`;

  it('every block is a command the test runs, a program it saves, or tagged with who runs it', () => {
    const problems = allBlocks.flatMap((block) => {
      if (SHELL_LANGUAGES.has(block.language) && block.language !== 'bash') {
        return [`${located(block)}: write shell blocks as \`bash\``];
      }
      if (PROGRAM_LANGUAGES.has(block.language) && !savedAs(block)) {
        return [`${located(block)}: a ${block.language} block needs file=NAME and a bash block that runs it`];
      }
      if (block.language === 'bash') {
        try {
          shellRunner(block);
        } catch (error) {
          return [(error as Error).message];
        }
      }
      return [];
    });
    expect(problems).toEqual([]);
  });

  it('`bash ci` blocks name only commands .ci/run runs (or `npm start`, run by the cluster suite)', () => {
    const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
    const ciLines = new Set(ci.split('\n').map((line) => line.trim()));
    const tagged = allBlocks.filter((block) => block.tag === 'ci');
    expect(tagged.length).toBeGreaterThan(0);
    const missing = tagged.flatMap((block) =>
      commands(block.body)
        .filter((command) => !ciLines.has(command) && !SUPERVISOR_COMMAND.test(command))
        .map((command) => `${located(block)}: ${command}`),
    );
    expect(missing).toEqual([]);
  });

  it('`bash cluster` blocks start the supervisor the cluster suite runs', () => {
    const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
    expect(scripts.start).toContain('dist/scripts/start.js');
    expect(scripts['start:cluster']).toContain('dist/scripts/start.js');
    const suite = readFileSync(path.join(ROOT, 'scripts/cluster.e2e-spec.ts'), 'utf8');
    expect(suite).toContain('ClusterProcess');
    const tagged = allBlocks.filter((block) => block.tag === 'cluster');
    const others = tagged.flatMap((block) =>
      commands(block.body)
        .filter((command) => !SUPERVISOR_COMMAND.test(command))
        .map((command) => `${located(block)}: ${command}`),
    );
    expect(others).toEqual([]);
  });

  it('`bash compose` blocks use only docker compose subcommands the compose suite runs', () => {
    const suite = [
      'scripts/compose/run.sh',
      'scripts/compose/test/compose-project.ts',
      'scripts/compose/test/stack.compose-spec.ts',
    ]
      .map((file) => readFileSync(path.join(ROOT, file), 'utf8'))
      .join('\n');
    const tagged = allBlocks.filter((block) => block.tag === 'compose');
    const unknown = tagged.flatMap((block) =>
      commands(block.body)
        .filter((command) => command.startsWith('docker compose '))
        .map((command) => command.split(/\s+/)[2])
        .filter((subcommand) => !new RegExp(`['"\\s]${subcommand}['"\\s]`).test(suite))
        .map((subcommand) => `${located(block)}: docker compose ${subcommand}`),
    );
    expect(unknown).toEqual([]);
    const notCompose = tagged.flatMap((block) =>
      commands(block.body)
        .filter(
          (command) =>
            !command.startsWith('docker compose ') && !command.startsWith('curl -s http://127.0.0.1:3000/'),
        )
        .map((command) => `${located(block)}: ${command}`),
    );
    expect(notCompose).toEqual([]);
  });
});
