/**
 * Identifying one printer by URL (issue 41 item 2): the printer room asks it (`Printer.identify`:
 * `DLE EOT`, `GS I`), the receipt room proposes a profile from what it said. `printers identify`
 * prints the result; `printers scan` and `setup` call `identifyPrinter` for each printer they find.
 * Never throws for what the device does (unreachable, silent, garbage): those are lines in the
 * result; a URL that is no printer URL throws PRINTER_URL_INVALID.
 */
import { learntAnything, type PrinterAnswers } from '../printer/identify.js';
import { openPrinter } from '../printer/open-printer.js';
import { loadProfiles, type PrinterProfile } from '../receipt/profile.js';
import { type ProfileProposal, proposeProfile } from '../receipt/profile-match.js';

export interface IdentifyOptions {
  /** How long the connection and each reply may take (worst case: eleven replies). Default 1000. */
  timeoutMs?: number;
  /** Paper width the technician sees, when the printer cannot say. */
  widthMm?: 58 | 80;
  /** Profiles to choose from; default those of config/printers/. */
  profiles?: Iterable<PrinterProfile>;
}

export interface Identification {
  url: string;
  answers: PrinterAnswers;
  /** Whether the printer said anything usable at all (a status, an ID, a name). */
  learnt: boolean;
  proposal: ProfileProposal;
  /** The proposed profile's capabilities, for the line a person reads. */
  profile: {
    name: string;
    paperWidthMm: 58 | 80;
    columns: number;
    codepage: string;
    codepageNumber: number | undefined;
    cjk: boolean;
    cutter: string;
    drawer: boolean;
  } | null;
  elapsedMs: number;
}

export async function identifyPrinter(
  url: string,
  options: IdentifyOptions = {},
): Promise<Identification> {
  const timeoutMs = options.timeoutMs ?? 1000;
  const started = performance.now();
  // No profile yet: ask status whatever a profile would say, confirm nothing (no job is sent).
  const printer = openPrinter(
    url,
    { realtimeStatus: true, confirm: 'none' },
    { statusTimeoutMs: timeoutMs },
    // A network printer accepts at once: one that does not within a reply's time is not there.
    { connectTimeoutMs: timeoutMs },
  );
  let answers: PrinterAnswers;
  try {
    answers = await printer.identify(timeoutMs);
  } finally {
    await printer.close();
  }
  const profiles = [...(options.profiles ?? loadProfiles().values())];
  const proposal = proposeProfile(
    {
      manufacturer: answers.manufacturer,
      model: answers.model,
      widthMm: options.widthMm ?? null,
      answersStatus: answers.reachable ? answers.status !== null : null,
      autocutter: answers.autocutter,
      twoByteCharacters: answers.twoByteCharacters,
    },
    profiles,
  );
  const chosen = profiles.find((p) => p.id === proposal.profile);
  return {
    url,
    answers,
    learnt: learntAnything(answers),
    proposal,
    profile: chosen
      ? {
          name: chosen.name,
          paperWidthMm: chosen.paperWidthMm,
          columns: chosen.fonts.A.columns,
          codepage: chosen.codepage,
          codepageNumber: chosen.codepageNumbers[chosen.codepage],
          cjk: chosen.cjk !== null,
          cutter: chosen.cutter,
          drawer: chosen.drawer,
        }
      : null,
    elapsedMs: Math.round(performance.now() - started),
  };
}

/** The identification for a person: what the printer said, then the proposed profile. */
export function describeIdentification(r: Identification): string {
  const a = r.answers;
  const lines: string[] = [];
  if (!a.reachable) {
    lines.push(`${a.printer}: unreachable`);
  } else {
    const name = [a.manufacturer, a.model].filter((s) => s !== null).join(' ');
    const extras = [
      a.firmware !== null ? `firmware ${a.firmware}` : null,
      a.serial !== null ? `serial ${a.serial}` : null,
      a.modelId !== null
        ? `model ID ${hex(a.modelId)}, type ID ${a.typeId !== null ? hex(a.typeId) : '?'}`
        : null,
    ].filter((s) => s !== null);
    const status = a.status
      ? `${a.status.state}${a.status.causes.length > 0 ? ` (${a.status.causes.join(', ')})` : ''}`
      : 'status unknown';
    lines.push(
      `${a.printer}: ${name || 'names no model'}${extras.length > 0 ? ` (${extras.join(', ')})` : ''}, ${status}`,
    );
  }
  for (const g of a.garbage) lines.push(`  garbage: ${g}`);
  for (const p of a.problems) lines.push(`  ${p}`);
  const p = r.proposal;
  lines.push(`profile ${p.profile} (${p.confidence}): ${p.reason}`);
  if (r.profile) {
    const c = r.profile;
    lines.push(
      `  ${c.paperWidthMm} mm, ${c.columns} columns, code page ${c.codepage}${c.codepageNumber !== undefined ? ` (ESC t ${c.codepageNumber})` : ''}${c.cjk ? ', CJK font' : ''}, ${c.cutter === 'none' ? 'no cutter' : `${c.cutter} cut`}, ${c.drawer ? 'drawer' : 'no drawer'}`,
    );
  }
  if (p.alternatives.length > 0) lines.push(`  also fits: ${p.alternatives.join(', ')}`);
  for (const n of p.notes) lines.push(`  note: ${n}`);
  if (!r.learnt) lines.push('  nothing could be learnt from this printer');
  return `${lines.join('\n')}\n`;
}

function hex(b: number): string {
  return `0x${b.toString(16).padStart(2, '0')}`;
}
