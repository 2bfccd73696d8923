import { createHash } from 'node:crypto';
import type { PoolClient, QueryConfig } from 'pg';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';

/**
 * A named SQL statement: Postgres parses and plans it once per connection instead of on every
 * call (planning a list query costs more than running it). The name is derived from the text,
 * so two statements can never share a name by mistake. `Row` is the shape of one result row,
 * as the statement's column list (and its aliases) give it.
 */
export interface PreparedStatement<Row extends object = Record<string, never>> {
  readonly name: string;
  readonly text: string;
  /** Never set: carries the row type from `prepare` to `execute`. */
  readonly row?: Row;
}

export function prepare<Row extends object = Record<string, never>>(text: string): PreparedStatement<Row> {
  return { name: `s_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text };
}

const built = new Map<string, PreparedStatement<object>>();
/** The statement of a text built at run time (a set of filters): one per distinct text, kept. */
export function preparedOnce<Row extends object>(text: string): PreparedStatement<Row> {
  let statement = built.get(text);
  if (!statement) built.set(text, (statement = prepare<Row>(text)));
  return statement as PreparedStatement<Row>;
}

/** What a statement returned: its rows (RETURNING ones included) and how many rows it touched. */
export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

/** A DataSource (a connection from its pool for one statement), or the EntityManager of a transaction. */
export type Queryable = DataSource | EntityManager;

/**
 * Runs a prepared statement on a pg client obtained through TypeORM's public QueryRunner API:
 * `connect()` of the postgres driver's query runner returns its node-postgres client (a pool
 * client, or the transaction's own). Outside a transaction a runner is taken for this one
 * statement and released after it (what `pool.query` does inside too); inside one, the
 * transaction's runner is used and left to the transaction. Going to the client directly skips
 * TypeORM's per-query logging and result reshaping, which cost more than a look-up itself, and
 * lets every statement, in a transaction or not, be a named one.
 *
 * A connection broken by a timeout or a lost socket is ended by the client (BoundedClient) or
 * reported by its 'error' event, which TypeORM's runner handles; the pool drops ended clients.
 */
export function execute<Row extends object>(
  executor: Queryable,
  statement: PreparedStatement<Row>,
  parameters: readonly unknown[] = [],
): Promise<QueryResult<Row>> {
  return run<Row>(executor, { name: statement.name, text: statement.text, values: [...parameters] });
}

/**
 * A one-off statement that is not worth a name on every connection (a periodic clean-up, a
 * start-up check): the same typed result, parsed and planned on each call.
 */
export function query<Row extends object = Record<string, never>>(
  executor: Queryable,
  text: string,
  parameters: readonly unknown[] = [],
): Promise<QueryResult<Row>> {
  return run<Row>(executor, { text, values: [...parameters] });
}

async function run<Row extends object>(executor: Queryable, config: QueryConfig): Promise<QueryResult<Row>> {
  const transactionRunner = executor instanceof EntityManager ? executor.queryRunner : undefined;
  const runner: QueryRunner =
    transactionRunner ??
    (executor instanceof DataSource ? executor : executor.connection).createQueryRunner();
  try {
    const client = (await runner.connect()) as PoolClient;
    const result = await client.query<Row>(config);
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  } finally {
    if (!transactionRunner) await runner.release();
  }
}
