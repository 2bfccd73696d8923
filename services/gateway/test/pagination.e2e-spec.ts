import { ApiClient, ApiResponse, eventually, TestStack, expectValidation } from '@app/testing';

/**
 * List pagination (docs/api-conventions.md, docs/dialects.md): limits and offsets with their
 * bounds, defaults and ordering, parameter spellings and their conflicts, status filters in every
 * dialect, and `pagination.next` + `snapshot` giving a stable walk through a list that others
 * are writing to at the same time.
 */

type Status = 'active' | 'pending' | 'closed';

/** pagination.snapshot: an opaque base64url token. */
const SNAPSHOT_TOKEN = /^[A-Za-z0-9_-]+$/;

interface Row {
  id: string;
  created_at: string;
}

/** The contract's order: created_at desc, then id desc. */
const newestFirst = (a: Row, b: Row) =>
  a.created_at === b.created_at
    ? a.id < b.id
      ? 1
      : a.id > b.id
        ? -1
        : 0
    : a.created_at < b.created_at
      ? 1
      : -1;

function expectOk(res: ApiResponse, status = 200): void {
  expect({ status: res.status, body: res.status === status ? 'ok' : res.body }).toEqual({
    status,
    body: 'ok',
  });
  expect(res.headers.get('x-request-id')).toBeTruthy();
}

