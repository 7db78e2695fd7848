#!/bin/sh
# systemctl for the package tests' chroot, where no systemd runs (these machines are containers:
# PID 1 is not systemd, and systemd-nspawn cannot boot one). It keeps exactly what the maintainer
# scripts ask of systemd for printer-agent.service: every call is logged in /run/systemctl.log
# (the tests count the stops and restarts an upgrade makes), and start, stop and restart run the
# agent as the unit would: its user and groups, `printer-agent run --config ...` found on
# systemd's PATH, its output to /run/printer-agent.log, its PID in /run/printer-agent.pid; stop
# sends SIGTERM and waits for it to exit, as systemd's stop does. Everything else succeeds.
# Installed by dpkg-divert over /usr/bin/systemctl; /run/systemd/system is made so the scripts
# believe systemd runs.
echo "$*" >> /run/systemctl.log
unit=
for arg in "$@"; do
  case "$arg" in printer-agent.service|printer-agent) unit=printer-agent ;; esac
done
[ -n "$unit" ] || exit 0
pidfile=/run/printer-agent.pid
stop() {
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    # TimeoutStopSec=20, as the unit.
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}
start() {
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then return 0; fi
  # A session of its own and no inherited descriptors: apt, waiting on its maintainer scripts'
  # output, must not wait on the agent too. setsid and setpriv exec, so $! is the agent's PID.
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    setsid setpriv --reuid=printer-agent --regid=printer-agent --init-groups -- \
    printer-agent run --config /etc/printer-agent/config.json \
    < /dev/null >> /run/printer-agent.log 2>&1 &
  echo $! > "$pidfile"
}
for arg in "$@"; do
  case "$arg" in
    start) start; exit 0 ;;
    stop) stop; exit 0 ;;
    restart|try-restart|reload-or-restart) stop; start; exit 0 ;;
  esac
done
exit 0
