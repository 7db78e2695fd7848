/**
 * The console's local credential (issue 40 item 4). Loopback is not a person: any user or process
 * on the Pi reaches 127.0.0.1. So what changes something (test print, reprint, retry) or shows
 * customer data unmasked needs a credential there too. The agent makes a fresh random one at every
 * start and writes it, 0600, into its state dir (the service user's, 0700 in the package): whoever
 * can read that file (root through sudo, or the service user) is who may act, as with a database's
 * or bitcoind's cookie file. The commands on the Pi (`status`, `test-print`) read it through the
 * same config as `run`, so a technician needs no token of their own, and it is 256 random bits: no
 * lockout applies to it, so wrong tries of the configured token, from any address, never lock the
 * commands out.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { readSecretFile } from '../config/secret-files.js';
import { writeFileDurably } from '../host/durable-file.js';

export function localTokenPath(stateDir: string): string {
  return join(stateDir, 'console-local-token');
}

/** A new local credential, written for the commands on this machine; SECRET. */
export function issueLocalToken(stateDir: string): string {
  const token = randomBytes(32).toString('base64url');
  writeFileDurably(localTokenPath(stateDir), `${token}\n`, { mode: 0o600 });
  return token;
}

/** The running agent's local credential, or why this user cannot read it. */
export function readLocalToken(
  stateDir: string,
): { ok: true; token: string } | { ok: false; message: string } {
  const read = readSecretFile(localTokenPath(stateDir), 100);
  return read.ok ? { ok: true, token: read.value } : { ok: false, message: read.message };
}
