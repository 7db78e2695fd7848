/**
 * Where the agent keeps its things on the machine: one owner for the paths the config schema, the
 * job store and the CLI all default to.
 */

/** The job database's folder: systemd's `StateDirectory=printer-agent`. */
export const DEFAULT_STATE_DIR = '/var/lib/printer-agent';
