/**
 * The USB device boundary of `usb:VID:PID` printers: the members of the `usb` package's device
 * this project uses (`UsbPrinterDevice`, same names and signatures, so the real object passes as
 * is), enumeration and unplug notices (`UsbBackend`), and the one backend on the real package.
 * Tests put a fake device behind the very same interface (test/helpers/fake-usb.ts), since there
 * is no USB bus on the build machines; the transport on top lives in usb-transport.ts.
 */

/** What the transport needs to know about an endpoint (a subset of WebUSB's USBEndpoint). */
export interface UsbEndpointInfo {
  readonly endpointNumber: number;
  /** `'in'` or `'out'`. */
  readonly direction: string;
  /** `'bulk'`, `'interrupt'`, `'isochronous'`. */
  readonly type: string;
  readonly packetSize: number;
}

export interface UsbInterfaceInfo {
  readonly interfaceNumber: number;
  /** Alternate setting 0, the one a claimed interface starts in. */
  readonly alternate: {
    readonly interfaceClass: number;
    readonly endpoints: readonly UsbEndpointInfo[];
  };
}

export interface UsbConfigurationInfo {
  readonly configurationValue: number;
  readonly interfaces: readonly UsbInterfaceInfo[];
}

/**
 * Exactly the members of usb 3.1's `UsbDevice` this transport uses, same names and signatures.
 * Errors are plain `Error`s whose message names the operation and the cause, e.g.
 * `transferOut error: Cancelled` (the transfer's timeout expired), `... Stall`, `... Disconnected`.
 *
 * Transfers go through `nativeTransferOut/In` rather than the WebUSB-style `transferOut/In`
 * wrappers: those only repackage the result (their `status` is never `'stall'`, errors throw
 * anyway), and `transferIn` wraps the bytes as `new DataView(res.buffer)`, which ignores the
 * array's offset and length.
 */
export interface UsbPrinterDevice {
  readonly vendorId: number;
  readonly productId: number;
  /** Getter; may need the device open on some platforms, and may throw. */
  readonly serialNumber: string | null;
  /** Getter; throws `configuration error: ...` when the device is not configured. */
  readonly configuration: UsbConfigurationInfo | null;
  readonly configurations: readonly UsbConfigurationInfo[];
  open(): Promise<void>;
  close(): Promise<void>;
  selectConfiguration(configurationValue: number): Promise<void>;
  /** Linux only; fails when no kernel driver is bound to the interface. */
  detachKernelDriver(interfaceNumber: number): Promise<void>;
  attachKernelDriver(interfaceNumber: number): Promise<void>;
  claimInterface(interfaceNumber: number): Promise<void>;
  releaseInterface(interfaceNumber: number): Promise<void>;
  clearHalt(direction: 'in' | 'out', endpointNumber: number): Promise<void>;
  /**
   * Resolves with the number of bytes written; rejects when `timeout` ms pass first, and then
   * does not say how many bytes of this transfer went out. One transfer per endpoint at a time.
   */
  nativeTransferOut(endpointNumber: number, timeout: number, data: Uint8Array): Promise<number>;
  /** Resolves with up to `length` bytes; rejects when `timeout` ms pass in silence. */
  nativeTransferIn(
    endpointNumber: number,
    timeout: number,
    length: number,
  ): Promise<Uint8Array | null>;
}

export interface UsbBackend {
  /** Every connected device with these ids (the caller chooses by serial number). */
  findDevices(vendorId: number, productId: number): Promise<UsbPrinterDevice[]>;
  /**
   * Calls `onDetach` when this device is unplugged; returns a function that stops listening.
   * Optional: without it, an unplug is noticed by the next transfer.
   */
  watchDetach?(device: UsbPrinterDevice, onDetach: () => void): () => void;
}

/**
 * The real backend, on the `usb` package. It is loaded on first use, so the other transports keep
 * working where its native binary is missing.
 */
export function createUsbPackageBackend(): UsbBackend {
  let lib: typeof import('usb') | undefined;
  const handles = new WeakMap<UsbPrinterDevice, string>();
  return {
    async findDevices(vendorId, productId) {
      lib ??= await import('usb');
      // `usb` is the package's WebUSB object built with `allowAllDevices: true`: no
      // requestDevice() permission step. `findDeviceByIds` exists too but returns only the first
      // match, and we need them all to choose by serial number.
      const all = await lib.usb.getDevices();
      const matching = all.filter((d) => d.vendorId === vendorId && d.productId === productId);
      // Each enumeration returns new objects; unplug events name devices by `handle`.
      for (const device of matching) handles.set(device, device.handle);
      return matching;
    },
    watchDetach(device, onDetach) {
      const usb = lib?.usb;
      const handle = handles.get(device);
      if (!usb || handle === undefined) return () => undefined;
      // Subscribing starts the package's hotplug watcher, which keeps the process alive: stop it
      // on close. It also lists devices without catching failures (an unhandled rejection when
      // /sys/bus/usb is missing), so it only ever happens after a successful enumeration.
      const listener = (event: { device?: { handle?: string } }) => {
        if (event.device?.handle === handle) onDetach();
      };
      usb.addEventListener('disconnect', listener);
      return () => usb.removeEventListener('disconnect', listener);
    },
  };
}
