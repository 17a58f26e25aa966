import type { Context as HonoContext } from 'hono';
import { type ErrorCode, ErrorCodes, isNotifyError } from '../../errors.ts';

/** Codes the API answers with that no domain operation raises: they are about the HTTP request itself. */
export const HTTP_CODES = {
  UNAUTHORIZED: 'The admin token is missing or wrong',
  RATE_LIMITED: 'Too many failed authentication attempts',
  BODY_TOO_LARGE: 'Request body is too large',
  UNSUPPORTED_MEDIA_TYPE: 'Request body has an unsupported content type',
  METHOD_NOT_ALLOWED: 'Method not allowed on this resource',
  INTERNAL: 'Internal error',
} as const;

export type ProblemCode = ErrorCode | keyof typeof HTTP_CODES;

/**
 * The HTTP status of each domain error. The domain never knows status codes; this table is where
 * they are decided. Codes added by later work (a lifecycle's INVALID_STATE) fall back to 400 until
 * they are listed here.
 */
const STATUS: Record<string, number> = {
  NOT_FOUND: 404,
  INVALID_INPUT: 422,
  INVALID_EMAIL: 422,
  HEADER_INJECTION: 422,
  TEMPLATE_ERROR: 422,
  PATH_ESCAPE: 422,
  MISSING_SENDER: 422,
  SUPPRESSED: 409,
  DUPLICATE: 409,
  INVALID_STATE: 409,
  EMPTY_AUDIENCE: 409,
  MAILER_FAILED: 502,
  STORE_UNAVAILABLE: 503,
  CLOSED: 503,
  CONFIG_INVALID: 500,
  CONFIG_FILE: 500,
  WEBHOOK_DRIVER: 500,
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** notify's error code (src/errors.ts) or one of HTTP_CODES */
  code: string;
  /** the input field at fault, when one is */
  field?: string;
}

export const PROBLEM_HEADERS: Record<string, string> = {
  'Content-Type': 'application/problem+json',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

export function problem(code: ProblemCode | string, status: number, detail?: string, field?: string): Problem {
  const title = (ErrorCodes as Record<string, string>)[code] ?? (HTTP_CODES as Record<string, string>)[code] ?? 'Error';
  return { type: `urn:notify:problem:${code.toLowerCase()}`, title, status, detail: detail ?? title, code, ...(field ? { field } : {}) };
}

export function problemResponse(c: HonoContext, p: Problem, headers: Record<string, string> = {}): Response {
  return c.body(JSON.stringify(p), p.status as 400, { ...PROBLEM_HEADERS, ...headers });
}

/** A NotifyError as its problem; anything else is a 500 that says nothing about its cause. */
export function problemOf(err: unknown): Problem {
  if (err instanceof HttpProblem) return err.problem;
  if (!isNotifyError(err)) return problem('INTERNAL', 500);
  const field = typeof err.details?.field === 'string' ? err.details.field : undefined;
  return problem(err.code, STATUS[err.code] ?? 400, err.message, field);
}

/** A refusal about the HTTP request itself (size, media type), answered as its problem. */
export class HttpProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
  }
}
