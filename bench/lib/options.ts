/**
 * What bench/run.ts passes to every bench file through the environment, so a bench file run on
 * its own (`npx tsx bench/pixel.ts`) behaves the same with the same variables.
 *   BENCH_QUICK=1          one short round with small counts (checks that the bench runs; figures mean little)
 *   BENCH_ROUNDS=<n>       interleaved rounds per case (at least 5 outside quick mode)
 *   BENCH_CPU_PROF_DIR=<d> the process under test runs with `node --cpu-prof --cpu-prof-dir=<d>`
 *   BENCH_ENGINE=<e>       sqlite or postgres: the cases that run on both engines run on this one only
 */
export const QUICK = process.env.BENCH_QUICK === '1';

export const ROUNDS = QUICK ? 1 : Math.max(5, Number(process.env.BENCH_ROUNDS) || 5);

export const PROFILE_DIR = process.env.BENCH_CPU_PROF_DIR || undefined;

/** A count for the full run or for the quick one. */
export const sized = (full: number, quick: number): number => (QUICK ? quick : full);
