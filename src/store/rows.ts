/** Row helpers shared by the repositories: the same value shapes from both engines. */
export function toDate(ms: number | null | undefined): Date | null {
  return ms === null || ms === undefined ? null : new Date(Number(ms));
}

export function parseJson(value: unknown): Record<string, unknown> {
  if (value === null || value === undefined || value === '') return {};
  if (typeof value === 'string') {
    try {
      const parsed = JSON.parse(value);
      return typeof parsed === 'object' && parsed !== null ? parsed : {};
    } catch {
      return {};
    }
  }
  return value as Record<string, unknown>;
}

/**
 * `layout: false` (no layout) is stored as '' in the text column, apart from NULL (the default
 * layout): a layout name is never empty.
 */
export const layoutColumn = (layout: string | false | null): string | null => (layout === false ? '' : layout);
export const layoutOf = (column: string | null): string | false | null => (column === '' ? false : column);
