/**
 * Field helpers shared by the two adapters: every text passes the sanitizer here, and every
 * removal is counted so the receipt carries a warning.
 */
import { sanitizeLine, sanitizeMultiline } from './sanitize.js';

export class FieldCleaner {
  readonly warnings: string[] = [];

  /** A single-line field, or null when absent or empty after cleaning. */
  line(value: string | null | undefined, field: string): string | null {
    if (value == null) return null;
    const { text, removed } = sanitizeLine(value);
    if (removed > 0)
      this.warnings.push(`${field}: ${removed} control or invisible character(s) removed`);
    const trimmed = text.trim();
    return trimmed === '' ? null : trimmed;
  }

  /** A multi-line field (custom print content, remark), line breaks kept. */
  multiline(value: string | null | undefined, field: string): string | null {
    if (value == null) return null;
    const { text, removed } = sanitizeMultiline(value);
    if (removed > 0)
      this.warnings.push(`${field}: ${removed} control or invisible character(s) removed`);
    return text.trim() === '' ? null : text.replace(/\s+$/, '');
  }
}
