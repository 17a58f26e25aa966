/** Escapes text for HTML content and double- or single-quoted attribute values. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
