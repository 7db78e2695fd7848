/**
 * From what a printer says about itself to a profile of `config/printers/` (issue 41 item 2),
 * with how sure the proposal is:
 * - `certain`: the model name it reports is a profile's `identity.model` (and the maker agrees);
 * - `likely`: its maker is a profile's `identity.manufacturer` and the paper width is known
 *   (`--width`, or a width in the model name such as `POS-58`) and that profile has it;
 * - `possible`: only the width, or only the maker: the generic profile of that width, or the
 *   maker's profile when no width is known;
 * - `unknown`: nothing usable: `generic-80mm` as a start.
 * Pure: the printer room asks, this file decides; the input is plain facts, not printer types.
 */
import type { PrinterProfile } from './profile.js';

export type Confidence = 'certain' | 'likely' | 'possible' | 'unknown';

export interface PrinterFacts {
  manufacturer: string | null;
  model: string | null;
  /** Paper width told by the technician (`--width`); else read from the model name. */
  widthMm?: 58 | 80 | null;
  /** Whether it answered `DLE EOT` at all; null when it could not be asked (unreachable). */
  answersStatus: boolean | null;
  /** From the `GS I 2` type ID, null when not reported. */
  autocutter: boolean | null;
  twoByteCharacters: boolean | null;
}

export interface ProfileProposal {
  profile: string;
  confidence: Confidence;
  /** One sentence: why this profile. */
  reason: string;
  /** The width the proposal assumed, and where it came from. */
  widthMm: 58 | 80 | null;
  widthFrom: 'option' | 'model name' | 'profile' | null;
  /** Other profiles that fit as well. */
  alternatives: string[];
  /** Where the printer's answers and the profile disagree: worth a look before printing. */
  notes: string[];
}

export const FALLBACK_PROFILE = 'generic-80mm';
const GENERIC_BY_WIDTH = { 58: 'generic-58mm', 80: 'generic-80mm' } as const;

/** Case, spaces and dashes do not tell models apart (`TM-T20III`, `TM T20III`). */
export function normalizeName(name: string): string {
  return name.toUpperCase().replace(/[\s_-]+/g, '');
}

/**
 * A paper width in a model name: `58`/`80` standing alone (`POS-58`, `XP-80C`, `80mm`) or as the
 * start of a four-digit clone number (`POS-5890`). `TM-T88VI` and `TM-T20III` name none.
 */
export function widthFromModelName(model: string | null): 58 | 80 | null {
  if (model === null) return null;
  const m = /(?:^|\D)(58|80)(?:\d{2})?(?=\D|$)/.exec(model);
  return m ? (Number(m[1]) as 58 | 80) : null;
}

