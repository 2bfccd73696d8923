import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { tracingSchema } from '@app/config';
import {
  contextFrom,
  contextOf,
  endSpan,
  SpanKind,
  startSpan,
  startTracing,
  stopTracing,
  traceHeaders,
} from '@app/observability';

/**
 * `npm run bench:span-cost` (BENCHMARKS.md, "Tracing"): the CPU the spans of one send-message (or
 * with ENDPOINT=get one get) cost the gateway and the conversations service together, away from
 * the noise of a whole stack on a shared machine. A process makes the tracing calls the request
 * makes (the request's server span, the command's, a batched statement's of one command, a send's
 * outbox publish, with their attributes, link and the traceparents sent on) REQUESTS times,
 * yielding to the event loop every 100 so the batch processor exports as it would, and reports its
 * own CPU per request; `off` without OTEL_EXPORTER_OTLP_ENDPOINT (the API's no-ops), `on`
 * exporting to bench/otlp-sink.ts in a process of its own (not counted). The OTEL_* variables
 * given apply (OTEL_TRACES_SAMPLER_ARG for a ratio). Alternates ROUNDS times; medians.
 */
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const REQUESTS = Number(process.env.REQUESTS ?? 100_000);
const SINK_PORT = Number(process.env.SINK_PORT ?? 4320);
/** `send` (4 spans) or `get` (the request, the command and a read statement: 3). */
const ENDPOINT = process.env.ENDPOINT === 'get' ? 'get' : 'send';

/** What one send-message (or get) does with tracing, gateway then conversations service, in order. */
function send(requestId: string): void {
  const request = startSpan(
    ENDPOINT === 'send' ? 'POST /v1/conversations/:id/messages' : 'GET /v1/conversations/:id',
    {
      kind: SpanKind.SERVER,
      parent: contextFrom({ host: '127.0.0.1', 'content-type': 'application/json' }),
      attributes: { 'app.request_id': requestId },
    },
  );
  const amqpHeaders = traceHeaders(contextOf(request));

  const command = startSpan(`conversations.${ENDPOINT === 'send' ? 'send-message' : 'get'} process`, {
    kind: SpanKind.SERVER,
    parent: contextFrom(amqpHeaders),
    attributes: { 'app.request_id': requestId, 'app.command_id': requestId },
  });
  const commandContext = contextOf(command);
  const { traceparent } = traceHeaders(commandContext);
  const statement = startSpan(ENDPOINT === 'send' ? 'append_messages' : 'read_conversations', {
    kind: SpanKind.INTERNAL,
    parent: commandContext,
    links: [commandContext],
    attributes: { 'app.batch.size': 1 },
  });
  endSpan(statement);
  endSpan(command);
  if (ENDPOINT === 'send') publishEvent(requestId, traceparent);
  request.setAttribute('http.response.status_code', ENDPOINT === 'send' ? 201 : 200);
  endSpan(request);
}

/** The outbox relay's publish of the event a send made. */
function publishEvent(requestId: string, traceparent: string | undefined): void {
  const publish = startSpan('conversations.events publish', {
    kind: SpanKind.PRODUCER,
    parent: contextFrom(traceparent ? { traceparent } : undefined),
    attributes: { 'messaging.message.id': requestId },
  });
  traceHeaders(contextOf(publish));
  endSpan(publish);
}

async function child(): Promise<void> {
  startTracing(tracingSchema('span-cost'));
  const run = async (requests: number) => {
    for (let i = 0; i < requests; i++) {
      send(`req-${i}`);
      if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await run(REQUESTS / 5); // warm-up
  const before = process.cpuUsage();
  await run(REQUESTS);
  await stopTracing(); // what is still buffered is exported, and counted
  const used = process.cpuUsage(before);
  process.stdout.write(`${(used.user + used.system) / REQUESTS}\n`);
}

async function main(): Promise<void> {
  const sink = spawn(
    process.execPath,
    ['-r', '@swc-node/register', path.join(__dirname, 'otlp-sink.ts'), `${SINK_PORT}`],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const measured: Record<'off' | 'on', number[]> = { off: [], on: [] };
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of ['off', 'on'] as const) {
        const env: NodeJS.ProcessEnv = { ...process.env, SPAN_COST_CHILD: '1' };
        if (mode === 'on') env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${SINK_PORT}`;
        else delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
        const output = execFileSync(process.execPath, ['-r', '@swc-node/register', __filename], {
          env,
          encoding: 'utf8',
        });
        measured[mode].push(Number(output.trim()));
        console.log(`round ${round} ${mode}: ${Number(output).toFixed(2)} us/request`);
      }
    }
  } finally {
    sink.kill('SIGTERM');
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const off = median(measured.off);
  const on = median(measured.on);
  console.log(
    `median: off ${off.toFixed(2)}, on ${on.toFixed(2)}, tracing ${(on - off).toFixed(2)} us/request`,
  );
}

void (process.env.SPAN_COST_CHILD ? child() : main());
