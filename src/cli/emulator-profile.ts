/**
 * The emulator playing a profile of `config/printers/` (issue 41 item 2): its columns, and the
 * identity a printer of that model reports to `GS I`. A profile with an `identity` answers its
 * maker, model and firmware; a generic profile stands for a nameless clone, which answers the
 * model and type ID bytes (type ID from the profile: bit0 a CJK font, bit1 a cutter) and ignores
 * the information requests (n = 65..68), as many cheap printers do.
 */
import { DEFAULT_IDENTITY, type VirtualPrinterOptions } from '../emulator/index.js';
import type { PrinterProfile } from '../receipt/profile.js';

/** The serial number every emulated printer reports (a real one is unique per unit). */
export const EMULATOR_SERIAL = 'EMU0000001';

export function emulatorOptionsForProfile(profile: PrinterProfile): VirtualPrinterOptions {
  const typeId = (profile.cutter !== 'none' ? 0x02 : 0x00) | (profile.cjk !== null ? 0x01 : 0x00);
  const id = profile.identity;
  return {
    columns: profile.fonts.A.columns,
    ...(profile.fonts.B ? { columnsFontB: profile.fonts.B.columns } : {}),
    identity: {
      modelId: id?.modelId ?? DEFAULT_IDENTITY.modelId,
      typeId,
      versionId: DEFAULT_IDENTITY.versionId,
      firmware: id ? (id.firmware ?? DEFAULT_IDENTITY.firmware) : null,
      maker: id ? id.manufacturer : null,
      model: id ? id.model : null,
      serial: id ? EMULATOR_SERIAL : null,
      fonts: null,
    },
  };
}
