import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import { Registry } from 'prom-client';

/** Prometheus text exposition of the service's registry. */
@Controller('metrics')
export class MetricsController {
  constructor(@Inject(Registry) private readonly registry: Registry) {}

  @Get()
  @Header('cache-control', 'no-store')
  metrics(
    @Res({ passthrough: true }) reply: { header(name: string, value: string): unknown },
  ): Promise<string> {
    reply.header('content-type', this.registry.contentType);
    return this.registry.metrics();
  }
}
