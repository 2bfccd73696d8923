import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { OtlpReceiver } from '@app/testing';

/**
 * Head sampling follows the SDK's standard OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, and
 * is parent-based: at ratio 0 no trace begins here, yet a trace an upstream caller sampled is
 * continued (and one it sampled out is not). A process of its own starts tracing (the exporter
 * loads its HTTP agent in a way Jest's module system does not run) and exports to a receiver here.
 */
describe('sampling', () => {
  let otlp: OtlpReceiver;

  beforeAll(async () => {
    otlp = await OtlpReceiver.start();
  });

  afterAll(() => otlp?.close());

  it('begins no trace at ratio 0 but continues a sampled caller, and exports only that', async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const program = `
      const { tracingSchema } = require(${JSON.stringify(path.join(__dirname, '../../../config/src'))});
      const { startTracing, stopTracing } = require(${JSON.stringify(path.join(__dirname, 'sdk.ts'))});
      const spans = require(${JSON.stringify(path.join(__dirname, 'spans.ts'))});
      const { contextFrom, contextOf, endSpan, SpanKind, startSpan, traceHeaders } = spans;
      startTracing(tracingSchema('sampling-spec'));
      const caller = (flags) => contextFrom({ traceparent: '00-${traceId}-${callerSpanId}-' + flags });
      const root = startSpan('root', { kind: SpanKind.SERVER });
      const child = startSpan('child', { kind: SpanKind.CLIENT, parent: contextOf(root) });
      const sampledOut = startSpan('sampled out', { kind: SpanKind.SERVER, parent: caller('00') });
      const continued = startSpan('continued', { kind: SpanKind.SERVER, parent: caller('01') });
      const seen = Object.fromEntries(
        Object.entries({ root, child, sampledOut, continued }).map(([name, span]) => [
          name,
          { recording: span.isRecording(), traceparent: traceHeaders(contextOf(span)).traceparent },
        ]),
      );
      for (const span of [child, root, sampledOut, continued]) endSpan(span);
      stopTracing().then(() => console.log(JSON.stringify(seen)));
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['-r', '@swc-node/register', '-e', program],
      {
        encoding: 'utf8',
        timeout: 30_000,
        env: {
          ...process.env,
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '0',
        },
      },
    );
    const seen = JSON.parse(stdout) as Record<string, { recording: boolean; traceparent: string }>;

    expect(seen).toEqual({
      // The decision travels on: what is sent downstream says "not sampled".
      root: { recording: false, traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/) },
      child: { recording: false, traceparent: expect.stringMatching(/-00$/) },
      sampledOut: { recording: false, traceparent: expect.stringMatching(`^00-${traceId}-[0-9a-f]{16}-00$`) },
      continued: { recording: true, traceparent: expect.stringMatching(`^00-${traceId}-[0-9a-f]{16}-01$`) },
    });
    // stopTracing exported what was buffered before the process printed: only the continued span.
    expect(otlp.spans).toEqual([
      expect.objectContaining({
        service: 'sampling-spec',
        name: 'continued',
        traceId,
        spanId: seen.continued.traceparent.split('-')[2],
        parentSpanId: callerSpanId,
        kind: 2,
      }),
    ]);
  });
});
