/** The jobs room: the durable SQLite job store, the per-printer spooler and their policies. */
export * from './fault-points.js';
export * from './job.js';
export * from './migrations.js';
export * from './render-job.js';
export * from './retention.js';
export * from './retry-policy.js';
export * from './spooler.js';
export * from './sqlite-errors.js';
export * from './store.js';
