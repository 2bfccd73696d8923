import { cpuPerRequest, type CpuTicks } from './cpu-sampler';

const POSTMASTER = 100;
const sample = (
  entries: Array<[pid: number, group: 'postgres' | 'gateway', ticks: number, parent?: number]>,
) => new Map(entries.map(([pid, group, ticks, parent = 1]) => [pid, { group, ticks, parent }])) as CpuTicks;

/** Figures for one request: a tick (10 ms at 100 ticks a second) is 10,000 us. */
describe('cpuPerRequest', () => {
  it('counts each process’s increase, a process started in between from zero', () => {
    const before = sample([
      [POSTMASTER, 'postgres', 10],
      [201, 'postgres', 50, POSTMASTER],
    ]);
    const after = sample([
      [POSTMASTER, 'postgres', 10],
      [201, 'postgres', 80, POSTMASTER],
      [202, 'postgres', 5, POSTMASTER],
    ]);
    expect(cpuPerRequest(before, after, 1).postgres).toBe(350_000); // 35 ticks of 10 ms
  });

  it('counts a backend that ended in between only for its time between the samples, not its whole life', () => {
    // Backend 201 had used 500 ticks (an earlier phase) and 20 more before it was closed as idle:
    // the postmaster's cutime grows by all 520 of them when it reaps it.
    const before = sample([
      [POSTMASTER, 'postgres', 10],
      [201, 'postgres', 500, POSTMASTER],
      [202, 'postgres', 0, POSTMASTER],
    ]);
    const after = sample([
      [POSTMASTER, 'postgres', 10 + 520],
      [202, 'postgres', 30, POSTMASTER],
    ]);
    expect(cpuPerRequest(before, after, 1).postgres).toBe((20 + 30) * 10_000);
  });

  it('leaves out a process reaped outside its group, and never gives a negative figure', () => {
    const before = sample([
      [300, 'gateway', 900, 1],
      [301, 'gateway', 100, 1],
    ]);
    const after = sample([[301, 'gateway', 110, 1]]);
    expect(cpuPerRequest(before, after, 1).gateway).toBe(100_000);
  });
});
