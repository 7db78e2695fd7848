/**
 * The queries a host sends in the data stream (`GS r`, `GS I`, `GS a`, `GS ( H`...) as the
 * decoder hands them up. Their own file so the command handlers, the executor, the decoder and
 * the status responder share the type without importing one another.
 */
/** A query answered in order with the data: it waits behind everything received before it. */
export type HostQuery =
  /** `GS r 1` / `GS r 49` / `ESC v`: paper sensor status. */
  | { kind: 'paper-sensor'; command: string }
  /** `GS r 2` / `GS r 50` / `ESC u 0`: drawer kick-out connector status. */
  | { kind: 'drawer'; command: string }
  /** `GS r 4` / `GS r 52`: ink status (impact models). */
  | { kind: 'ink'; command: string }
  /** `GS ( H fn 48`: process id d1..d4, answered once the data before it is printed. */
  | { kind: 'process-id'; id: Uint8Array }
  /** `GS I n`: printer id / information. */
  | { kind: 'printer-id'; n: number }
  /** `GS a n`: enable (n != 0) or disable automatic status back. */
  | { kind: 'asb'; n: number };
