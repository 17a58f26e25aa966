/**
 * A server-rendered SVG line chart: no script, no library, nothing fetched. Every text in it is
 * escaped here, so the markup can be inlined into a page as-is.
 */
export interface ChartSeries {
  label: string;
  color: string;
  dashed?: boolean;
  values: number[];
}

export interface ChartInput {
  title: string;
  /** start of each bucket */
  times: Date[];
  bucketMs: number;
  series: ChartSeries[];
  width?: number;
  height?: number;
}

const M = { left: 48, right: 16, top: 28, bottom: 34 };
const LEGEND_STEP = 130;
const LEGEND_ROW = 18;

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}

/** 0, 1, 2, 5, 10, 20, 50 ... at or above n */
export function niceCeil(n: number): number {
  if (n <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  return ([1, 2, 5, 10].map((k) => k * p).find((v) => v >= n) ?? 10 * p) as number;
}

export function lineChart({ title, times, bucketMs, series, width = 1000, height = 280 }: ChartInput): string {
  const w = width - M.left - M.right;
  // the legend wraps onto more rows in a narrow chart (a phone's), and the plot moves down for it
  const perRow = Math.max(1, Math.floor(w / LEGEND_STEP));
  const top = M.top + (Math.ceil(series.length / perRow) - 1) * LEGEND_ROW;
  const h = height - top - M.bottom;
  const n = times.length;
  const yMax = niceCeil(Math.max(0, ...series.flatMap((s) => s.values)));
  const x = (i: number) => M.left + (n <= 1 ? w / 2 : (i * w) / (n - 1));
  const y = (v: number) => top + h - (v / yMax) * h;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(title)}" class="chart">`);
  parts.push(`<title>${escapeXml(title)}</title>`);
  for (const v of [0, yMax / 2, yMax]) {
    parts.push(`<line x1="${M.left}" x2="${M.left + w}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e4e4e7"/>`);
    parts.push(`<text x="${M.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#71717a">${fmtNumber(v)}</text>`);
  }
  if (n === 0) {
    parts.push(`<text x="${M.left + w / 2}" y="${top + h / 2}" text-anchor="middle" font-size="13" fill="#71717a">No opens or clicks yet</text>`);
  }
  for (const i of labelIndexes(n)) {
    // the outer labels are anchored inwards so they are never clipped at the edges
    const anchor = n > 1 && i === 0 ? 'start' : n > 1 && i === n - 1 ? 'end' : 'middle';
    parts.push(`<text x="${x(i).toFixed(1)}" y="${height - 12}" text-anchor="${anchor}" font-size="11" fill="#71717a">${escapeXml(fmtTime(times[i], bucketMs))}</text>`);
  }
  for (const s of series) {
    const dash = s.dashed ? ' stroke-dasharray="5 4"' : '';
    const points = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    if (n > 1) parts.push(`<polyline fill="none" stroke="${escapeXml(s.color)}" stroke-width="2"${dash} points="${points}"/>`);
    else if (n === 1) parts.push(`<circle cx="${x(0).toFixed(1)}" cy="${y(s.values[0]).toFixed(1)}" r="3" fill="${escapeXml(s.color)}"/>`);
  }
  series.forEach((s, i) => {
    const lx = M.left + (i % perRow) * LEGEND_STEP;
    const ly = 12 + Math.floor(i / perRow) * LEGEND_ROW;
    const dash = s.dashed ? ' stroke-dasharray="5 4"' : '';
    parts.push(`<line x1="${lx}" x2="${lx + 18}" y1="${ly}" y2="${ly}" stroke="${escapeXml(s.color)}" stroke-width="2"${dash}/>`);
    parts.push(`<text x="${lx + 24}" y="${ly + 4}" font-size="12" fill="#3f3f46">${escapeXml(s.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}

function labelIndexes(n: number): number[] {
  if (n === 0) return [];
  if (n <= 2) return [...Array(n).keys()];
  return [...new Set([0, Math.floor((n - 1) / 2), n - 1])];
}

function fmtNumber(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

/** UTC, as precise as the bucket needs */
export function fmtTime(d: Date, bucketMs: number): string {
  const iso = d.toISOString();
  return bucketMs >= 86_400_000 ? iso.slice(0, 10) : `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
}
