/**
 * A concurrency limit that follows latency (the gradient method of Netflix's concurrency-limits):
 * no figure to tune for the machine. Every window the mean time of the requests answered in it
 * (short RTT) is compared with a slow moving average of it (long RTT): while requests take no
 * longer than TOLERANCE times their long-run time the limit grows by about its square root (room
 * for a queue), and as they take longer it shrinks in proportion, so queueing inside the gateway
 * stays a small multiple of the work's own time instead of growing with the offered load. The
 * limit does not change while under half of it is used (the load, not the limit, bounds the
 * traffic then, and a slow moment is none of its doing). The long RTT moves slowly towards the
 * short one (hardly at all while requests queue past the tolerance, so a period of overload does
 * not become the new normal) and quickly back down when requests get faster.
 *
 * Beside it, a cap for the time requests take whatever the share of the limit in use: a window
 * whose requests took longer on average than LATENCY_OBJECTIVE_MS caps the limit at those in
 * flight scaled down to the objective (a queue that makes admitted requests late is shed at once,
 * however far under the limit it stands), and each window back under half of it raises the cap
 * by half until it is gone. A steady concurrency of slower requests (a change of mix) within the
 * objective never meets it, and nothing in flight at all lifts it: a burst that drained is no
 * queue standing.
 */
export interface AdaptiveLimitOptions {
  initial: number;
  min: number;
  /** The hard ceiling (LOAD_SHED_MAX_IN_FLIGHT). */
  max: number;
}

/** How long requests may take, relative to their long-run time, before the limit shrinks. */
const TOLERANCE = 2;
/** Samples, at least, and milliseconds, at least, in a window. */
const WINDOW_SAMPLES = 10;
const WINDOW_MS = 100;
/** Weight of a window in the long RTT (about the last 50 windows), and while over tolerance. */
const LONG_WEIGHT = 1 / 50;
const LONG_WEIGHT_OVERLOADED = 1 / 1000;
/** Weight of a new estimate in the limit (smoothing). */
const SMOOTHING = 0.2;
/**
 * The mean time in the gateway past which a window's requests were late: the read latency
 * objective (p99 of GET under 300 ms, docs/operations.md "Service levels"), so that the admitted
 * requests' tail stays within a small multiple of it under any overload.
 */
export const LATENCY_OBJECTIVE_MS = 300;
/** How much the objective's cap rises each window under half the objective. */
const CAP_RECOVERY = 1.5;

export class AdaptiveLimit {
  private estimate: number;
  private longRttMs = 0;
  private samples = 0;
  private sumMs = 0;
  private maxInFlight = 0;
  private windowStart = 0;
  /** The objective's cap on the limit; Infinity while none. */
  private cap = Infinity;

  constructor(private readonly options: AdaptiveLimitOptions) {
    this.estimate = options.initial;
  }

  /** Requests that may be in flight now. */
  get limit(): number {
    return Math.floor(Math.min(this.estimate, this.cap));
  }

  /** Nothing is in flight: whatever queue made requests late has drained. */
  idle(): void {
    this.cap = Infinity;
  }

  /** The long-run time of a request (ms), 0 before the first window. */
  get longRtt(): number {
    return this.longRttMs;
  }

  /** One answered request: its time in the gateway and how many were in flight when it arrived. */
  sample(rttMs: number, inFlight: number, nowMs: number): void {
    if (this.samples === 0) this.windowStart = nowMs;
    this.samples += 1;
    this.sumMs += rttMs;
    this.maxInFlight = Math.max(this.maxInFlight, inFlight);
    if (this.samples < WINDOW_SAMPLES || nowMs - this.windowStart < WINDOW_MS) return;
    this.update(this.sumMs / this.samples, this.maxInFlight);
    this.samples = 0;
    this.sumMs = 0;
    this.maxInFlight = 0;
  }

  private update(shortRttMs: number, inFlight: number): void {
    this.updateCap(shortRttMs, inFlight);
    if (this.longRttMs === 0) this.longRttMs = shortRttMs;
    else if (shortRttMs < this.longRttMs) this.longRttMs += (shortRttMs - this.longRttMs) / 2;
    else {
      // Queueing (short past tolerance) barely moves it: overload must not become the norm.
      const weight = shortRttMs > TOLERANCE * this.longRttMs ? LONG_WEIGHT_OVERLOADED : LONG_WEIGHT;
      this.longRttMs += (shortRttMs - this.longRttMs) * weight;
    }
    // Under half used: the limit is not what bounds the traffic, and a slow window then is no
    // queue of its making (a noisy neighbour, a garbage collection): it stays as it is.
    if (inFlight < this.estimate / 2) return;
    const gradient = Math.max(0.5, Math.min(1, (TOLERANCE * this.longRttMs) / shortRttMs));
    const next = this.estimate * gradient + Math.sqrt(this.estimate);
    const smoothed = this.estimate * (1 - SMOOTHING) + next * SMOOTHING;
    this.estimate = Math.max(this.options.min, Math.min(this.options.max, smoothed));
  }

  private updateCap(shortRttMs: number, inFlight: number): void {
    if (shortRttMs > LATENCY_OBJECTIVE_MS) {
      const scaled = (inFlight * LATENCY_OBJECTIVE_MS) / shortRttMs;
      this.cap = Math.max(this.options.min, Math.min(this.cap, scaled));
    } else if (this.cap !== Infinity && shortRttMs < LATENCY_OBJECTIVE_MS / 2) {
      this.cap *= CAP_RECOVERY;
      if (this.cap >= this.options.max) this.cap = Infinity;
    }
  }
}
