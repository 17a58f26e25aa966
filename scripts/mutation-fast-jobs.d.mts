// Types of mutation-fast-jobs.mjs for the test that runs the in-process mutation runner on a fixture.
export interface MutantJob {
  id: string;
  files: string[];
  hitLimit: number;
}
export interface Verdict {
  id: string;
  status: 'Killed' | 'Timeout' | 'Survived';
  killedBy?: string;
  reason?: string;
  cpuMs?: number;
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
}): Map<string, Verdict>;
