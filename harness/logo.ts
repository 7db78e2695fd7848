/**
 * Logo files for the logo tests, drawn here with pngjs (the agent's own PNG decoder reads them
 * back) so no binary fixture has to be reviewed: a black frame with a diagonal from the top-left
 * corner to the bottom-right one, on white.
 */
import { writeFileSync } from 'node:fs';
import { PNG } from 'pngjs';

/** RGBA of one pixel from its position. */
export type Paint = (x: number, y: number) => [number, number, number, number];

export function pngBytes(width: number, height: number, paint: Paint): Buffer {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) png.data.set(paint(x, y), (y * width + x) * 4);
  return PNG.sync.write(png);
}

/** Frame `border` pixels thick and the diagonal, black; the rest white. */
export function frameWithDiagonal(width: number, height: number, border = 4): Paint {
  return (x, y) => {
    const onFrame = x < border || y < border || x >= width - border || y >= height - border;
    // The diagonal, as thick as the frame measured along x.
    const onDiagonal = Math.abs(x - (y * (width - 1)) / (height - 1)) < border / 2;
    const v = onFrame || onDiagonal ? 0 : 255;
    return [v, v, v, 255];
  };
}

export const grey =
  (value: number, alpha = 255): Paint =>
  () => [value, value, value, alpha];

/** A 400 x 200 frame-with-diagonal PNG at `path`. */
export function writeLogoPng(path: string, width = 400, height = 200): string {
  writeFileSync(path, pngBytes(width, height, frameWithDiagonal(width, height, 8)));
  return path;
}
