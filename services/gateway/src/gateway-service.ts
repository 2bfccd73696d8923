import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import Fastify from 'fastify';
import type { Logger } from 'pino';
import type { GatewayConfig } from '@app/config';
import { CONVERSATIONS_RPC_QUEUE, WEBHOOKS_RPC_QUEUE } from '@app/contracts';
import { DatabaseSettings, prepareDatabase } from '@app/database';
import { declareQueues, RpcClient, rpcQueueDeclarations, rpcQueueType } from '@app/messaging';
import { createMetricsRegistry, PinoNestLogger, tracingOn } from '@app/observability';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator';
import { StreamTokens } from './auth/stream-tokens';
import { RateLimits } from './rate-limit/rate-limits';
import { gatewayDataSourceOptions, GATEWAY_SCHEMA } from './data-source';
import { registerRequestDeadline } from './deadline/request-deadline';
import { GatewayAppModule } from './gateway-app.module';
import { originForm } from './http/absolute-form';
import { apiAdmission } from './http/api-admission';
import { registerApiRoutes, undecodableUrl } from './http/api-routes';
import { clientErrorHandler } from './http/client-errors';
import { DrainState, registerConnectionDrain } from './http/connection-drain';
import { registerHttpMetrics } from './http/http-metrics';
import { registerJsonBodies } from './http/json-body';
import { ProblemFilter } from './http/problem.filter';
import { registerRequestFraming, SERVER_OPTIONS } from './http/request-framing';
import { registerRequestIdHeader, requestIdFor } from './http/request-id';
import { registerRequestLog, withRequestLine } from './http/request-logging';
import { registerRequestTracing } from './request-tracing/request-tracing';
import { registerCors } from './http/cors';
import { registerResponseSerialization } from './http/serialization';
import { registerSchemaValidation } from './http/validation';
import { IdempotencyHooks } from './idempotency/idempotency-hooks';
import { LoadShedder } from './load-shedding/load-shedding';
import { serveApiDocs } from './api-docs/serve-api-docs';
import { serveProblemPages } from './api-docs/problem-pages';

/** Pending connections the kernel may queue for the gateway (capped by net.core.somaxconn). */
const LISTEN_BACKLOG = 4096;

export interface RunningGateway {
  app: NestFastifyApplication;
  url: string;
  close(): Promise<void>;
}

export async function migrateGateway(config: DatabaseSettings, logger: Logger): Promise<void> {
  await prepareDatabase(
    gatewayDataSourceOptions({ ...config, DATABASE_POOL_SIZE: 2 }),
    GATEWAY_SCHEMA,
    logger,
  );
}

/** The public HTTP API: migrates its schema, connects to RabbitMQ and listens on PORT. */
export async function startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  await migrateGateway(config, logger);
  await declareQueues(
    config.AMQP_URL,
    [CONVERSATIONS_RPC_QUEUE, WEBHOOKS_RPC_QUEUE].flatMap((queue) =>
      rpcQueueDeclarations({ queue }, rpcQueueType(config)),
    ),
    logger,
  );
  let admission: ReturnType<typeof apiAdmission> | undefined;
  const http = Fastify({
    rewriteUrl: originForm,
    clientErrorHandler: clientErrorHandler(logger),
    http: SERVER_OPTIONS,
    frameworkErrors: withRequestLine(
      logger,
      undecodableUrl(() => admission),
    ),
    bodyLimit: config.BODY_LIMIT_BYTES,
    genReqId: requestIdFor,
    logger: false,
    // Ids of any length reach the handlers, which answer a malformed one with 404 (the URL's own
    // bound is Node's 16 KiB for the request line and headers).
    routerOptions: { maxParamLength: 16 * 1024 },
    // While closing, a request already on an open connection is served (RabbitMQ, Postgres and
    // Redis close only after Fastify) and its response closes the connection (connection-drain.ts).
    // Fastify's own 503 for it would be a bare JSON body without problem details or X-Request-Id.
    return503OnClosing: false,
    trustProxy: config.TRUST_PROXY,
  });
  const registry = createMetricsRegistry();
  // The very first onRequest hook, before Nest's: refusing work when overloaded must cost next
  // to nothing.
  const shedder = new LoadShedder(
    {
      maxInFlight: config.LOAD_SHED_MAX_IN_FLIGHT,
      maxEventLoopDelayMs: config.LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS,
    },
    registry,
    logger,
  );
  shedder.register(http);
  const adapter = new FastifyAdapter(http);
  const app = await NestFactory.create<NestFastifyApplication>(
    GatewayAppModule.register(config, logger, registry),
    adapter,
    {
      logger: new PinoNestLogger(logger),
      // Only Fastify's own JSON parser: anything else (forms included) is a 415.
      bodyParser: false,
    },
  );
  const apiKeys = app.get(ApiKeyAuthenticator);
  admission = apiAdmission(
    apiKeys,
    app.get(RateLimits),
    app.get(StreamTokens),
    shedder,
    config.REDIS_TIMEOUT_MS,
  );
  const fastify = app.getHttpAdapter().getInstance();
  registerRequestDeadline(fastify, config.RPC_TIMEOUT_MS);
  registerRequestIdHeader(fastify);
  registerRequestFraming(fastify, logger);
  registerCors(fastify, config.CORS_ORIGINS);
  registerRequestLog(fastify, logger);
  if (tracingOn()) registerRequestTracing(fastify);
  registerHttpMetrics(fastify, registry);
  registerJsonBodies(fastify);
  registerSchemaValidation(fastify);
  registerResponseSerialization(fastify);
  registerApiRoutes(fastify, admission);
  app.get(IdempotencyHooks).register(fastify);
  const drainConnections = registerConnectionDrain(fastify, config.SHUTDOWN_DRAIN_MS, app.get(DrainState));
  app.useGlobalFilters(new ProblemFilter(logger));
  serveApiDocs(fastify);
  serveProblemPages(fastify);
  await app.get(RpcClient).waitForConnect();
  // A burst of new connections (clients reconnecting all at once) is accepted, then shed if need
  // be; Node's default backlog (511) drops the excess SYNs, which clients retry only after 1-3 s.
  await app.listen({ port: config.PORT, host: config.HOST, backlog: LISTEN_BACKLOG });
  const address = fastify.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const url = `http://127.0.0.1:${port}`;
  logger.info({ url }, 'gateway listening');
  return {
    app,
    url,
    async close() {
      await drainConnections();
      // Every request in flight is answered within RPC_TIMEOUT_MS; a keep-alive connection Node
      // still counts as busy after that (seen after streams under load) would hold the close for
      // keepAliveTimeout (72 s): the close is bounded instead.
      const bound = setTimeout(() => fastify.server.closeAllConnections(), config.RPC_TIMEOUT_MS + 1000);
      // Streams first (EventsModule), then the features, the RPC clients, and Postgres, RabbitMQ
      // and Redis (their modules' hooks).
      await app.close();
      clearTimeout(bound);
      shedder.close();
    },
  };
}
