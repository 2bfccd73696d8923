import { prepare, preparedOnce, type PreparedStatement } from '@app/database';
import { type LeadView, SEARCH_LIMITS } from '@app/contracts';
import type { ConversationRow, MessageRow } from './conversation-row';

/** A row of a batch of list pages: its page's place in the batch, total and snapshot; a page past the end is one row with no conversation. */
export interface ListPageRow {
  page: string;
  total: string;
  /** Whether the total is a lower bound: `q` and `tag` count so far past the page (listPagesStatement). */
  bounded: boolean;
  snapshot: string;
  /** The conversation's view as JSON (conversationJson); null on the row of a page past the end. */
  json: string | null;
}

/** A conversation read with its messages, as its view's JSON (null when it has too many messages to read at once). */
export interface ConversationJsonRow {
  id: string;
  account_id: string;
  message_count: number;
  json: string | null;
}

/** Timestamps leave Postgres as ISO 8601 UTC with milliseconds, exactly as the API renders them. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Conversation `c`'s visitor as its view's JSON: null when it has no name, email or phone. */
const VISITOR_JSON = `CASE WHEN c.visitor_name IS NULL AND c.visitor_email IS NULL AND c.visitor_phone IS NULL THEN NULL
         ELSE (SELECT row_to_json(visitor) FROM (SELECT c.visitor_name AS name, c.visitor_email AS email,
                                                        c.visitor_phone AS phone) visitor) END`;

const CONVERSATION_COLUMNS = `c.id, c.status, ${VISITOR_JSON} AS visitor, c.visitor_name, c.visitor_email, c.visitor_phone, c.subject, c.metadata,
  c.tags, c.message_count, ${iso('c.last_message_at')} AS last_message_at, ${iso('c.created_at')} AS created_at,
  ${iso('c.updated_at')} AS updated_at, ${iso('c.closed_at')} AS closed_at, c.event_sequence`;

const MESSAGE_COLUMNS = `m.id, m.conversation_id, m.sender, m.content, ${iso('m.created_at')} AS created_at`;

/**
 * Conversation `c` as the JSON of its view (ConversationView: these fields, in this order), written
 * by Postgres: the replies that read conversations send this text on unparsed (JsonText), and the
 * gateway sends it on as the body. `conversation-json.int-spec.ts` holds it to the contract's
 * schema. `more` adds fields at the end (a conversation's messages).
 */
const conversationJson = (more = '') => `(SELECT row_to_json(view) FROM (SELECT c.id, c.status,
    ${VISITOR_JSON} AS visitor, c.subject, c.metadata, c.message_count, ${iso('c.last_message_at')} AS last_message_at,
    ${iso('c.created_at')} AS created_at, ${iso('c.updated_at')} AS updated_at, ${iso('c.closed_at')} AS closed_at,
    c.tags${more}) view)`;

/** Conversation `c`'s messages as a JSON array of MessageView, oldest first. */
const MESSAGES_JSON = `COALESCE((SELECT json_agg(message.json ORDER BY message.position)
    FROM (SELECT m.position, row_to_json(fields) AS json
            FROM conversations.messages m, LATERAL (SELECT ${MESSAGE_COLUMNS}) fields
           WHERE m.conversation_id = c.id) message), '[]'::json)`;

/** A list's filters. */
export interface ListFilters {
  status?: string;
  created_after?: string;
  created_before?: string;
  updated_after?: string;
  visitor_email?: string;
  tag?: string[];
  q?: string;
}
export type ListFilter = keyof ListFilters;

/** A filter's value as its statement's parameter: text, a list as its JSON. */
export const filterParameter = (value: string | string[]): string =>
  typeof value === 'string' ? value : JSON.stringify(value);

