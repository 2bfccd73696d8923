import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { createLogger } from '@app/observability';
import { prepareDatabase } from '@app/database';
import {
  CONVERSATIONS_SCHEMA,
  conversationsDataSourceOptions,
} from '../services/conversations/src/data-source';
import { SQL } from '../services/conversations/src/conversations/conversations.sql';
import {
  BENCH_ADMIN_URL,
  benchDatabaseUrl,
  conversationIdFor,
  recreateDatabase,
  seedAccount,
} from './bench-seed';

/**
 * `npm run bench:send-statement` (BENCHMARKS.md, "Send's statement"): what each part of send-message's statement
 * costs Postgres, and what writing several commands in one statement saves (MessageAppender). On
 * its own database (`cms_bench_statement`, recreated, 10,000 conversations), one connection runs
 * the service's prepared statement back to back (generic plans, as the services' connections
 * do), in variants that leave a part out or write several commands at once, alternating ROUNDS
 * times; synchronous_commit is off for the session so the disk's flush does not drown the CPU's
 * share. Microseconds and WAL bytes per message, client round trip included (the same in every
 * variant), medians. Then a bulk import (conversations, then their
 * messages in one statement, as a migration from another product would) of growing size into
 * that account, timed per message: it should not grow with the import's size.
 */
const DATABASE_URL = benchDatabaseUrl('cms_bench_statement');
const CONVERSATIONS = 10_000;
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const SECONDS = Number(process.env.SECONDS ?? 4);
const ACCOUNT = randomUUID();

const full = SQL.appendMessages.text;
const final = full.indexOf('SELECT message FROM appended');
/** The statement with its CTEs from `part` on left out (they are the last ones). */
const without = (part: string) =>
  `${full.slice(0, full.indexOf(part)).trimEnd().replace(/,$/, '')} ${full.slice(final)}`;

/** The analytics triggers on messages (slot counts per statement, first responses per row) on or off. */
const analyticsTriggers = (on: boolean) =>
  ['analytics_messages_inserted', 'analytics_first_response']
    .map((trigger) => `${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`)
    .reduce(
      (sql, action, index) => `${sql}${index ? ',' : ''} ${action}`,
      'ALTER TABLE conversations.messages',
    );
/** The index migration 1764600000000 replaced: with it, no message's conversation update is HOT. */
const updatedAtIndex = (on: boolean) =>
  on
    ? 'CREATE INDEX IF NOT EXISTS bench_updated_at ON conversations.conversations (account_id, updated_at)'
    : 'DROP INDEX IF EXISTS conversations.bench_updated_at';
/** The index migration 1766700000000 dropped: the conversation's words indexed, its update not HOT. */
const conversationWordsIndex = (on: boolean) =>
  on
    ? 'CREATE INDEX IF NOT EXISTS bench_conversation_words ON conversations.conversations USING gin (account_id, search_words)'
    : 'DROP INDEX IF EXISTS conversations.bench_conversation_words';
/** The statement without keeping the conversation's search words (before the search migration). */
const withoutSearchWords = full.replace(
  /,\s*search_words = conversations\.with_message_words\(c\.search_words, i\.content\)/,
  '',
);
if (withoutSearchWords === full)
  throw new Error('the search words are no longer kept where this bench expects');
interface Variant {
  name: string;
  text: string;
  trigger: boolean;
  /** Each message brings words its conversation has not had (its update is then not HOT). */
  newWords?: boolean;
  updatedAtIndexed?: boolean;
  conversationWordsIndexed?: boolean;
  /** Commands per statement (1 unless said). */
  batch?: number;
}
const VARIANTS: Variant[] = [
  { name: 'as shipped, one command a statement', text: full, trigger: true },
  { name: 'without the analytics triggers', text: full, trigger: false },
  { name: 'without the command-log row', text: without('recorded AS ('), trigger: true },
  { name: 'without the event (and command-log) rows', text: without('event AS ('), trigger: true },
  {
    name: 'with updated_at indexed (before 1764600000000)',
    text: full,
    trigger: true,
    updatedAtIndexed: true,
  },
  { name: 'without the search words', text: withoutSearchWords, trigger: true },
  { name: 'as shipped, every message with new words', text: full, trigger: true, newWords: true },
  {
    name: 'without the search words, new words',
    text: withoutSearchWords,
    trigger: true,
    newWords: true,
  },
  { name: 'as shipped, 4 commands a statement', text: full, trigger: true, batch: 4 },
  { name: 'as shipped, 16 commands a statement', text: full, trigger: true, batch: 16 },
  { name: 'as shipped, 16 a statement, new words', text: full, trigger: true, batch: 16, newWords: true },
  {
    name: "16, new words, conversation's words indexed",
    text: full,
    trigger: true,
    batch: 16,
    newWords: true,
    conversationWordsIndexed: true,
  },
  {
    name: 'without the search words, 16, new words',
    text: withoutSearchWords,
    trigger: true,
    batch: 16,
    newWords: true,
  },
];

interface Sample {
  us: number;
  walBytes: number;
}