describe('pagination', () => {
  let stack: TestStack;
  /** 25 conversations: 14 active, 6 pending, 5 closed. */
  let api: ApiClient;
  let rows: Row[] = [];
  const byStatus: Record<Status, Row[]> = { active: [], pending: [], closed: [] };

  beforeAll(async () => {
    stack = await TestStack.start();
    ({ api } = await stack.createAccount('business'));
    const plan: Status[] = Array.from({ length: 25 }, (_, i) =>
      i % 5 === 4 ? 'closed' : i % 3 === 1 ? 'pending' : 'active',
    );
    for (const status of plan) {
      const res = await api.post('/v1/conversations', {
        status: status === 'pending' ? 'pending' : 'active',
      });
      expectOk(res, 201);
      if (status === 'closed') {
        // Checked by reading back, so these tests do not hinge on the PATCH response body.
        await api.patch(`/v1/conversations/${res.body.id}`, { status: 'closed' });
        expect((await api.get(`/v1/conversations/${res.body.id}`)).body.status).toBe('closed');
      }
      const row = { id: res.body.id, created_at: res.body.created_at };
      rows.push(row);
      byStatus[status].push(row);
    }
    rows = rows.sort(newestFirst);
    for (const list of Object.values(byStatus)) list.sort(newestFirst);
    expect([byStatus.active.length, byStatus.pending.length, byStatus.closed.length]).toEqual([14, 6, 5]);
  });
  afterAll(() => stack?.close());

  const ids = (res: ApiResponse) => res.body.data.map((c: any) => c.id);
  const idsOf = (list: Row[]) => list.map((r) => r.id);

  describe('limit and offset', () => {
    it('default: limit 20, offset 0, newest first (created_at desc, id desc), next to the rest', async () => {
      const res = await api.get('/v1/conversations');
      expectOk(res);
      expect(ids(res)).toEqual(idsOf(rows.slice(0, 20)));
      expect(res.body.pagination).toEqual({
        limit: 20,
        offset: 0,
        total: 25,
        snapshot: expect.stringMatching(SNAPSHOT_TOKEN),
        next: expect.any(String),
      });
      // the service's own ordering, independently of the rows we recorded
      const listed = res.body.data.map((c: any) => ({ id: c.id, created_at: c.created_at }));
      expect(listed).toEqual([...listed].sort(newestFirst));
    });

    it.each([
      ['limit=1', 1],
      ['limit=100', 100],
      ['had=1', 1],
      ['had=100', 100],
      ['limit=7', 7],
    ])('%s is accepted', async (query, limit) => {
      const res = await api.get(`/v1/conversations?${query}`);
      expectOk(res);
      expect(ids(res)).toEqual(idsOf(rows.slice(0, limit)));
      expect(res.body.pagination).toMatchObject({ limit, offset: 0, total: 25 });
      expect(res.body.pagination.next === null).toBe(limit >= 25);
    });

    const BAD_LIMITS = ['101', '0', '-1', 'abc', '1.5', '', '1e2', '0x10', '99999999999999999999'];
    it.each(BAD_LIMITS.flatMap((value) => ['limit', 'had'].map((name) => [name, value])))(
      '%s=%j is 400 validation_failed on "limit"',
      async (name, value) => {
        for (const path of ['/v1/conversations', '/v1/rozmowy']) {
          const url = `${path}?${name}=${encodeURIComponent(value)}`;
          expectValidation(await api.get(url), url, ['limit']);
        }
      },
    );

    const BAD_OFFSETS = ['-1', 'abc', '1.5', '', '1e2'];
    it.each(
      BAD_OFFSETS.flatMap((value) => ['offset', 'mengimbangi', 'przesunięcie'].map((name) => [name, value])),
    )('%s=%j is 400 validation_failed on "offset"', async (name, value) => {
      const url = `/v1/conversations?${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
      expectValidation(await api.get(url), url, ['offset']);
    });

    it('a bad limit and a bad offset together are both listed', async () => {
      const url = '/v1/conversations?limit=0&offset=-1&status=bogus';
      expectValidation(await api.get(url), url, ['limit', 'offset', 'status']);
    });

    it.each([
      ['offset=5', 20, 5],
      ['mengimbangi=5&had=3', 3, 5],
      ['przesunięcie=24&limit=10', 10, 24],
      ['offset=0&limit=25', 25, 0],
    ])('%s returns the right slice', async (query, limit, offset) => {
      const res = await api.get(`/v1/rozmowy?${query}`);
      expectOk(res);
      expect(ids(res)).toEqual(idsOf(rows.slice(offset, offset + limit)));
      expect(res.body.pagination).toMatchObject({ limit, offset, total: 25 });
    });

    it.each([25, 26, 1000, 1_000_000])(
      'offset %d past the end: empty data, the right total, no next',
      async (offset) => {
        const res = await api.get(`/v1/conversations?offset=${offset}&limit=10`);
        expectOk(res);
        expect(res.body).toEqual({
          data: [],
          pagination: {
            limit: 10,
            offset,
            total: 25,
            snapshot: expect.stringMatching(SNAPSHOT_TOKEN),
            next: null,
          },
        });
      },
    );
  });

  describe('parameter spellings', () => {
    it.each([
      ['limit=5&had=10', 'limit'],
      ['had=10&limit=5', 'limit'],
      ['offset=1&mengimbangi=2', 'offset'],
      ['mengimbangi=1&przesunięcie=2', 'offset'],
      ['offset=1&przesunięcie=2', 'offset'],
      ['status=active&stan=ditutup', 'status'],
      ['status=aktif&stan=w%20toku', 'status'],
      ['stan=aktywne&status=pending', 'status'],
    ])('conflicting aliases %s: 400 on %s', async (query, field) => {
      const url = `/v1/conversations?${query}`;
      expectValidation(await api.get(url), url, [field]);
    });

    it.each([
      ['limit=5&had=5', { limit: 5 }],
      ['offset=3&mengimbangi=3&przesunięcie=3', { offset: 3 }],
      ['status=active&stan=aktywne', { status: 'active' as Status }],
      ['status=aktif&stan=active', { status: 'active' as Status }],
      ['status=belum%20selesai&stan=w%20toku', { status: 'pending' as Status }],
      ['status=closed&stan=zamknięte', { status: 'closed' as Status }],
    ])('the same value in two spellings is fine: %s', async (query, expected) => {
      const res = await api.get(`/v1/conversations?${query}`);
      expectOk(res);
      const source = 'status' in expected ? byStatus[expected.status] : rows;
      const limit = 'limit' in expected ? expected.limit : 20;
      const offset = 'offset' in expected ? expected.offset : 0;
      expect(ids(res)).toEqual(idsOf(source.slice(offset, offset + limit)));
      expect(res.body.pagination).toMatchObject({ limit, offset, total: source.length });
    });

    it('a parameter repeated with two values is a 400', async () => {
      const url = '/v1/conversations?limit=5&limit=6';
      expectValidation(await api.get(url), url, ['limit']);
    });
  });

  describe('status filter', () => {
    const FILTERS: Array<[string, Status]> = [
      ['status=active', 'active'],
      ['status=aktif', 'active'],
      ['stan=aktywne', 'active'],
      ['status=pending', 'pending'],
      ['status=belum%20selesai', 'pending'],
      ['stan=w%20toku', 'pending'],
      ['status=closed', 'closed'],
      ['status=ditutup', 'closed'],
      ['stan=zamkni%C4%99te', 'closed'],
    ];
    it.each(FILTERS)('%s: only that status, the filtered total, newest first', async (query, status) => {
      const res = await api.get(`/v1/conversations?${query}&limit=100`);
      expectOk(res);
      expect(ids(res)).toEqual(idsOf(byStatus[status]));
      expect(res.body.pagination.total).toBe(byStatus[status].length);
      for (const c of res.body.data) expect(c.status).toBe(status);
    });

    it.each(FILTERS)('%s with paging: limit 3, offset 2', async (query, status) => {
      const res = await api.get(`/v1/rozmowy?${query}&had=3&przesunięcie=2`, {
        headers: { 'accept-language': 'en' },
      });
      expectOk(res);
      expect(ids(res)).toEqual(idsOf(byStatus[status].slice(2, 5)));
      expect(res.body.pagination).toMatchObject({ limit: 3, offset: 2, total: byStatus[status].length });
    });

    it.each(['open', 'archived', 'ACTIVEX', '', 'aktif,ditutup', 'w_toku'])(
      'unknown status %j is 400 on "status"',
      async (value) => {
        for (const name of ['status', 'stan']) {
          const url = `/v1/conversations?${name}=${encodeURIComponent(value)}`;
          expectValidation(await api.get(url), url, ['status']);
        }
      },
    );

    it('next links keep the filter and walk the filtered rows', async () => {
      const seen: string[] = [];
      let url: string | null = '/v1/rozmowy?stan=w%20toku&limit=3';
      const totals = new Set<number>();
      while (url) {
        const page: ApiResponse = await api.get(url);
        expectOk(page);
        seen.push(...ids(page));
        totals.add(page.body.pagination.total);
        for (const c of page.body.data) expect(c.status).toBe('w toku');
        url = page.body.pagination.next;
      }
      expect(seen).toEqual(idsOf(byStatus.pending));
      expect([...totals]).toEqual([byStatus.pending.length]);
    });
  });

  describe('next and snapshot', () => {
    it('next links walk the whole list exactly once, with one snapshot and total', async () => {
      const first = await api.get('/v1/conversations?limit=10');
      expectOk(first);
      const snapshot = first.body.pagination.snapshot;
      const pages = [first];
      while (pages[pages.length - 1].body.pagination.next) {
        const next: string = pages[pages.length - 1].body.pagination.next;
        expect(next).toMatch(/^\/v1\/conversations\?/);
        const page = await api.get(next);
        expectOk(page);
        pages.push(page);
      }
      expect(pages.map((p) => p.body.pagination)).toEqual([
        { limit: 10, offset: 0, total: 25, snapshot, next: expect.any(String) },
        { limit: 10, offset: 10, total: 25, snapshot, next: expect.any(String) },
        { limit: 10, offset: 20, total: 25, snapshot, next: null },
      ]);
      expect(pages.flatMap(ids)).toEqual(idsOf(rows));
    });

    it('a malformed snapshot is a 400 on "snapshot"', async () => {
      // Not base64url, not a snapshot inside, and well-formed snapshots that cannot exist
      // (xmin after xmax, an in-progress xid outside [xmin, xmax)): all refused before Postgres.
      const forged = ['5:3:', '0:1:', '10:20:25', 'abc:1:'].map((text) =>
        Buffer.from(text).toString('base64url'),
      );
      for (const value of ['yesterday', '2024-13-01T00:00:00Z', '12345', ...forged]) {
        const url = `/v1/conversations?snapshot=${encodeURIComponent(value)}`;
        expectValidation(await api.get(url), url, ['snapshot']);
      }
    });

    it("the token is opaque and bound to its account: no transaction id in it; tampered or another account's is a 400", async () => {
      const first = await api.get('/v1/conversations?limit=5');
      expectOk(first);
      const token: string = first.body.pagination.snapshot;
      const [{ xmax }] = await stack.query(`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax`);
      const decoded = Buffer.from(token, 'base64url').toString('latin1');
      // Nothing in it is a transaction id (these are around the database's current one).
      expect(decoded).not.toMatch(/\d+:\d+:/);
      expect(token).not.toContain(String(xmax).slice(0, 4));
      // The same snapshot twice gives two unrelated tokens: watching them says nothing.
      const again = await api.get('/v1/conversations?limit=5');
      expect(again.body.pagination.snapshot).not.toBe(token);

      const url = (value: string) => `/v1/conversations?limit=5&snapshot=${encodeURIComponent(value)}`;
      expectOk(await api.get(url(token)));
      const { api: other } = await stack.createAccount('business');
      expectValidation(await other.get(url(token)), url(token), ['snapshot']);
      const bytes = Buffer.from(token, 'base64url');
      for (const index of [0, 5, bytes.length - 1]) {
        const tampered = Buffer.from(bytes);
        tampered[index] ^= 0x01;
        const value = tampered.toString('base64url');
        expectValidation(await api.get(url(value)), url(value), ['snapshot']);
      }
      // The former tokens (a base64url pg_snapshot) mean nothing now.
      const former = Buffer.from(`${xmax}:${xmax}:`).toString('base64url');
      expectValidation(await api.get(url(former)), url(former), ['snapshot']);
    });

    it('paging with next while others create conversations never repeats or skips a row; total stays put', async () => {
      const { api: busy } = await stack.createAccount('business');
      const initial: Row[] = [];
      for (let batch = 0; batch < 5; batch++) {
        const created = await Promise.all(
          Array.from({ length: 9 }, () => busy.post('/v1/conversations', {})),
        );
        for (const res of created) {
          expectOk(res, 201);
          initial.push({ id: res.body.id, created_at: res.body.created_at });
        }
      }
      expect(initial).toHaveLength(45);

      // Background writers: several concurrent creators until told to stop.
      interface Write {
        startedAt: number;
        finishedAt?: number;
        id?: string;
      }
      const writes: Write[] = [];
      let stop = false;
      const writer = async () => {
        while (!stop) {
          const write: Write = { startedAt: performance.now() };
          writes.push(write);
          const res = await busy.post('/v1/conversations', {});
          write.finishedAt = performance.now();
          if (res.status !== 201) throw new Error(`background create failed: ${res.status} ${res.text}`);
          write.id = res.body.id;
        }
      };
      const writers = Array.from({ length: 4 }, writer);
      const doneCount = () => writes.filter((w) => w.id).length;
      try {
        await eventually(() => doneCount() >= 4);

        const before = performance.now();
        const first = await busy.get('/v1/conversations?limit=10');
        const after = performance.now();
        expectOk(first);
        const pages = [first];
        while (pages[pages.length - 1].body.pagination.next) {
          // Let more conversations be created between every two pages.
          const target = doneCount() + 3;
          await eventually(() => doneCount() >= target);
          const page = await busy.get(pages[pages.length - 1].body.pagination.next);
          expectOk(page);
          pages.push(page);
          expect(pages.length).toBeLessThan(20);
        }
        stop = true;
        await Promise.all(writers);

        const { snapshot, total } = first.body.pagination;
        const listed: Row[] = pages.flatMap((page) =>
          page.body.data.map((c: any) => ({ id: c.id, created_at: c.created_at })),
        );
        const listedIds = listed.map((r) => r.id);
        const listedSet = new Set(listedIds);
        // Exactly the rows that existed at the snapshot: everything finished before the first
        // page was asked for, nothing started after it was answered.
        const existedBefore = [
          ...initial.map((r) => r.id),
          ...writes.filter((w) => w.finishedAt! < before).map((w) => w.id!),
        ];
        const startedAfter = writes.filter((w) => w.startedAt > after).map((w) => w.id!);

        // Everything that can go wrong, in one comparison, so a failure shows the whole picture.
        expect({
          snapshots: [...new Set(pages.map((p) => p.body.pagination.snapshot))],
          totals: pages.map((p) => p.body.pagination.total),
          limits: pages.map((p) => p.body.pagination.limit),
          offsets: pages.map((p) => p.body.pagination.offset),
          duplicates: listedIds.filter((id, i) => listedIds.indexOf(id) !== i),
          rowsListedMinusTotal: listedIds.length - total,
          inContractOrder: JSON.stringify(listed) === JSON.stringify([...listed].sort(newestFirst)),
          missingThatExistedBefore: existedBefore.filter((id) => !listedSet.has(id)),
          listedThoughCreatedAfter: startedAfter.filter((id) => listedSet.has(id)),
        }).toEqual({
          snapshots: [snapshot],
          totals: pages.map(() => total),
          limits: pages.map(() => 10),
          offsets: pages.map((_, i) => i * 10),
          duplicates: [],
          rowsListedMinusTotal: 0,
          inContractOrder: true,
          missingThatExistedBefore: [],
          listedThoughCreatedAfter: [],
        });
        // At least 3 creates finished between every two pages; at most one per writer (4) of them
        // had started before the first page was answered.
        expect(startedAfter.length).toBeGreaterThanOrEqual(3 * (pages.length - 1) - 4);

        // A fresh list sees everything, so the writers really were creating rows meanwhile.
        const fresh = await busy.get('/v1/conversations?limit=1');
        expect(fresh.body.pagination.total).toBe(45 + writes.length);
        expect(fresh.body.pagination.total).toBeGreaterThan(total);
      } finally {
        stop = true;
        await Promise.allSettled(writers);
      }
    });
  });
});
