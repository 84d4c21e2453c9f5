import { poll } from '../../../test/support/until';
import { closeGracefully } from './process-lifecycle';

describe('closeGracefully', () => {
  it('drains HTTP first, then stops the modules, then closes the runtime', async () => {
    const steps: string[] = [];
    let drained: () => void = () => undefined;
    const app = {
      getHttpAdapter: () => ({
        getInstance: () => ({
          close: () =>
            new Promise<void>((resolve) => (drained = resolve)).then(() => void steps.push('http')),
          server: { closeIdleConnections: () => steps.push('idle connections closed') },
        }),
      }),
      close: async () => void steps.push('modules'),
    };
    const runtime = { close: async () => void steps.push('runtime') };
    const closing = closeGracefully(app, runtime, (message) => steps.push(`log: ${message}`));
    // Kept-alive connections are closed as soon as they are idle, while requests drain.
    await poll('an idle sweep', () => steps.includes('idle connections closed'), { everyMs: 10 });
    expect(steps).not.toContain('modules');
    drained();
    await closing;
    expect(steps.filter((step) => step !== 'idle connections closed')).toEqual([
      'http',
      'log: HTTP drained',
      'modules',
      'log: consumers and saga stopped',
      'runtime',
    ]);
  });

  it('stops the modules and the runtime of an app without HTTP', async () => {
    const steps: string[] = [];
    await closeGracefully(
      {
        getHttpAdapter: () => ({ getInstance: () => undefined }),
        close: async () => void steps.push('modules'),
      },
      { close: async () => void steps.push('runtime') },
    );
    expect(steps).toEqual(['modules', 'runtime']);
  });
});
