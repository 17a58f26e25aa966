// Which verdicts of a target's last report a rerun may keep. A mutant is known by its file, place and
// change, not by Stryker's id: ids count mutants across all of a target's files, so one mutant more in
// an earlier file would shift every later id and send those files' mutants to run again.

/** A report's location counts lines and columns from 1, the instrumenter's from 0. */
export const reportLocation = ({ start, end }) => ({ start: { line: start.line + 1, column: start.column + 1 }, end: { line: end.line + 1, column: end.column + 1 } });

const key = (path, { location, mutatorName, replacement }) => `${path}:${location.start.line}:${location.start.column}:${mutatorName}:${replacement}`;

/**
 * The detected verdicts (killed, timeout) of `report` (a `<target>.fast.json`) in files whose source is
 * still `sources[path]`: an unchanged file's mutants are the same mutants, so those verdicts still hold.
 */
export function keptVerdicts(report, sources) {
  const out = new Map();
  for (const [path, f] of Object.entries(report.files)) {
    if (sources[path] !== f.source) continue;
    for (const m of f.mutants) if (m.status === 'Killed' || m.status === 'Timeout') out.set(key(path, m), m);
  }
  return out;
}

/** The kept verdict of an instrumenter's mutant, if any. */
export const keptVerdictOf = (kept, m) => kept.get(key(m.fileName, { ...m, location: reportLocation(m.location) }));
