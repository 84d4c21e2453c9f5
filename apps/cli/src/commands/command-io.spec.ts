import { UserExistsError, UserNotFoundError } from '@castlog/auth';
import { CliError, describeError, runCommand } from './command-io';

describe('describeError', () => {
  it('words the store errors for the command line', () => {
    expect(describeError(new UserExistsError('alice'))).toBe('user alice already exists');
    expect(describeError(new UserNotFoundError('bob'))).toBe('no user bob');
  });

  it('puts a multi-line message on one line', () => {
    const error = new Error('Invalid configuration:\n  PORT: bad\n  DATABASE_URL: must be a postgres:// URL');
    expect(describeError(error)).toBe(
      'Invalid configuration: PORT: bad; DATABASE_URL: must be a postgres:// URL',
    );
  });

  it('falls back to the code of an error without message, and to the first of an AggregateError', () => {
    const refused = Object.assign(new Error(''), { code: 'ECONNREFUSED' });
    expect(describeError(refused)).toBe('ECONNREFUSED');
    expect(describeError(new AggregateError([new Error('connect ECONNREFUSED ::1:5432')], ''))).toBe(
      'connect ECONNREFUSED ::1:5432',
    );
  });
});

describe('runCommand', () => {
  it('turns a thrown error into one line on stderr and exit code 1, without a stack', async () => {
    const stderr = { text: '', write: (chunk: string) => (stderr.text += chunk) };
    expect(
      await runCommand({ stderr }, async () => {
        throw new CliError('nope');
      }),
    ).toBe(1);
    expect(stderr.text).toBe('castlog: nope\n');
    expect(await runCommand({ stderr }, async () => 0)).toBe(0);
  });
});
