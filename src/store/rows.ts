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

/** An optional yes/no as its column form: 1, 0, or NULL for "the option's default". */
export const flagColumn = (flag: boolean | null | undefined): number | null => (flag === null || flag === undefined ? null : flag ? 1 : 0);
export const flagOf = (column: number | null | undefined): boolean | null => (column === null || column === undefined ? null : Number(column) === 1);

/**
 * `layout: false` (no layout) is stored as '' in the text column, apart from NULL (the default
 * layout): a layout name is never empty.
 */
export const layoutColumn = (layout: string | false | null): string | null => (layout === false ? '' : layout);
export const layoutOf = (column: string | null): string | false | null => (column === '' ? false : column);

/** the value of a `MIN(...) AS t` over rows that may not exist, undefined when there were none */
export const earliest = (row: { t: unknown } | undefined): number | undefined => (row?.t === null || row?.t === undefined ? undefined : Number(row.t));
