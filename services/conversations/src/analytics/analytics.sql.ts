import { prepare } from '@app/database';

/** The rows of the two reads, as Postgres returns them. */
interface DurationRow {
  count: number;
  /** [median, p90] in milliseconds, or null without samples. */
  p: [number, number] | null;
}

export interface SummaryRow {
  by_status: Record<string, string> | null;
  totals: Record<'started' | 'closed' | 'visitor' | 'agent' | 'bot' | 'system' | 'leads', number>;
  busiest_hour: { hour: number; messages_received: number } | null;
  first_response: DurationRow;
  resolution: DurationRow;
}

export interface BucketRow {
  start_ms: string;
  offset_seconds: number;
  count: string;
}

/**
 * Analytics reads (docs/analytics.md). Counts come from the 15-minute rollup slots that lie
 * wholly inside [from, to), plus the raw rows of the at most two slots cut by `from` and `to`
 * (an index range scan of under 15 minutes each), so they are exact for any instant; durations
 * come from the per-close and per-conversation tables. One statement: one snapshot.
 *
 * $1 account, $2 from, $3 to, $4 IANA time zone.
 */
const RANGE = `r AS (
    SELECT $2::timestamptz AS f, $3::timestamptz AS t, $4::text AS tz,
           conversations.analytics_slot($2) AS f_slot,
           conversations.analytics_slot($2)
             + CASE WHEN conversations.analytics_slot($2) = $2 THEN interval '0' ELSE interval '15 minutes' END AS lo,
           conversations.analytics_slot($3) AS hi),
  edges AS (SELECT f AS a, least(lo, t) AS b FROM r UNION ALL SELECT greatest(hi, lo), t FROM r)`;

const rawEdge = (table: string, at: string, columns: string, filter = '') =>
  `SELECT x.${at}, ${columns} FROM edges e
     JOIN conversations.${table} x ON x.account_id = $1 AND x.${at} >= e.a AND x.${at} < e.b ${filter}`;

/** Every counted event in the range: rollup slots (at = slot start) and raw rows at the edges. */
const EVENTS = `events (at, started, closed, visitor, agent, bot, system, leads) AS (
    SELECT s.slot, s.conversations_started, s.conversations_closed, s.messages_visitor, s.messages_agent,
           s.messages_bot, s.messages_system, s.leads_captured
      FROM r JOIN conversations.analytics_slots s ON s.account_id = $1 AND s.slot >= r.lo AND s.slot < r.hi
    UNION ALL ${rawEdge('conversations', 'created_at', '1, 0, 0, 0, 0, 0, 0')}
    UNION ALL ${rawEdge('analytics_closures', 'closed_at', '0, 1, 0, 0, 0, 0, 0')}
    UNION ALL ${rawEdge(
      'messages',
      'created_at',
      `0, 0, (x.sender = 'visitor')::int, (x.sender = 'agent')::int, (x.sender = 'bot')::int,
       (x.sender = 'system')::int, 0`,
    )}
    UNION ALL ${rawEdge('leads', 'created_at', '0, 0, 0, 0, 0, 0, 1')})`;

/** Exact median and p90 (percentile_cont: linear interpolation) of durations that ended in range. */
const durations = (table: string, at: string, ms: string) =>
  `(SELECT json_build_object('count', count(*),
            'p', percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY x.${ms}))
      FROM r JOIN conversations.${table} x ON x.account_id = $1 AND x.${at} >= r.f AND x.${at} < r.t)`;

