import { createHash } from 'node:crypto';

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

/** Anything with TypeORM's `query` (a DataSource, or the EntityManager of a transaction). */
interface QueryExecutor {
  query(query: string, parameters?: unknown[]): Promise<any>;
}

/**
 * Runs a prepared statement through TypeORM, which hands the query config on to `pg` as is;
 * results have TypeORM's usual shape (rows, or [rows, affected] for UPDATE and DELETE).
 */
export function execute<T = any>(executor: QueryExecutor, statement: PreparedStatement, parameters: unknown[]): Promise<T> {
  return executor.query(statement as unknown as string, parameters);
}
