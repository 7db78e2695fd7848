/**
 * What the service's `database` setting names: a PostgreSQL URL or a SQLite file. Apart from the
 * stores so the config and the command line can ask without loading either driver.
 */

/** `database` names PostgreSQL when it is a postgres:// or postgresql:// URL. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

/** Where the database is, for messages: host, port and database, never the user or password. */
export function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    return `postgres://${u.host}${u.pathname}`;
  } catch {
    return 'the PostgreSQL database';
  }
}
