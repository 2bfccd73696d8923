import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { ConversationRpc, RpcCall } from '@app/contracts';
import { HandlesRpc } from '@app/messaging';
import { ConversationsService } from './conversations.service';

/** RPC entry points (commands already validated by the RpcServer): one call into the service each. */
@Controller()
export class ConversationsHandler {
  constructor(private readonly service: ConversationsService) {}

  @HandlesRpc(ConversationRpc.list)
  list(@Payload() request: RpcCall<typeof ConversationRpc.list>) {
    return this.service.list(request);
  }

  @HandlesRpc(ConversationRpc.get)
  get(@Payload() request: RpcCall<typeof ConversationRpc.get>) {
    return this.service.get(request);
  }

  @HandlesRpc(ConversationRpc.create)
  create(@Payload() request: RpcCall<typeof ConversationRpc.create>) {
    return this.service.create(request);
  }

  @HandlesRpc(ConversationRpc.sendMessage)
  sendMessage(@Payload() request: RpcCall<typeof ConversationRpc.sendMessage>) {
    return this.service.sendMessage(request);
  }

  @HandlesRpc(ConversationRpc.update)
  update(@Payload() request: RpcCall<typeof ConversationRpc.update>) {
    return this.service.update(request);
  }

  @HandlesRpc(ConversationRpc.delete)
  delete(@Payload() request: RpcCall<typeof ConversationRpc.delete>) {
    return this.service.delete(request);
  }

  @HandlesRpc(ConversationRpc.listMessages)
  listMessages(@Payload() request: RpcCall<typeof ConversationRpc.listMessages>) {
    return this.service.listMessages(request);
  }

  @HandlesRpc(ConversationRpc.getLead)
  getLead(@Payload() request: RpcCall<typeof ConversationRpc.getLead>) {
    return this.service.getLead(request);
  }

  @HandlesRpc(ConversationRpc.captureLead)
  captureLead(@Payload() request: RpcCall<typeof ConversationRpc.captureLead>) {
    return this.service.captureLead(request);
  }
}
