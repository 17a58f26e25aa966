/**
 * Flash messages of a form post, carried back to the form's page in short-lived cookies:
 * `notify_errors` when the post failed (the spec's name), `notify_success` when it worked.
 * Each holds a JSON array of messages the service wrote itself (never echoed input). They are
 * readable by page scripts on purpose, so static pages can show them too; they expire after a minute.
 */
export const FLASH_ERRORS = 'notify_errors';
export const FLASH_SUCCESS = 'notify_success';
export const FLASH_MAX_AGE_SEC = 60;

export interface FlashMessages {
  errors: string[];
  success: string[];
}

export function setFlashCookie(name: string, messages: string[], secure: boolean): string {
  return `${name}=${encodeURIComponent(JSON.stringify(messages))}; Path=/; Max-Age=${FLASH_MAX_AGE_SEC}; SameSite=Lax${secure ? '; Secure' : ''}`;
}

export function clearFlashCookie(name: string, secure = false): string {
  return `${name}=; Path=/; Max-Age=0; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** Reads both flash cookies from a Cookie header. Anything malformed reads as no message. */
export function readFlash(cookieHeader: string | null | undefined): FlashMessages {
  const out: FlashMessages = { errors: [], success: [] };
  for (const part of (cookieHeader ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    if (name === FLASH_ERRORS) out.errors = decodeMessages(part.slice(eq + 1).trim());
    if (name === FLASH_SUCCESS) out.success = decodeMessages(part.slice(eq + 1).trim());
  }
  return out;
}

function decodeMessages(value: string): string[] {
  try {
    const parsed = JSON.parse(decodeURIComponent(value));
    if (!Array.isArray(parsed)) return [];
    // Cookies can be planted by a sibling subdomain: keep only short strings; output is escaped anyway.
    return parsed.filter((m): m is string => typeof m === 'string').slice(0, 5).map((m) => m.slice(0, 300));
  } catch {
    return [];
  }
}
