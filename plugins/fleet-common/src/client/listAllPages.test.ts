import { listAllPages } from './listAllPages';

describe('listAllPages', () => {
  it('asks each next page with the cursor the one before gave', async () => {
    const asked: Array<string | undefined> = [];
    const pages: Record<string, { items: number[]; nextCursor?: string }> = {
      first: { items: [1, 2], nextCursor: 'b' },
      b: { items: [3], nextCursor: 'c' },
      c: { items: [4] },
    };
    const items = await listAllPages(async cursor => {
      asked.push(cursor);
      return pages[cursor ?? 'first'];
    });
    expect(items).toEqual([1, 2, 3, 4]);
    expect(asked).toEqual([undefined, 'b', 'c']);
  });

  it('stops at a cursor it has seen before instead of looping', async () => {
    let calls = 0;
    const items = await listAllPages(async () => {
      calls += 1;
      return { items: [calls], nextCursor: 'same' };
    });
    expect(items).toEqual([1, 2]);
    expect(calls).toBe(2);
  });
});
