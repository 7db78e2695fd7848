/** mqtt-packet's number cache, read by test/agent/mqtt-packet-cache.test.ts (no types shipped). */
declare module 'mqtt-packet/numbers.js' {
  const numbers: { cache: Record<number, Buffer> };
  export default numbers;
}
