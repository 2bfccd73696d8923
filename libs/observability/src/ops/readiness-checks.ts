import { HealthIndicatorFunction, HealthIndicatorService } from '@nestjs/terminus';
import type { DataSource } from 'typeorm';

/** The checks /health/ready runs; every one must be up for a 200. */
export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

/** A probe that hangs (a stopped Postgres, a full pool) counts as down after this long. */
const PROBE_TIMEOUT_MS = 2000;

const indicators = new HealthIndicatorService();

/** Up when `probe` settles in time, down (with the reason) when it throws or hangs. */
export function readinessProbe(key: string, probe: () => unknown): HealthIndicatorFunction {
  return async () => {
    const check = indicators.check(key);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)),
        PROBE_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([Promise.resolve().then(probe), timeout]);
      return check.up();
    } catch (error) {
      return check.down({ message: (error as Error).message });
    } finally {
      clearTimeout(timer);
    }
  };
}

export function postgresCheck(db: DataSource): HealthIndicatorFunction {
  return readinessProbe('postgres', () => db.query('SELECT 1'));
}

/** `connected`: the service's AMQP connection (or channel) state, kept current by its reconnect logic. */
export function rabbitmqCheck(connected: () => boolean): HealthIndicatorFunction {
  return readinessProbe('rabbitmq', () => {
    if (!connected()) throw new Error('not connected');
  });
}
