import { z } from 'zod';
import { DATABASE_BOUND_DEFAULTS } from './database-bounds';
import {
  boolean,
  ConfigError,
  encryptionKeys,
  type EncryptionKey,
  hostPortList,
  integer,
  loadConfig,
  optionalUrl,
  url,
  urlList,
} from './load-config';

/** One schema per concern; each service composes the ones it needs. Defaults are for local runs. */
export const commonSchema = {
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Old-generation growth before a full collection, percent of the live heap (heap-growth.ts); 0: V8's own. */
  HEAP_GROWING_PERCENT: integer(0, 1000, 300),
};

/**
 * Tracing (docs/operations.md "Tracing"): spans are exported over OTLP/HTTP only when an endpoint
 * is set, under the service's name unless another is given.
 */
export const tracingSchema = (serviceName: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl(['http:', 'https:']),
  OTEL_SERVICE_NAME: z.string().min(1).default(serviceName),
});

export const databaseSchema = {
  DATABASE_URL: url(['postgres:', 'postgresql:'], 'postgres://postgres@127.0.0.1:5432/postgres'),
  DATABASE_POOL_SIZE: integer(1, 200, 10),
  /** Longest a statement may run (Postgres's statement_timeout; the client gives up just after). */
  DATABASE_QUERY_TIMEOUT_MS: integer(100, 600_000, DATABASE_BOUND_DEFAULTS.DATABASE_QUERY_TIMEOUT_MS),
  /** Longest wait for a pooled connection, opening a new one included. */
  DATABASE_CONNECT_TIMEOUT_MS: integer(100, 60_000, DATABASE_BOUND_DEFAULTS.DATABASE_CONNECT_TIMEOUT_MS),
};

export const amqpSchema = {
  /** One broker, or the nodes of a cluster comma-separated (a connection moves to a surviving node). */
  AMQP_URL: urlList(['amqp:', 'amqps:'], 'amqp://guest:guest@127.0.0.1:5672'),
  /** Unacknowledged RPC commands one service replica holds at once. */
  AMQP_PREFETCH: integer(1, 1000, 32),
  /**
   * `classic` (commands in memory, one broker) or `quorum` (replicated, for a cluster); `auto`:
   * quorum when AMQP_URL names several nodes.
   */
  RPC_QUEUE_TYPE: z.enum(['auto', 'classic', 'quorum']).default('auto'),
};

export const redisSchema = {
  REDIS_URL: url(['redis:', 'rediss:'], 'redis://127.0.0.1:6379'),
  REDIS_KEY_PREFIX: z.string().default('cms:'),
  /**
   * Redis Sentinels (`host:port`, comma-separated): when set, the primary is the one they name
   * REDIS_SENTINEL_NAME and REDIS_URL supplies only the credentials and database.
   */
  REDIS_SENTINELS: hostPortList(),
  REDIS_SENTINEL_NAME: z.string().min(1).default('cms'),
};

export const rateLimitSchema = {
  RATE_LIMIT_ENABLED: boolean(true),
  RATE_LIMIT_WINDOW_SECONDS: integer(1, 86_400, 3600),
  /** Buckets per window: memory per account is this many counters; precision is window/buckets. */
  RATE_LIMIT_BUCKETS: integer(1, 3600, 60),
  RATE_LIMIT_TRIAL: integer(1, 1_000_000_000, 100),
  RATE_LIMIT_PRO: integer(1, 1_000_000_000, 1000),
  RATE_LIMIT_BUSINESS: integer(1, 1_000_000_000, 10_000),
  /** With Redis unreachable: `open` admits requests, `closed` answers 503. */
  RATE_LIMIT_FAIL_MODE: z.enum(['open', 'closed']).default('open'),
  /** Failed authentications per client IP and minute before they are answered 429. */
  RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: integer(1, 1_000_000, 30),
  /** Longest a rate-limit check waits for Redis before the fail mode applies. */
  REDIS_TIMEOUT_MS: integer(10, 10_000, 250),
};

/**
 * Origins browsers may call the API from (CORS), comma-separated, each `scheme://host[:port]`
 * exactly as browsers send it in `Origin`; empty: none (the API is for servers).
 */
