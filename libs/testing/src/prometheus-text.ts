interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A /metrics response, parsed: sample values by name and labels. */
export class PrometheusText {
  readonly samples: Sample[];

  constructor(readonly text: string) {
    this.samples = text
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map(parseSample);
  }

  /** Fetches and parses `<baseUrl>/metrics` (which must answer 200 in the Prometheus text format). */
  static async scrape(baseUrl: string): Promise<PrometheusText> {
    const response = await fetch(`${baseUrl}/metrics`);
    if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
    if (!response.headers.get('content-type')?.startsWith('text/plain; version=0.0.4')) {
      throw new Error(`/metrics content type ${response.headers.get('content-type')}`);
    }
    return new PrometheusText(await response.text());
  }

  /** The sum of the samples named `name` whose labels include `labels`; undefined when there is none. */
  value(name: string, labels: Record<string, string> = {}): number | undefined {
    const matching = this.samples.filter(
      (sample) =>
        sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    );
    return matching.length === 0 ? undefined : matching.reduce((sum, sample) => sum + sample.value, 0);
  }

  /** How much a sample grew since an earlier scrape (an absent sample counts as 0). */
  since(earlier: PrometheusText, name: string, labels: Record<string, string> = {}): number {
    return (this.value(name, labels) ?? 0) - (earlier.value(name, labels) ?? 0);
  }

  /** Whether the text declares a metric of this name (with its # TYPE line). */
  declares(name: string): boolean {
    return this.text.includes(`# TYPE ${name} `);
  }
}

function parseSample(line: string): Sample {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
  if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
  const labels: Record<string, string> = {};
  for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
    labels[key] = value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return { name: match[1], labels, value: Number(match[3]) };
}
