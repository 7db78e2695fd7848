/**
 * sd_notify without a native module: when systemd started us with NOTIFY_SOCKET (Type=notify), the
 * `systemd-notify` tool sends READY=1, STOPPING=1 and WATCHDOG=1 for us (the unit sets
 * NotifyAccess=all because the sender is a child process). Without NOTIFY_SOCKET every call is a
 * no-op, so the same code runs under systemd, in a terminal and in tests.
 */
import { spawn } from 'node:child_process';

function notify(...states: string[]): void {
  if (!process.env.NOTIFY_SOCKET) return;
  const child = spawn('systemd-notify', [...states], { stdio: 'ignore' });
  child.on('error', () => undefined); // not on this system: nothing to tell
  child.unref();
}

export const sdNotify = {
  ready: () => notify('--ready', `--pid=${process.pid}`),
  stopping: () => notify('STOPPING=1'),
  /** Pings the watchdog at half its interval until the returned function stops it. */
  startWatchdog(): () => void {
    const usec = Number(process.env.WATCHDOG_USEC);
    if (!process.env.NOTIFY_SOCKET || !Number.isFinite(usec) || usec <= 0) return () => undefined;
    const timer = setInterval(() => notify('WATCHDOG=1'), Math.max(1000, usec / 2000));
    timer.unref();
    return () => clearInterval(timer);
  },
};
