/** One sample line of the text exposition format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A metric family: its HELP, TYPE and samples (histogram samples keep their suffixes). */
export interface Family {
  help: string;
  type: string;
  samples: Sample[];
}

/**
 * Parses Prometheus' text exposition format (version 0.0.4) strictly enough for tests: every
 * sample must belong to a family declared by `# TYPE`, label values are unescaped, and a line
 * that does not parse throws.
 */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (name: string) => {
    const family = families.get(name);
    if (family) return family;
    const created: Family = { help: '', type: '', samples: [] };
    families.set(name, created);
    return created;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const family = familyOf(meta[2] as string);
      if (meta[1] === 'HELP') family.help = (meta[3] as string).replace(/\\n/g, '\n');
      else family.type = meta[3] as string;
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not an exposition line: ${line}`);
    const name = sample[1] as string;
    const owner = [name, name.replace(/_(bucket|sum|count)$/, '')].find(
      (candidate) => families.get(candidate)?.type,
    );
    if (!owner) throw new Error(`sample of an undeclared family: ${line}`);
    familyOf(owner).samples.push({
      name,
      labels: parseLabels(sample[2] ?? ''),
      value: Number(sample[3]),
    });
  }
  return families;
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const pattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
  let match: RegExpExecArray | null;
  let consumed = 0;
  for (;;) {
    match = pattern.exec(text);
    if (!match) break;
    labels[match[1] as string] = (match[2] as string).replace(/\\(.)/g, (_, c: string) =>
      c === 'n' ? '\n' : c,
    );
    consumed = pattern.lastIndex;
  }
  if (consumed !== text.length) throw new Error(`labels do not parse: {${text}}`);
  return labels;
}

/** Fetches url and parses it as an exposition; throws unless it answers 200 in text format. */
export async function scrape(url: string): Promise<Map<string, Family>> {
  const response = await fetch(url);
  const body = await response.text();
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${body}`);
  if (!response.headers.get('content-type')?.startsWith('text/plain; version=0.0.4')) {
    throw new Error(`${url} is not the text exposition format`);
  }
  return parseExposition(body);
}

/** The label names of every sample of a family, each set sorted and joined by commas. */
export function labelSets(family: Family | undefined): string[] {
  return [...new Set((family?.samples ?? []).map((s) => Object.keys(s.labels).sort().join(',')))];
}

/** The value of the sample of family with exactly these labels (among others), if any. */
export function sampleValue(
  family: Family | undefined,
  labels: Record<string, string>,
  name?: string,
): number | undefined {
  return family?.samples.find(
    (s) =>
      (name === undefined || s.name === name) &&
      Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  )?.value;
}
