import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { percentile } from '../libs/testing/src/percentile';

/**
 * An open-loop HTTP load: requests are sent at a fixed rate whatever the answers (a closed loop,
 * such as autocannon's, sends the next only when one comes back, so a slow server is offered less
 * and never overloaded). Each latency runs from the time the request was due, so time spent
 * waiting for a free connection on this side counts too (no coordinated omission). Bounded: at
 * most `connections` sockets, each kept open once opened, and at most 4 x `connections` requests
 * due but unanswered; past that a due request is not sent and counted as `notSent` (the driver,
 * or the server, is stuck).
 */
export interface OpenLoopOptions {
  url: string;
  /** Requests per second. */
  rate: number;
  seconds: number;
  connections: number;
  /** Headers of the i-th request (a key per account, say). */
  headers: (i: number) => http.OutgoingHttpHeaders;
  /** Latencies of responses to requests due in the first this many ms are not kept (sockets opening). */
  warmUpMs?: number;
  timeoutMs?: number;
}

export interface OpenLoopResult {
  rate: number;
  seconds: number;
  connections: number;
  statuses: Record<number, number>;
  /** 200 responses per second over the run. */
  admittedPerSecond: number;
  /** Client-side latency of 200 responses, ms from when the request was due. */
  admittedP50Ms: number;
  admittedP99Ms: number;
  admittedMaxMs: number;
  /**
   * Where that latency was spent, p99 of admitted requests: from due to given a socket (this
   * side: a late timer, a busy loop, no free connection), connecting it (0 on a socket kept
   * alive), and from then to answered.
   */
  admittedP99QueuedMs: number;
  admittedP99ConnectingMs: number;
  admittedP99AnsweringMs: number;
  /** Connections opened over the run. */
  connectionsOpened: number;
  /** Admitted requests that took 1 s or more, by the second of the run they were due in. */
  admittedOver1sBySecond: number[];
  errors: number;
  notSent: number;
  /** This driver's own CPU (user + system) over the run, as a share of one core (100: a whole core). */
  driverCpuPercent: number;
  /** This driver's own event-loop delay over the run, p99 and max, ms. */
  driverLoopDelayP99Ms: number;
  driverLoopDelayMaxMs: number;
}

export async function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(options.url)) throw new Error(`loopback only, not ${options.url}`);
  // Every connection opened is kept (Node's default keeps 256 idle ones and closes the rest, so
  // past that the driver would close and reopen connections all run long, at both ends' cost).
  const agent = new http.Agent({
    keepAlive: true,
    maxSockets: options.connections,
    maxFreeSockets: options.connections,
  });
  const statuses: Record<number, number> = {};
  const latencies: number[] = [];
  const queued: number[] = [];
  const connecting: number[] = [];
  const answering: number[] = [];
  let connectionsOpened = 0;
  const over1sBySecond = new Array<number>(Math.ceil(options.seconds)).fill(0);
  let errors = 0;
  let notSent = 0;
  let outstanding = 0;
  const total = Math.round(options.rate * options.seconds);
  const warmUpMs = options.warmUpMs ?? 1000;
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const finished: Array<Promise<void>> = [];
  let sent = 0;

  const send = (i: number, dueAt: number) =>
    new Promise<void>((resolve) => {
      outstanding += 1;
      let socketAt = NaN;
      let connectedAt = NaN;
      const done = (status?: number) => {
        outstanding -= 1;
        if (status === undefined) errors += 1;
        else {
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === 200 && dueAt - started >= warmUpMs) {
            const now = performance.now();
            latencies.push(now - dueAt);
            queued.push(socketAt - dueAt);
            connecting.push(connectedAt - socketAt);
            answering.push(now - connectedAt);
            if (now - dueAt >= 1000) over1sBySecond[Math.floor((dueAt - started) / 1000)] += 1;
          }
        }
        resolve();
      };
      const request = http.get(options.url, { agent, headers: options.headers(i) }, (response) => {
        response.resume();
        response.once('end', () => done(response.statusCode));
        response.once('error', () => done());
      });
      request.once('socket', (socket) => {
        socketAt = performance.now();
        if (!socket.connecting) connectedAt = socketAt;
        else {
          connectionsOpened += 1;
          socket.once('connect', () => (connectedAt = performance.now()));
        }
      });
      request.setTimeout(options.timeoutMs ?? 10_000, () => request.destroy());
      request.once('error', () => done());
    });

  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (sent < total) {
        const dueAt = started + (sent * 1000) / options.rate;
        if (dueAt > now) break;
        if (outstanding >= 4 * options.connections) notSent += 1;
        else finished.push(send(sent, dueAt));
        sent += 1;
      }
      if (sent >= total) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(finished);
  const cpu = process.cpuUsage(cpuBefore);
  const elapsedMs = performance.now() - started;
  loopDelay.disable();
  agent.destroy();
  for (const values of [latencies, queued, connecting, answering]) values.sort((a, b) => a - b);
  return {
    rate: options.rate,
    seconds: options.seconds,
    connections: options.connections,
    statuses,
    admittedPerSecond: Math.round((statuses[200] ?? 0) / options.seconds),
    admittedP50Ms: Math.round(percentile(latencies, 50)),
    admittedP99Ms: Math.round(percentile(latencies, 99)),
    admittedMaxMs: Math.round(latencies[latencies.length - 1] ?? NaN),
    admittedP99QueuedMs: Math.round(percentile(queued, 99)),
    admittedP99ConnectingMs: Math.round(percentile(connecting, 99)),
    admittedP99AnsweringMs: Math.round(percentile(answering, 99)),
    connectionsOpened,
    admittedOver1sBySecond: over1sBySecond,
    errors,
    notSent,
    driverCpuPercent: Math.round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 100),
    driverLoopDelayP99Ms: Math.round(loopDelay.percentile(99) / 1e6),
    driverLoopDelayMaxMs: Math.round(loopDelay.max / 1e6),
  };
}
