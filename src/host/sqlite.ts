/**
 * The SQLite driver for the Node this process runs on: the one place that chooses (issue 15).
 *
 * better-sqlite3 12 is built per Node ABI: the build for Node 20 (ABI 115) is made where `npm ci`
 * ran (or by `npm run package` for the package), and 12 does not compile for Node 26. better-
 * sqlite3 13 (installed as `better-sqlite3-napi`) ships prebuilt binaries for Linux x64 and arm64
 * inside its npm tarball, one per platform for every Node from 22 (nothing built, nothing
 * downloaded), and crashes Node 20. So: 13 from Node 22 on, 12 on Node 20. Both have the same API
 * and the same SQLite file format; the job store and the order service open their files here.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { AgentError, errorMessage } from '../errors.js';

const require = createRequire(import.meta.url);

/** The Node major from which the prebuilt driver is used. */
export const PREBUILT_DRIVER_FROM_NODE = 22;

const nodeMajor = Number(process.versions.node.split('.')[0]);

/** Which driver this process uses (the package check reads it). */
export const SQLITE_DRIVER =
  nodeMajor >= PREBUILT_DRIVER_FROM_NODE ? 'better-sqlite3-napi' : 'better-sqlite3';

/**
 * better-sqlite3 12 is an optional dependency: npm skips it where it cannot be built (Node 26,
 * or Node 20 without a compiler), and this says so instead of "Cannot find module".
 */
function load(): typeof BetterSqlite3 {
  try {
    const driver = require(SQLITE_DRIVER) as typeof BetterSqlite3;
    // The driver loads its native binding on its first database, deep inside whatever opens one
    // (and a wrong ABI then reads as a database error): loaded here instead, once, for ~1 ms.
    new driver(':memory:').close();
    return driver;
  } catch (error) {
    // A Node the driver was not built for (Node 21 in /usr/local/bin, first on systemd's PATH,
    // while apt checked Debian's node 20): a person must change the Node, so a config-class
    // exit that names the Node found and the ones that work, not a restart every 2 s (issue 43).
    const text = errorMessage(error);
    if (/NODE_MODULE_VERSION|compiled against a different Node\.js version/.test(text))
      throw new AgentError(
        'NODE_UNSUPPORTED',
        `Node.js ${process.versions.node} (module ABI ${process.versions.modules}, ${process.execPath}) cannot load the SQLite driver ${SQLITE_DRIVER}, built for another ABI: printer-agent runs on Node.js 20 and on ${PREBUILT_DRIVER_FROM_NODE} or newer; put one of those first on the service's PATH (systemd searches /usr/local/bin before /usr/bin)`,
        { cause: error },
      );
    throw new AgentError(
      'STORE_FAILED',
      `the SQLite driver for Node ${process.versions.node} (${SQLITE_DRIVER}) cannot be loaded (${errorMessage(error)}); ` +
        (SQLITE_DRIVER === 'better-sqlite3'
          ? 'on Node 20 npm ci builds it, which needs python3, make and g++; or use the Debian package, or Node 22 or newer'
          : 'run npm ci again'),
      { cause: error },
    );
  }
}

const Database = load();
// The driver's types beside its value, as `import Database from 'better-sqlite3'` gives them.
declare namespace Database {
  type Database = BetterSqlite3.Database;
  type Statement<
    BindParameters extends unknown[] | object = unknown[],
    Result = unknown,
  > = BetterSqlite3.Statement<BindParameters, Result>;
  type Options = BetterSqlite3.Options;
}
export default Database;
