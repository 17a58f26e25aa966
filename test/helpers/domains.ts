/** A domain of exactly `length` characters (at least 10): labels of `seed` of at most 63 characters (the DNS maximum), then .example. */
export function domainOfLength(length: number, seed = 'a'): string {
  const labels: string[] = [];
  let left = length - '.example'.length;
  while (left > 0) {
    // never leave one character over: it would be a dot with no label after it
    const n = Math.min(63, left) - (left - Math.min(63, left) === 1 ? 1 : 0);
    labels.push(seed.repeat(n));
    left -= n;
    if (left > 0) left -= 1;
  }
  return `${labels.join('.')}.example`;
}