export function proposeProfile(
  facts: PrinterFacts,
  profiles: Iterable<PrinterProfile>,
): ProfileProposal {
  const all = [...profiles].sort((a, b) => a.id.localeCompare(b.id));
  const known = new Set(all.map((p) => p.id));
  const widthHint = facts.widthMm ?? null;
  const nameWidth = widthFromModelName(facts.model);
  const width = widthHint ?? nameWidth;
  const widthFrom = widthHint !== null ? 'option' : nameWidth !== null ? 'model name' : null;
  const maker = facts.manufacturer !== null ? normalizeName(facts.manufacturer) : null;
  const model = facts.model !== null ? normalizeName(facts.model) : null;
  const reported = [facts.manufacturer, facts.model].filter((s) => s !== null).join(' ');
  const fitsWidth = (p: PrinterProfile) => width === null || p.paperWidthMm === width;

  const finish = (
    profileId: string,
    confidence: Confidence,
    reason: string,
    alternatives: PrinterProfile[],
  ): ProfileProposal => {
    const profile = all.find((p) => p.id === profileId);
    return {
      profile: profileId,
      confidence,
      reason,
      widthMm: profile?.paperWidthMm ?? width,
      widthFrom: widthFrom ?? (profile ? 'profile' : null),
      alternatives: alternatives.map((p) => p.id).filter((id) => id !== profileId),
      notes: profile ? disagreements(facts, profile, width) : [],
    };
  };

  if (model !== null) {
    const exact = all.filter(
      (p) =>
        p.identity !== undefined &&
        normalizeName(p.identity.model) === model &&
        (maker === null || normalizeName(p.identity.manufacturer) === maker),
    );
    const chosen = exact.find(fitsWidth) ?? exact[0];
    if (chosen) {
      return finish(
        chosen.id,
        'certain',
        `the printer reports ${reported}, the model of profile ${chosen.id}`,
        exact,
      );
    }
  }
  if (maker !== null) {
    const sameMaker = all.filter(
      (p) => p.identity !== undefined && normalizeName(p.identity.manufacturer) === maker,
    );
    const atWidth = sameMaker.filter(fitsWidth);
    if (width !== null && atWidth[0]) {
      return finish(
        atWidth[0].id,
        'likely',
        `the printer reports ${reported}: maker ${facts.manufacturer} and ${width} mm paper (from the ${widthFrom}) fit profile ${atWidth[0].id}, but its model is not one of ours`,
        atWidth,
      );
    }
    if (width === null && sameMaker[0]) {
      return finish(
        sameMaker[0].id,
        'possible',
        `the printer reports ${reported}: maker ${facts.manufacturer} fits profile ${sameMaker[0].id}, but neither its model nor its paper width is known (--width 58|80)`,
        sameMaker,
      );
    }
  }
  if (width !== null && known.has(GENERIC_BY_WIDTH[width])) {
    // The nameless profiles of that width, the one whose cutter and CJK font agree best with the
    // type ID first; the generic one wins a tie.
    const generic = GENERIC_BY_WIDTH[width];
    const agreement = (p: PrinterProfile) =>
      (facts.autocutter !== null && (p.cutter !== 'none') === facts.autocutter ? 1 : 0) +
      (facts.twoByteCharacters !== null && (p.cjk !== null) === facts.twoByteCharacters ? 1 : 0);
    const nameless = all
      .filter((p) => p.identity === undefined && p.paperWidthMm === width)
      .sort(
        (a, b) =>
          agreement(b) - agreement(a) || Number(b.id === generic) - Number(a.id === generic),
      );
    const chosen = nameless[0]?.id ?? generic;
    return finish(
      chosen,
      'possible',
      `${reported ? `the printer reports ${reported}, no model of ours; ` : ''}${width} mm paper (from the ${widthFrom})${chosen === generic ? `: the generic ${width} mm profile` : `, and its type ID (cutter, CJK font) fits ${chosen}`}`,
      nameless,
    );
  }
  return finish(
    FALLBACK_PROFILE,
    'unknown',
    `${reported ? `the printer reports ${reported}, no model or maker of ours` : 'the printer names no model'}: ${FALLBACK_PROFILE} as a start (--width 58 for 58 mm paper)`,
    [],
  );
}

/** What the printer said that the profile does not expect. */
function disagreements(
  facts: PrinterFacts,
  profile: PrinterProfile,
  width: 58 | 80 | null,
): string[] {
  const notes: string[] = [];
  if (width !== null && profile.paperWidthMm !== width)
    notes.push(`the profile is for ${profile.paperWidthMm} mm paper, not ${width} mm`);
  if (facts.autocutter === false && profile.cutter !== 'none')
    notes.push(
      `the printer reports no autocutter but the profile cuts (${profile.cutter}): a profile with cutter "none" feeds to tear off instead`,
    );
  if (facts.autocutter === true && profile.cutter === 'none')
    notes.push('the printer reports an autocutter the profile does not use');
  if (facts.twoByteCharacters === true && profile.cjk === null)
    notes.push(
      'the printer has a two-byte (CJK) font the profile does not use: a profile with cjk prints Chinese text as text',
    );
  if (facts.answersStatus === false && profile.realtimeStatus)
    notes.push(
      'the printer did not answer DLE EOT: jobs will be sent without a status check and stay unconfirmed',
    );
  return notes;
}
