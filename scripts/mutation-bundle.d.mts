// Types of mutation-bundle.mjs for the test that bundles with it.
export declare function bundleTests(files: string[], options?: { cwd?: string }): Promise<void>;
