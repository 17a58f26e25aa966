// Types of mutation-fast-kept.mjs for its test.
type Place = { line: number; column: number };
type Location = { start: Place; end: Place };
export interface ReportMutant { id: string; mutatorName: string; replacement: string; location: Location; status: string }
export interface Report { files: Record<string, { source: string; mutants: ReportMutant[] }> }
export declare function reportLocation(location: Location): Location;
export declare function keptVerdicts(report: Report, sources: Record<string, string>): Map<string, ReportMutant>;
export declare function keptVerdictOf(kept: Map<string, ReportMutant>, m: { fileName: string; mutatorName: string; replacement: string; location: Location }): ReportMutant | undefined;
