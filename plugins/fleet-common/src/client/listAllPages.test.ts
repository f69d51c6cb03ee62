import { listAllPages } from './listAllPages';

describe('listAllPages', () => {
  it('asks each next page, of the largest size, with the cursor the one before gave', async () => {
    const asked: Array<{ limit: string; cursor?: string }> = [];
    const pages: Record<string, { items: number[]; nextCursor?: string }> = {
      first: { items: [1, 2], nextCursor: 'b' },
      b: { items: [3], nextCursor: 'c' },
      c: { items: [4] },
    };
    const items = await listAllPages(async query => {
      asked.push(query);
      return pages[query.cursor ?? 'first'];
    });
    expect(items).toEqual([1, 2, 3, 4]);
    expect(asked).toEqual([
      { limit: '1000', cursor: undefined },
      { limit: '1000', cursor: 'b' },
      { limit: '1000', cursor: 'c' },
    ]);
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
