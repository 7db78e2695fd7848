/** The order store factory: the `database` setting chooses the database (store.ts). */

import { isPostgresUrl } from './database-url.js';
import type { OrderStore } from './store.js';

/**
 * The store `database` names: a PostgreSQL URL, else a SQLite file (`:memory:` keeps nothing).
 * The PostgreSQL client is loaded only here, when a URL asks for it.
 */
export async function openOrderStore(
  database: string,
  options: { applicationName?: string; poolSize?: number } = {},
): Promise<OrderStore> {
  if (isPostgresUrl(database)) {
    const { PostgresOrderStore } = await import('./store-postgres.js');
    return PostgresOrderStore.open(database, options);
  }
  const { SqliteOrderStore } = await import('./store-sqlite.js');
  return new SqliteOrderStore(database);
}
