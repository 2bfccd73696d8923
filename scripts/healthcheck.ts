import { conversationsSchema, gatewaySchema, loadConfig, webhooksSchema } from '@app/config';

/**
 * The containers' health check (the image has no curl): exits 0 when the service named by SERVICE
 * answers GET /health/ready on its own port (the gateway's PORT, the other services' OPS_PORT),
 * otherwise 1. Ports come from the same validated configuration the service reads.
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
fetch(readinessUrl(service), { signal: AbortSignal.timeout(4000) }).then(
  (response) => process.exit(response.ok ? 0 : 1),
  () => process.exit(1),
);
