// Types of test-files.mjs for the tests that import it.
export declare const TIMINGS_FILE: string;
export declare function testFiles(paths: string[], suffix?: string): string[];
export declare function orderBySlowest(files: string[], timings: Record<string, number>): string[];
