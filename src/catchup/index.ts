/** The catch-up room: the query API client and the poller (print-protocol §8). */
export * from './clock.js';
export * from './poller.js';
export * from './query-client.js';
export * from './service-link.js';
export * from './transport.js';
