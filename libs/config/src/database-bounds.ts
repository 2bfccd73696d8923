/** Defaults of the client-side bounds on every Postgres query and connection (docs/operations.md, Configuration). */
export const DATABASE_BOUND_DEFAULTS = {
  DATABASE_QUERY_TIMEOUT_MS: 5000,
  DATABASE_CONNECT_TIMEOUT_MS: 2000,
};
