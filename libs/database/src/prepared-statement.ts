import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';

/**
 * A named SQL statement: Postgres parses and plans it once per connection instead of on every
 * call (planning a list query costs more than running it). The name is derived from the text,
 * so two statements can never share a name by mistake.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

export function prepare(text: string): PreparedStatement {
  return { name: `s_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text };
}

const built = new Map<string, PreparedStatement>();
/** The statement of a text built at run time (a set of filters): one per distinct text, kept. */
export function preparedOnce(text: string): PreparedStatement {
  let statement = built.get(text);
  if (!statement) built.set(text, (statement = prepare(text)));
  return statement;
}

/** A DataSource, or the EntityManager of a transaction (anything with TypeORM's `query`). */
interface QueryExecutor {
  query(query: string, parameters?: unknown[]): Promise<any>;
}

interface PgResult {
  command: string;
  rows: unknown[];
  rowCount: number | null;
}

/**
 * Runs a prepared statement. Outside a transaction it goes straight to the pool of the `pg`
 * driver (TypeORM's per-query runner costs more than a look-up itself); inside one, through the
 * transaction's EntityManager. Results have TypeORM's shape either way: rows, or
 * [rows, affected] for UPDATE and DELETE.
 */
export async function execute<T = any>(
  executor: QueryExecutor,
  statement: PreparedStatement,
  parameters: unknown[],
): Promise<T> {
  if (!(executor instanceof DataSource)) return executor.query(statement as unknown as string, parameters);
  const pool = (executor.driver as unknown as { master: { query(config: object): Promise<PgResult> } })
    .master;
  const result = await pool.query({ name: statement.name, text: statement.text, values: parameters });
  return (
    result.command === 'UPDATE' || result.command === 'DELETE' ? [result.rows, result.rowCount] : result.rows
  ) as T;
}
