import { EventEmitter } from 'node:events';
import { TerminalInput } from './command-io';
import { UsersDeps, promptHidden, usersAdd } from './users.command';

/** A terminal that types its scripted chunks, one per tick, while it is resumed. */
class FakeTerminal extends EventEmitter implements TerminalInput {
  readonly isTTY = true;
  isRaw = false;
  private paused = true;
  readonly rawModes: boolean[] = [];

  constructor(private readonly typed: string[]) {
    super();
  }

  setRawMode(mode: boolean) {
    this.isRaw = mode;
    this.rawModes.push(mode);
    return this;
  }

  setEncoding() {
    return this;
  }

  resume() {
    this.paused = false;
    const type = () => {
      if (this.paused) return;
      const chunk = this.typed.shift();
      if (chunk === undefined) return void this.emit('end');
      this.emit('data', chunk);
      setImmediate(type);
    };
    setImmediate(type);
    return this;
  }

  pause() {
    this.paused = true;
    return this;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    yield* [];
  }
}

const output = () => {
  const sink = { text: '', write: (chunk: string) => (sink.text += chunk) };
  return sink;
};

describe('promptHidden', () => {
  it('reads one line in raw mode, echoing only the prompt, and restores the mode', async () => {
    const terminal = new FakeTerminal(['s3', 'cx\u007fret\r']);
    const out = output();
    await expect(promptHidden('Password: ', terminal, out)).resolves.toBe('s3cret');
    expect(out.text).toBe('Password: \n');
    expect(terminal.rawModes).toEqual([true, false]);
    expect(terminal.listenerCount('data')).toBe(0);
  });

  it('ignores escape sequences such as arrow keys', async () => {
    await expect(promptHidden('', new FakeTerminal(['a\u001b[Db\u001b[1;5C\r']), output())).resolves.toBe(
      'ab',
    );
  });

  it('is cancelled by Ctrl-C and by the end of input', async () => {
    await expect(promptHidden('', new FakeTerminal(['ab\u0003']), output())).rejects.toThrow('cancelled');
    await expect(promptHidden('', new FakeTerminal([]), output())).rejects.toThrow('no password entered');
  });
});

describe('users add on a terminal', () => {
  const deps = (typed: string[]) => {
    const added: [string, string][] = [];
    const store: UsersDeps['store'] = {
      addUser: async (name, password, options) => {
        added.push([name, password]);
        return { id: 'id', name, createdAt: new Date(), isAdmin: options?.admin ?? false };
      },
      listUsers: async () => [],
      removeUser: async () => false,
      setAdmin: async () => false,
    };
    return { added, deps: { store, stdin: new FakeTerminal(typed), stdout: output(), stderr: output() } };
  };

  it('asks twice and adds the user when both answers match', async () => {
    const { added, deps: d } = deps(['pw 1\r', 'pw 1\r']);
    expect(await usersAdd(d, 'alice')).toBe(0);
    expect(added).toEqual([['alice', 'pw 1']]);
    expect(d.stderr.text).toBe('Password: \nRepeat password: \n');
  });

  it('refuses answers that differ', async () => {
    const { added, deps: d } = deps(['pw 1\r', 'pw 2\r']);
    expect(await usersAdd(d, 'alice')).toBe(1);
    expect(added).toEqual([]);
    expect(d.stderr.text).toMatch(/castlog: the passwords do not match\n$/);
  });
});
