import { ApiClient } from './api-client';
import { createAccountWithCli } from './cli-account';
import { ServiceProcess } from './service-process';

/**
 * What the overload test and bench drive: a conversations service and a gateway as processes, and
 * `accounts` accounts (an API key each, with three conversations to list) whose plan limit is far
 * away, so the limiter checks every request and refuses none.
 */
export interface ListLoadStack {
  gateway: ServiceProcess;
  conversations: ServiceProcess;
  apiKeys: string[];
  stop(): Promise<void>;
}

export async function startListLoadStack(options: {
  name: string;
  accounts: number;
  gatewayEnv?: Record<string, string>;
}): Promise<ListLoadStack> {
  const conversations = await ServiceProcess.start('conversations', { LOG_LEVEL: 'warn' });
  const gateway = await ServiceProcess.start('gateway', {
    LOG_LEVEL: 'warn',
    REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}${options.name}:`,
    RATE_LIMIT_BUSINESS: '1000000000',
    ...options.gatewayEnv,
  });
  const stop = async () => {
    await gateway.stop();
    await conversations.stop();
  };
  const apiKeys: string[] = [];
  try {
    for (let i = 0; i < options.accounts; i += 1) {
      const { apiKey } = await createAccountWithCli(`${options.name} ${i}`);
      apiKeys.push(apiKey);
      const api = new ApiClient(gateway.url, apiKey);
      for (let c = 0; c < 3; c += 1) {
        const created = await api.post('/v1/conversations', { subject: `c${c}` });
        if (created.status !== 201) throw new Error(`creating a conversation answered ${created.status}`);
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { gateway, conversations, apiKeys, stop };
}
