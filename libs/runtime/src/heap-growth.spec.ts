import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * The factor V8 sizes the old generation with after a full collection, as it reports it
 * (`--trace-gc-verbose`), in a process that called setHeapGrowingPercent(percent) once started.
 */
function oldGenerationGrowth(percent: number): number {
  const program = `
    require(${JSON.stringify(path.join(__dirname, 'heap-growth.ts'))}).setHeapGrowingPercent(${percent});
    const live = Array.from({ length: 100000 }, (_, i) => ({ i }));
    gc();
    console.log(live.length);
  `;
  const output = execFileSync(
    process.execPath,
    ['-r', '@swc-node/register', '--expose-gc', '--trace-gc-verbose', '-e', program],
    { encoding: 'utf8', timeout: 30_000 },
  );
  // The last sizing is the explicit gc()'s, after the flag was set (loading the TypeScript
  // compiler may collect before it).
  const limits = [
    ...output.matchAll(/\[HeapController\] Limit: old size: \d+ KB, new limit: \d+ KB \(([\d.]+)\)/g),
  ];
  const limit = limits[limits.length - 1];
  if (!limit) throw new Error(`V8 reported no old-generation limit:\n${output.slice(0, 2000)}`);
  return Number(limit[1]);
}

describe('setHeapGrowingPercent', () => {
  it('sets how far the old generation grows past its live size, in a process already running', () => {
    // Neither is V8's own choice in a young process (4, its largest), which the flag must override.
    expect(oldGenerationGrowth(150)).toBe(2.5);
    expect(oldGenerationGrowth(200)).toBe(3);
  });
});
