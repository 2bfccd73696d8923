import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RpcModule } from '../core/rpc.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { ConversationsController } from './conversations.controller';
import { MessageCursors } from './message-cursor';

/** The conversations operations, answered by the conversations service. */
@Module({
  imports: [RpcModule, IdempotencyModule],
  controllers: [ConversationsController],
  providers: [
    {
      provide: MessageCursors,
      inject: [DataSource],
      useFactory: (db: DataSource) => MessageCursors.load(db),
    },
  ],
})
export class ConversationsModule {}
