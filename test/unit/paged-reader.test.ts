import { KeptMessages, type MessagePage, readPages } from '../../platform/paged-reader';

/** A transcript a reader pages through: `pageSize` messages a page, under `revision`. */
function transcript(messages: string[], revision: string, pageSize = 2) {
  const asked: number[] = [];
  return {
    asked,
    nextPage: (held: readonly string[]): Promise<MessagePage<string>> => {
      asked.push(held.length);
      const page = messages.slice(held.length, held.length + pageSize);
      return Promise.resolve({ revision, messages: page, more: held.length + page.length < messages.length });
    },
  };
}

const chars = (messages: string[]) => JSON.stringify(messages).length;

describe('the paged reader', () => {
  it('reads page after page until the last, counting characters page by page', async () => {
    const source = transcript(['a', 'b', 'c', 'd', 'e'], 'r1');
    const read = await readPages({ nextPage: source.nextPage });
    expect(read).toEqual({
      held: {
        revision: 'r1',
        messages: ['a', 'b', 'c', 'd', 'e'],
        chars: chars(['a', 'b']) * 2 + chars(['e']),
      },
      checked: true,
    });
    expect(source.asked).toEqual([0, 2, 4]);
  });

  it('asks only for what follows what it holds when the revision is the same', async () => {
    const source = transcript(['a', 'b', 'c'], 'r1');
    const read = await readPages({
      held: { revision: 'r1', messages: ['a', 'b'], chars: 9 },
      nextPage: source.nextPage,
    });
    expect(read.held.messages).toEqual(['a', 'b', 'c']);
    expect(read.held.chars).toBe(9 + chars(['c']));
    expect(source.asked).toEqual([2]);
  });

  it('starts over from the first message when the transcript was rewritten under it', async () => {
    const source = transcript(['x', 'y', 'z'], 'r2');
    const read = await readPages({
      held: { revision: 'r1', messages: ['a', 'b'], chars: 9 },
      nextPage: source.nextPage,
    });
    expect(read.held).toMatchObject({ revision: 'r2', messages: ['x', 'y', 'z'] });
    expect(source.asked).toEqual([2, 0, 2]);
  });

  it('starts over when a page says what is held is not the front, whatever its revision', async () => {
    let answered = 0;
    const read = await readPages<string>({
      held: { revision: 'r1', messages: ['a', 'b', 'c'], chars: 13 },
      nextPage: (held) =>
        Promise.resolve(
          held.length > 1
            ? { revision: 'r1', messages: [], more: false, rewritten: true }
            : { revision: 'r1', messages: [`fresh-${++answered}`], more: held.length === 0 },
        ),
    });
    expect(read.held.messages).toEqual(['fresh-1', 'fresh-2']);
  });

  it('gives up after the restarts it is allowed', async () => {
    let revision = 0;
    const reading = readPages<string>({
      held: { revision: 'r0', messages: ['a'], chars: 5 },
      nextPage: (held) =>
        Promise.resolve({
          revision: `r${held.length === 0 ? revision : ++revision}`,
          messages: ['m'],
          more: true,
        }),
      maxRestarts: 5,
      restartsExhausted: () => new Error('kept changing'),
    });
    await expect(reading).rejects.toThrow('kept changing');
  });

  it('ends at an empty page, or fails on one when the reader says an empty page is wrong', async () => {
    const empty = () => Promise.resolve<MessagePage<string>>({ revision: 'r1', messages: [], more: true });
    expect((await readPages({ nextPage: empty })).held.messages).toEqual([]);
    await expect(readPages({ nextPage: empty, emptyPage: () => new Error('an empty page') })).rejects.toThrow(
      'an empty page',
    );
  });

  it('returns every message at once, unchecked, from a reader of an earlier release', async () => {
    const read = await readPages<string>({
      held: { revision: 'r1', messages: ['a'], chars: 5 },
      nextPage: () => Promise.resolve({ everything: ['a', 'b'] }),
    });
    expect(read).toEqual({
      held: { revision: '', messages: ['a', 'b'], chars: chars(['a', 'b']) },
      checked: false,
    });
  });
});

describe('the messages readers keep', () => {
  const held = (size: number) => ({ revision: 'r', messages: ['x'], chars: size });

  it('hands back what it keeps once, and counts the characters kept', () => {
    const kept = new KeptMessages<string>(100);
    kept.keep('a', held(40));
    expect(kept.chars).toBe(40);
    expect(kept.take('a')).toEqual(held(40));
    expect(kept.take('a')).toBeUndefined();
    expect(kept.chars).toBe(0);
  });

  it('lets the least recently kept go first, and keeps nothing larger than its limit', () => {
    const kept = new KeptMessages<string>(100);
    kept.keep('a', held(40));
    kept.keep('b', held(40));
    kept.keep('a', kept.take('a')!);
    kept.keep('c', held(40));
    expect(kept.take('b')).toBeUndefined();
    expect(kept.chars).toBe(80);
    kept.keep('huge', held(101));
    expect(kept.take('huge')).toBeUndefined();
    expect(kept.chars).toBe(80);
  });
});