/** Each filter's condition on conversation `c`, given the expression of its value. */
const FILTER_CONDITIONS: Record<ListFilter, (value: string) => string> = {
  status: (value) => `c.status = ${value}`,
  created_after: (value) => `c.created_at > ${value}::timestamptz`,
  created_before: (value) => `c.created_at < ${value}::timestamptz`,
  // Through the index of 10-minute windows (migration 1764600000000), then exactly.
  updated_after: (value) =>
    `c.updated_window >= conversations.update_window(${value}::timestamptz) AND c.updated_at > ${value}::timestamptz`,
  visitor_email: (value) => `lower(c.visitor_email) = lower(${value})`,
  tag: (value) => `c.tags @> ARRAY(SELECT jsonb_array_elements_text(${value}::jsonb))`,
  // A tsquery: each page's `q` becomes one before the pages are read (FILTER_ARRAYS).
  q: (value) => `c.search_words @@ ${value}`,
};
export const LIST_FILTERS = Object.keys(FILTER_CONDITIONS) as ListFilter[];

/** A filter's array of values, one a page, given its parameter: text, unless here. */
const textArray = (parameter: string) => `${parameter}::text[]`;
const FILTER_ARRAYS: Partial<Record<ListFilter, (parameter: string) => string>> = {
  // Each `q` as its tsquery, computed once a statement rather than once a row.
  q: (parameter) => `ARRAY(SELECT conversations.search_query(text, ${SEARCH_LIMITS.minWordLength})
                             FROM unnest(${parameter}::text[]) WITH ORDINALITY AS page(text, n) ORDER BY n)`,
};

/** The filters a list uses, in LIST_FILTERS' order: with its order, which statement it needs. */
export const usedFilters = (filters: ListFilters): ListFilter[] =>
  LIST_FILTERS.filter((name) => filters[name] !== undefined);

/**
 * Where a GIN index finds a filter's matches, a condition that reads it, besides the exact one of
 * FILTER_CONDITIONS. `q`: the conversations whose subject, visitor or a message has the query's
 * rarest word (search_driver, migration 1766700000000); the row's words then decide.
 */
const INDEXED_CONDITIONS: Partial<Record<ListFilter, (value: string) => string>> = {
  q: (value) => {
    // A subquery, so the word is chosen once a page: called inline, the planner checks it in a
    // filter of every row of the account instead of reading the index with it. The candidates
    // are collected into an array once a page, then each conversation read by its key.
    const word = `(SELECT conversations.search_driver(${value}))`;
    return `AND c.id = ANY (ARRAY(
          SELECT m.conversation_id FROM conversations.messages m
           WHERE m.account_id = q.account_id AND conversations.words_of(m.content) @@ ${word}
          UNION ALL
          SELECT d.id FROM conversations.conversations d
           WHERE d.account_id = q.account_id
             AND conversations.detail_search_words(d.subject, d.visitor_name, d.visitor_email) @@ ${word}))`;
  },
};

/** The filters whose matches are counted only as far as SEARCH_LIMITS.countAhead past the page. */
const BOUNDED_FILTERS: readonly ListFilter[] = ['q', 'tag'];

/**
 * The statement of a batch of list pages that use the same filters (`used`, in LIST_FILTERS'
 * order) and order, each prepared once per connection. Arrays, one element per page: $1 accounts,
 * $2 limits, $3 offsets, $4 snapshots (null: as of now), then each used filter's values. Every
 * row carries its page's place in the arrays (`page`, from 1), total, whether that total is a
 * lower bound, and snapshot; a page past the end is one row without a conversation. With no filter
 * but the status, the total is the per-status counters minus the rows the snapshot does not see,
 * the same cost for 10 or 10 million conversations; `q` and `tag` count their matches up to
 * SEARCH_LIMITS.countAhead past the page (searchPages); other filters count the matching rows.
 */
