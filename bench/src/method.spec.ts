import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alternate } from './rounds';
import { castlogSettings, settingsNotApplied } from './infra';
import { commandOf, inHistory, timestampOf, writeNewFile } from './run-record';
import { spreadOf } from './stats';
import { evaluateTargets } from './targets';

describe('the bench method', () => {
  it('gives the median of the rounds with min and max, the mean of the middle two for an even count', () => {
    expect(spreadOf([0.52, 0.64, 0.6])).toEqual({ median: 0.6, min: 0.52, max: 0.64 });
    expect(spreadOf([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4 });
    expect(spreadOf([Number.NaN, 2])).toEqual({ median: 2, min: 2, max: 2 });
    expect(spreadOf([]).median).toBeNaN();
  });

  it('alternates baseline and castlog, flipping the order every round', async () => {
    const calls: string[] = [];
    const rounds = await alternate(3, async (side, round) => {
      calls.push(`${round}${side[0]}`);
      return side;
    });
    expect(calls).toEqual(['1b', '1c', '2c', '2b', '3b', '3c']);
    expect(rounds.map((r) => r.order.join(' '))).toEqual([
      'baseline castlog',
      'castlog baseline',
      'baseline castlog',
    ]);
    const castlogFirst: string[] = [];
    await alternate(2, async (side) => castlogFirst.push(side), { castlogFirst: true });
    expect(castlogFirst).toEqual(['castlog', 'baseline', 'baseline', 'castlog']);
  });

  it("records node's own command line when node ran with flags of its own, npm's otherwise", () => {
    const script = 'dist/bench/src/main.js';
    const args = ['--scenario', 'replay', '--rounds', '1'];
    expect(commandOf({ args, execArgv: [], script })).toBe('npm run bench -- --scenario replay --rounds 1');
    expect(commandOf({ args, execArgv: [], nodeOptions: ' ', script })).toBe(
      'npm run bench -- --scenario replay --rounds 1',
    );
    expect(commandOf({ args, execArgv: ['--max-semi-space-size=64', '--cpu-prof'], script })).toBe(
      'node --max-semi-space-size=64 --cpu-prof dist/bench/src/main.js --scenario replay --rounds 1',
    );
    expect(commandOf({ args: [], execArgv: [], nodeOptions: '--max-old-space-size=4096', script })).toBe(
      "NODE_OPTIONS='--max-old-space-size=4096' node dist/bench/src/main.js",
    );
  });

  it("names castlog's settings in the environment that a run does not apply, not where the infra is", () => {
    expect(
      settingsNotApplied({
        PROJECTOR_BATCH_SIZE: '500',
        DATABASE_URL: 'postgres://localhost/x',
        KAFKA_BROKERS: '127.0.0.1:9092',
        LOG_LEVEL: 'debug',
        PATH: '/usr/bin',
      }).sort(),
    ).toEqual(['LOG_LEVEL', 'PROJECTOR_BATCH_SIZE']);
    expect(settingsNotApplied({ DATABASE_URL: 'postgres://localhost/x', HOME: '/root' })).toEqual([]);
  });

  it('takes castlog settings given with --set that castlog would accept, and refuses the rest', () => {
    expect(castlogSettings([])).toEqual({});
    expect(castlogSettings(['PROJECTOR_BATCH_SIZE=500', 'LOG_LEVEL=debug'])).toEqual({
      PROJECTOR_BATCH_SIZE: '500',
      LOG_LEVEL: 'debug',
    });
    expect(() => castlogSettings(['PROJECTOR_BATCH_SIZE'])).toThrow('not NAME=value');
    expect(() => castlogSettings(['NO_SUCH_SETTING=1'])).toThrow('castlog has no setting NO_SUCH_SETTING');
    expect(() => castlogSettings(['KAFKA_TOPIC=t'])).toThrow('the bench chooses KAFKA_TOPIC itself');
    expect(() => castlogSettings(['LOG_LEVEL=info', 'LOG_LEVEL=warn'])).toThrow('LOG_LEVEL is set twice');
    expect(() => castlogSettings(['PROJECTOR_BATCH_SIZE=many'])).toThrow(/PROJECTOR_BATCH_SIZE/);
  });

  it('leaves short runs and runs with castlog settings of their own out of the history', () => {
    const full = { started_at: '2026-11-26T13:47:29.000Z', quick: false, short_run: false };
    expect(inHistory(full)).toBe(true);
    expect(inHistory({ ...full, castlog_settings: {} })).toBe(true);
    expect(inHistory({ ...full, castlog_settings: { PROJECTOR_BATCH_SIZE: '500' } })).toBe(false);
    expect(inHistory({ ...full, short_run: true })).toBe(false);
    expect(inHistory({ ...full, quick: true })).toBe(false);
  });

  it('never overwrites a result file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-spec-'));
    const stem = `${timestampOf(new Date('2026-11-25T07:41:09.123Z'))}-write`;
    expect(stem).toBe('2026-11-25T07-41-09Z-write');
    const first = writeNewFile(dir, stem, '.json', 'first');
    const second = writeNewFile(dir, stem, '.json', 'second');
    expect(first).not.toBe(second);
    expect(readdirSync(dir).sort()).toEqual([`${stem}-2.json`, `${stem}.json`]);
    expect(readFileSync(first, 'utf8')).toBe('first');
    expect(readFileSync(second, 'utf8')).toBe('second');
  });

  it('states every target: met, missed with its figure, or not measured', () => {
    const targets = evaluateTargets({
      write: {
        settings: { concurrency: 64 },
        throughput_ratio_vs_baseline: 0.61,
        ratios: {
          throughput: { median: 0.61, min: 0.55, max: 0.82 },
          p99: { median: 1.4, min: 1.2, max: 1.9 },
        },
        p99_ratio_vs_baseline: 1.4,
        batch_100_throughput_ratio_vs_baseline: 0.41,
      },
      catchup: { settings: { events: 20_000 }, throughput_ratio_vs_baseline: 0.9 },
    });
    const byId = Object.fromEntries(targets.map((target) => [target.id, target]));
    expect(targets).toHaveLength(14);
    expect(byId['write.single.throughput']).toMatchObject({
      status: 'missed',
      figure: 0.61,
      every_round_met: false,
    });
    expect(byId['write.single.p99']).toMatchObject({ status: 'met', figure: 1.4, every_round_met: true });
    expect(byId['write.batch_100.throughput']).toMatchObject({ status: 'met', figure: 0.41 });
    expect(byId['catchup.throughput']).toMatchObject({ status: 'not measured', figure: 0.9 });
    expect(byId['catchup.throughput']?.note).toMatch(/20,000 events/);
    expect(byId['listing.p99']).toMatchObject({ status: 'not measured' });
    expect(byId['web.p50']).toMatchObject({ status: 'not measured' });
    expect(byId['coldstart.ready']).toMatchObject({ status: 'not measured' });
    expect(byId['gpodder.basic.throughput']).toMatchObject({ status: 'not measured' });
    const gpodder = evaluateTargets({
      gpodder: {
        throughput_ratio_vs_baseline: 0.93,
        throughput_ratio: { median: 0.93, min: 0.78, max: 1.02 },
      },
    }).find((target) => target.id === 'gpodder.basic.throughput');
    expect(gpodder).toMatchObject({ status: 'met', figure: 0.93, every_round_met: false });
    expect(byId['sync.throughput']).toMatchObject({ status: 'not measured' });
    const sync = Object.fromEntries(
      evaluateTargets({
        sync: {
          settings: { concurrency: 64 },
          throughput_ratio_vs_baseline: 0.85,
          throughput: { throughput_ratio: { median: 0.85, min: 0.81, max: 0.9 } },
          listing_p99_ratio_vs_baseline: 1.6,
          listing: { p99_ratio: { median: 1.6, min: 1.2, max: 1.7 } },
        },
      }).map((target) => [target.id, target]),
    );
    expect(sync['sync.throughput']).toMatchObject({ status: 'met', figure: 0.85, every_round_met: true });
    expect(sync['sync.listing.p99']).toMatchObject({ status: 'missed', figure: 1.6, every_round_met: false });
  });
});
