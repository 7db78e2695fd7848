import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderText, VirtualPrinter } from '../../src/emulator/index.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { loadProfiles, profileColumns } from '../../src/receipt/profile.js';
import { renderTestPage } from '../../src/receipt/render.js';
import { displayWidth } from '../../src/receipt/width.js';

describe('test page (test-print command)', () => {
  for (const profile of loadProfiles().values()) {
    it(`on ${profile.id}: fits, names the setup, and decodes back to its text`, () => {
      const page = renderTestPage(profile, receiptOptions(), '9.9.9');
      const columns = profileColumns(profile);
      const lines = page.text.split('\n');
      assert.ok(lines.every((l) => displayWidth(l) <= columns || l.startsWith('[QR:')));
      assert.ok(lines.some((l) => l.trim() === 'TEST PAGE'));
      assert.ok(lines.some((l) => /^Agent +printer-agent 9\.9\.9$/.test(l)));
      assert.ok(
        lines.some((l) =>
          new RegExp(
            `^Code page +${profile.codepage} \\(ESC t ${profile.codepageNumbers[profile.codepage]}\\)$`,
          ).test(l),
        ),
      );
      // The column ruler is exactly one line wide: what a technician checks the paper width with.
      assert.ok(
        lines.includes(Array.from({ length: columns }, (_, i) => String((i + 1) % 10)).join('')),
      );
      assert.ok(
        lines.some((l) => /^Currency +PHP 123\.45$/.test(l)),
        'the peso sign falls back to the ISO code',
      );
      if (profile.cjk) assert.ok(lines.includes('CJK: 打印测试 收据'));
      const printer = new VirtualPrinter({ columns: profile.fonts.A.columns });
      printer.write(page.bytes);
      const ticket = profile.cutter === 'none' ? printer.paper.current : printer.paper.tickets[0];
      assert.ok(ticket);
      assert.deepEqual(ticket.warnings, []);
      assert.equal(renderText(ticket), page.text);
    });
  }
});