export function listPagesStatement(
  used: readonly ListFilter[],
  order: 'asc' | 'desc',
): PreparedStatement<ListPageRow> {
  const filter = (name: ListFilter) => `q.${name}`;
  const conditions = used.map((name) => ` AND ${FILTER_CONDITIONS[name](filter(name))}`).join('');
  const countedByCounters = used.every((name) => name === 'status');
  const statusCondition = used.includes('status') ? ` AND c.status = ${filter('status')}` : '';
  const visible = 'pg_visible_in_snapshot(c.created_xid, meta.snapshot)';
  const direction = order === 'asc' ? 'ASC' : 'DESC';
  const sorted = `ORDER BY c.created_at ${direction}, c.id ${direction}`;
  const filterArrays = used.map((name, i) => `, ${(FILTER_ARRAYS[name] ?? textArray)(`$${i + 5}`)}`).join('');
  // `OFFSET 0` keeps meta and counted subqueries of their own, evaluated once a page: pulled up
  // into the join, they would be evaluated again for every row of the page.
  const filterColumns = used.map((name) => `, ${name}`).join('');
  const batch = (counted: string, rows: string) =>
    preparedOnce<ListPageRow>(
      `SELECT q.page, counted.total, counted.bounded, meta.snapshot::text AS snapshot, rows.json
       FROM unnest($1::uuid[], $2::int[], $3::int[], $4::text[]${filterArrays}) WITH ORDINALITY
            AS q(account_id, page_limit, page_offset, snapshot${filterColumns}, page)
      CROSS JOIN LATERAL (SELECT COALESCE(q.snapshot::pg_snapshot, pg_current_snapshot()) AS snapshot OFFSET 0) meta
      ${counted}
       LEFT JOIN LATERAL (${rows}) rows ON true`,
    );
  if (used.some((name) => BOUNDED_FILTERS.includes(name))) {
    const indexed = used.map((name) => INDEXED_CONDITIONS[name]?.(filter(name)) ?? '').join(' ');
    return batch(...searchPages(conditions, indexed, visible, sorted));
  }

  const total = countedByCounters
    ? `(SELECT COALESCE(SUM(count), 0) FROM conversations.status_counts c WHERE c.account_id = q.account_id${statusCondition})
                   - (SELECT count(*) FROM conversations.conversations c
                       WHERE c.account_id = q.account_id${statusCondition}
                         AND c.created_xid >= pg_snapshot_xmin(meta.snapshot)
                         AND NOT pg_visible_in_snapshot(c.created_xid, meta.snapshot))`
    : `(SELECT count(*) FROM conversations.conversations c WHERE c.account_id = q.account_id${conditions} AND ${visible})`;
  // A visitor's few conversations are found through their email's index and then sorted: left to
  // itself, the planner walks the creation-time index hoping to meet 20 of them early, and reads
  // the whole account (0.4 s at a million rows). `OFFSET 0` keeps the lookup a query of its own.
  const source = used.includes('visitor_email')
    ? `(SELECT * FROM conversations.conversations c WHERE c.account_id = q.account_id${conditions} OFFSET 0) c`
    : 'conversations.conversations c';
  return batch(
    `CROSS JOIN LATERAL (SELECT ${total} AS total, false AS bounded OFFSET 0) counted`,
    `SELECT ${conversationJson()}::text AS json FROM ${source}
            WHERE c.account_id = q.account_id${conditions} AND ${visible}
            ${sorted} LIMIT q.page_limit OFFSET q.page_offset`,
  );
}

/**
 * The counted and rows subqueries of a page filtered by `q` or `tag`, whose matches a GIN index
 * finds in no order. Reading every match from it costs in proportion to their number (a word in a
 * tenth of a million conversations: 96,000 index entries, 0.2 s, before a row is read), and so
 * does counting or sorting them all (BENCHMARKS.md, "Search"). So:
 * - first the account's newest (or, ascending, oldest) SEARCH_LIMITS.walk conversations are
 *   checked in the list's order along the creation-time index, stopping at countAhead matches
 *   past the page's end: common matches stop it within a few thousand rows. The page comes from
 *   there whenever it holds the page, and if it found more than that bound the total is the bound,
 *   `bounded` saying it is a lower bound;
 * - otherwise the matches are rare (or bunched away from the walked end): they are counted from
 *   the candidates an index gives (`indexed`: INDEXED_CONDITIONS of the filters used), again only
 *   up to the bound, and when the walk did not hold the page, sorted for it (`OFFSET 0` keeps that
 *   lookup a query of its own: the planner would walk the creation-time index instead, reading the
 *   whole account for a rare word).
 */
