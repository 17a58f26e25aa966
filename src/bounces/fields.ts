/**
 * Header-style fields as mail headers, RFC 3464 delivery-status and RFC 5965 feedback-report parts
 * write them: `Name: value`, a line that starts with white space continues the one before, a blank
 * line ends a block. Names are kept lower-case; a name may repeat (Original-Rcpt-To, Received).
 */
export type Fields = Map<string, string[]>;

const FIELD_NAME = /^[!-9;-~]+$/;

/** Every block of fields in `text` (blank lines separate them; empty blocks are dropped). */
export function parseFieldBlocks(text: string): Fields[] {
  const blocks: Fields[] = [];
  for (const chunk of text.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n/)) {
    const fields = parseFields(chunk);
    if (fields.size > 0) blocks.push(fields);
  }
  return blocks;
}

/** The fields of one block; reading stops at its first blank line (the end of a header section). */
export function parseFields(text: string): Fields {
  const fields: Fields = new Map();
  let name: string | undefined;
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (line.trim() === '') {
      if (name !== undefined || fields.size > 0) break;
      continue;
    }
    if (/^[ \t]/.test(line) && name !== undefined) {
      const values = fields.get(name)!;
      values[values.length - 1] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    const candidate = colon > 0 ? line.slice(0, colon).trim() : '';
    // An mbox "From " line or other noise is no field, and nothing continues it.
    name = FIELD_NAME.test(candidate) ? candidate.toLowerCase() : undefined;
    if (name === undefined) continue;
    const values = fields.get(name) ?? [];
    values.push(line.slice(colon + 1).trim());
    fields.set(name, values);
  }
  return fields;
}

export function firstField(fields: Fields, name: string): string | undefined {
  return fields.get(name)?.[0];
}

/**
 * The address in a typed address field (`rfc822; user@example.com`, `rfc822;<user@example.com>`), or
 * in a plain one (`<user@example.com>`, `Name <user@example.com>`); undefined when there is none.
 */
export function fieldAddress(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const typed = /^\s*([A-Za-z0-9-]+)\s*;\s*(.*)$/s.exec(value);
  if (typed && typed[1]!.toLowerCase() !== 'rfc822') return undefined;
  const rest = (typed ? typed[2]! : value).trim();
  const bracketed = /<([^<>\s]+@[^<>\s]+)>/.exec(rest);
  const bare = bracketed ? bracketed[1] : /[^\s<>"(),;:]+@[^\s<>"(),;:]+/.exec(rest)?.[0];
  return bare?.replace(/\.$/, '');
}
