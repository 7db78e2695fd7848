/**
 * Broker passwords: a generated one for each store, and the line Mosquitto's `password_file`
 * holds for it. Mosquitto 2's format is `user:$7$<iterations>$<salt>$<hash>`: PBKDF2-HMAC-SHA512,
 * a 12-byte salt and a 64-byte key, both in standard base64 (checked against `mosquitto_passwd`
 * 2.0.11: test/cli/broker-provision.test.ts verifies its output with `verifyMosquittoHash`, and a
 * real Mosquitto accepts ours). Computed with node:crypto, so provisioning needs no Mosquitto
 * tools on the machine that runs it. Pure: no I/O.
 */
import { pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * What `mosquitto_passwd` 2.0 uses. Few iterations are harmless for the passwords we generate
 * (192 random bits: nothing to guess), and the broker pays them at every connect of every store,
 * also when a thousand stores reconnect after a broker restart. A password a person supplies must
 * be long instead (`MIN_SUPPLIED_PASSWORD`).
 */
export const MOSQUITTO_PBKDF2_ITERATIONS = 101;
const SALT_BYTES = 12;
const KEY_BYTES = 64;

/** The shortest password `broker provision --password-file` accepts (see the iterations). */
export const MIN_SUPPLIED_PASSWORD = 16;
/** Mosquitto and the agent's `mqtt.password` (at most 1024 characters) both take it. */
export const MAX_SUPPLIED_PASSWORD = 1024;

/** 24 random bytes as base64url: 32 characters, no padding, nothing a shell or JSON must escape. */
export function generateBrokerPassword(): string {
  return randomBytes(24).toString('base64url');
}

/** `$7$<iterations>$<salt b64>$<hash b64>`; `salt` only for tests that need a fixed one. */
export function mosquittoHash(
  password: string,
  options: { salt?: Buffer; iterations?: number } = {},
): string {
  const salt = options.salt ?? randomBytes(SALT_BYTES);
  const iterations = options.iterations ?? MOSQUITTO_PBKDF2_ITERATIONS;
  const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, KEY_BYTES, 'sha512');
  return `$7$${iterations}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** One `password_file` line. The user name never holds `:` (store ids and service names do not). */
export function mosquittoPasswordLine(username: string, password: string): string {
  return `${username}:${mosquittoHash(password)}`;
}

/**
 * Whether `hash` (the part after `user:`) is a `$7$` hash of `password`: how tests check that our
 * lines and `mosquitto_passwd`'s are the same format. False for any other format.
 */
export function verifyMosquittoHash(hash: string, password: string): boolean {
  const match = /^\$7\$(\d{1,7})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(hash);
  if (!match) return false;
  const [, iterations, salt, key] = match as unknown as [string, string, string, string];
  const expected = Buffer.from(key, 'base64');
  const actual = pbkdf2Sync(
    Buffer.from(password, 'utf8'),
    Buffer.from(salt, 'base64'),
    Number(iterations),
    expected.length,
    'sha512',
  );
  return expected.length === KEY_BYTES && timingSafeEqual(actual, expected);
}
