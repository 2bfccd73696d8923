import { Gauge, Registry } from 'prom-client';
import { METRIC_PREFIX } from './metrics-registry';

export interface ScrapeTimeGauge<Row> {
  /** Without the `cms_` prefix. */
  name: string;
  help: string;
  value: (row: Row) => number;
}

/**
 * Gauges read from a shared store (Postgres) at scrape time, so that every replica reports the
 * same truth whichever of them does the work. One `read` per scrape serves them all (their
 * collect() calls start together); when it fails they are NaN (unknown), never a reassuring 0.
 */
export function scrapeTimeGauges<Row>(
  registry: Registry,
  read: () => Promise<Row>,
  gauges: Array<ScrapeTimeGauge<Row>>,
): void {
  let reading: Promise<Row | undefined> | undefined;
  const shared = () =>
    (reading ??= read()
      .catch(() => undefined)
      .finally(() => (reading = undefined)));
  for (const { name, help, value } of gauges) {
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      registers: [registry],
      async collect() {
        const row = await shared();
        this.set(row === undefined ? NaN : value(row));
      },
    });
  }
}
