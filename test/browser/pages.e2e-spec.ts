import { CastlogUnderTest, EventLogKind, startCastlog } from '../support/start-castlog';
import { chromiumInstalled } from './browser';
import { pageFlows } from './page-flows';

/** The pages' flows on the embedded default's PostgreSQL log and on Kafka, in this process. The
 * container suite (test/containers) runs the same flows against the compose stack. */
(chromiumInstalled
  ? describe.each<EventLogKind>(['postgres', 'kafka'])
  : describe.skip.each<EventLogKind>([]))('the web pages in Chromium (%s log)', (log) => {
  let app: CastlogUnderTest;
  beforeAll(async () => (app = await startCastlog({ log })));
  afterAll(() => app?.close());
  pageFlows(() => app);
});
