import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { EventRpc, RpcCall } from '@app/contracts';
import { HandlesRpc } from '@app/messaging';
import { EventsService } from './events.service';

/** RPC entry points of the events API and the stream's resume. */
@Controller()
export class EventsHandler {
  constructor(private readonly service: EventsService) {}

  @HandlesRpc(EventRpc.list)
  list(@Payload() request: RpcCall<typeof EventRpc.list>) {
    return this.service.list(request);
  }

  @HandlesRpc(EventRpc.get)
  get(@Payload() request: RpcCall<typeof EventRpc.get>) {
    return this.service.get(request);
  }

  @HandlesRpc(EventRpc.window)
  window(@Payload() request: RpcCall<typeof EventRpc.window>) {
    return this.service.window(request);
  }

  @HandlesRpc(EventRpc.countWindow)
  countWindow(@Payload() request: RpcCall<typeof EventRpc.countWindow>) {
    return this.service.countWindow(request);
  }

  @HandlesRpc(EventRpc.replay)
  replay(@Payload() request: RpcCall<typeof EventRpc.replay>) {
    return this.service.replay(request);
  }
}
