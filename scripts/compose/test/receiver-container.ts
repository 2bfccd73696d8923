import path from 'node:path';
import { eventually } from '@app/testing';
import { docker } from './compose-project';

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * webhook-receiver.js in a container of the project's image, attached to the project's network
 * as `receiver`: subscriptions deliver to http://receiver:8080/..., container to container.
 */
export class ReceiverContainer {
  private constructor(readonly name: string) {}

  static async start(network: string, image: string): Promise<ReceiverContainer> {
    const name = `${network.replace(/_default$/, '')}-receiver`;
    await docker(['rm', '-f', name]).catch(() => undefined);
    const script = path.join(__dirname, 'webhook-receiver.js');
    await docker([
      'run',
      '-d',
      '--name',
      name,
      '--network',
      network,
      '--network-alias',
      'receiver',
      '--no-healthcheck',
      '-v',
      `${script}:/receiver/webhook-receiver.js:ro`,
      image,
      'node',
      '/receiver/webhook-receiver.js',
    ]);
    const receiver = new ReceiverContainer(name);
    await eventually(async () => (await docker(['logs', name])).stdout.includes('"listening"'), 30_000, 200);
    return receiver;
  }

  url(path: string): string {
    return `http://receiver:8080${path}`;
  }

  /** Every request received so far on paths starting with `prefix`. */
  async received(prefix = '/'): Promise<ReceivedWebhook[]> {
    const { stdout } = await docker(['logs', this.name]);
    return stdout
      .split('\n')
      .filter((line) => line.startsWith('{"path"'))
      .map((line) => JSON.parse(line) as ReceivedWebhook)
      .filter((request) => request.path.startsWith(prefix));
  }

  /** Waits until at least `count` requests arrived on `prefix`. */
  waitFor(prefix: string, count: number, timeoutMs = 60_000): Promise<ReceivedWebhook[]> {
    return eventually(
      async () => {
        const found = await this.received(prefix);
        if (found.length < count)
          throw new Error(`expected ${count} webhooks on ${prefix}, got ${found.length}`);
        return found;
      },
      timeoutMs,
      500,
    );
  }

  remove(): Promise<unknown> {
    return docker(['rm', '-f', this.name]).catch(() => undefined);
  }
}
