import { NotifyError } from './errors.ts';

/**
 * How one implementation of a family (mail transport, webhook driver, rate-limit store) is named by
 * an option string and built from it. Like Kysely's dialects or unstorage's drivers, the option
 * names an entry and the entry's factory builds it; the option's validator and its error messages
 * are derived from the same entries, so a name is written down once.
 */
export interface RegistryEntry<D, T> {
  /** how the option writes it in messages: `ses`, `smtp://...`, `outbox:<dir>` */
  usage: string;
  /**
   * Named by scheme: what may follow `<name>:` (`//host:25` for `smtp`). Absent: the option is the
   * bare name, nothing after it.
   */
  argument?: RegExp;
  /** builds the implementation from the whole option string */
  create(spec: string, deps: D): T;
}

/** An entry named by a form of string rather than a name, such as `<module>#<Export>`. */
export interface PatternEntry<D, T> extends Omit<RegistryEntry<D, T>, 'argument'> {
  pattern: RegExp;
}

export interface Resolved<D, T> {
  /** the registered name (an alias resolves to the name it stands for) */
  name: string;
  entry: RegistryEntry<D, T>;
}

export class Registry<D, T> {
  readonly #entries = new Map<string, RegistryEntry<D, T>>();
  readonly #aliases = new Map<string, string>();
  readonly #patterns: [string, PatternEntry<D, T>][] = [];

  /** @param option the option this family is chosen by, for error messages */
  constructor(readonly option: string) {}

  register(name: string, entry: RegistryEntry<D, T>): this {
    this.#entries.set(name, entry);
    return this;
  }

  /** another spelling of a registered bare name (the built-in webhook drivers' class names) */
  alias(alias: string, name: string): this {
    if (!this.#entries.has(name)) throw new Error(`cannot alias '${alias}' to unregistered '${name}'`);
    this.#aliases.set(alias, name);
    return this;
  }

  /** a form tried after every name, in the order added */
  registerPattern(name: string, entry: PatternEntry<D, T>): this {
    this.#patterns.push([name, entry]);
    return this;
  }

  /** the registered names, in the order registered (aliases and patterns not included) */
  get names(): string[] {
    return [...this.#entries.keys()];
  }

  get aliases(): string[] {
    return [...this.#aliases.keys()];
  }

  /** the entry an option string names, or undefined */
  resolve(spec: string): Resolved<D, T> | undefined {
    const bare = this.#aliases.get(spec) ?? spec;
    const whole = this.#entries.get(bare);
    if (whole && !whole.argument) return { name: bare, entry: whole };
    const colon = spec.indexOf(':');
    if (colon > 0) {
      const name = spec.slice(0, colon);
      const byScheme = this.#entries.get(name);
      if (byScheme?.argument?.test(spec.slice(colon + 1))) return { name, entry: byScheme };
    }
    for (const [name, entry] of this.#patterns) {
      if (entry.pattern.test(spec)) return { name, entry: { usage: entry.usage, create: entry.create } };
    }
    return undefined;
  }

  accepts(spec: string): boolean {
    return this.resolve(spec) !== undefined;
  }

  /** every accepted form, quoted, in the order registered: `'smtp://...'`, `'ses'` */
  get forms(): string[] {
    return [...this.#entries.values(), ...this.#patterns.map(([, e]) => e)].map((e) => `'${e.usage}'`);
  }

  /** builds what `spec` names; an unknown spec is CONFIG_INVALID listing what is registered */
  create(spec: string, deps: D): T {
    const found = this.resolve(spec);
    if (!found) {
      throw new NotifyError('CONFIG_INVALID', `Option '${this.option}' must be ${listOf(this.forms)} (got ${JSON.stringify(spec)})`, { option: this.option, registered: this.names });
    }
    return found.entry.create(spec, deps);
  }
}

/** `a, b or c` */
export function listOf(items: string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}` : (items[0] ?? '');
}
