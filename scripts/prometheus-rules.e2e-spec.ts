import { readFileSync } from 'node:fs';
import path from 'node:path';
import { load } from 'js-yaml';
import { TestStack } from '@app/testing';

/**
 * The Prometheus rules (deploy/prometheus/rules.yml, unit-tested by `npm run test:alerts`) name
 * only metrics the services really export: a renamed metric would leave an alert that can never
 * fire. Every `cms_*` name in an expression is announced (`# TYPE`) by one of the three services'
 * /metrics, a histogram's `_bucket`/`_count`/`_sum` series by their histogram.
 */

interface Rules {
  groups: Array<{ rules: Array<{ expr: string }> }>;
}

const rules = load(readFileSync(path.resolve(__dirname, '../deploy/prometheus/rules.yml'), 'utf8')) as Rules;
const HISTOGRAM_SERIES = /_(bucket|count|sum)$/;

describe('deploy/prometheus/rules.yml', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ webhooks: true });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('uses only metrics the gateway, conversations and webhooks services export', async () => {
    const scrapes = await Promise.all(
      [stack.url, stack.conversations!.opsUrl, stack.webhooks!.opsUrl].map(async (url) =>
        (await fetch(`${url}/metrics`)).text(),
      ),
    );
    const exported = new Set(
      scrapes.flatMap((text) => [...text.matchAll(/^# TYPE (\S+) /gm)].map(([, name]) => name)),
    );
    const used = new Set(
      rules.groups.flatMap((group) =>
        group.rules.flatMap((rule) => rule.expr.match(/\bcms_[a-z0-9_]+/g) ?? []),
      ),
    );
    expect(used.size).toBeGreaterThan(5);
    const unknown = [...used].filter(
      (name) => !exported.has(name) && !exported.has(name.replace(HISTOGRAM_SERIES, '')),
    );
    expect(unknown).toEqual([]);
  });
});
