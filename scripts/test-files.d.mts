// Types of test-files.mjs for the tests that import it.
export declare const TIMINGS_FILE: string;
export declare function testFiles(paths: string[], suffix?: string): string[];
export declare function orderBySlowest(files: string[], timings: Record<string, number>): string[];
export declare function readTimings(root: string): Record<string, number>;
export declare function writeTimings(root: string, timings: Record<string, number>): void;
