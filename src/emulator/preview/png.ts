/**
 * The preview as PNG, rasterized from the SVG with resvg (Rust, prebuilt for linux arm64 and x64 on
 * the npm registry; no browser, no canvas). Text uses the system's fonts: Debian's
 * fonts-dejavu-core for Latin, fonts-noto-cjk for CJK characters (without it they show as boxes).
 * Loaded only when a PNG is asked for.
 */
import { Resvg } from '@resvg/resvg-js';

export function svgToPng(svg: string, scale = 1): Buffer {
  const resvg = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: scale },
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans Mono' },
    background: '#ffffff',
  });
  return resvg.render().asPng();
}
