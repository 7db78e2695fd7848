/**
 * Issue 18, raster lines drawn "in its size and weight, each piece over exactly the columns the
 * text line would give it" (docs/printers.md "Every character on paper"; decision 183), read off the
 * rasterizer's 1-bit images with the system fonts the agent uses:
 *
 * - weight: the same text drawn bold has more ink than drawn regular, for CJK and Thai (whose
 *   fallback fonts have no bold face) as for Latin; white-on-black bold has more white;
 * - placement: each piece of a line (a name on the left, an amount on the right, as an item row)
 *   inks only its own dot columns, from its first cell to its last, and nothing between them;
 *   double-width pieces spread over their doubled columns.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BitImage, LineRasterizer, type RasterPiece } from '../../src/receipt/raster-text.js';

const rasterizer = LineRasterizer.fromSystem();
const NO_FONTS = rasterizer
  ? false
  : 'needs system fonts (Debian packages fonts-dejavu-core and fonts-unifont)';

/** 80 mm paper: 576 dots, 48 columns of 12 dots. */
const GEOMETRY = { dotsPerLine: 576, columns: 48 };
const CELL = 12;

function piece(text: string, column: number, columns: number, extra: Partial<RasterPiece> = {}) {
  return {
    text,
    column,
    columns,
    bold: false,
    invert: false,
    underline: false,
    height: 1,
    ...extra,
  } satisfies RasterPiece;
}

const dot = (image: BitImage, x: number, y: number) =>
  (image.data[y * Math.ceil(image.width / 8) + (x >> 3)]! >> (7 - (x & 7))) & 1;

/** Black dots in columns [x0, x1) of the image. */
function ink(image: BitImage, x0 = 0, x1 = image.width): number {
  let n = 0;
  for (let y = 0; y < image.height; y++) for (let x = x0; x < x1; x++) n += dot(image, x, y);
  return n;
}

/** The dot columns holding ink, as [first, last], or null. */
function inkedColumns(image: BitImage): [number, number] | null {
  let first = -1;
  let last = -1;
  for (let x = 0; x < image.width; x++)
    for (let y = 0; y < image.height; y++)
      if (dot(image, x, y)) {
        if (first < 0) first = x;
        last = x;
        break;
      }
  return first < 0 ? null : [first, last];
}

