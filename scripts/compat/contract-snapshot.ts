import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ContractSnapshot, Schema } from './schema-compat';

/**
 * The schemas of the checkout in the current directory as one JSON document (a ContractSnapshot):
 * the OpenAPI document the gateway serves, every RPC operation's command and reply, every event's
 * data and CloudEvent. Run with a release's own sources and modules (`check:compat` runs it in a
 * worktree of the previous release), so it reads them by path and by what they export rather than
 * importing this checkout's: `node -r @swc-node/register <this file> <out.json>`.
 */
export async function contractSnapshot(root: string): Promise<ContractSnapshot> {
  const load = async (file: string) => (await import(path.join(root, file))) as Record<string, unknown>;
  const contracts = await load('libs/contracts/src');
  const { API_ENDPOINTS } = await load('services/gateway/src/api-docs/serve-api-docs');
  const { openApiDocument } = (await load('services/gateway/src/api-docs/openapi-document')) as {
    openApiDocument: (endpoints: unknown) => Record<string, unknown>;
  };

  const rpc: ContractSnapshot['rpc'] = {};
  for (const group of Object.values(contracts).filter(isOperationGroup))
    for (const operation of Object.values(group))
      rpc[operation.pattern] = { command: plain(operation.command), reply: plain(operation.reply) };

  const events: ContractSnapshot['events'] = {};
  const payloads = contracts.DomainEventPayloads as Record<string, Schema>;
  const envelopes = contracts.CloudEventSchemas as Record<string, Schema> | undefined;
  for (const [type, data] of Object.entries(payloads))
    events[type] = { data: plain(data), envelope: envelopes?.[type] && plain(envelopes[type]) };

  return { http: plain(openApiDocument(API_ENDPOINTS)), rpc, events };
}

interface Operation {
  pattern: string;
  command: Schema;
  reply: Schema;
}

/** An export such as `ConversationRpc`: an object of RPC operations. */
function isOperationGroup(value: unknown): value is Record<string, Operation> {
  if (!value || typeof value !== 'object') return false;
  const members = Object.values(value as Record<string, unknown>);
  return (
    members.length > 0 &&
    members.every(
      (member) =>
        !!member &&
        typeof (member as Operation).pattern === 'string' &&
        typeof (member as Operation).command === 'object' &&
        typeof (member as Operation).reply === 'object',
    )
  );
}

/** The schema as JSON (TypeBox's symbols and undefined members dropped). */
const plain = <T>(schema: T): T => JSON.parse(JSON.stringify(schema)) as T;

if (require.main === module) {
  const [out] = process.argv.slice(2);
  if (!out) throw new Error('usage: contract-snapshot.ts <out.json>');
  void contractSnapshot(process.cwd()).then((snapshot) => writeFileSync(out, JSON.stringify(snapshot)));
}
