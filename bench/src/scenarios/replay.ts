import { quoteIdent } from '@castlog/read-model';
import { replayInto, verifyReplay } from '@castlog/replay';
import { uniqueName } from '../castlog';
import { ScenarioOutcome } from '../report';
import { ratio, round, since, summarize } from '../stats';
import { targetOf } from '../targets';
import { LogFixture } from './catchup';

/** `castlog replay --verify` on the catch-up's log: replayInto a scratch schema (from offset 0,
 * through applyBatch), then verifyReplay against the caught-up schema; events/s against the
 * catch-up's rate. */
export async function replayScenario(
  fixture: LogFixture,
  log: (line: string) => void,
): Promise<ScenarioOutcome> {
  const { runtime, liveSchema, events } = fixture;
  const { dataSource } = runtime.database;
  const schema = uniqueName('bench_replay');
  const gaps: number[] = [];
  let last = performance.now();
  let lastReport = 0;
  const started = performance.now();
  log(`replay: replaying ${events.toLocaleString('en-US')} events into ${schema}`);
  await replayInto({
    dataSource,
    eventLog: runtime.eventLog,
    schema,
    onProgress: (done) => {
      const now = performance.now();
      if (done > 0) gaps.push(now - last);
      last = now;
      if (done - lastReport >= 100_000) {
        lastReport = done;
        log(`replay: ${done.toLocaleString('en-US')} of ${events.toLocaleString('en-US')}`);
      }
    },
  });
  const replaySeconds = since(started) / 1000;
  log(`replay: replayed in ${replaySeconds.toFixed(1)} s; verifying against ${liveSchema}`);
  const verifyStarted = performance.now();
  const differences = await verifyReplay({
    dataSource,
    eventLog: runtime.eventLog,
    schema,
    liveSchema,
    liveTimeoutMs: 60_000,
  });
  const verifySeconds = since(verifyStarted) / 1000;
  await dataSource.query(`DROP SCHEMA ${quoteIdent(schema)} CASCADE`).catch(() => undefined);
  const replayRate = events / replaySeconds;
  const totalRate = events / (replaySeconds + verifySeconds);
  const replayRatio = ratio(replayRate, fixture.catchupEventsPerS);
  const totalRatio = ratio(totalRate, fixture.catchupEventsPerS);
  log(`replay: verified in ${verifySeconds.toFixed(1)} s, ${differences.length} differences`);
  const batchGap = summarize(gaps);
  const secondsTarget = targetOf('replay.seconds');
  return {
    name: 'replay',
    result: {
      description:
        'What `castlog replay --verify` runs (replayInto a scratch schema from offset 0 through applyBatch, ' +
        'every partition read at once and gathered by batchTransactions as the projector does; then verifyReplay ' +
        "compares it table by table with the caught-up schema), on the catch-up scenario's log. " +
        'batch_gap: time between two applied batches (several transactions are in flight). ' +
        'Reference: the catch-up rate of the same run.',
      settings: { events, batch_events: 2000 },
      measured: {
        replay_seconds: round(replaySeconds, 2),
        verify_seconds: round(verifySeconds, 2),
        replay_events_per_s: round(replayRate, 1),
        replay_and_verify_events_per_s: round(totalRate, 1),
        differences: differences.length,
        replay_and_verify_seconds: round(replaySeconds + verifySeconds, 2),
        batch_gap: batchGap,
      },
      baseline: { catchup_events_per_s: round(fixture.catchupEventsPerS, 1) },
      throughput_ratio_vs_catchup: replayRatio,
      replay_and_verify_ratio_vs_catchup: totalRatio,
      verified_equal: differences.length === 0,
    },
    rows: [
      {
        scenario: 'replay',
        metric: 'replay (rebuild only)',
        unit: 'events/s',
        measured: round(replayRate, 1),
        baseline: round(fixture.catchupEventsPerS, 1),
        ratio: replayRatio,
      },
      {
        scenario: 'replay',
        metric: `replay + verify of ${events.toLocaleString('en-US')} events, time in all (no baseline)`,
        unit: 's',
        measured: round(replaySeconds + verifySeconds, 1),
        baseline: Number.NaN,
        ratio: Number.NaN,
        target: secondsTarget.text,
        // The target is for 1,000,000 events: a smaller log is shown, not judged.
        ...(events === 1_000_000 ? { met: secondsTarget.met(replaySeconds + verifySeconds) } : {}),
      },
      {
        scenario: 'replay',
        metric: `replay --verify (${differences.length} differences)`,
        unit: 'events/s',
        measured: round(totalRate, 1),
        baseline: round(fixture.catchupEventsPerS, 1),
        ratio: totalRatio,
        target: '0 differences',
        met: differences.length === 0,
      },
    ],
    chart: {
      title: 'replay --verify vs catch-up',
      subtitle: `${events.toLocaleString('en-US')} events; replay ${replaySeconds.toFixed(1)} s, verify ${verifySeconds.toFixed(1)} s, ${differences.length} differences`,
      panels: [
        {
          title: 'throughput',
          unit: 'events/s',
          groups: [
            {
              label: 'rebuild',
              bars: [
                { series: 'replay', value: replayRate },
                { series: 'catch-up (same run)', value: fixture.catchupEventsPerS },
              ],
            },
            {
              label: 'rebuild + verify',
              bars: [
                { series: 'replay', value: totalRate },
                { series: 'catch-up (same run)', value: fixture.catchupEventsPerS },
              ],
            },
          ],
        },
        {
          title: 'replay: time between applied batches',
          unit: 'ms',
          groups: (['p50_ms', 'p95_ms', 'p99_ms'] as const).map((key) => ({
            label: key.replace('_ms', ''),
            bars: [{ series: 'replay', value: batchGap[key] }],
          })),
        },
      ],
    },
  };
}
