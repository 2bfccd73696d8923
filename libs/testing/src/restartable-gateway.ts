import { createLogger } from '@app/observability';
import { freePortRange } from './cluster-process';
import { RunningGateway, TestStack, testServices } from './test-stack';

/**
 * A gateway of the stack's on a fixed port, so that a client can be shown to carry on across its
 * restart (the port stays the same; it is outside the ephemeral range, so no outgoing connection
 * takes it while the gateway is down).
 */
export class RestartableGateway {
  private constructor(
    private readonly stack: TestStack,
    private readonly port: number,
    private running: RunningGateway | undefined,
  ) {}

  static async start(stack: TestStack): Promise<RestartableGateway> {
    const gateway = new RestartableGateway(stack, await freePortRange(1), undefined);
    await gateway.up();
    return gateway;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    this.running ??= await testServices().startGateway(
      { ...this.stack.gatewayConfig(), PORT: this.port },
      createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent'),
    );
  }

  /** Stops the gateway: its open streams end, new connections are refused. */
  async down(): Promise<void> {
    await this.running?.close();
    this.running = undefined;
  }

  async restart(): Promise<void> {
    await this.down();
    await this.up();
  }
}
