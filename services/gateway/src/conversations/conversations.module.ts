import { Module } from '@nestjs/common';
import { RpcModule } from '../core/rpc.module';
import { ConversationsController } from './conversations.controller';

/** The conversations operations, answered by the conversations service. */
@Module({ imports: [RpcModule], controllers: [ConversationsController] })
export class ConversationsModule {}
