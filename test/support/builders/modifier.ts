// Object builders in cert-manager's test/unit/gen style: a builder makes the bare object of a
// kind from its name, and small modifiers each set one thing on it, so a test states only the
// fields its case is about. A file's shared base is one built object; its variants are
// `xFrom(base, ...modifiers)`, which never change the base.

/** A change to an object under construction. */
export type Modifier<T> = (object: T) => void;

/** object after each modifier, in order. */
export function build<T>(object: T, modifiers: readonly Modifier<T>[]): T {
  for (const modify of modifiers) modify(object);
  return object;
}

/** A deep copy of base after each modifier: a variant that leaves base as it was. */
export function buildFrom<T>(base: T, modifiers: readonly Modifier<T>[]): T {
  return build(structuredClone(base), modifiers);
}
