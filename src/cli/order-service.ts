/**
 * `printer-agent order-service --config FILE`: the reference order service (order-api 4.1, 4.2)
 * as a program. `startOrderService` is its composition root (config -> registry, SQLite store,
 * MQTT publisher, HTTP app), shared with the demo.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { readSecretFile } from '../config/secret-files.js';
import { AgentError, errorMessage } from '../errors.js';
import { createLogger, LOG_LEVELS, type Logger, type LogLevel } from '../logging.js';
import { MqttPublisher } from '../mqtt/publisher.js';
import {
  buildApp,
  buildRegistry,
  configBaseDir,
  describeDatabase,
  type InstructionPublisher,
  isPostgresUrl,
  offlinePublisher,
  openOrderStore,
  parseServiceConfig,
  type ServiceConfig,
} from '../order-service/index.js';
import { type CliContext, pathIn } from './io.js';
import { parseIntOption } from './options.js';

export interface RunningService {
  /** `http://host:port`, the base URL clients and the agent's catch-up use. */
  url: string;
  config: ServiceConfig;
  app: ReturnType<typeof buildApp>;
  close(): Promise<void>;
}

/** Secrets of the service config, scrubbed from every log line. */
export function serviceSecrets(config: ServiceConfig): string[] {
  const values = config.apps.flatMap((a) => a.stores.map((s) => s.storeKey));
  if (config.mqtt?.password) values.push(config.mqtt.password);
  // A PostgreSQL URL may carry a password (decoded too: a log line may show either form).
  const databasePassword = isPostgresUrl(config.database) ? new URL(config.database).password : '';
  if (databasePassword) values.push(databasePassword, decodeURIComponent(databasePassword));
  return values;
}

/**
 * Starts the service from a parsed config; key files and the database path are relative to
 * `baseDir` (the config file's folder).
 */
export async function startOrderService(
  config: ServiceConfig,
  baseDir: string,
  log: Logger,
): Promise<RunningService> {
  const { registry, serviceKey } = buildRegistry(config, baseDir);
  const database =
    config.database === ':memory:' || isPostgresUrl(config.database)
      ? config.database
      : resolve(baseDir, config.database);
  const store = await openOrderStore(database);
  log.info(
    { database: store.kind === 'postgres' ? describeDatabase(database) : database },
    'order database open',
  );
  const holder: { app?: ReturnType<typeof buildApp> } = {};
  let publisher: InstructionPublisher & { close?: () => Promise<void> } = offlinePublisher;
  if (config.mqtt) {
    const tls = config.mqtt.tls;
    const file = (path: string | undefined) => (path ? resolve(baseDir, path) : undefined);
    if (!tls.rejectUnauthorized)
      log.warn('mqtt.tls.rejectUnauthorized: false: the broker certificate is not checked');
    try {
      publisher = new MqttPublisher(
        {
          url: config.mqtt.url,
          topicPrefix: config.mqtt.topicPrefix,
          protocolVersion: config.mqtt.protocolVersion,
          username: config.mqtt.username,
          password: config.mqtt.password,
          tls: {
            caFile: file(tls.caFile),
            certFile: file(tls.certFile),
            keyFile: file(tls.keyFile),
            rejectUnauthorized: tls.rejectUnauthorized,
          },
          // Whatever waited in the outbox while the broker was away goes out at once.
          onConnect: () => void holder.app?.outbox.drain(),
        },
        log.child({ room: 'mqtt' }),
      );
    } catch (error) {
      void store.close(); // a TLS file that cannot be read: nothing else was started
      throw error;
    }
  } else {
    log.warn('no mqtt section: print instructions stay in the outbox');
  }
  const app = buildApp({
    registry,
    store,
    serviceKey,
    scheme: config.signatureScheme,
    publisher,
    dataAsString: config.dataAsString,
    timeZone: config.timeZone,
    maxBodyBytes: config.maxBodyBytes,
    agentMaxMessageBytes: config.agentMaxMessageBytes,
    http: config.http,
    callbacks: config.callbacks,
    logger: log,
  });
  holder.app = app;
  try {
    await app.listen({ host: config.listen.host, port: config.listen.port });
  } catch (error) {
    await publisher.close?.();
    await store.close();
    const code = (error as NodeJS.ErrnoException).code ?? 'failed';
    throw new AgentError(
      'CONFIG_INVALID',
      `listen: cannot listen on ${config.listen.host}:${config.listen.port} (${code})`,
    );
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.listen.port;
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  return {
    url: `http://${host}:${port}`,
    config,
    app,
    async close() {
      await app.close();
      await publisher.close?.();
      await store.close();
    },
  };
}

/** Reads and validates a service config file; problems are reported as `path: message`. */
export function loadServiceConfig(file: string): ServiceConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new AgentError('CONFIG_MISSING', `${file}: cannot read (${code})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AgentError('CONFIG_INVALID', `${file}: not JSON (${errorMessage(error)})`);
  }
  const config = parseServiceConfig(json);
  // The broker password from its own file (a provisioned service user: docs/store-credentials.md),
  // read here so that it is scrubbed from the log like an inline one.
  const passwordFile = config.mqtt?.passwordFile;
  if (config.mqtt && passwordFile !== undefined) {
    const read = readSecretFile(resolve(configBaseDir(file), passwordFile), 256);
    if (!read.ok) throw new AgentError('CONFIG_INVALID', `mqtt.passwordFile: ${read.message}`);
    config.mqtt.password = read.value;
  }
  return config;
}

export function registerOrderService(program: Command, { io }: CliContext): void {
  program
    .command('order-service')
    .description('run the reference order service (order-api create and list, print instructions)')
    .requiredOption('--config <file>', 'service config file (apps, stores, keys, mqtt, listen)')
    .option(
      '--port <port>',
      'listen on this port instead of the config file one',
      parseIntOption('--port', 0, 65535),
    )
    .addOption(new Option('--log-level <level>', 'log level').choices(LOG_LEVELS).default('info'))
    .action(async (opts: { config: string; port?: number; logLevel: LogLevel }) => {
      const configFile = pathIn(io, opts.config);
      const config = loadServiceConfig(configFile);
      if (opts.port !== undefined) config.listen.port = opts.port;
      const log = createLogger({
        level: opts.logLevel,
        secrets: serviceSecrets(config),
        service: 'order-service',
        destination: io.logs,
        // Readable journal lines when run as a systemd service, JSON otherwise (as the agent).
        format: 'auto',
        env: io.env,
      });
      const service = await startOrderService(config, configBaseDir(configFile), log);
      log.info({ url: service.url }, 'order service listening');
      await new Promise<void>((done) => {
        const stop = (signal: string) => {
          log.info({ signal }, 'signal received');
          service.close().then(done, done);
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
      log.flush();
    });
}
