import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VirtualPrinter } from '../../src/emulator/index.js';
import { receiptOptions } from '../../src/receipt/options.js';
import { loadProfiles, profileColumns } from '../../src/receipt/profile.js';
import { renderTestPage } from '../../src/receipt/render.js';
import { displayWidth } from '../../src/receipt/width.js';
import { paperText } from '../helpers/paper-text.js';

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
      // The peso sign prints as a user-defined character where the model takes them, else as
      // the ISO code.
      const currency = profile.userDefinedCharacters ? '₱123\\.45' : 'PHP 123\\.45';
      assert.ok(lines.some((l) => new RegExp(`^Currency +${currency}$`).test(l)));
      if (profile.cjk) assert.ok(lines.includes('CJK: 打印测试 收据'));
      const printer = new VirtualPrinter({ columns: profile.fonts.A.columns });
      printer.write(page.bytes);
      const ticket = profile.cutter === 'none' ? printer.paper.current : printer.paper.tickets[0];
      assert.ok(ticket);
      assert.deepEqual(ticket.warnings, []);
      assert.equal(paperText(ticket), page.text);
    });
  }
});
