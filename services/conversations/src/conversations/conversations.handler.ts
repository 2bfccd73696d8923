import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ConversationPatterns, RpcRequest } from '@app/contracts';
import { ConversationsService } from './conversations.service';

/** RPC entry points: one call into the service each. */
@Controller()
export class ConversationsHandler {
  constructor(private readonly service: ConversationsService) {}

  @MessagePattern(ConversationPatterns.list)
  list(@Payload() request: RpcRequest<never>) {
    return this.service.list(request);
  }

  @MessagePattern(ConversationPatterns.get)
  get(@Payload() request: RpcRequest<never>) {
    return this.service.get(request);
  }

  @MessagePattern(ConversationPatterns.create)
  create(@Payload() request: RpcRequest<never>) {
    return this.service.create(request);
  }

  @MessagePattern(ConversationPatterns.sendMessage)
  sendMessage(@Payload() request: RpcRequest<never>) {
    return this.service.sendMessage(request);
  }

  @MessagePattern(ConversationPatterns.changeStatus)
  changeStatus(@Payload() request: RpcRequest<never>) {
    return this.service.changeStatus(request);
  }

  @MessagePattern(ConversationPatterns.captureLead)
  captureLead(@Payload() request: RpcRequest<never>) {
    return this.service.captureLead(request);
  }
}
