/**
 * The store's logo (issue 18): a PNG or SVG file becomes, once, a 1-bit image of the configured
 * width (whole bytes, never wider than the printer prints), ordered-dithered, and prints first on
 * the payment receipt as `GS v 0`, as the emulator (built from the command reference, not from
 * our encoder) decodes it; the kitchen ticket has none, the text twin says `[IMAGE WxH]`. Files
 * that cannot be used are LOGO_UNREADABLE naming `receipt.logo.file`, the path and why.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { frameWithDiagonal, grey, pngBytes, writeLogoPng } from '../../harness/logo.js';
import { renderText, VirtualPrinter } from '../../src/emulator/index.js';
import { isAgentError } from '../../src/errors.js';
import { layoutLength, RASTER_BAND_DOTS } from '../../src/receipt/layout.js';
import {
  convertLogo,
  LOGO_MAX_FILE_BYTES,
  LOGO_MAX_HEIGHT_DOTS,
  loadLogo,
  logoBytes,
  logoWidthDots,
  readLogo,
} from '../../src/receipt/logo.js';
import type { LogoSettings, MonoImage, ReceiptOptions } from '../../src/receipt/options.js';
import { getProfile, type PrinterProfile } from '../../src/receipt/profile.js';
import { renderReceipt } from '../../src/receipt/render.js';
import { loadFixture, STORE_OPTIONS } from '../helpers/receipts.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'pa-logo-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

const dot = (image: MonoImage, x: number, y: number) =>
  (image.data[y * (image.width / 8) + (x >> 3)]! >> (7 - (x & 7))) & 1;

function blackDots(image: MonoImage): number {
  let n = 0;
  for (const byte of image.data) for (let b = byte; b; b &= b - 1) n++;
  return n;
}

async function pictureOf(name: string, width: number, height: number, paint = grey(128)) {
  return readLogo(file(name, pngBytes(width, height, paint)));
}

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  assert.fail('expected a failure');
}

describe('logo conversion', () => {
  it('at its own size, the frame and the diagonal are exactly the black dots', async () => {
    const paint = frameWithDiagonal(400, 200, 8);
    const picture = await readLogo(file('frame.png', pngBytes(400, 200, paint)));
    assert.deepEqual([picture.kind, picture.width, picture.height], ['png', 400, 200]);
    const image = convertLogo(picture, 400);
    assert.deepEqual([image.width, image.height, image.data.length], [400, 200, 50 * 200]);
    let wrong = 0;
    for (let y = 0; y < 200; y++)
      for (let x = 0; x < 400; x++)
        if (dot(image, x, y) !== (paint(x, y)[0] === 0 ? 1 : 0)) wrong++;
    assert.equal(wrong, 0);
  });

  it('scaled to 320 dots: 160 high, the frame and the diagonal still there, white inside', async () => {
    const picture = await readLogo(writeLogoPng(join(dir, 'scaled.png')));
    const image = convertLogo(picture, 320);
    assert.deepEqual([image.width, image.height], [320, 160]);
    for (const [x, y] of [
      [0, 0],
      [319, 0],
      [0, 159],
      [319, 159],
      [160, 0],
      [0, 80],
      [160, 80], // the diagonal's middle
      [240, 120],
    ] as const)
      assert.equal(dot(image, x, y), 1, `black at ${x},${y}`);
    for (const [x, y] of [
      [80, 120],
      [240, 40],
      [40, 100],
    ] as const)
      assert.equal(dot(image, x, y), 0, `white at ${x},${y}`);
  });

  it('dithers 50% grey to exactly half the dots, 25% grey to a quarter, black and white exactly', async () => {
    const half = convertLogo(await pictureOf('g128.png', 64, 64, grey(128)), 64);
    assert.equal(blackDots(half), (64 * 64) / 2);
    // Ordered: no two neighbours in a row of 50% grey are both black (a fine even pattern).
    for (let x = 1; x < 64; x++) assert.ok(!(dot(half, x, 10) && dot(half, x - 1, 10)));
    const light = convertLogo(await pictureOf('g192.png', 64, 64, grey(192)), 64);
    assert.equal(blackDots(light), (64 * 64) / 4);
    assert.equal(blackDots(convertLogo(await pictureOf('g0.png', 16, 16, grey(0)), 16)), 256);
    assert.equal(blackDots(convertLogo(await pictureOf('g255.png', 16, 16, grey(255)), 16)), 0);
    // Transparent is the paper: white, whatever the colour under it.
    const clear = convertLogo(await pictureOf('clear.png', 16, 16, grey(0, 0)), 16);
    assert.equal(blackDots(clear), 0);
  });

  it('keeps the grey of a downscaled tint (area averaging)', async () => {
    // A 1-pixel checkerboard is 50% grey once four pixels make one dot.
    const picture = await readLogo(
      file(
        'checker.png',
        pngBytes(128, 128, (x, y) => ((x + y) % 2 ? [0, 0, 0, 255] : [255, 255, 255, 255])),
      ),
    );
    const image = convertLogo(picture, 64);
    assert.equal(blackDots(image), (64 * 64) / 2);
  });

  it('draws an SVG at the printed width', async () => {
    const path = file(
      'logo.svg',
      '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100">' +
        '<rect x="0" y="0" width="100" height="100" fill="#000"/></svg>',
    );
    const picture = await readLogo(path);
    assert.deepEqual([picture.kind, picture.width, picture.height], ['svg', 200, 100]);
    const image = convertLogo(picture, 96);
    assert.deepEqual([image.width, image.height], [96, 48]);
    assert.equal(dot(image, 10, 10), 1);
    assert.equal(dot(image, 80, 10), 0);
    assert.ok(Math.abs(blackDots(image) - 48 * 48) <= 48, `${blackDots(image)} black dots`);
  });

  it('a tall logo prints narrower, at most LOGO_MAX_HEIGHT_DOTS high', async () => {
    const picture = await pictureOf('tall.png', 100, 1000, grey(0));
    const image = convertLogo(picture, 576);
    assert.deepEqual([image.width, image.height], [48, LOGO_MAX_HEIGHT_DOTS]);
  });

  it('widths: widthMm at the profile dots per mm, whole bytes, never wider than the print width', () => {
    const p80 = getProfile('generic-80mm');
    const p58 = getProfile('generic-58mm');
    const t88 = getProfile('epson-tm-t88vi'); // 512 dots over 72 mm (180 dpi)
    assert.equal(logoWidthDots(p80), 576);
    assert.equal(logoWidthDots(p58), 384);
    assert.equal(logoWidthDots(p80, 40), 320);
    assert.equal(logoWidthDots(p58, 40), 320);
    assert.equal(logoWidthDots(t88, 40), 280);
    assert.equal(logoWidthDots(p58, 60), 384);
    assert.equal(logoWidthDots(p80, 80), 576);
  });

  it('converts once per print width, shared by profiles of the same width', async () => {
    const path = writeLogoPng(join(dir, 'shared.png'));
    const profiles = ['generic-80mm', 'generic-80mm-buzzer', 'generic-58mm'].map((id) =>
      getProfile(id),
    );
    const logo = await loadLogo({ file: path, align: 'center' }, profiles);
    const [a, b, c] = profiles.map((p) => logo.images.get(p.id)!);
    assert.equal(a, b, 'one image for the two 576-dot profiles');
    assert.deepEqual([a!.width, c!.width], [576, 384]);
    // GS v 0 header per band, the rows, ESC a before and after each band.
    assert.equal(logoBytes(a!, 'center'), 72 * 288 + 2 * (8 + 6));
  });
});

describe('logo files that cannot be used: LOGO_UNREADABLE naming the field, the path and why', () => {
  const cases: Array<[string, () => string, RegExp]> = [
    ['missing', () => join(dir, 'nowhere', 'logo.png'), /: missing \(ENOENT\)$/],
    [
      'a folder',
      () => {
        mkdirSync(join(dir, 'folder'), { recursive: true });
        return join(dir, 'folder');
      },
      /: not a file$/,
    ],
    [
      'not an image',
      () => file('notes.txt', 'store logo goes here\n'),
      /: not a PNG or SVG image$/,
    ],
    [
      'a JPEG',
      () => file('logo.jpg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10])),
      /: not a PNG or SVG image$/,
    ],
    [
      'over 1 MB',
      () =>
        file(
          'big.png',
          Buffer.concat([pngBytes(1, 1, grey(0)), Buffer.alloc(LOGO_MAX_FILE_BYTES)]),
        ),
      /: too large: \d+ bytes, more than the 1048576 bytes \(1 MB\) a logo file may have$/,
    ],
    [
      'over 4 million pixels (by its header, before inflating)',
      () => {
        const bytes = pngBytes(1, 1, grey(0));
        bytes.writeUInt32BE(5000, 16);
        bytes.writeUInt32BE(1000, 20);
        return file('huge.png', bytes);
      },
      /: too large: 5000 x 1000 pixels, more than the 4000000 a logo may have$/,
    ],
    [
      'a broken PNG',
      () => file('broken.png', pngBytes(40, 40, grey(0)).subarray(0, 60)),
      /: not a valid PNG \(.+\)$/,
    ],
    [
      'an SVG that links to a file',
      () =>
        file(
          'linked.svg',
          '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image href="/dev/zero" width="10" height="10"/></svg>',
        ),
      /: the SVG links to or embeds images \(\/dev\/zero\): a logo SVG must be drawn with shapes only; save a raster logo as PNG$/,
    ],
    [
      'an SVG that embeds an image (no size limit of ours on it)',
      () =>
        file(
          'embedded.svg',
          `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image href="data:image/png;base64,${pngBytes(2, 2, grey(0)).toString('base64')}" width="10" height="10"/></svg>`,
        ),
      /: the SVG links to or embeds images \(data:image\/png;base64,iVBORw0KGgoAAAA\.\.\.\): a logo SVG/,
    ],
    [
      'a broken SVG',
      () => file('broken.svg', '<svg xmlns="http://www.w3.org/2000/svg" <<'),
      /: not a valid SVG \(.+\)$/,
    ],
    [
      'too thin to print',
      () => file('thin.png', pngBytes(1, 4000, grey(0))),
      /: too tall for its width \(1 x 4000\)/,
    ],
  ];
  for (const [name, make, why] of cases)
    it(name, async () => {
      const path = make();
      const error = await failure(
        loadLogo({ file: path, align: 'center' }, [getProfile('generic-80mm')]),
      );
      assert.ok(isAgentError(error), String(error));
      assert.equal(error.code, 'LOGO_UNREADABLE');
      assert.ok(error.message.startsWith(`receipt.logo.file: ${path}: `), error.message);
      assert.match(error.message, why);
      assert.deepEqual(error.issues, [
        { path: 'receipt.logo.file', message: error.message.slice('receipt.logo.file: '.length) },
      ]);
    });
});

describe('the logo on the receipt, as the emulator prints it', () => {
  // Amounts as `PHP 1.00`: the paper's text is then plain code-page text on every profile.
  const BASE: ReceiptOptions = {
    ...STORE_OPTIONS,
    money: { ...STORE_OPTIONS.money, display: 'code' },
  };
  async function options(settings: Omit<LogoSettings, 'file'>, profile: PrinterProfile) {
    const path = writeLogoPng(join(dir, `receipt-${profile.id}.png`));
    const logo = await loadLogo({ file: path, ...settings }, [profile]);
    return { ...BASE, logo } satisfies ReceiptOptions;
  }

  function print(profile: PrinterProfile, opts: ReceiptOptions, kitchen = false) {
    const rendered = renderReceipt({
      source: loadFixture('table-offline-simple'),
      profile,
      options: opts,
      ...(kitchen ? { document: { layout: 'kitchen', role: 'kitchen' } as const } : {}),
    });
    const printer = new VirtualPrinter({
      columns: profile.fonts.A.columns,
      columnsFontB: profile.fonts.B?.columns,
    });
    assert.equal(printer.write(rendered.bytes), true);
    const ticket = printer.paper.tickets[0];
    assert.ok(ticket?.cut, 'one whole ticket');
    assert.deepEqual(ticket.warnings, [], 'the emulator understood every command');
    return { rendered, ticket };
  }

  for (const [profileId, settings, width, height] of [
    ['generic-80mm', { widthMm: 40, align: 'center' }, 320, 160],
    ['generic-58mm', { align: 'center' }, 384, 192],
    ['generic-58mm', { widthMm: 20, align: 'right' }, 160, 80],
  ] as const)
    it(`${profileId}, ${JSON.stringify(settings)}: one ${width}x${height} image, first, before the header`, async () => {
      const profile = getProfile(profileId);
      const opts = await options(settings, profile);
      const { rendered, ticket } = print(profile, opts);
      assert.equal(ticket.images.length, 1);
      const image = ticket.images[0]!;
      assert.equal(image.source, 'GS v 0');
      assert.deepEqual(
        [image.width, image.height, image.scaleX, image.scaleY],
        [width, height, 1, 1],
      );
      assert.equal(image.align, settings.align);
      assert.equal(image.atLine, 0, 'before the first text line');
      assert.ok(
        ticket.lines[0]!.runs.some((r) => r.text.includes('Kusina ni Lola')),
        'then the header',
      );
      assert.ok(
        Buffer.from(image.data).equals(Buffer.from(opts.logo.images.get(profile.id)!.data)),
      );
      // The text twin says so, and is what the paper shows.
      assert.equal(rendered.text.split('\n')[0], `[IMAGE ${width}x${height}]`);
      assert.equal(renderText(ticket), rendered.text);
      assert.equal(rendered.warnings.length, 0);
      // The image counts for its lines of paper.
      const without = renderReceipt({
        source: loadFixture('table-offline-simple'),
        profile,
        options: BASE,
      });
      assert.equal(
        layoutLength(rendered.layout.commands) - layoutLength(without.layout.commands),
        Math.ceil(height / 24),
      );
      // Nothing else changed: the receipt without the logo is the rest of this one.
      assert.equal(rendered.text.slice(rendered.text.indexOf('\n') + 1), without.text);
    });

  it('the kitchen ticket has no logo', async () => {
    const profile = getProfile('generic-80mm');
    const { rendered, ticket } = print(profile, await options({ align: 'center' }, profile), true);
    assert.equal(ticket.images.length, 0);
    assert.ok(!rendered.text.includes('[IMAGE'));
  });

  it('a logo taller than one band is sent in bands the emulator stacks in order', async () => {
    const profile = getProfile('generic-80mm');
    const path = file('square.png', pngBytes(300, 300, frameWithDiagonal(300, 300, 6)));
    const logo = await loadLogo({ file: path, align: 'center' }, [profile]);
    const image = logo.images.get(profile.id)!;
    assert.deepEqual([image.width, image.height], [480, 480]);
    const { rendered, ticket } = print(profile, { ...BASE, logo });
    assert.deepEqual(
      ticket.images.map((i) => [i.width, i.height]),
      [
        [480, RASTER_BAND_DOTS],
        [480, 480 - RASTER_BAND_DOTS],
      ],
    );
    assert.ok(
      Buffer.concat(ticket.images.map((i) => Buffer.from(i.data))).equals(Buffer.from(image.data)),
    );
    assert.equal(renderText(ticket), rendered.text);
  });

  it('a profile the logo was not converted for prints without it', async () => {
    const p80 = getProfile('generic-80mm');
    const opts = await options({ align: 'center' }, p80);
    const { ticket } = print(getProfile('generic-58mm'), opts);
    assert.equal(ticket.images.length, 0);
  });
});