describe('raster lines: weight and column placement', { skip: NO_FONTS }, () => {
  const draw = (...lines: RasterPiece[][]) => rasterizer!.rasterize(lines, GEOMETRY);

  it('bold has more ink than regular: CJK, Thai and Latin, normal and double height', () => {
    for (const [text, columns] of [
      ['宫保鸡丁', 8],
      ['ผัดไทย', 4],
      ['Adobo rice', 10],
    ] as const) {
      for (const height of [1, 2] as const) {
        const [regular, bold] = draw(
          [piece(text, 2, columns, { height })],
          [piece(text, 2, columns, { height, bold: true })],
        );
        const light = ink(regular!);
        const heavy = ink(bold!);
        assert.ok(light > 0, `${text}: ink at all`);
        assert.ok(
          heavy >= light * 1.1,
          `${text} (height ${height}): bold ${heavy} dots, regular ${light}`,
        );
      }
    }
  });

  it('white on black (a marking): bold draws thicker white strokes', () => {
    const [regular, bold] = draw(
      [piece('迟到 LATE', 1, 9, { invert: true })],
      [piece('迟到 LATE', 1, 9, { invert: true, bold: true })],
    );
    const area = [CELL, 10 * CELL] as const;
    const white = (image: BitImage) => 9 * CELL * image.height - ink(image, ...area);
    assert.ok(white(regular!) > 0);
    assert.ok(
      white(bold!) >= white(regular!) * 1.1,
      `white dots: bold ${white(bold!)}, regular ${white(regular!)}`,
    );
    // The black box is exactly the piece's columns, bold or not.
    for (const image of [regular!, bold!]) {
      assert.deepEqual(inkedColumns(image), [CELL, 10 * CELL - 1]);
    }
  });

  it('an item row in pieces: each piece inks its own columns only, first cell to last', () => {
    // As an item row on 80 mm paper: the name from column 0 (4 CJK characters: 8 columns), the
    // quantity and price (Latin, drawn narrower than the font's own advance), and the amount
    // right-aligned in the last 6 columns, bold as a total is; blank between them.
    const pieces = [
      piece('宫保鸡丁', 0, 8),
      piece('2 x 185.00', 10, 10),
      piece('370.00', 42, 6, { bold: true }),
    ];
    const [row] = draw(pieces);
    assert.ok(row);
    assert.deepEqual([row.width, row.height], [576, 24]);
    for (const p of pieces) {
      const x0 = p.column * CELL;
      const x1 = (p.column + p.columns) * CELL;
      // Only this piece, drawn alone the same way: where its ink lies on the line.
      const [alone] = draw([p]);
      const span = inkedColumns(alone!);
      assert.ok(span, `${p.text} inks its line`);
      assert.ok(
        span[0] >= x0 && span[0] < x0 + CELL,
        `${p.text} starts in its first cell: ${span}`,
      );
      assert.ok(span[1] < x1 && span[1] >= x1 - CELL, `${p.text} ends in its last cell: ${span}`);
      // On the row the piece's columns hold exactly that ink.
      assert.equal(ink(row, x0, x1), ink(alone!), `${p.text} on the row as alone`);
    }
    assert.equal(ink(row, 8 * CELL, 10 * CELL), 0, 'nothing between the name and the price');
    assert.equal(ink(row, 20 * CELL, 42 * CELL), 0, 'nothing between the price and the amount');
    assert.equal(
      ink(row),
      ink(row, 0, 8 * CELL) + ink(row, 10 * CELL, 20 * CELL) + ink(row, 42 * CELL, 576),
    );
  });

  it('double width: a piece of 2x characters spreads over twice the columns', () => {
    // `2x` in BIG (the kitchen quantity) takes 4 columns; the name after it starts at column 5.
    const quantity = piece('2x', 0, 4, { bold: true, height: 2 });
    const dish = piece('宫保鸡丁', 5, 8, { bold: true, height: 2 });
    const [line] = draw([quantity, dish]);
    assert.equal(line!.height, 48);
    assert.ok(ink(line!, 0, 4 * CELL) > 0);
    assert.ok(ink(line!, 5 * CELL, 13 * CELL) > 0);
    assert.equal(ink(line!, 4 * CELL, 5 * CELL), 0, 'the space between them stays blank');
    assert.equal(ink(line!, 13 * CELL, 576), 0, 'nothing after the name');
    assert.ok(inkedColumns(line!)![0] < CELL, 'the quantity starts in the first cell');
    assert.ok(inkedColumns(line!)![1] >= 12 * CELL, 'the name reaches its last cell');
  });
});

describe('raster lines: drawn once, then from the cache', { skip: NO_FONTS }, () => {
  it('draws a line again only when it is not among the last lines drawn', () => {
    const cached = LineRasterizer.fromSystem(undefined, { cachedLines: 2 })!;
    const dish = [piece('宫保鸡丁', 0, 8), piece('185.00', 40, 8)];
    const thai = [piece('ผัดไทย', 0, 8)];
    const bold = [piece('宫保鸡丁', 0, 8, { bold: true }), piece('185.00', 40, 8)];
    const [first] = cached.rasterize([dish], GEOMETRY);
    assert.equal(cached.linesDrawn, 1);
    // The same pieces again, alone or beside a new line: only the new one is drawn.
    const [again] = cached.rasterize([dish], GEOMETRY);
    assert.equal(cached.linesDrawn, 1);
    assert.deepEqual(again, first);
    const [dishBeside, thaiImage] = cached.rasterize([dish, thai], GEOMETRY);
    assert.equal(cached.linesDrawn, 2);
    assert.deepEqual(dishBeside, first);
    // What the cache gives is what a fresh rasterizer draws.
    assert.deepEqual(thaiImage, rasterizer!.rasterize([thai], GEOMETRY)[0]);
    // Any difference in the pieces or the paper is another line.
    cached.rasterize([bold], GEOMETRY);
    assert.equal(cached.linesDrawn, 3);
    const [narrow] = cached.rasterize([dish], { dotsPerLine: 384, columns: 32 });
    assert.equal(cached.linesDrawn, 4);
    assert.equal(narrow!.width, 384);
    // Two lines kept: the 80 mm dish line went first (least recently used), so it is drawn again.
    const [redrawn] = cached.rasterize([dish], GEOMETRY);
    assert.equal(cached.linesDrawn, 5);
    assert.deepEqual(redrawn, first);
  });
});
