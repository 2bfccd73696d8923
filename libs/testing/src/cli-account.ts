import { testServices } from './test-stack';

/**
 * `npm run cli -- ARGS` as an operator runs it (in this process, against the run's database and
 * Redis, so running gateways hear what it announces); its output is its JSON line, parsed.
 */
export async function runCliCommand<T = Record<string, unknown>>(...argv: string[]): Promise<T> {
  let stdout = '';
  let stderr = '';
  const code = await testServices().runCli(
    argv,
    { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
    { ...process.env, LOG_LEVEL: 'error' },
  );
  if (code !== 0) throw new Error(`${argv[0]} exited with ${code}: ${stderr}`);
  return JSON.parse(stdout) as T;
}

/** `accounts:create` through the CLI, for tests that start the services as real processes. */
export function createAccountWithCli(name: string): Promise<{ accountId: string; apiKey: string }> {
  return runCliCommand('accounts:create', '--name', name, '--plan', 'business');
}
