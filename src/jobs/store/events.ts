/**
 * The job store's events, announced by `JobStore` (`../store.ts`): the parts beside this file
 * announce through it, so there is one emitter to listen to whichever part wrote.
 */
import type { EventEmitter } from 'node:events';

export interface StoreEvents {
  /** A job became ready to print on `printer` (insert, retry, recovery): wake its loop. */
  job: [printer: string];
  /** Rows were added to the outbox: wake the reporter. */
  outbox: [];
}

/** What a part needs of the store's emitter: to announce. */
export type StoreAnnouncer = Pick<EventEmitter<StoreEvents>, 'emit'>;
