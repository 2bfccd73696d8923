/**
 * Jest's setupFiles (jest.config.js): hands libs/testing the services its TestStack runs and the
 * CLI it calls. The lib cannot import them itself (libs never import services or scripts,
 * docs/architecture.md); this file, in the composition layer beside scripts/start.ts, can.
 */
import { registerTestServices } from '@app/testing';
import { AnalyticsCompactionJob } from '../services/conversations/src/analytics/analytics-compaction.job';
import { startConversationsService } from '../services/conversations/src/conversations-service';
import { AccountsRepository } from '../services/gateway/src/accounts/accounts.repository';
import { gatewayDataSourceOptions } from '../services/gateway/src/data-source';
import { startGateway } from '../services/gateway/src/gateway-service';
import type { TargetPolicy } from '../services/webhooks/src/delivery/target-policy';
import { startWebhooksService } from '../services/webhooks/src/webhooks-service';
import { runCli } from './cli';

registerTestServices({
  startGateway,
  startConversations: startConversationsService,
  startWebhooks: (config, logger, targets) =>
    startWebhooksService(config, logger, { targets: targets as TargetPolicy | undefined }),
  gatewayDataSourceOptions,
  accounts: (db) => new AccountsRepository(db),
  compactAnalytics: (conversations) => conversations.app.get(AnalyticsCompactionJob).run(),
  runCli,
});