const corsOrigins = z
  .string()
  .default('')
  .transform((text) =>
    text
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
  )
  .refine((origins) => origins.every((origin) => /^https?:\/\/[^/?#\s]+$/.test(origin)), {
    message:
      'must be comma-separated origins such as https://app.example.com (scheme://host[:port], no path)',
  });

/** The ops HTTP server of a service without a public port: /health/live, /health/ready, /metrics. */
export const opsSchema = (defaultPort: number) => ({
  /** 0 picks a free port (tests). */
  OPS_PORT: integer(0, 65535, defaultPort),
  OPS_HOST: z.string().default('0.0.0.0'),
});

export const gatewaySchema = {
  ...commonSchema,
  ...tracingSchema('gateway'),
  ...databaseSchema,
  ...amqpSchema,
  ...redisSchema,
  PORT: integer(0, 65535, 3000),
  HOST: z.string().default('0.0.0.0'),
  /** How long the gateway waits for a service's reply before answering 504. */
  RPC_TIMEOUT_MS: integer(100, 120_000, 5000),
  /** How long a verified API key is trusted from memory; bounds how late a revocation applies. */
  AUTH_CACHE_TTL_MS: integer(0, 60_000, 5000),
  BODY_LIMIT_BYTES: integer(1024, 10 * 1024 * 1024, 1024 * 1024),
  IDEMPOTENCY_TTL_HOURS: integer(1, 24 * 30, 24),
  /** Behind a reverse proxy, trust its X-Forwarded-For for the client address (per-IP limits). */
  TRUST_PROXY: boolean(false),
  /** On SIGTERM, keep serving this long, every response closing its connection, before the listener closes. */
  SHUTDOWN_DRAIN_MS: integer(0, 20_000, 0),
  /** Ceiling and start of the adaptive in-flight limit (it follows latency, load-shedding/adaptive-limit.ts); 0: no ceiling. */
  LOAD_SHED_MAX_IN_FLIGHT: integer(0, 1_000_000, 512),
  /** Event-loop delay (ms) from which new requests are answered 503 `overloaded` at once; 0: no bound. */
  LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: integer(0, 10_000, 200),
  CORS_ORIGINS: corsOrigins,
  /** Open `GET /v1/events/stream` connections per account, across every gateway replica. */
  STREAMS_PER_ACCOUNT: integer(1, 1000, 5),
  /** How often an idle stream gets a heartbeat comment line: at least every 15 s, as proxies close idle ones. */
  STREAM_HEARTBEAT_MS: integer(100, 15_000, 15_000),
  /** Events a stream may hold for a client that does not read them; past it the stream is closed (resume with Last-Event-ID). */
  STREAM_BUFFER_EVENTS: integer(10, 100_000, 1000),
  /** How long a gateway keeps receiving events after its last stream closed (a client reconnecting). */
  STREAM_FEED_LINGER_MS: integer(0, 3_600_000, 30_000),
  ...rateLimitSchema,
};

export const conversationsSchema = {
  ...commonSchema,
  ...tracingSchema('conversations'),
  ...databaseSchema,
  ...amqpSchema,
  ...opsSchema(3101),
  /** Poll interval of the outbox relay, for rows another replica wrote and did not relay (the committing replica wakes its own relay). */
  OUTBOX_POLL_MS: integer(10, 60_000, 1000),
  OUTBOX_BATCH_SIZE: integer(1, 10_000, 200),
  /** How long the relay lets commits gather after a wake-up before publishing them as one batch. */
  OUTBOX_COALESCE_MS: integer(0, 1000, 5),
  /** How long events are kept for the events API and stream resumes (published outbox rows). */
  EVENT_RETENTION_DAYS: integer(1, 3650, 30),
  /** How long the stream conversations.events.stream keeps events (RabbitMQ's x-max-age: a count and Y, M, D, h, m or s). */
  EVENT_STREAM_MAX_AGE: z
    .string()
    .regex(/^[1-9][0-9]{0,5}[YMDhms]$/, 'must be a count and a unit of Y, M, D, h, m or s, as in 7D')
    .default('7D'),
  /** The most bytes that stream keeps (x-max-length-bytes): past it, its oldest segments go first. */
  EVENT_STREAM_MAX_BYTES: integer(1_000_000, 1_000_000_000_000_000, 20_000_000_000),
  /**
   * Batched statements (send-message, reading one conversation, a page of a list variant) a
   * replica runs at once, of each kind; what arrives meanwhile shares the next one (BatchedCalls).
   * Fewer at once means fuller statements and fewer commits: 2 cost send 50-60 us less of
   * Postgres's CPU than 4 on the 2-core bench (bench/history/2026-11-sittings.md, sixth sitting).
   */
  DATABASE_BATCH_CONCURRENCY: integer(1, 100, 2),
  /** The most commands or queries one batched statement serves. */
  DATABASE_BATCH_MAX: integer(1, 1000, 64),
  RUN_MIGRATIONS: boolean(true),
};

/** The delays before each retry (Svix's schedule; docs/webhooks.md); the first attempt is immediate. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = '5,300,1800,7200,18000,36000,36000';

/** Comma-separated seconds (decimals allowed), 1 to 20 entries, each at most a week. */
const retrySchedule = z
  .string()
  .default(DEFAULT_WEBHOOK_RETRY_SCHEDULE)
  .refine(
    (text) =>
      /^\s*\d+(\.\d+)?\s*(,\s*\d+(\.\d+)?\s*){0,19}$/.test(text) &&
      text.split(',').every((s) => Number(s) <= 604_800),
    'must be 1 to 20 comma-separated numbers of seconds, each at most 604800',
  )
  .transform((text) => text.split(',').map((s) => Number(s)));

/**
 * The keys webhook signing secrets are encrypted with at rest (docs/operations.md, "Secrets at
 * rest"): `id:base64` entries, the first encrypts, all decrypt.
 */
export const secretsSchema = {
  NODE_ENV: commonSchema.NODE_ENV,
  SECRETS_ENCRYPTION_KEYS: encryptionKeys(),
};

export interface SecretsSettings {
  NODE_ENV: string;
  SECRETS_ENCRYPTION_KEYS: EncryptionKey[];
}

export const webhooksSchema = {
  ...commonSchema,
  ...tracingSchema('webhooks'),
  ...databaseSchema,
  ...amqpSchema,
  ...opsSchema(3201),
  /** Let subscriptions target loopback, private and link-local addresses, over http too (local dev, tests). */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean(false),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule,
  /** Whole attempt (connect, headers, body) before it counts as failed. */
  WEBHOOK_TIMEOUT_MS: integer(100, 60_000, 10_000),
  /** Requests in flight to one subscription at once, per replica. */
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: integer(1, 1000, 8),
  /** Requests in flight per replica, all subscriptions together. */
  WEBHOOK_MAX_IN_FLIGHT: integer(1, 100_000, 512),
  /** Unacknowledged events the fan-out consumer holds per replica. */
  WEBHOOK_EVENTS_PREFETCH: integer(1, 10_000, 256),
  /** Fallback poll for due retries (commits of tests and manual retries also wake it). */
  WEBHOOK_POLL_MS: integer(10, 60_000, 1000),
  /** How long a replica's claim on a delivery lasts unless renewed; a crashed replica's work moves after this. */
  WEBHOOK_LEASE_SECONDS: integer(2, 3600, 30),
  /** A subscription whose every attempt has failed for this long is disabled. */
  WEBHOOK_DISABLE_AFTER_DAYS: integer(1, 365, 5),
  /** Finished deliveries and their attempts are kept this long. */
  WEBHOOK_LOG_RETENTION_DAYS: integer(1, 3650, 30),
  RUN_MIGRATIONS: boolean(true),
  ...secretsSchema,
};

/** Refuses production without SECRETS_ENCRYPTION_KEYS; elsewhere a development key stands in. */
export function requireSecretsKeysInProduction<C extends SecretsSettings>(config: C): C {
  if (config.NODE_ENV === 'production' && config.SECRETS_ENCRYPTION_KEYS.length === 0)
    throw new ConfigError([
      'SECRETS_ENCRYPTION_KEYS: required when NODE_ENV=production (docs/operations.md, "Secrets at rest")',
    ]);
  return config;
}

export type GatewayConfig = ReturnType<typeof loadConfig<typeof gatewaySchema>>;
export type ConversationsConfig = ReturnType<typeof loadConfig<typeof conversationsSchema>>;
export type WebhooksConfig = ReturnType<typeof loadConfig<typeof webhooksSchema>>;
