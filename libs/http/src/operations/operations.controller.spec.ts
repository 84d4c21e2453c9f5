import { CONFIG, loadConfig } from '@castlog/config';
import { Global, Module } from '@nestjs/common';
import { createHttpApp } from '../create-http-app';
import { RequestMetrics } from '../request-metrics';
import { OperationsModule } from './operations.module';
import { OperationsReport, Readiness } from './operations.report';

let readiness: Readiness = { ready: true, projectionVersion: 1, projectionLag: 0 };
const config = loadConfig({ RETRY_AFTER_SECONDS: '3' });

/** What the runtime provides the operations routes, as a test states it. */
@Global()
@Module({
  providers: [
    { provide: CONFIG, useValue: config },
    { provide: RequestMetrics, useValue: { observeRequest: () => undefined } },
    {
      provide: OperationsReport,
      useValue: { readiness: async () => readiness, metrics: async () => 'castlog_up 1\n' },
    },
  ],
  exports: [CONFIG, OperationsReport, RequestMetrics],
})
class ReportModule {}

@Module({ imports: [ReportModule, OperationsModule] })
class AppModule {}

describe('OperationsController', () => {
  it('serves liveness, readiness and metrics, and answers a process not ready with the error body', async () => {
    const served = await createHttpApp(AppModule, config);
    await served.init();
    const fastify = served.getHttpAdapter().getInstance();
    try {
      expect((await fastify.inject({ url: '/health/live' })).json()).toEqual({ status: 'ok' });
      expect((await fastify.inject({ url: '/health/ready' })).json()).toEqual({
        status: 'ok',
        projection_version: 1,
        projection_lag: 0,
      });
      readiness = { ready: true, projectionVersion: 1, projectionLag: 0, details: ['feed resolver: stuck'] };
      expect((await fastify.inject({ url: '/health/ready' })).json()).toEqual({
        status: 'ok',
        projection_version: 1,
        projection_lag: 0,
        details: ['feed resolver: stuck'],
      });
      const scraped = await fastify.inject({ url: '/metrics' });
      expect(scraped.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(scraped.body).toBe('castlog_up 1\n');
      readiness = { ready: false, reason: 'projection is 9 events behind' };
      const refused = await fastify.inject({ url: '/health/ready' });
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('3');
      expect(refused.json()).toEqual({
        code: '503',
        message: 'Service unavailable, retry later: projection is 9 events behind',
      });
    } finally {
      await served.close();
    }
  });
});
