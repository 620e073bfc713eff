import type { AttributeError } from './attribute-errors.js';
import { ATTRIBUTE_PREFIX, type AttributeEntry, type AttributeName } from './attribute-keys.js';

/** Read access to the attributes of one volume, collecting every error found while reading them. */
export class AttributeReader {
  readonly errors: AttributeError[] = [];

  constructor(private readonly entries: ReadonlyMap<AttributeName, AttributeEntry>) {}

  /** The value, or undefined when the attribute is absent. */
  value(name: AttributeName): string | undefined {
    return this.entries.get(name)?.value;
  }

  /** The value, with "" read as absent, as csi-driver's defaulting (setDefaultIfEmpty) does. */
  nonEmpty(name: AttributeName): string | undefined {
    const value = this.value(name);
    return value === '' ? undefined : value;
  }

  /** The key to name in errors: the one the value came under, else the current-prefix key. */
  keyOf(name: AttributeName): string {
    return this.entries.get(name)?.key ?? `${ATTRIBUTE_PREFIX}${name}`;
  }

  /** A reader of the same attributes with no errors yet, to check them once more another way. */
  fresh(): AttributeReader {
    return new AttributeReader(this.entries);
  }

  /** Records an error against the attribute. */
  fail(name: AttributeName, message: string): void {
    this.errors.push({ key: this.keyOf(name), message });
  }
}
