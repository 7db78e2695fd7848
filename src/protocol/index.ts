/** The order API and print protocol as code: the one source of truth for every other room. */
export * from './codes.js';
export * from './create-params.js';
export * from './envelope.js';
export * from './limits.js';
export * from './money.js';
export * from './order-record.js';
export * from './param-schemas.js';
export * from './print-protocol.js';
export * from './query.js';
export * from './response-binding.js';
export * from './signing.js';
export * from './store-id.js';
export * from './time.js';
export * from './validation.js';
