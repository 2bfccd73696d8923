import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { DataSource, type DataSourceOptions } from 'typeorm';
import {
  ConversationsConfig,
  conversationsSchema,
  GatewayConfig,
  gatewaySchema,
  loadConfig,
  WebhooksConfig,
  webhooksSchema,
} from '@app/config';
import { createLogger } from '@app/observability';
import type { Plan } from '@app/dialects';
import type { RunningRpcService } from '@app/runtime';
import { ApiClient } from './api-client';

/** The gateway as a test reaches it: its Nest app and its URL. */
export interface RunningGateway {
  app: NestFastifyApplication;
  url: string;
  close(): Promise<void>;
}

/** What tests do with the gateway's accounts repository. */
export interface TestAccounts {
  createAccount(name: string, plan: Plan): Promise<{ id: string }>;
  createKey(accountId: string): Promise<{ keyId: string; apiKey: string }>;
  revokeKey(keyId: string): Promise<boolean>;
  setScopes(keyId: string, scopes: readonly string[]): Promise<boolean>;
  setPlan(accountId: string, plan: Plan): Promise<boolean>;
}

/**
 * The services a TestStack runs and the CLI it calls. This lib never imports a service (arrows
 * point down, docs/architecture.md): the test set-up of the whole tree, scripts/test-services.ts
 * (Jest's setupFiles), registers them before each test file.
 */
export interface TestServices {
  startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway>;
  startConversations(config: ConversationsConfig, logger: Logger): Promise<RunningRpcService>;
  /** `targets`: the webhooks service's SSRF policy (a TargetPolicy of services/webhooks), if replaced. */
  startWebhooks(config: WebhooksConfig, logger: Logger, targets: unknown): Promise<RunningRpcService>;
  /** The gateway's DataSource options, for the stack's own admin connection. */
  gatewayDataSourceOptions(settings: { DATABASE_URL: string; DATABASE_POOL_SIZE: number }): DataSourceOptions;
  accounts(db: DataSource): TestAccounts;
  /** Folds the analytics slots now instead of on the conversations service's timer. */
  compactAnalytics(conversations: RunningRpcService): Promise<unknown>;
  /** `npm run cli` in this process (scripts/cli.ts runCli). */
  runCli(
    argv: string[],
    output: { stdout: (text: string) => void; stderr: (text: string) => void },
    env: NodeJS.ProcessEnv,
  ): Promise<number>;
}

let registered: TestServices | undefined;

export function registerTestServices(services: TestServices): void {
  registered = services;
}

export function testServices(): TestServices {
  if (!registered) throw new Error('no services registered: run tests through jest.config.js (setupFiles)');
  return registered;
}

export interface TestAccount {
  accountId: string;
  keyId: string;
  apiKey: string;
  api: ApiClient;
}

export interface StackOptions {
  gateway?: Partial<Record<keyof GatewayConfig, string>>;
  conversations?: Partial<Record<keyof ConversationsConfig, string>>;
  /** Also run the webhooks service (`true` for the test defaults, or variables to override them). */
  webhooks?: boolean | Partial<Record<keyof WebhooksConfig, string>>;
  /** The webhooks service's SSRF policy (a TargetPolicy), e.g. with a fake resolver. */
  webhookTargets?: unknown;
}

const logger = () => createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent');
/** Each service's health and metrics server on a free port of its own (`opsUrl`). */
const OPS_SERVER = { OPS_PORT: '0', OPS_HOST: '127.0.0.1' };

/**
 * The real services in this process, against the run's own Postgres database and RabbitMQ vhost
 * (set up by global-setup.ts): the gateway listens on a free port on 127.0.0.1.
 */
export class TestStack {
  conversations?: RunningRpcService;
  webhooks?: RunningRpcService;
  gateway!: RunningGateway;
  private admin!: DataSource;
  private accounts!: TestAccounts;
  private readonly createdAccountIds: string[] = [];

  private constructor(private readonly options: StackOptions) {}

