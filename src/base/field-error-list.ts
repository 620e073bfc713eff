// A list-valued field (dnsNames, emailAddresses, usages, conditions, the keys of a map) can
// hold hundreds of thousands of items: one error per bad item would make a refusal of tens of
// megabytes, built at a cost the client chooses. So each list reports a few item errors and
// counts the rest without building them.

/** At most this many errors are listed for the items of one list (or the keys of one map). */
export const MAX_ERRORS_PER_LIST = 10;

/** The errors of one list past the limit: counted, written as one entry where they were cut. */
interface Overflow {
  path: string;
  more: number;
}

/** The entry closing a list whose errors were cut: `path: and N more errors (...)`. */
export function moreErrors(path: string, more: number, listed: number): string {
  return `${path}: and ${more} more ${more === 1 ? 'error' : 'errors'} (only the first ${listed} are listed)`;
}

/**
 * The field errors a validator collects, bounded: errors of single fields are kept as added;
 * item errors of a list (added with addItem, under the list's path) are built only for the
 * first `perList` of that list, and the others are counted into one `and N more errors`
 * entry placed right after the last one listed. A rule stays cheap per item as long as its
 * check is: what it costs to word an error is paid at most `perList` times per list.
 */
export class FieldErrorList {
  private readonly entries: Array<string | Overflow> = [];
  private readonly listed = new Map<string, number>();
  private readonly overflows = new Map<string, Overflow>();

  constructor(private readonly perList = MAX_ERRORS_PER_LIST) {}

  /** One error of a field that is not a list item. */
  add(error: string): void {
    this.entries.push(error);
  }

  /** Several such errors (a sub-validator's), in order. */
  addAll(errors: Iterable<string>): void {
    for (const error of errors) this.entries.push(error);
  }

  /** One error of an item of the list at listPath; `word` builds it, if it is still listed. */
  addItem(listPath: string, word: () => string): void {
    const listed = this.listed.get(listPath) ?? 0;
    if (listed < this.perList) {
      this.listed.set(listPath, listed + 1);
      this.entries.push(word());
      return;
    }
    const overflow = this.overflows.get(listPath);
    if (overflow) {
      overflow.more++;
      return;
    }
    const first = { path: listPath, more: 1 };
    this.overflows.set(listPath, first);
    this.entries.push(first);
  }

  /** How many errors were added, the counted ones included. */
  get count(): number {
    let count = 0;
    for (const entry of this.entries) count += typeof entry === 'string' ? 1 : entry.more;
    return count;
  }

  /** The errors in the order added, each cut list closed by its `and N more` entry. */
  toArray(): string[] {
    return this.entries.map((entry) =>
      typeof entry === 'string' ? entry : moreErrors(entry.path, entry.more, this.perList),
    );
  }
}