export const ANALYTICS_SQL = {
  summary: prepare<SummaryRow>(
    `WITH ${RANGE}, ${EVENTS},
       by_hour AS (
         SELECT extract(hour FROM e.at AT TIME ZONE r.tz)::int AS hour, sum(e.started) AS started,
                sum(e.closed) AS closed, sum(e.visitor) AS visitor, sum(e.agent) AS agent, sum(e.bot) AS bot,
                sum(e.system) AS system, sum(e.leads) AS leads
           FROM events e, r GROUP BY 1)
     SELECT (SELECT json_object_agg(status, count) FROM conversations.status_counts WHERE account_id = $1)
              AS by_status,
            (SELECT json_build_object('started', coalesce(sum(started), 0), 'closed', coalesce(sum(closed), 0),
                      'visitor', coalesce(sum(visitor), 0), 'agent', coalesce(sum(agent), 0),
                      'bot', coalesce(sum(bot), 0), 'system', coalesce(sum(system), 0),
                      'leads', coalesce(sum(leads), 0))
               FROM by_hour) AS totals,
            (SELECT json_build_object('hour', hour, 'messages_received', visitor)
               FROM by_hour WHERE visitor > 0 ORDER BY visitor DESC, hour LIMIT 1) AS busiest_hour,
            ${durations('analytics_first_responses', 'responded_at', 'response_ms')} AS first_response,
            ${durations('analytics_closures', 'closed_at', 'resolution_ms')} AS resolution`,
  ),

  /**
   * $5 interval (hour, day, week), $6 metric. Bucket starts: local midnights (of Mondays for
   * weeks) from the calendar, or for hours each instant at which the local clock begins an hour
   * (so a repeated hour at a DST change is a bucket of its own). Events go to the last start at or
   * before them (width_bucket), which also holds where a midnight is skipped or repeated.
   */
  timeseries: prepare<BucketRow>(
    `WITH ${RANGE}, ${EVENTS},
       starts AS (
         SELECT array_agg(DISTINCT start ORDER BY start) AS starts FROM (
           SELECT g - ((g AT TIME ZONE r.tz) - date_trunc('hour', g AT TIME ZONE r.tz)) AS start
             FROM r, generate_series(r.f_slot - interval '1 hour', r.t, interval '1 hour') g
            WHERE $5 = 'hour'
           UNION ALL
           SELECT d AT TIME ZONE r.tz
             FROM r, generate_series(date_trunc($5, r.f AT TIME ZONE r.tz) - ('1 ' || $5)::interval,
                                     r.t AT TIME ZONE r.tz, ('1 ' || $5)::interval) d
            WHERE $5 <> 'hour') s),
       buckets AS (
         SELECT b.start, b.i, lead(b.start) OVER (ORDER BY b.i) AS next
           FROM starts, unnest(starts.starts) WITH ORDINALITY b (start, i)),
       counts AS MATERIALIZED (
         SELECT width_bucket(e.at, starts.starts) AS i,
                sum(CASE $6 WHEN 'conversations_started' THEN e.started WHEN 'conversations_closed' THEN e.closed
                            WHEN 'messages_received' THEN e.visitor WHEN 'messages_sent' THEN e.agent + e.bot
                            WHEN 'leads_captured' THEN e.leads END) AS n
           FROM events e, starts GROUP BY 1)
     SELECT (extract(epoch FROM b.start) * 1000)::bigint AS start_ms,
            extract(epoch FROM (b.start AT TIME ZONE r.tz) - (b.start AT TIME ZONE 'UTC'))::int AS offset_seconds,
            coalesce(c.n, 0) AS count
       FROM r, buckets b LEFT JOIN counts c ON c.i = b.i
      WHERE r.f < r.t AND b.start < r.t AND (b.next IS NULL OR b.next > r.f)
      ORDER BY b.i`,
  ),

  timeZones: prepare<{ name: string }>(`SELECT name FROM pg_timezone_names`),

  /**
   * Folds the writers' stripes of past slots into stripe -1 (one row per slot), a batch at a time,
   * adding them with the triggers' upsert (add_to_analytics_slots, migration 1766600000000).
   * Moving counts inside one statement keeps every read exact; the advisory lock keeps two
   * replicas from upserting the same folded rows in opposite orders.
   */
  compact: prepare<{ moved: number }>(
    `WITH lock AS (SELECT pg_try_advisory_xact_lock(hashtext('conversations.analytics_slots.compact')) AS held),
       claimed AS (
         SELECT s.account_id, s.slot, s.stripe FROM conversations.analytics_slots s
          WHERE s.stripe >= 0 AND s.slot < conversations.analytics_slot(now()) AND (SELECT held FROM lock)
          ORDER BY s.slot LIMIT $1 FOR UPDATE SKIP LOCKED),
       moved AS (
         DELETE FROM conversations.analytics_slots s USING claimed c
          WHERE (s.account_id, s.slot, s.stripe) = (c.account_id, c.slot, c.stripe) RETURNING s.*),
       folded AS (
         SELECT ROW(account_id, slot, -1, sum(conversations_started), sum(conversations_closed), sum(messages_visitor),
                    sum(messages_agent), sum(messages_bot), sum(messages_system), sum(leads_captured)
                )::conversations.analytics_slots AS counts
           FROM moved GROUP BY account_id, slot)
     SELECT (SELECT count(*)::int FROM moved) AS moved
       FROM (SELECT conversations.add_to_analytics_slots(ARRAY(SELECT counts FROM folded))) added`,
  ),
};
