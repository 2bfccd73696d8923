import { MessagePattern } from '@nestjs/microservices';
import type { RpcOperation } from '@app/contracts';

/**
 * Marks the handler of an RPC operation. The RpcServer validates each command against the
 * operation's schema before the handler sees it; type the parameter as `RpcCall<typeof op>`.
 */
export const HandlesRpc = (operation: RpcOperation): MethodDecorator => MessagePattern(operation.pattern);
