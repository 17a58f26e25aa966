// Types of mutation-targets.mjs for the test that checks the targets.
export declare const TARGETS: Record<string, { mutate: string[]; tests: string[] }>;
export declare const GROUPS: Record<string, string[]>;
export declare function targetTests(name: string): string[];
