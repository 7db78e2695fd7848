#!/usr/bin/env bash
# Issue 45: the agent's start as a store sees it, measured from outside the agent's code: the
# compiled agent (`node dist/cli.js run`, with the unit's Environment= lines) on the config the
# package installs, made a store's with `printer-agent config set/unset` as a technician does;
# two emulators (`printer-agent emulator`) as its printers; a Mosquitto of its own on loopback;
# mosquitto_sub watching the status topic. Times exec -> the first live `online` status, and a
# bare Node process that loads mqtt.js, connects and publishes once (exec -> its message seen by
# the same mosquitto_sub), median of START_RUNS (default 5) each, alternated. Exits 1 when the
# agent's median is above 1.5x the bare one (the goal; bench/goals.ts holds the same one for the
# in-process benchmark, bench/footprint.bench.ts).
#
# Usage: npm run build && bench/start-outside.sh     (needs mosquitto and mosquitto-clients)
# START_OUTSIDE_RESULT=FILE also writes the times as JSON there ({"agent": [ms...], "bare":
# [ms...]}): the footprint benchmark (bench/footprint.bench.ts) runs this script and reports
# its medians beside its own, on the performance page.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${START_RUNS:-5}
for tool in mosquitto mosquitto_sub mosquitto_pub openssl; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] ||
    { echo "start-outside: needs $tool (Debian packages mosquitto, mosquitto-clients, openssl)" >&2; exit 2; }
done
[ -f dist/cli.js ] || { echo "start-outside: no dist/cli.js: run npm run build first" >&2; exit 2; }
PATH=$PATH:/usr/sbin

dir=$(mktemp -d /tmp/pa-start-outside-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $dir" || rm -rf "$dir"
}
trap cleanup EXIT
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
cli() { node dist/cli.js "$@"; }

port=$(free_port)
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$port" > "$dir/mosquitto.conf"
mosquitto -c "$dir/mosquitto.conf" 2>"$dir/mosquitto.log" & pids+=($!)
receipt=$(free_port)
kitchen=$(free_port)
mkdir -p "$dir/receipt" "$dir/kitchen"
node dist/cli.js emulator --listen "tcp://127.0.0.1:$receipt" --out "$dir/receipt" >/dev/null & pids+=($!)
node dist/cli.js emulator --listen "tcp://127.0.0.1:$kitchen" --out "$dir/kitchen" >/dev/null & pids+=($!)

# The store's files and the installed template, made this store's with the CLI.
openssl genrsa -out "$dir/service-private.pem" 2048 2>/dev/null
openssl rsa -in "$dir/service-private.pem" -pubout -out "$dir/service-public.pem" 2>/dev/null
openssl genrsa -out "$dir/store-private.pem" 2048 2>/dev/null
chmod 600 "$dir/store-private.pem"
echo sk-start-outside > "$dir/store-key" && chmod 600 "$dir/store-key"
config=$dir/config.json
cp config/config.example.json "$config"
cli config unset mqtt.tls --config "$config" >/dev/null
cli config unset mqtt.passwordFile --config "$config" >/dev/null
cli config unset mqtt.username --config "$config" >/dev/null
cli config set mqtt.url "mqtt://127.0.0.1:$port" --config "$config" >/dev/null
cli config set storeKeyFile "$dir/store-key" --config "$config" >/dev/null
cli config set keys.servicePublicKeyFile "$dir/service-public.pem" --config "$config" >/dev/null
cli config set keys.storePrivateKeyFile "$dir/store-private.pem" --config "$config" >/dev/null
cli config set 'printers[0].url' "tcp://127.0.0.1:$receipt" --config "$config" >/dev/null
cli config set 'printers[1].url' "tcp://127.0.0.1:$kitchen" --config "$config" >/dev/null
cli config set stateDir "$dir/state" --config "$config" >/dev/null
# Catch-up needs the store's order service; 8631 may be another agent's on this machine.
cli config set catchUp.enabled false --config "$config" >/dev/null
cli config set console.port "$(free_port)" --config "$config" >/dev/null

# One subscriber for the whole run, read line by line; subscribed once its marker comes back.
coproc SUB { exec stdbuf -oL mosquitto_sub -p "$port" -v -t bench/start/+ -t 'printer-agent/v1/+/status'; }
pids+=("$SUB_PID")
until_line() { # PATTERN: read the subscriber's lines until one matches (60 s at most)
  local line
  while IFS= read -r -t 60 line <&"${SUB[0]}"; do [[ $line == $1 ]] && return 0; done
  echo "start-outside: no line like '$1' within 60 s" >&2
  exit 1
}
until mosquitto_pub -p "$port" -t bench/start/marker -m ready && IFS= read -r -t 1 line <&"${SUB[0]}" && [[ $line == 'bench/start/marker ready' ]]; do :; done

unit_env=()
while IFS= read -r line; do unit_env+=("${line#Environment=}"); done < <(grep '^Environment=' systemd/printer-agent.service | tr -d '"')
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }

agent=()
bare=()
# The first start makes the job database: not what a store's every start pays. Not counted.
for i in $(seq 0 "$runs"); do
  started=$(now_ms)
  env "${unit_env[@]}" node dist/cli.js run --config "$config" 2>>"$dir/agent.log" >>"$dir/agent.log" &
  pid=$!
  until_line '*"online":true*'
  took=$(( $(now_ms) - started ))
  kill -TERM "$pid"
  until_line '*"online":false*'
  wait "$pid"
  started=$(now_ms)
  node --input-type=module -e "import mqtt from 'mqtt'; const c = mqtt.connect('mqtt://127.0.0.1:$port', { protocolVersion: 5 }); c.on('connect', () => c.publish('bench/start/bare', 'up', { qos: 1 }, () => c.end()));" &
  until_line 'bench/start/bare up'
  bare_took=$(( $(now_ms) - started ))
  wait $!
  [ "$i" -eq 0 ] && continue
  agent+=("$took")
  bare+=("$bare_took")
done
a=$(median "${agent[@]}")
b=$(median "${bare[@]}")
ratio=$(node -p "($a / $b).toFixed(2)")
if [ -n "${START_OUTSIDE_RESULT:-}" ]; then
  printf '{"agent": [%s], "bare": [%s]}\n' "$(IFS=,; echo "${agent[*]}")" "$(IFS=,; echo "${bare[*]}")" > "$START_OUTSIDE_RESULT"
fi
echo "start from outside, installed config: agent ${agent[*]} ms (median $a), bare Node + mqtt.js ${bare[*]} ms (median $b): ${ratio}x (goal: at most 1.5x)"
node -e "process.exit($a <= 1.5 * $b ? 0 : 1)" || { echo "start-outside: above 1.5x bare Node" >&2; exit 1; }
