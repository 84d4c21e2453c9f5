import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnDaemon } from './process';

describe('spawnDaemon', () => {
  const dir = mkdtempSync(join(tmpdir(), 'castlog-daemon-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const workingDirectoryOf = async (cwd?: string): Promise<string> => {
    const logFile = join(dir, `pwd-${cwd === undefined ? 'ours' : 'given'}.log`);
    const daemon = spawnDaemon('sh', ['-c', 'pwd -P'], {
      logFile,
      detached: false,
      stopSignal: 'SIGTERM',
      ...(cwd === undefined ? {} : { cwd }),
    });
    await daemon.reaped();
    expect(daemon.exited()).toBe('exit code 0');
    return readFileSync(logFile, 'utf8').trim();
  };

  it('runs the daemon in the working directory it is given, else in ours', async () => {
    expect(await workingDirectoryOf('/')).toBe('/');
    expect(await workingDirectoryOf()).toBe(process.cwd());
  });
});
