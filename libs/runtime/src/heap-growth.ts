import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before it
 * starts the next one, in percent (V8's `--heap-growing-percent`; 0 keeps V8's own choice).
 *
 * Under load a service promotes 10-20 MB/s of request-scoped objects (alive across two scavenges
 * while their request waits on the broker or the database) into the old generation. V8 picks the
 * factor from how fast it collects compared with how fast the program allocates, between 1.1 and
 * 4; for these services it chose close to 1.1 (a full collection when the old generation was
 * 40 MB with 35 MB live), so the gateway did a mark-compact about every second, 8-15 ms each with
 * every request in flight waiting, and those pauses were where the slowest 1% of requests came
 * from (BENCHMARKS.md, "Garbage collection"). At 300 (the old generation may reach four times its live
 * size) a busy service does one every several seconds, for 40-55 MB more resident memory.
 *
 * V8 reads the flag each time it sizes the heap after a collection, so setting it at start-up,
 * before any load, takes effect without a command-line flag (which `NODE_OPTIONS` does not
 * accept).
 */
export function setHeapGrowingPercent(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
