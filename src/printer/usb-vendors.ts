/**
 * USB vendor IDs of ESC/POS receipt printers that may present a vendor-specific interface (class
 * 0xff) instead of the printer class (07), so nothing but the ID says "printer" (issue 41 item 1).
 * `printers scan` lists a vendor-class device with one of these IDs as a possible printer; the
 * udev rules (systemd/99-printer-agent.rules) give the service's `lp` group the very same IDs, so a
 * `usb:` URL the scan prints can be opened by the agent (test/printer/usb-printers.test.ts holds
 * the two lists together).
 *
 * Names as in the usb.ids database (Debian's `usb.ids` package), checked 2025-07. `chip`: the ID
 * is a chip maker's, kept by clone printers built on its controllers and used by other devices
 * too (debug probes, dev boards), so a match says less. Left out: Sewoo, whose printers have no
 * vendor ID of their own in usb.ids (they show up under a chip maker's).
 */

export interface UsbVendor {
  /** Who ships printers with this ID. */
  readonly name: string;
  /** The ID belongs to a chip maker, not to a printer maker. */
  readonly chip: boolean;
}

export const ESC_POS_USB_VENDORS: ReadonlyMap<number, UsbVendor> = new Map([
  [0x04b8, { name: 'Epson', chip: false }], // Seiko Epson: TM series (its inkjets use the printer class)
  [0x0519, { name: 'Star Micronics', chip: false }],
  [0x1d90, { name: 'Citizen', chip: false }], // Citizen Systems' newer models
  [0x2730, { name: 'Citizen', chip: false }],
  [0x1504, { name: 'Bixolon', chip: false }],
  [0x0dd4, { name: 'Custom', chip: false }], // Custom Engineering SPA (K80 and others)
  [0x0416, { name: 'Winbond chip (Xprinter, Zjiang and other clones)', chip: true }], // 0416:5011 "POS-58"
  [0x1fc9, { name: 'NXP chip (clones)', chip: true }],
  [0x0483, { name: 'STMicroelectronics chip (clones)', chip: true }],
  [0x28e9, { name: 'GigaDevice chip (clones)', chip: true }],
  [0x0fe6, { name: 'ICS Advent chip (clones)', chip: true }],
]);

export function escPosUsbVendor(vendorId: number): UsbVendor | null {
  return ESC_POS_USB_VENDORS.get(vendorId) ?? null;
}
