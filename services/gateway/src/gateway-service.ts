import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import type { Logger } from 'pino';
import type { GatewayConfig } from '@app/config';
import { prepareDatabase } from '@app/database';
import { connectAmqp, RpcClient } from '@app/messaging';
import { createMetricsRegistry, PinoNestLogger } from '@app/observability';
import { subscribeToAccountChanges } from './accounts/account-changes';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator';
import { connectRedis } from './rate-limit/redis-connection';
import { RateLimits } from './rate-limit/rate-limits';
import { gatewayDataSourceOptions, GATEWAY_SCHEMA } from './data-source';
import { GatewayAppModule } from './gateway-app.module';
import { originForm } from './http/absolute-form';
import { apiAdmission } from './http/api-admission';
import { registerApiRoutes, undecodableUrl } from './http/api-routes';
import { clientErrorHandler } from './http/client-errors';
import { DrainState, registerConnectionDrain } from './http/connection-drain';
import { registerHttpMetrics } from './http/http-metrics';
import { registerJsonBodies } from './http/json-body';
import { ProblemFilter } from './http/problem.filter';
import { registerRequestIdHeader, requestIdFor } from './http/request-id';
import { registerRequestLog, withRequestLine } from './http/request-logging';
import { registerSchemaValidation } from './http/validation';
import { serveApiDocs } from './api-docs/serve-api-docs';
import { serveProblemPages } from './api-docs/problem-pages';
import { WEBHOOKS_RPC } from './webhooks/webhooks-rpc.token';

export interface RunningGateway {
  app: NestFastifyApplication;
  url: string;
  close(): Promise<void>;
}

export async function migrateGateway(
  config: Pick<GatewayConfig, 'DATABASE_URL'>,
  logger: Logger,
): Promise<void> {
  await prepareDatabase(
    gatewayDataSourceOptions({ DATABASE_URL: config.DATABASE_URL, DATABASE_POOL_SIZE: 2 }),
    GATEWAY_SCHEMA,
    logger,
  );
}

/** The public HTTP API: migrates its schema, connects to RabbitMQ and listens on PORT. */
export async function startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  await migrateGateway(config, logger);
  const amqp = connectAmqp(config.AMQP_URL, 'gateway', logger);
  const redis = connectRedis(config);
  // No ready check (INFO) on the subscriber: after a reconnect it is already in subscriber mode.
  const subscriber = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null, enableReadyCheck: false });
  for (const client of [redis, subscriber]) {
    client.on('error', (error: Error) => logger.debug({ err: error.message }, 'redis connection error'));
  }
  let admission: ReturnType<typeof apiAdmission> | undefined;
  const adapter = new FastifyAdapter({
    rewriteUrl: originForm,
    clientErrorHandler: clientErrorHandler(logger),
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
  const app = await NestFactory.create<NestFastifyApplication>(
    GatewayAppModule.register(config, amqp, redis, logger, registry),
    adapter,
    {
      logger: new PinoNestLogger(logger),
      // Only Fastify's own JSON parser: anything else (forms included) is a 415.
      bodyParser: false,
    },
  );
  const apiKeys = app.get(ApiKeyAuthenticator);
  admission = apiAdmission(apiKeys, app.get(RateLimits));
  subscribeToAccountChanges(subscriber, config.REDIS_KEY_PREFIX, (change) => apiKeys.forget(change), logger);
  const fastify = app.getHttpAdapter().getInstance();
  registerRequestIdHeader(fastify);
  registerRequestLog(fastify, logger);
  registerHttpMetrics(fastify, registry);
  registerJsonBodies(fastify);
  registerSchemaValidation(fastify);
  registerApiRoutes(fastify, admission);
  const drainConnections = registerConnectionDrain(fastify, config.SHUTDOWN_DRAIN_MS, app.get(DrainState));
  app.useGlobalFilters(new ProblemFilter(logger));
  serveApiDocs(fastify);
  serveProblemPages(fastify);
  await app.get(RpcClient).waitForConnect();
  await app.listen({ port: config.PORT, host: config.HOST });
  const address = fastify.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const url = `http://127.0.0.1:${port}`;
  logger.info({ url }, 'gateway listening');
  return {
    app,
    url,
    async close() {
      await drainConnections();
      await app.close();
      await app.get(RpcClient).close();
      await app.get<RpcClient>(WEBHOOKS_RPC).close();
      await amqp.close();
      redis.disconnect();
      subscriber.disconnect();
    },
  };
}
