/**
 * The account the service runs as, and what it can read. Root reads every file, so `doctor`,
 * `config check` and `config set` run with sudo would say OK to a config the service cannot open
 * and then crash-loops on (issue 15's lock-out trap); run as root, they ask this module instead.
 *
 * The account is the unit's `User=` (printer-agent, or `PRINTER_AGENT_SERVICE_USER` where an
 * integrator runs the unit as another user), read from /etc/passwd and /etc/group; its groups are
 * its primary group, the groups that list it, and the unit's `SupplementaryGroups=` (lp, dialout).
 */
import { readFileSync, type Stats, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export const SERVICE_USER = 'printer-agent';
export const SERVICE_USER_ENV = 'PRINTER_AGENT_SERVICE_USER';
/** systemd/printer-agent.service: `SupplementaryGroups=lp dialout`. */
const UNIT_SUPPLEMENTARY_GROUPS = ['lp', 'dialout'];

export interface ServiceAccount {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
  /** The primary group's name, for the `chown` in a fix. */
  readonly groupName: string;
  readonly groups: ReadonlySet<number>;
}

/** The colon-separated records of /etc/passwd or /etc/group. */
function records(file: string): string[][] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.split(':'));
}

/**
 * The service account, or null when it does not exist (the package creates it; a developer's
 * machine has none). `files` is for tests that bring their own account databases.
 */
export function findServiceAccount(
  env: NodeJS.ProcessEnv,
  files = { passwd: '/etc/passwd', group: '/etc/group' },
): ServiceAccount | null {
  const name = env[SERVICE_USER_ENV] || SERVICE_USER;
  let users: string[][];
  let groups: string[][];
  try {
    users = records(files.passwd);
    groups = records(files.group);
  } catch {
    return null;
  }
  const user = users.find((fields) => fields[0] === name);
  if (!user) return null;
  const uid = Number(user[2]);
  const gid = Number(user[3]);
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) return null;
  const ids = new Set([gid]);
  for (const [groupName, , id, members] of groups) {
    const member = (members ?? '').split(',').includes(name);
    if (member || UNIT_SUPPLEMENTARY_GROUPS.includes(groupName ?? '')) ids.add(Number(id));
  }
  const groupName = groups.find((fields) => Number(fields[2]) === gid)?.[0] ?? String(gid);
  return { name, uid, gid, groupName, groups: ids };
}

/** Whether root is asking: only then can the answer differ from the caller's own access. */
export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

export interface AccessProblem {
  /** The file, or the directory above it that cannot be searched. */
  readonly path: string;
  readonly detail: string;
  /** The commands that fix it, for a person to run. */
  readonly fix: string;
}

const READ = 0o4;
const SEARCH = 0o1;

/** The permission bits that apply to the account: owner's, group's or others', as the kernel picks. */
function allows(account: ServiceAccount, stats: Stats, bit: number): boolean {
  if (account.uid === 0) return true;
  if (stats.uid === account.uid) return ((stats.mode >> 6) & bit) !== 0;
  if (account.groups.has(stats.gid)) return ((stats.mode >> 3) & bit) !== 0;
  return (stats.mode & bit) !== 0;
}

/**
 * Whether the account can reach and read `file`: every directory above it needs search
 * permission, the file read permission. `secret`: the file holds a secret, so the fix gives it to
 * the service user alone (0600) rather than to its group. A file that does not exist is not a
 * problem here (the checks that read it say so).
 */
export function readProblem(
  account: ServiceAccount,
  file: string,
  { secret = false }: { secret?: boolean } = {},
): AccessProblem | null {
  const target = resolve(file);
  const above: string[] = [];
  for (let dir = dirname(target); ; dir = dirname(dir)) {
    above.unshift(dir);
    if (dir === dirname(dir)) break;
  }
  try {
    for (const dir of above) {
      const stats = statSync(dir);
      if (allows(account, stats, SEARCH)) continue;
      return {
        path: dir,
        detail: `${account.name} cannot enter ${dir} (mode ${octal(stats)}, owner ${stats.uid}:${stats.gid}), so it cannot read ${target}`,
        fix: account.groups.has(stats.gid)
          ? `sudo chmod g+x ${dir}`
          : `sudo chgrp ${account.groupName} ${dir} && sudo chmod g+x ${dir}`,
      };
    }
    const stats = statSync(target);
    if (allows(account, stats, READ)) return null;
    return {
      path: target,
      detail: `${account.name} cannot read ${target} (mode ${octal(stats)}, owner ${stats.uid}:${stats.gid})`,
      fix: secret
        ? `sudo chown ${account.name}:${account.groupName} ${target} && sudo chmod 0600 ${target}`
        : `sudo chown root:${account.groupName} ${target} && sudo chmod 0640 ${target}`,
    };
  } catch {
    return null;
  }
}

function octal(stats: Stats): string {
  return `0${(stats.mode & 0o777).toString(8)}`;
}
