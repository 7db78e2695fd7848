/**
 * SQLite errors in the catalogue's terms (reliability guarantee 11). The MQTT inbox acks only
 * after a commit, so both codes mean "do not ack": the broker keeps the message and redelivers it
 * once the store works again. Disk full is its own code because the status reports it as a fault
 * a person can fix (free space), and because it goes away by itself when space returns.
 */
import { AgentError, errorMessage } from '../errors.js';

/** better-sqlite3's SqliteError carries the extended result code as a string. */
function sqliteCode(error: unknown): string | null {
  if (typeof error !== 'object' || error === null || !('code' in error)) return null;
  const code = (error as { code: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : null;
}

export function isUniqueViolation(error: unknown): boolean {
  const code = sqliteCode(error);
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Wraps a driver error; AgentErrors (already typed) pass through unchanged. */
export function storeError(error: unknown, doing: string): AgentError {
  if (error instanceof AgentError) return error;
  const code = sqliteCode(error);
  const detail = errorMessage(error);
  // SQLITE_FULL is both a full disk (SQLite maps ENOSPC to it) and max_page_count reached.
  if (code === 'SQLITE_FULL') {
    return new AgentError('STORE_FULL', `job database is full while ${doing}: ${detail}`, {
      cause: error,
      details: { sqlite: code },
    });
  }
  return new AgentError('STORE_FAILED', `job database error while ${doing}: ${detail}`, {
    cause: error,
    details: { sqlite: code },
  });
}
