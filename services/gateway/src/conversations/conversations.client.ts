import { Injectable } from '@nestjs/common';
import {
  CaptureLeadCommand,
  ChangeStatusCommand,
  ConversationPage,
  ConversationPatterns,
  ConversationView,
  ConversationWithMessagesView,
  CreateConversationCommand,
  LeadView,
  ListConversationsQuery,
  MessageView,
  SendMessageCommand,
} from '@app/contracts';
import { RpcClient } from '@app/messaging';
import type { CallContext } from '../http/request-state';

/** The conversations service as the gateway sees it: one RabbitMQ request/reply per operation. */
@Injectable()
export class ConversationsClient {
  constructor(private readonly rpc: RpcClient) {}

  list(call: CallContext, query: ListConversationsQuery) {
    return this.send<ConversationPage>(call, ConversationPatterns.list, query);
  }

  get(call: CallContext, conversationId: string) {
    return this.send<ConversationWithMessagesView>(call, ConversationPatterns.get, { conversationId });
  }

  create(call: CallContext, command: CreateConversationCommand) {
    return this.send<ConversationView>(call, ConversationPatterns.create, command);
  }

  sendMessage(call: CallContext, command: SendMessageCommand) {
    return this.send<MessageView>(call, ConversationPatterns.sendMessage, command);
  }

  changeStatus(call: CallContext, command: ChangeStatusCommand) {
    return this.send<ConversationView>(call, ConversationPatterns.changeStatus, command);
  }

  captureLead(call: CallContext, command: CaptureLeadCommand) {
    return this.send<LeadView>(call, ConversationPatterns.captureLead, command);
  }

  private send<T>(call: CallContext, pattern: string, data: unknown): Promise<T> {
    return this.rpc.send<T>({ pattern, data, ...call });
  }
}
