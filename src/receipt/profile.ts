/**
 * Printer profiles: what a model can do, as data (`config/printers/*.json`), in the shape of
 * escpos-printer-db and ReceiptPrinterEncoder's printer definitions. The layout reads columns and
 * capabilities from here; nothing about a model is hard-coded in the renderer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import CodepageEncoder from '@point-of-sale/codepage-encoder';
import { z } from 'zod';
import { AgentError } from '../errors.js';
import { PACKAGE_ROOT } from '../package-root.js';
import { describeIssues, parseWith } from '../protocol/validation.js';

export const PROFILES_DIR = join(PACKAGE_ROOT, 'config', 'printers');

const codepageName = z
  .string()
  .refine(
    (name) => CodepageEncoder.supports(name),
    'must be a code page name known to the encoder, e.g. cp858',
  );

export const profileSchema = z.object({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{0,63}$/, 'must be lower-case letters, digits, dot or dash'),
  name: z.string().min(1),
  paperWidthMm: z.union([z.literal(58), z.literal(80)]),
  dotsPerLine: z.number().int().min(200).max(1000),
  fonts: z.object({
    A: z.object({ columns: z.number().int().min(16).max(80) }),
    B: z.object({ columns: z.number().int().min(16).max(100) }).optional(),
  }),
  /** Font of the body text; B prints more columns in smaller type. */
  font: z.enum(['A', 'B']).default('A'),
  /** The code page text is encoded in, and its `ESC t` number on this model (clones renumber). */
  codepage: codepageName,
  codepageNumbers: z.record(codepageName, z.number().int().min(0).max(255)),
  /** Double-byte CJK through `FS &` in this encoding, or null when the model has no CJK font. */
  cjk: z
    .object({ encoding: z.literal('gb18030') })
    .nullable()
    .default(null),
  /**
   * Whether the model takes user-defined characters in font A (`ESC &` with y = 3 and up to 12
   * dot columns, selected by `ESC % 1`): then characters no code page has, the peso sign first,
   * print as glyphs the job downloads (src/receipt/user-defined.ts) instead of falling back to
   * `PHP`. Set it only for models known to honour both commands: one that takes `ESC &` but
   * ignores `ESC %` prints the letter the sign stands on (`P125.00`), and one that does not know
   * `ESC &` prints the glyph's bytes as text.
   */
  userDefinedCharacters: z.boolean().default(false),
  cutter: z.enum(['partial', 'full', 'none']),
  /** Lines to feed before tearing off, on models without a cutter. */
  tearFeedLines: z.number().int().min(0).max(20).default(4),
  /** Whether the model has a drawer kick-out connector (`ESC p`). */
  drawer: z.boolean(),
  /**
   * The kick-out pulse (`ESC p`, 2 ms units, 2 to 510 ms): how long the pin is driven, then the
   * pause after it; absent: 100 ms and 500 ms, which most drawer solenoids open with.
   */
  drawerPulse: z
    .object({
      onMs: z.number().int().min(2).max(510),
      offMs: z.number().int().min(2).max(510),
    })
    .optional(),
  qr: z.boolean(),
  /** How a job is confirmed: `GS ( H` process id, `GS r 1` status after the data, or not at all. */
  confirm: z.enum(['process-id', 'status', 'none']),
  /** Whether the model answers real-time status (`DLE EOT`); cheap clones often stay silent. */
  realtimeStatus: z.boolean(),
  /**
   * The buzzer a kitchen ticket sounds once it is cut, or null when the model has none (or the
   * kitchen should not hear it): `ESC B n t` of the Chinese clones, or Epson's `ESC ( A` fn 48.
   * Receipts never beep.
   */
  buzzer: z
    .object({
      command: z.enum(['ESC B', 'ESC ( A']),
      /** Beeps. */
      count: z.number().int().min(1).max(9).default(2),
      /** Length of one beep; sent in 50 ms (`ESC B`) or 100 ms (`ESC ( A`) units. */
      durationMs: z.number().int().min(50).max(1000).default(200),
    })
    .nullable()
    .default(null),
  /**
   * Who a printer of this model says it is (`GS I`, issue 41): what `printers identify` matches
   * to propose this profile, and what the emulator answers when it plays this profile. Absent on
   * the generic profiles: they stand for many models, none of which names them.
   */
  identity: z
    .object({
      /** The `GS I 66` answer, e.g. `EPSON`. */
      manufacturer: z.string().min(1).max(40),
      /** The `GS I 67` answer, e.g. `TM-T20III`. */
      model: z.string().min(1).max(40),
      /** A `GS I 65` answer of this model: the emulator's; firmware never decides the match. */
      firmware: z.string().min(1).max(40).optional(),
      /** The `GS I 1` model ID byte, where known (clones copy it: never decides the match). */
      modelId: z.number().int().min(0).max(0x6f).optional(),
    })
    .strict()
    .optional(),
});

export type PrinterProfile = z.output<typeof profileSchema>;

/** Column count of the profile's body font. */
export function profileColumns(profile: PrinterProfile): number {
  const font = profile.font === 'B' ? profile.fonts.B : profile.fonts.A;
  return (font ?? profile.fonts.A).columns;
}

export function parseProfile(value: unknown, source: string): PrinterProfile {
  const parsed = parseWith(profileSchema, value);
  if (!parsed.ok) {
    throw new AgentError('PROFILE_INVALID', `${source}: ${describeIssues(parsed.issues)}`, {
      issues: parsed.issues,
    });
  }
  const profile = parsed.value;
  if (profile.codepageNumbers[profile.codepage] === undefined) {
    throw new AgentError(
      'PROFILE_INVALID',
      `${source}: codepageNumbers: must give the ESC t number of ${profile.codepage}`,
    );
  }
  if (profile.font === 'B' && !profile.fonts.B) {
    throw new AgentError('PROFILE_INVALID', `${source}: fonts.B: is required when font is B`);
  }
  return profile;
}

let cache: Map<string, PrinterProfile> | undefined;

/** Every profile shipped in `config/printers/`, by id. */
export function loadProfiles(dir = PROFILES_DIR): Map<string, PrinterProfile> {
  if (dir === PROFILES_DIR && cache) return cache;
  const profiles = new Map<string, PrinterProfile>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const path = join(dir, file);
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(path, 'utf8'));
    } catch (cause) {
      throw new AgentError('PROFILE_INVALID', `${path}: is not valid JSON`, { cause });
    }
    const profile = parseProfile(value, path);
    if (`${profile.id}.json` !== file) {
      throw new AgentError('PROFILE_INVALID', `${path}: id: must match the file name (${file})`);
    }
    profiles.set(profile.id, profile);
  }
  if (dir === PROFILES_DIR) cache = profiles;
  return profiles;
}

/** The profile with this id; an unknown id is a permanent error naming the known ones. */
export function getProfile(id: string, dir = PROFILES_DIR): PrinterProfile {
  const profiles = loadProfiles(dir);
  const profile = profiles.get(id);
  if (!profile) {
    throw new AgentError(
      'PROFILE_MISSING',
      `profile ${JSON.stringify(id)}: not found; known: ${[...profiles.keys()].join(', ')}`,
    );
  }
  return profile;
}
