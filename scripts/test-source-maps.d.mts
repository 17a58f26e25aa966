// Types of test-source-maps.mjs for the test that imports it.
export declare function decodeSegment(text: string): number[];
export declare function encodeSegment(values: number[]): string;
export declare function keepMappings(mappings: string, drop: (source: number) => boolean): string;
export declare function trimSourceMaps(dir: string): void;
