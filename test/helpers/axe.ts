/**
 * axe-core (Deque's accessibility engine, a dev dependency) run inside a page driven by
 * Playwright: its source is injected into the page as it is (no network), then `axe.run` checks the
 * document as the browser drew it, colours and contrast included (issue 42 item 3).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/** The serious and critical violations on the page now, one readable line each. */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  // Injected through the DevTools protocol, not a <script>: the page's CSP must not matter.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } })
      .axe;
    return (await axe.run()).violations;
  });
  return (violations as AxeViolation[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help}: ${v.nodes
          .map((n) => `${JSON.stringify(n.target)} ${n.failureSummary ?? ''}`)
          .join('; ')}`,
    );
}
