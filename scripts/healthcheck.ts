import { get } from 'node:http';
import { conversationsSchema, gatewaySchema, loadConfig, webhooksSchema } from '@app/config';

/**
 * The containers' health check (the image has no curl): exits 0 when the service named by SERVICE
 * answers GET /health/ready on its own port (the gateway's PORT, the other services' OPS_PORT),
 * otherwise 1. Ports come from the same validated configuration the service reads. It runs every
 * few seconds in every replica, so it uses node:http, which costs half the CPU of loading fetch.
 */
function readinessUrl(service: string): string {
  const port =
    service === 'gateway'
      ? loadConfig(gatewaySchema).PORT
      : loadConfig(service === 'conversations' ? conversationsSchema : webhooksSchema).OPS_PORT;
  return `http://127.0.0.1:${port}/health/ready`;
}

const service = process.env.SERVICE ?? 'gateway';
if (!['gateway', 'conversations', 'webhooks'].includes(service)) {
  process.stderr.write(`healthcheck: unknown SERVICE "${service}"\n`);
  process.exit(1);
}
get(readinessUrl(service), { timeout: 4000 }, ({ statusCode = 0 }) =>
  process.exit(statusCode >= 200 && statusCode < 300 ? 0 : 1),
)
  .on('timeout', () => process.exit(1))
  .on('error', () => process.exit(1));