  static async start(options: StackOptions = {}): Promise<TestStack> {
    const stack = new TestStack(options);
    await stack.startConversations();
    if (options.webhooks) await stack.startWebhooks();
    const services = testServices();
    stack.gateway = await services.startGateway(stack.gatewayConfig(), logger());
    stack.admin = new DataSource(
      services.gatewayDataSourceOptions({ DATABASE_URL: process.env.DATABASE_URL!, DATABASE_POOL_SIZE: 2 }),
    );
    await stack.admin.initialize();
    stack.accounts = services.accounts(stack.admin);
    return stack;
  }

  get url(): string {
    return this.gateway.url;
  }

  api(apiKey?: string): ApiClient {
    return new ApiClient(this.url, apiKey);
  }

  gatewayConfig(): GatewayConfig {
    // Many tests send bad keys on purpose from 127.0.0.1: the per-IP limit on failed
    // authentications stays out of their way unless a test sets it.
    return loadConfig(gatewaySchema, {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '1000000',
      // An in-process gateway shares its event loop with the test itself (and its OpenAPI checks):
      // its delay says nothing about the gateway's load. Real gateway processes shed on it.
      LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
      ...this.options.gateway,
    });
  }

  conversationsConfig(overrides: StackOptions['conversations'] = {}): ConversationsConfig {
    return loadConfig(conversationsSchema, {
      ...process.env,
      ...OPS_SERVER,
      OUTBOX_POLL_MS: '200',
      ...this.options.conversations,
      ...overrides,
    });
  }

  /** Starts the conversations service, with `overrides` on top of the stack's own variables. */
  async startConversations(overrides: StackOptions['conversations'] = {}): Promise<void> {
    this.conversations = await testServices().startConversations(
      this.conversationsConfig(overrides),
      logger(),
    );
  }

  async stopConversations(): Promise<void> {
    await this.conversations?.close();
    this.conversations = undefined;
  }

  /**
   * Test defaults: receivers on 127.0.0.1 are allowed, retries after 1 s (four attempts in all),
   * quick polls, and short leases so a killed replica's work moves on within seconds.
   */
  webhooksConfig(): WebhooksConfig {
    const overrides = typeof this.options.webhooks === 'object' ? this.options.webhooks : {};
    return loadConfig(webhooksSchema, {
      ...process.env,
      ...OPS_SERVER,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1',
      WEBHOOK_POLL_MS: '100',
      WEBHOOK_LEASE_SECONDS: '5',
      ...overrides,
    });
  }

  async startWebhooks(): Promise<void> {
    this.webhooks = await testServices().startWebhooks(
      this.webhooksConfig(),
      logger(),
      this.options.webhookTargets,
    );
  }

  async stopWebhooks(): Promise<void> {
    await this.webhooks?.close();
    this.webhooks = undefined;
  }

  async createAccount(plan: Plan = 'business', name = 'Test account'): Promise<TestAccount> {
    const account = await this.accounts.createAccount(name, plan);
    const key = await this.accounts.createKey(account.id);
    this.createdAccountIds.push(account.id);
    return { accountId: account.id, keyId: key.keyId, apiKey: key.apiKey, api: this.api(key.apiKey) };
  }

  accountsRepository(): TestAccounts {
    return this.accounts;
  }

  /** Runs the conversations service's analytics compaction now. */
  compactAnalytics(): Promise<unknown> {
    if (!this.conversations) throw new Error('the conversations service is not running');
    return testServices().compactAnalytics(this.conversations);
  }

  /** Plain SQL on the run's database, for assertions on what was stored. */
  query<T = any>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.admin.query(sql, params);
  }

  async close(): Promise<void> {
    await this.gateway?.close();
    await this.stopWebhooks();
    await this.stopConversations();
    await this.forgetWebhookSubscriptions();
    await this.admin?.destroy();
  }

  /**
   * Test files share the run's database, so a file's pending retries (to receivers it has closed)
   * would otherwise be sent by the next file's webhooks service and show in its figures. Deleting
   * this stack's accounts' subscriptions takes their deliveries with them.
   */
  private async forgetWebhookSubscriptions(): Promise<void> {
    if (!this.admin?.isInitialized || this.createdAccountIds.length === 0) return;
    const [{ exists }] = await this.query(
      `SELECT to_regclass('webhooks.subscriptions') IS NOT NULL AS exists`,
    );
    if (exists)
      await this.query(`DELETE FROM webhooks.subscriptions WHERE account_id = ANY($1)`, [
        this.createdAccountIds,
      ]);
  }
}
