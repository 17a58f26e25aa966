// Types of mutation-bundle-path.mjs for the test that finds a bundle with it.
export declare const BUNDLE_DIR: string;
export declare function bundleFor(testFile: string): string;
