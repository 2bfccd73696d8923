import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search's SQL functions that Postgres cannot inline become PL/pgSQL functions with the same body.
 *
 * A SQL function that is not inlined (these call STABLE functions, `unaccent` and `concat_ws`,
 * or hold a subquery) is parsed and planned again by every statement that calls it, and a nested
 * one by every call of its caller: `words_of` cost about 25 us a statement beyond its work, twice
 * in each batch of sent messages (the conversation's words and the messages' index), and
 * `search_driver` 2 ms a search. A PL/pgSQL function keeps its plan for the session.
 * BENCHMARKS.md, "Send's statement", has the figures.
 *
 * Each body is read from the catalogue and wrapped as it stands, so the functions that index
 * expressions call (`words_of`, `detail_search_words`) return exactly what they did and the
 * indexes stay valid without a rebuild. It is read with an empty search_path, so every name in it
 * is written schema-qualified (`unaccent` wherever its extension lives): a PL/pgSQL body is
 * resolved when it runs, under the caller's search_path, where a SQL-standard body was resolved
 * once. Expand only: no release reads these functions' language, and replacing a function is one
 * catalogue update, safe while any release serves.
 */
const FUNCTIONS = [
  'words_of(text)',
  'detail_search_words(text, text, text)',
  'conversation_search_words(uuid, text, text, text)',
  'search_query(text, integer)',
  'search_driver(tsquery)',
];

/** `RETURN <expression>` (SQL-standard body) as a PL/pgSQL block and back. */
const toPlpgsql = (sqlBody: string): string => `AS $plpgsql$ BEGIN ${sqlBody}; END $plpgsql$`;
/** The block as `pg_get_functiondef` writes it back, under a dollar quote of its own choice. */
const PLPGSQL_BODY = /AS \$(\w*)\$ BEGIN (RETURN [\s\S]*); END \$\1\$/;

export class SearchFunctionsPlpgsql1767000000000 implements MigrationInterface {
  name = 'SearchFunctionsPlpgsql1767000000000';

  async up(db: QueryRunner): Promise<void> {
    await withQualifiedNames(db, async () => {
      for (const signature of FUNCTIONS) {
        const { definition, body } = await functionDefinition(db, signature);
        if (!body) continue; // already PL/pgSQL
        await db.query(
          definition.slice(0, definition.indexOf(body)).replace(' LANGUAGE sql\n', ' LANGUAGE plpgsql\n') +
            toPlpgsql(body),
        );
      }
    });
  }

  async down(db: QueryRunner): Promise<void> {
    await withQualifiedNames(db, async () => {
      for (const signature of FUNCTIONS) {
        const { definition } = await functionDefinition(db, signature);
        const body = PLPGSQL_BODY.exec(definition)?.[2];
        if (!body) continue;
        await db.query(
          definition.replace(' LANGUAGE plpgsql\n', ' LANGUAGE sql\n').replace(PLPGSQL_BODY, () => body),
        );
      }
    });
  }
}

/**
 * Runs `work` with an empty search_path, so that definitions read from the catalogue name every
 * object with its schema, then puts the caller's back. Throws outside a transaction, where a
 * transaction-local setting would not hold from one statement to the next.
 */
async function withQualifiedNames(db: QueryRunner, work: () => Promise<void>): Promise<void> {
  const [{ path }] = (await db.query(`SELECT current_setting('search_path') AS path`)) as Array<{
    path: string;
  }>;
  await db.query(`SELECT set_config('search_path', '', true)`);
  const [{ empty }] = (await db.query(`SELECT current_setting('search_path') = '' AS empty`)) as Array<{
    empty: boolean;
  }>;
  if (!empty) throw new Error('SearchFunctionsPlpgsql1767000000000 must run in a transaction');
  await work();
  await db.query(`SELECT set_config('search_path', $1, true)`, [path]);
}

/** The function's `CREATE OR REPLACE` statement, and its SQL-standard body (`RETURN ...`), '' if it has none. */
async function functionDefinition(
  db: QueryRunner,
  signature: string,
): Promise<{ definition: string; body: string }> {
  const [row] = (await db.query(
    `SELECT pg_get_functiondef(f) AS definition, COALESCE(pg_get_function_sqlbody(f), '') AS body
       FROM (SELECT $1::regprocedure AS f) fn`,
    [`conversations.${signature}`],
  )) as Array<{ definition: string; body: string }>;
  return row;
}
