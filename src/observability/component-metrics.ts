import type { Registry } from 'prom-client';
import { promClient } from './prom-client.js';

/** Where a scrape family writes its series. */
export interface SeriesWriter {
  /** One series: its label text (already escaped, see labelText) and value. */
  series(labels: string, value: number): void;
  /** Whole sample lines of the family (seriesLine's, joined by line feeds), e.g. cached ones. */
  lines(text: string): void;
}

/**
 * A family computed at scrape time from caches: its name, help, type, and a collect that
 * writes its series.
 */
export interface ScrapeFamily {
  name: string;
  help: string;
  type: 'gauge';
  collect(out: SeriesWriter): void;
}

/** One sample line of the text format. */
export function seriesLine(name: string, labels: string, value: number): string {
  return `${name}{${labels}} ${value}`;
}

/**
 * One process component's metrics: a prom-client registry (never the global one) for the
 * counters and histograms the telemetry facts feed, and the families computed from caches at
 * scrape time, which are written straight to the exposition text (their values are finite:
 * timestamps, 0 and 1, counts): prom-client's gauges would
 * hash a label object per series per scrape, 4x the cost of the whole text at 10,000
 * series (bench/metrics.ts).
 */
export class ComponentMetrics {
  private madeRegistry: Registry | undefined;
  private readonly families: ScrapeFamily[] = [];
  private scrapes = 0;

  /**
   * A function that returns compute()'s result, computed once per scrape: the families of
   * one scrape share one read of a cache (one list and filter of thousands of objects).
   */
  perScrape<T>(compute: () => T): () => T {
    let at = -1;
    let value: T;
    return () => {
      if (at !== this.scrapes) {
        value = compute();
        at = this.scrapes;
      }
      return value;
    };
  }

  /** The prom-client registry, made at the first use: a process without metrics never loads prom-client. */
  get registry(): Registry {
    this.madeRegistry ??= new (promClient().Registry)();
    return this.madeRegistry;
  }

  /** Adds a family computed at each scrape. */
  addScrapeFamily(family: ScrapeFamily): void {
    this.families.push(family);
  }

  /** The content type of exposition(): Prometheus' text format 0.0.4. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every family in the text exposition format. */
  async exposition(): Promise<string> {
    this.scrapes++;
    const parts = [await this.registry.metrics()];
    for (const family of this.families) {
      const lines = [
        `# HELP ${family.name} ${escapeHelp(family.help)}`,
        `# TYPE ${family.name} ${family.type}`,
      ];
      family.collect({
        series: (labels, value) => lines.push(seriesLine(family.name, labels, value)),
        lines: (text) => lines.push(text),
      });
      parts.push(`${lines.join('\n')}\n`);
    }
    return parts.join('');
  }
}

/** Label pairs as exposition text: `a="x",b="y"`, values escaped. */
export function labelText(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([name, value]) => `${name}="${escapeLabelValue(value)}"`)
    .join(',');
}

/** A label value escaped for the text format: backslash, double quote, line feed. */
export function escapeLabelValue(value: string): string {
  return /[\\"\n]/.test(value)
    ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
    : value;
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}
