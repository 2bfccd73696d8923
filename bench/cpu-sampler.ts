import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time by server-side process group, read from /proc as bench/baseline's load generator does,
 * so that figures compare with its `us/req` column. Request rates on a shared 2-core VM vary by
 * ±20% from run to run; CPU per request varies far less, which makes it the figure to compare
 * code changes with.
 */
export const CPU_GROUPS = ['gateway', 'conversations', 'webhooks', 'postgres', 'rabbitmq', 'redis'] as const;
export type CpuGroup = (typeof CPU_GROUPS)[number];
/** CPU ticks used so far by each process of a group (its own and its reaped children's), by pid. */
export type CpuTicks = Map<number, { group: CpuGroup; ticks: number; parent: number }>;

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

function groupOf(comm: string, cmdline: string): CpuGroup | undefined {
  if (comm === 'postgres' || cmdline.startsWith('postgres:') || cmdline.includes('/postgres '))
    return 'postgres';
  if (comm.startsWith('beam') || comm === 'erl_child_setup' || comm === 'epmd' || comm === 'inet_gethost')
    return 'rabbitmq';
  if (comm.startsWith('redis-server')) return 'redis';
  for (const service of ['gateway', 'conversations', 'webhooks'] as const) {
    if (cmdline.includes(`services/${service}/src/main.js`)) return service;
  }
  return undefined;
}

/** CPU ticks used so far (user + system, with waited-for children) by every group's processes. */
export function sampleCpu(): CpuTicks {
  const ticks: CpuTicks = new Map();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const group = groupOf(comm, cmdline);
      if (!group) continue;
      // Fields after "(comm) ": state is [0], ppid [1], utime [11], stime [12], cutime [13], cstime [14].
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const used = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      ticks.set(Number(pid), { group, ticks: used, parent: Number(fields[1]) });
    } catch {
      // the process ended while being read
    }
  }
  return ticks;
}

/**
 * Microseconds of CPU per request, by group and in all, between two samples: each process's
 * increase (a process started in between counts from zero). A process that ended in between and
 * was reaped by a parent of its group (a Postgres backend whose pool closed it as idle) reappears
 * whole in the parent's cutime, the time it had used before the first sample included: that part
 * is taken off again, so only its time between the samples counts. One reaped by a process
 * outside the groups (a service stopped by the bench) is left out, so no figure can be negative.
 */
export function cpuPerRequest(
  before: CpuTicks,
  after: CpuTicks,
  requests: number,
): Record<CpuGroup | 'total', number> {
  const used = Object.fromEntries(CPU_GROUPS.map((group) => [group, 0])) as Record<CpuGroup, number>;
  for (const [pid, { group, ticks }] of after) {
    used[group] += Math.max(0, ticks - (before.get(pid)?.ticks ?? 0));
  }
  for (const [pid, { group, ticks, parent }] of before) {
    if (!after.has(pid) && after.get(parent)?.group === group) used[group] -= ticks;
  }
  for (const group of CPU_GROUPS) used[group] = Math.max(0, used[group]);
  const byGroup = Object.fromEntries(
    CPU_GROUPS.map((group) => [group, Math.round((used[group] / TICKS_PER_SECOND / requests) * 1e6)]),
  ) as Record<CpuGroup, number>;
  const total = CPU_GROUPS.reduce((sum, group) => sum + byGroup[group], 0);
  return { ...byGroup, total };
}
