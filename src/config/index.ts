/** The agent's configuration: schema, loading, redaction, editing and generated docs. */
export * from './config-file.js';
export * from './edit.js';
export * from './env.js';
export * from './file-migration.js';
export * from './json-text.js';
export * from './load.js';
export * from './migrations.js';
export * from './redact.js';
export * from './reference.js';
export * from './schema.js';