function searchPages(conditions: string, indexed: string, visible: string, sorted: string): [string, string] {
  const bound = `(q.page_offset + q.page_limit + ${SEARCH_LIMITS.countAhead})`;
  const walkedMore = `cardinality(walked.ids) > ${bound}`;
  const walkedPage = 'cardinality(walked.ids) >= q.page_offset + q.page_limit';
  const matches = `(SELECT * FROM conversations.conversations c
                     WHERE c.account_id = q.account_id${conditions} ${indexed} OFFSET 0) c`;
  const counted = `CROSS JOIN LATERAL (SELECT ARRAY(
          SELECT c.id FROM (SELECT * FROM conversations.conversations c
                             WHERE c.account_id = q.account_id AND ${visible}
                             ${sorted} LIMIT ${SEARCH_LIMITS.walk}) c
           WHERE true${conditions} LIMIT ${bound} + 1) AS ids OFFSET 0) walked
      CROSS JOIN LATERAL (SELECT count(*) AS matches
                            FROM (SELECT 1 FROM ${matches} WHERE NOT ${walkedMore} AND ${visible} LIMIT ${bound} + 1) match
                          OFFSET 0) indexed
      CROSS JOIN LATERAL (SELECT CASE WHEN ${walkedMore} THEN ${bound} ELSE LEAST(indexed.matches, ${bound}) END AS total,
                                 ${walkedMore} OR indexed.matches > ${bound} AS bounded OFFSET 0) counted`;
  const rows = `(SELECT ${conversationJson()}::text AS json
                  FROM unnest(walked.ids) WITH ORDINALITY AS walk(id, n)
                  JOIN conversations.conversations c ON c.id = walk.id AND c.account_id = q.account_id
                 WHERE ${walkedPage} AND walk.n > q.page_offset ORDER BY walk.n LIMIT q.page_limit)
                UNION ALL
                (SELECT ${conversationJson()}::text AS json FROM ${matches}
                  WHERE NOT ${walkedPage} AND ${visible}
                  ${sorted} LIMIT q.page_limit OFFSET q.page_offset)`;
  return [counted, rows];
}

/**
 * Every statement of the repository, prepared once per connection (see libs/database). Each one
 * that changes a conversation for an event also takes the event's sequence (`event_sequence + 1`;
 * 1 for a new conversation's conversation.started): the row's lock orders them.
 */
