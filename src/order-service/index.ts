/** The reference order service (issue 8): HTTP create and list, its store, the outbox. */
export * from './app.js';
export * from './callbacks.js';
export * from './codes.js';
export * from './config.js';
export * from './database-url.js';
export * from './open-store.js';
export * from './order-record.js';
export * from './outbox.js';
export * from './print-instruction.js';
export * from './publisher.js';
export * from './store.js';
export * from './store-sqlite.js';
