import { Client, type Notification } from 'pg';
import type { Logger } from 'pino';
import { dedicatedClientConfig, type DatabaseSettings } from './data-source-options';

export interface PgListenerOptions {
  settings: Omit<DatabaseSettings, 'DATABASE_POOL_SIZE'>;
  /** Names the connection in pg_stat_activity and the log lines. */
  name: string;
  channels: string[];
  onNotification: (channel: string, payload: string | undefined) => void;
  logger: Logger;
  /** After a lost or refused connection, the next try comes this much later. */
  reconnectMs?: number;
}

/**
 * LISTEN on a dedicated connection (outside the pool, with the pool's time bounds) that comes back
 * by itself: a lost or refused connection is logged and tried again every `reconnectMs`. Callers
 * poll as well, so while it is down nothing is missed, only noticed later.
 */
export class PgListener {
  private client?: Client;
  private stopped = false;

  constructor(private readonly options: PgListenerOptions) {}

  /** Resolves once listening, or once the first attempt failed (retries go on in the background). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const { settings, name, channels, onNotification, logger } = this.options;
    const client = new Client(dedicatedClientConfig(settings, name));
    client.on('notification', (message: Notification) => onNotification(message.channel, message.payload));
    client.on('error', (error) => {
      logger.warn({ err: error.message }, `${name} connection lost`);
      void client.end().catch(() => undefined);
      if (this.client === client) this.client = undefined;
      this.retry();
    });
    try {
      await client.connect();
      for (const channel of channels) await client.query(`LISTEN ${channel}`);
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
    } catch (error) {
      logger.warn({ err: (error as Error).message }, `${name} could not connect; polling only`);
      await client.end().catch(() => undefined);
      this.retry();
    }
  }

  private retry(): void {
    setTimeout(() => void this.connect().catch(() => undefined), this.options.reconnectMs ?? 1000).unref();
  }
}
