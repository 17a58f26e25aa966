/**
 * The candidate a mistyped name most likely meant, for "did you mean" hints: the smallest edit
 * distance, allowing two edits or one in three characters, so unrelated names are not offered.
 * `compare` maps a candidate to the spellings it is compared by (e.g. a command without its
 * `notify:` namespace), and the candidate itself is what is suggested.
 */
export function closestName(word: string, candidates: readonly string[], compare: (candidate: string) => string[] = (c) => [c]): string | undefined {
  const target = word.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    for (const spelling of compare(name)) {
      const distance = editDistance(target, spelling.toLowerCase());
      if (distance > Math.max(2, Math.floor(Math.max(target.length, spelling.length) / 3))) continue;
      if (!best || distance < best.distance) best = { name, distance };
    }
  }
  return best?.name;
}

/** Levenshtein distance with adjacent transpositions counted as one edit (a common typo). */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
