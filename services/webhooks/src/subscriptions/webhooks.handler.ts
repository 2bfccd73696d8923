import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { RpcCall, WebhookRpc } from '@app/contracts';
import { HandlesRpc } from '@app/messaging';
import { WebhooksService } from './webhooks.service';

/** RPC entry points (commands already validated by the RpcServer): one call into the service each. */
@Controller()
export class WebhooksHandler {
  constructor(private readonly service: WebhooksService) {}

  @HandlesRpc(WebhookRpc.create)
  create(@Payload() request: RpcCall<typeof WebhookRpc.create>) {
    return this.service.create(request);
  }

  @HandlesRpc(WebhookRpc.list)
  list(@Payload() request: RpcCall<typeof WebhookRpc.list>) {
    return this.service.list(request);
  }

  @HandlesRpc(WebhookRpc.get)
  get(@Payload() request: RpcCall<typeof WebhookRpc.get>) {
    return this.service.get(request);
  }

  @HandlesRpc(WebhookRpc.update)
  update(@Payload() request: RpcCall<typeof WebhookRpc.update>) {
    return this.service.update(request);
  }

  @HandlesRpc(WebhookRpc.delete)
  delete(@Payload() request: RpcCall<typeof WebhookRpc.delete>) {
    return this.service.delete(request);
  }

  @HandlesRpc(WebhookRpc.rotateSecret)
  rotateSecret(@Payload() request: RpcCall<typeof WebhookRpc.rotateSecret>) {
    return this.service.rotateSecret(request);
  }

  @HandlesRpc(WebhookRpc.test)
  test(@Payload() request: RpcCall<typeof WebhookRpc.test>) {
    return this.service.test(request);
  }

  @HandlesRpc(WebhookRpc.listDeliveries)
  listDeliveries(@Payload() request: RpcCall<typeof WebhookRpc.listDeliveries>) {
    return this.service.listDeliveries(request);
  }

  @HandlesRpc(WebhookRpc.getDelivery)
  getDelivery(@Payload() request: RpcCall<typeof WebhookRpc.getDelivery>) {
    return this.service.getDelivery(request);
  }

  @HandlesRpc(WebhookRpc.retryDelivery)
  retryDelivery(@Payload() request: RpcCall<typeof WebhookRpc.retryDelivery>) {
    return this.service.retryDelivery(request);
  }

  @HandlesRpc(WebhookRpc.replay)
  replay(@Payload() request: RpcCall<typeof WebhookRpc.replay>) {
    return this.service.replay(request);
  }
}