export const SQL = {
  /**
   * Conversations with their messages, for a batch of reads: $1 conversation ids and $2 their
   * accounts (arrays, one element per read); a conversation with over $3 messages has no JSON.
   */
  readConversations: prepare<ConversationJsonRow>(
    `SELECT c.id, c.account_id, c.message_count,
            CASE WHEN c.message_count <= $3 THEN ${conversationJson(`, ${MESSAGES_JSON} AS messages`)}::text END AS json
       FROM unnest($1::uuid[], $2::uuid[]) AS read(id, account_id)
       JOIN conversations.conversations c ON c.id = read.id AND c.account_id = read.account_id`,
  ),
  find: prepare<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations.conversations c WHERE c.id = $1 AND c.account_id = $2`,
  ),
  lock: prepare<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations.conversations c
        WHERE c.id = $1 AND c.account_id = $2 FOR UPDATE`,
  ),
  insertConversation: prepare<ConversationRow>(
    `INSERT INTO conversations.conversations AS c
         (id, account_id, status, visitor_name, visitor_email, visitor_phone, subject, metadata, tags, created_at,
          updated_at, event_sequence, search_words)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now(), 1, conversations.detail_search_words($7, $4, $5))
       RETURNING ${CONVERSATION_COLUMNS}`,
  ),
  updateStatus: prepare<ConversationRow>(
    `UPDATE conversations.conversations c
          SET status = $3, updated_at = now(), event_sequence = c.event_sequence + 1,
              closed_at = CASE WHEN $3 = 'closed' THEN now() ELSE NULL END
        WHERE id = $1 AND account_id = $2
        RETURNING ${CONVERSATION_COLUMNS}`,
  ),
  updateDetails: prepare<ConversationRow>(
    `UPDATE conversations.conversations c
          SET subject = $3, visitor_name = $4, visitor_email = $5, visitor_phone = $6, metadata = $7::jsonb,
              tags = $8, updated_at = now(), event_sequence = c.event_sequence + 1,
              search_words = CASE WHEN (c.subject, c.visitor_name, c.visitor_email) IS NOT DISTINCT FROM ($3, $4, $5)
                                  THEN c.search_words
                                  ELSE conversations.conversation_search_words(c.id, $3, $4, $5) END
        WHERE id = $1 AND account_id = $2
        RETURNING ${CONVERSATION_COLUMNS}`,
  ),
  /** One more than the page, to know whether another follows. $3: the position to continue after. */
  messagesAfter: prepare<MessageRow & { position: number }>(
    `SELECT ${MESSAGE_COLUMNS}, m.position FROM conversations.messages m
      WHERE m.conversation_id = $1 AND m.account_id = $2 AND m.position > $3
      ORDER BY m.position ASC LIMIT $4::int + 1`,
  ),
  messagesBefore: prepare<MessageRow & { position: number }>(
    `SELECT ${MESSAGE_COLUMNS}, m.position FROM conversations.messages m
      WHERE m.conversation_id = $1 AND m.account_id = $2 AND m.position < $3
      ORDER BY m.position DESC LIMIT $4::int + 1`,
  ),
  latestLead: prepare<LeadView>(
    `SELECT id, conversation_id, name, email, phone, ${iso('created_at')} AS created_at
       FROM conversations.leads
      WHERE conversation_id = $1 AND account_id = $2
      ORDER BY created_at DESC, id DESC LIMIT 1`,
  ),
  saveLead: prepare<{ lead: { id: string; created_at: string }; conversation: ConversationRow }>(
    `WITH c AS (
         UPDATE conversations.conversations c
            SET visitor_name = COALESCE($4, visitor_name), visitor_email = COALESCE($5, visitor_email),
                visitor_phone = COALESCE($6, visitor_phone), updated_at = now(),
                event_sequence = c.event_sequence + 1,
                search_words = CASE WHEN $4 IS NULL AND $5 IS NULL THEN c.search_words
                                    ELSE conversations.conversation_search_words(c.id, c.subject, COALESCE($4, c.visitor_name),
                                                                                 COALESCE($5, c.visitor_email)) END
          WHERE id = $1 AND account_id = $2
          RETURNING ${CONVERSATION_COLUMNS}),
       l AS (
         INSERT INTO conversations.leads (id, conversation_id, account_id, name, email, phone, created_at)
         SELECT $3, c.id, $2, $4, $5, $6, now() FROM c
         RETURNING id, ${iso('created_at')} AS created_at)
       SELECT row_to_json(c) AS conversation, row_to_json(l) AS lead FROM c, l`,
  ),
  /**
   * Takes conversation $1 (account $2, locked by the caller) out of the analytics rollups: each
   * slot that counted its start, closes, messages or leads gets the opposite counts, in this
   * writer's stripe, through the one function every count goes through (the compaction job folds
   * them like any other). Run before its rows go.
   */
  uncountConversation: prepare(
    `WITH counted (slot, started, closed, visitor, agent, bot, system, leads) AS (
         SELECT conversations.analytics_slot(created_at), 1, 0, 0, 0, 0, 0, 0
           FROM conversations.conversations WHERE id = $1 AND account_id = $2
         UNION ALL
         SELECT conversations.analytics_slot(closed_at), 0, 1, 0, 0, 0, 0, 0
           FROM conversations.analytics_closures WHERE conversation_id = $1 AND account_id = $2
         UNION ALL
         SELECT conversations.analytics_slot(created_at), 0, 0, (sender = 'visitor')::int, (sender = 'agent')::int,
                (sender = 'bot')::int, (sender = 'system')::int, 0
           FROM conversations.messages WHERE conversation_id = $1 AND account_id = $2
         UNION ALL
         SELECT conversations.analytics_slot(created_at), 0, 0, 0, 0, 0, 0, 1
           FROM conversations.leads WHERE conversation_id = $1 AND account_id = $2)
     SELECT conversations.add_to_analytics_slots(ARRAY(
              SELECT ROW($2::uuid, slot, pg_backend_pid() % 16, -sum(started), -sum(closed), -sum(visitor), -sum(agent),
                         -sum(bot), -sum(system), -sum(leads))::conversations.analytics_slots
                FROM counted GROUP BY slot))`,
  ),
  /**
   * Deletes conversation $1 (account $2) with everything stored about it: its messages and leads
   * (by the foreign keys' cascade), its events (the events API's store), its closes and first
   * response. Returns the conversation's row count (0 if it was not there).
   */
  eraseConversation: prepare(
    `WITH closes AS (
         DELETE FROM conversations.analytics_closures WHERE conversation_id = $1 AND account_id = $2),
       first_response AS (
         DELETE FROM conversations.analytics_first_responses WHERE conversation_id = $1 AND account_id = $2),
       events AS (
         DELETE FROM conversations.outbox WHERE conversation_id = $1 AND account_id = $2)
     DELETE FROM conversations.conversations WHERE id = $1 AND account_id = $2`,
  ),
  decrementStatusCount: prepare(
    `UPDATE conversations.status_counts SET count = count + $3 WHERE account_id = $1 AND status = $2`,
  ),
  incrementStatusCount: prepare(
    `INSERT INTO conversations.status_counts (account_id, status, count) VALUES ($1, $2, $3)
       ON CONFLICT (account_id, status) DO UPDATE SET count = status_counts.count + EXCLUDED.count`,
  ),
  /**
   * Every message appended, in one statement a batch: the send-message commands of a batch (one
   * round trip, one commit), or a new conversation's first message in its transaction. Each
   * appends its message to its open conversation, writes its event (the only place a message
   * event's payload is made) and records its command. Arrays, one element per message: $1
   * accounts, $2 conversations (at most one message each), $3 message ids, $4 senders, $5
   * contents, $6 event ids, $7 event types, $8 event envelopes without their time, sequence and
   * data (added here), $9 command ids (null: the caller records its command, as a create does),
   * $10 patterns, $11 payload hashes.
   * A repeated command id fails the whole statement on processed_commands' primary key; a
   * message whose conversation is closed or not its account's gets no row back. Conversations
   * are updated in the arrays' order (sorted by id, so concurrent batches lock in one order).
   * Each message's time is read after its conversation's lock (clock_timestamp) and is its
   * event's time; the event takes the conversation's next sequence.
   */
  appendMessages: prepare<{ message: MessageRow }>(
    `WITH input AS (
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::uuid[], $7::text[],
                              $8::jsonb[], $9::text[], $10::text[], $11::text[])
             AS i(account_id, conversation_id, message_id, sender, content, event_id, event_type, envelope,
                  command_id, pattern, payload_hash)),
       c AS (
         UPDATE conversations.conversations c
            SET (message_count, last_message_at, updated_at, event_sequence) =
                (SELECT c.message_count + 1, at, at, c.event_sequence + 1 FROM (SELECT clock_timestamp() AS at) now),
                search_words = conversations.with_message_words(c.search_words, i.content)
           FROM input i
          WHERE c.id = i.conversation_id AND c.account_id = i.account_id AND c.status <> 'closed'
          RETURNING c.id, c.account_id, c.message_count, c.event_sequence, c.last_message_at AS appended_at,
                    i.message_id, i.sender, i.content, i.event_id, i.event_type, i.envelope, i.command_id,
                    i.pattern, i.payload_hash),
       appended AS (
         SELECT c.*, jsonb_build_object('id', c.message_id, 'conversation_id', c.id, 'sender', c.sender,
                  'content', c.content, 'created_at', ${iso('c.appended_at')}) AS message
           FROM c),
       m AS (
         INSERT INTO conversations.messages (id, conversation_id, account_id, position, sender, content, created_at)
         SELECT message_id, id, account_id, message_count, sender, content, appended_at FROM appended),
       event AS (
         INSERT INTO conversations.outbox (event_id, account_id, conversation_id, type, envelope, sequence, created_at)
         SELECT event_id, account_id, id, event_type,
                envelope || jsonb_build_object('time', message -> 'created_at', 'sequence', event_sequence,
                  'data', jsonb_build_object('conversation_id', id, 'message', message)),
                event_sequence, appended_at
           FROM appended),
       recorded AS (
         INSERT INTO conversations.processed_commands (command_id, account_id, pattern, payload_hash, response)
         SELECT command_id, account_id, pattern, payload_hash, message FROM appended WHERE command_id IS NOT NULL)
       SELECT message FROM appended`,
  ),
};
