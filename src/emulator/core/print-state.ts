/**
 * The printer's settings as the command handlers read and change them. `PrintState` is what
 * `ESC @` and power-on reset: print modes, layout, character tables and user-defined characters,
 * barcode and symbol settings, stored graphics, the `ESC =` and page-mode switches. `KeptState`
 * is what `ESC @` keeps until power-off (ESC/POS reference, "ESC @"): the macro, the downloaded
 * and NV bit images, and the `GS ( D` switch of the real-time drawer pulse.
 */
import type { Frame } from './framer.js';
import type { Alignment, PaperGeometry, PaperUserDefined } from './paper.js';

export interface Modes {
  fontB: boolean;
  emphasized: boolean;
  doubleStrike: boolean;
  underline: 0 | 1 | 2;
  kanjiUnderline: 0 | 1 | 2;
  width: number;
  height: number;
  kanjiWidth: number;
  kanjiHeight: number;
  reverse: boolean;
  upsideDown: boolean;
  rotated: boolean;
  /** Right-side character spacing in dots (`ESC SP`). */
  charSpacing: number;
  /** Kanji left and right spacing in dots (`FS S`). */
  kanjiLeft: number;
  kanjiRight: number;
}

export interface PrintState {
  modes: Modes;
  align: Alignment;
  leftMargin: number;
  areaWidth: number;
  lineSpacing: number;
  /** Horizontal tab stops in dots from the margin. */
  tabs: number[];
  codePage: number;
  international: number;
  multiByte: boolean;
  utf8: boolean;
  /** `ESC % 1`: defined codes print their user-defined glyphs. */
  userDefined: boolean;
  /**
   * `ESC &` definitions per font, by code (0x20-0x7E). `ESC @` clears them (ESC/POS reference,
   * "ESC &"), as do `ESC ?` (one code), `GS *` and `FS q`.
   */
  userDefinedChars: { A: Map<number, PaperUserDefined>; B: Map<number, PaperUserDefined> };
  barcode: { height: number; moduleWidth: number; hri: number; hriFont: number };
  /** `GS ( k` settings per symbol type (cn) and function (fn): the parameter bytes. */
  symbolSettings: Map<number, Map<number, Uint8Array>>;
  /** `GS ( L fn 112` graphics waiting for `fn 50`. */
  graphics: Bitmap | undefined;
  /** `ESC =`: printer selected (data processed) or not. */
  enabled: boolean;
  pageMode: boolean;
}

export interface KeptState {
  /** `GS :` ... `GS :`: the frames of the macro, replayed by `GS ^`. */
  macro: Frame[];
  macroRecording: boolean;
  /** `GS ( D` can disable the `DLE DC4 fn 1` pulse (ESC/POS reference). */
  realtimePulseEnabled: boolean;
  /** `GS *`: the downloaded bit image, printed by `GS /`. */
  downloaded: Bitmap | undefined;
  /** `FS q`: the NV bit images of this session, printed by `FS p`. */
  nvImages: Bitmap[];
}

export interface Bitmap {
  width: number;
  height: number;
  scaleX: number;
  scaleY: number;
  data: Uint8Array;
}

/** Default line spacing: 1/6 inch class, 30 dots (`ESC 2`). */
export const DEFAULT_LINE_SPACING = 30;
/** Default barcode settings (ESC/POS reference: GS h 162, GS w 3, GS H 0, GS f 0). */
const DEFAULT_BARCODE = { height: 162, moduleWidth: 3, hri: 0, hriFont: 0 };

export function powerOnState(
  geometry: PaperGeometry,
  options: { powerOnCodePage: number; powerOnMultiByte: boolean },
): PrintState {
  return {
    modes: {
      fontB: false,
      emphasized: false,
      doubleStrike: false,
      underline: 0,
      kanjiUnderline: 0,
      width: 1,
      height: 1,
      kanjiWidth: 1,
      kanjiHeight: 1,
      reverse: false,
      upsideDown: false,
      rotated: false,
      charSpacing: 0,
      kanjiLeft: 0,
      kanjiRight: 0,
    },
    align: 'left',
    leftMargin: 0,
    areaWidth: geometry.dotsPerLine,
    lineSpacing: DEFAULT_LINE_SPACING,
    // Default tab stops every 8 font A characters (ESC/POS reference, "ESC D").
    tabs: Array.from({ length: 32 }, (_, i) => (i + 1) * 8 * geometry.fontA.width),
    codePage: options.powerOnCodePage,
    international: 0,
    multiByte: options.powerOnMultiByte,
    utf8: false,
    userDefined: false,
    userDefinedChars: { A: new Map(), B: new Map() },
    barcode: { ...DEFAULT_BARCODE },
    symbolSettings: new Map(),
    graphics: undefined,
    enabled: true,
    pageMode: false,
  };
}

export function freshKeptState(): KeptState {
  return {
    macro: [],
    macroRecording: false,
    realtimePulseEnabled: true,
    downloaded: undefined,
    nvImages: [],
  };
}
