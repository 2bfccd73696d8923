import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RpcRequest, WebhookPatterns } from '@app/contracts';
import { WebhooksService } from './webhooks.service';

/** RPC entry points: one call into the service each. */
@Controller()
export class WebhooksHandler {
  constructor(private readonly service: WebhooksService) {}

  @MessagePattern(WebhookPatterns.create)
  create(@Payload() request: RpcRequest<never>) {
    return this.service.create(request);
  }

  @MessagePattern(WebhookPatterns.list)
  list(@Payload() request: RpcRequest<never>) {
    return this.service.list(request);
  }

  @MessagePattern(WebhookPatterns.get)
  get(@Payload() request: RpcRequest<never>) {
    return this.service.get(request);
  }

  @MessagePattern(WebhookPatterns.update)
  update(@Payload() request: RpcRequest<never>) {
    return this.service.update(request);
  }

  @MessagePattern(WebhookPatterns.delete)
  delete(@Payload() request: RpcRequest<never>) {
    return this.service.delete(request);
  }

  @MessagePattern(WebhookPatterns.rotateSecret)
  rotateSecret(@Payload() request: RpcRequest<never>) {
    return this.service.rotateSecret(request);
  }

  @MessagePattern(WebhookPatterns.test)
  test(@Payload() request: RpcRequest<never>) {
    return this.service.test(request);
  }

  @MessagePattern(WebhookPatterns.listDeliveries)
  listDeliveries(@Payload() request: RpcRequest<never>) {
    return this.service.listDeliveries(request);
  }

  @MessagePattern(WebhookPatterns.getDelivery)
  getDelivery(@Payload() request: RpcRequest<never>) {
    return this.service.getDelivery(request);
  }

  @MessagePattern(WebhookPatterns.retryDelivery)
  retryDelivery(@Payload() request: RpcRequest<never>) {
    return this.service.retryDelivery(request);
  }
}
