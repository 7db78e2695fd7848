import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentError } from '../../src/errors.js';
import { parsePrinterUrl } from '../../src/printer/printer-url.js';

function rejects(url: string, pattern: RegExp): void {
  assert.throws(
    () => parsePrinterUrl(url),
    (e: unknown) =>
      e instanceof AgentError && e.code === 'PRINTER_URL_INVALID' && pattern.test(e.message),
  );
}

describe('parsePrinterUrl', () => {
  it('tcp with and without a port (9100 by default), IPv6 too', () => {
    assert.deepEqual(parsePrinterUrl('tcp://192.168.1.50'), {
      kind: 'tcp',
      host: '192.168.1.50',
      port: 9100,
    });
    assert.deepEqual(parsePrinterUrl('tcp://printer.local:9101'), {
      kind: 'tcp',
      host: 'printer.local',
      port: 9101,
    });
    assert.deepEqual(parsePrinterUrl('tcp://[::1]:9100'), { kind: 'tcp', host: '::1', port: 9100 });
  });

  it('serial with baud rate and flow control, defaults 115200 and none', () => {
    assert.deepEqual(parsePrinterUrl('serial:/dev/ttyUSB0'), {
      kind: 'serial',
      path: '/dev/ttyUSB0',
      baudRate: 115200,
      flowControl: 'none',
    });
    assert.deepEqual(
      parsePrinterUrl(
        'serial:/dev/serial/by-id/usb-Prolific-if00?baudRate=9600&flowControl=rtscts',
      ),
      {
        kind: 'serial',
        path: '/dev/serial/by-id/usb-Prolific-if00',
        baudRate: 9600,
        flowControl: 'rtscts',
      },
    );
  });

  it('file and usb', () => {
    assert.deepEqual(parsePrinterUrl('file:/dev/usb/lp0'), { kind: 'file', path: '/dev/usb/lp0' });
    assert.deepEqual(parsePrinterUrl('file:///dev/usb/lp1'), {
      kind: 'file',
      path: '/dev/usb/lp1',
    });
    assert.deepEqual(parsePrinterUrl('usb:04b8:0202'), {
      kind: 'usb',
      vendorId: 0x04b8,
      productId: 0x0202,
      serialNumber: null,
    });
    assert.deepEqual(parsePrinterUrl('usb:0416:5011?serial=ABC123'), {
      kind: 'usb',
      vendorId: 0x0416,
      productId: 0x5011,
      serialNumber: 'ABC123',
    });
  });

  it('rejects what it cannot use, naming the rule', () => {
    rejects('http://printer', /scheme must be tcp:, serial:, file: or usb:/);
    rejects('tcp://', /must look like|host is missing/);
    rejects('tcp://user:secret@printer:9100', /must not carry credentials/);
    rejects('tcp://printer:9100/path', /must have no path/);
    rejects('tcp://printer:9100?x=1', /unknown parameter x/);
    rejects('serial:ttyUSB0', /path must be absolute/);
    rejects('serial:/dev/ttyUSB0?baudRate=12345', /baudRate must be one of/);
    rejects(
      'serial:/dev/ttyUSB0?flowControl=dtr',
      /flowControl must be one of none, rtscts, xonxoff/,
    );
    rejects('serial:/dev/ttyUSB0?parity=odd', /unknown parameter parity/);
    rejects('usb:4b8:202', /4 hex digits/);
    rejects('usb:04b8:0202?vendor=x', /unknown parameter vendor/);
  });

  it('never echoes credentials it was given', () => {
    try {
      parsePrinterUrl('tcp://user:s3cr3t-pass@printer:9100');
      assert.fail('should reject');
    } catch (e) {
      assert.ok(e instanceof AgentError);
      // The URL is echoed in the message only when it carries no credentials.
      assert.ok(!e.message.includes('s3cr3t-pass'), e.message);
    }
  });
});
