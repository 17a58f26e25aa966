// Types of mutation-fast-jobs.mjs for the test that runs the in-process mutation runner on a fixture.
export interface MutantJob {
  id: string;
  files: string[];
  /** per file, the numbers of the only tests to run (a file not named here runs whole) */
  only?: Record<string, number[]>;
  hitLimit: number;
}
export interface Verdict {
  id: string;
  status: 'Killed' | 'Timeout' | 'Survived';
  killedBy?: string;
  reason?: string;
  cpuMs?: number;
  /** how many of its files ran whole after their selected tests failed without the mutant too */
  wholeAgain?: number;
}
export declare function worker(plan: Record<string, unknown>, work: string, env?: NodeJS.ProcessEnv): { status: number | null; signal: NodeJS.Signals | null };
export declare function readLines(file: string): Verdict[];
export declare function runJobs(options: {
  jobs: MutantJob[];
  bundles: Record<string, string>;
  budgetMs: Record<string, number>;
  perProcess?: number;
  work: string;
  env?: NodeJS.ProcessEnv;
  progress?: (done: number, all: number) => void;
}): Promise<Map<string, Verdict>>;
/** How long past its budget a file run of a mutant may go before the parent kills its worker. */
export declare function graceMs(budgetMs: number): number;
/** Coverage keys `<file>` and `<file>#<n>` (counts per mutant id) read per mutant id. */
export declare function reachOf(perTest: Record<string, Record<string, number>>, files: string[]): (id: string) => { files: string[]; only: Record<string, number[]>; hits: number };
