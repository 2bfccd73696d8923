import { testServices } from './test-stack';

/**
 * `npm run cli -- accounts:create` as an operator runs it (in this process, against the run's
 * database and Redis), for tests that start the services as real processes; the CLI's own output
 * is its JSON line.
 */
export async function createAccountWithCli(name: string): Promise<{ accountId: string; apiKey: string }> {
  let stdout = '';
  let stderr = '';
  const code = await testServices().runCli(
    ['accounts:create', '--name', name, '--plan', 'business'],
    { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
    { ...process.env, LOG_LEVEL: 'error' },
  );
  if (code !== 0) throw new Error(`accounts:create exited with ${code}: ${stderr}`);
  return JSON.parse(stdout);
}