/** One command's values, in the statement's parameter order. */
function commandValues(newWords: boolean): unknown[] {
  const i = Math.floor(Math.random() * CONVERSATIONS);
  return [
    ACCOUNT,
    conversationIdFor(i % 5 === 0 ? (i + 1) % CONVERSATIONS : i),
    randomUUID(),
    'agent',
    newWords
      ? `Parcel ${randomUUID().slice(0, 8)} arrived, order ${randomUUID().slice(0, 8)}`
      : 'How can I help?',
    randomUUID(),
    'message.sent',
    '{"specversion":"1.0","source":"bench"}',
    randomUUID(),
    'conversations.send-message',
    'bench',
  ];
}

/** `batch` commands to distinct conversations, as the statement's array parameters. */
function batchValues(batch: number, count: number, newWords: boolean): unknown[][] {
  const commands = new Map<unknown, unknown[]>();
  while (commands.size < batch) {
    const values = commandValues(newWords);
    commands.set(values[1], values);
  }
  return Array.from({ length: count }, (_, p) => [...commands.values()].map((values) => values[p]));
}

async function timeVariant(db: Client, variant: Variant, index: number): Promise<Sample> {
  await db.query(analyticsTriggers(variant.trigger));
  await db.query(updatedAtIndex(variant.updatedAtIndexed ?? false));
  await db.query(conversationWordsIndex(variant.conversationWordsIndexed ?? false));
  const walBefore = (await db.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
  const parameters = (variant.text.match(/\$\d+/g) ?? []).map((p) => Number(p.slice(1)));
  const count = Math.max(...parameters);
  const batch = variant.batch ?? 1;
  const deadline = performance.now() + SECONDS * 1000;
  let statements = 0;
  const started = performance.now();
  while (performance.now() < deadline) {
    await db.query({
      name: `variant_${index}`,
      text: variant.text,
      values: batchValues(batch, count, variant.newWords ?? false),
    });
    statements++;
  }
  const messages = statements * batch;
  const us = ((performance.now() - started) * 1000) / messages;
  const { rows } = await db.query<{ bytes: string }>(
    'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) AS bytes',
    [walBefore],
  );
  return { us, walBytes: Number(rows[0].bytes) / messages };
}

/** One import of `count` conversations x 10 messages, rolled back; ms for the messages' statement. */
async function timeBulkImport(db: Client, count: number): Promise<number> {
  await db.query('BEGIN');
  try {
    await db.query(
      `INSERT INTO conversations.conversations (id, account_id, status, metadata, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'active', '{}', now(), now() FROM generate_series(1, $2::int)`,
      [ACCOUNT, count],
    );
    const started = performance.now();
    await db.query(
      `INSERT INTO conversations.messages (id, conversation_id, account_id, position, sender, content, created_at)
       SELECT gen_random_uuid(), c.id, c.account_id, k, CASE WHEN k % 2 = 0 THEN 'agent' ELSE 'visitor' END,
              'imported', c.created_at + make_interval(secs => k)
         FROM conversations.conversations c CROSS JOIN generate_series(1, 10) k
        WHERE c.account_id = $1 AND c.message_count = 0`,
      [ACCOUNT],
    );
    return performance.now() - started;
  } finally {
    await db.query('ROLLBACK');
  }
}

async function main(): Promise<void> {
  await recreateDatabase(BENCH_ADMIN_URL, 'cms_bench_statement');
  await prepareDatabase(
    conversationsDataSourceOptions({ DATABASE_URL, DATABASE_POOL_SIZE: 2 }),
    CONVERSATIONS_SCHEMA,
    createLogger('bench', 'warn'),
  );
  await seedAccount(DATABASE_URL, ACCOUNT, CONVERSATIONS, 10);
  const db = new Client({
    connectionString: DATABASE_URL,
    options: '-c synchronous_commit=off -c plan_cache_mode=force_generic_plan',
  });
  await db.connect();
  try {
    const samples = VARIANTS.map(() => [] as Sample[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, variant] of VARIANTS.entries())
        samples[index].push(await timeVariant(db, variant, index));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const us = (index: number) => median(samples[index].map((sample) => sample.us));
    const wal = (index: number) => median(samples[index].map((sample) => sample.walBytes));
    console.log(
      `# send-message statement, us and WAL bytes per message (medians of ${ROUNDS} rounds of ${SECONDS} s)`,
    );
    for (const [index, variant] of VARIANTS.entries()) {
      const saved = `${Math.round(us(0) - us(index))} us, ${Math.round(wal(0) - wal(index))} B`;
      const part =
        index === 0 ? '' : variant.batch ? `  (${saved} less a message)` : `  (that part: ${saved})`;
      console.log(
        `${variant.name.padEnd(48)} ${Math.round(us(index))} us ${Math.round(wal(index))} B${part}`,
      );
    }
    await db.query(analyticsTriggers(true));
    await db.query(updatedAtIndex(false));
    await db.query(conversationWordsIndex(false));
    // As on a database that has run a while: the planner knows how many conversations wait.
    await db.query('ANALYZE conversations.analytics_first_responses');
    console.log('# bulk import into the account: conversations x 10 messages, us per message');
    for (const count of [1000, 4000, 16000]) {
      const ms = await timeBulkImport(db, count);
      console.log(`${String(count).padEnd(42)} ${Math.round((ms * 1000) / (count * 10))}`);
    }
  } finally {
    await db.end();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
