/**
 * The bench's results and how they are written: the markdown table on stdout (bench/results.md),
 * bench/results.json and bench/chart.svg.
 */
import { writeFileSync } from 'node:fs';
import { chart } from './chart.js';
import { median } from './scenarios.js';

/** Figures of one measure over the rounds. */
export type Series = number[];

export const summary = (values: Series) => {
  const finite = values.filter((value) => Number.isFinite(value));
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite) };
};
export const fmt = (values: Series, digits = 2) => {
  const { median, min, max } = summary(values);
  return `${median.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
};
/** Round-by-round ratios of two series of the same rounds. */
export const ratio = (a: Series, b: Series) => a.map((value, i) => value / b[i]!);

export interface Row {
  scenario: string;
  measure: string;
  figures: Record<string, Series>;
}
export interface Goal {
  name: string;
  ratios: Series;
  limit: number;
  description: string;
  /** Goals that are not ratios (KB, counts) are left out of the ratio chart. */
  notRatio?: true;
  /** Decimals shown (2 unless given). */
  digits?: number;
}
/** One scenario against the peers: each target's figure divided by its hand-written loop's, round by round. */
export interface Comparison {
  scenario: string;
  ratios: Record<string, Series>;
  /** A goal of the bench: this runner's highest ratio below every peer's lowest. */
  goal?: true;
  note?: string;
  /** Decimals shown (2 unless given): 3 where the targets are within 1% of each other. */
  digits?: number;
}

export interface Results {
  rows: Row[];
  goals: Goal[];
  comparisons: Comparison[];
  /** Each target's column in the comparison table, in order: this runner first. */
  columns: string[];
  /** The peers' packages and the versions measured. */
  versions: Record<string, string>;
}

/**
 * The goals against the peers: in each scenario that is one, this runner's highest ratio over the
 * rounds divided by the lowest of any peer's: below 1 when it is ahead of every peer in every round.
 */
export function aheadOfPeers(comparisons: Comparison[], ours: string, peers: string[]): Goal[] {
  return comparisons
    .filter((comparison) => comparison.goal)
    .flatMap((comparison): Goal[] => {
      const theirs = peers.filter((peer) => comparison.ratios[peer]?.length);
      if (!theirs.length) return [];
      const highest = summary(comparison.ratios[ours]!).max;
      const lowest = (peer: string) => summary(comparison.ratios[peer]!).min;
      const behind = theirs.filter((peer) => lowest(peer) <= highest);
      const not = behind.length ? ` (not ahead of ${behind.join(', ')})` : '';
      const name = `ahead of every peer, ${comparison.scenario}: ${ours}'s max ÷ the lowest peer min${not}`;
      return [{ name, ratios: [highest / Math.min(...theirs.map(lowest))], limit: 1, description: '< 1', notRatio: true, digits: 3 }];
    });
}

export function markdown(results: Results, heading: { smoke: boolean; environment: string }): string {
  const lines = [
    `# tool-runner bench (${heading.smoke ? 'smoke sizes' : 'full sizes'})`,
    '',
    `${heading.environment} Median (min–max) over the rounds.`,
    '',
    '| scenario | measure | target | figure |',
    '|---|---|---|---|',
  ];
  for (const row of results.rows) {
    for (const [target, values] of Object.entries(row.figures)) lines.push(`| ${row.scenario} | ${row.measure} | ${target} | ${fmt(values)} |`);
  }
  if (results.comparisons.length) {
    lines.push('', '## Against the peers', '');
    lines.push('Every target in a process of its own, its figure divided by that of a hand-written loop in a process of its own beside it, round by round (median (min–max) over the rounds; — : not run). The rows above for the loops on the SDK\'s client, other than the long ones, are measured in the bench\'s own process.', '');
    lines.push(`| scenario | ${results.columns.join(' | ')} | note |`, `|---|${results.columns.map(() => '---|').join('')}---|`);
    for (const comparison of results.comparisons) {
      const cells = results.columns.map((column) => (comparison.ratios[column]?.length ? fmt(comparison.ratios[column]!, comparison.digits) : '—'));
      lines.push(`| ${comparison.scenario}${comparison.goal ? ' (goal)' : ''} | ${cells.join(' | ')} | ${comparison.note ?? ''} |`);
    }
    lines.push('', `Versions: ${Object.entries(results.versions).map(([name, version]) => `\`${name}\` ${version}`).join(', ')}.`);
  }
  lines.push('', '| goal | ratio, median (min–max) | limit | met |', '|---|---|---|---|');
  for (const goal of results.goals) {
    const met = Number.isNaN(goal.limit) ? '—' : summary(goal.ratios).median <= goal.limit ? 'yes' : '**no**';
    lines.push(`| ${goal.name} | ${fmt(goal.ratios, goal.digits)} | ${goal.description} | ${met} |`);
  }
  return lines.join('\n');
}

/** bench/results.json and bench/chart.svg (full runs only). */
export function writeResults(results: Results, meta: { date: string; node: string; cpus: number; seconds: number }) {
  const withSummary = (figures: Record<string, Series>) => Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, { ...summary(v), values: v }]));
  const json = {
    ...meta,
    versions: results.versions,
    rows: results.rows.map((row) => ({ ...row, figures: withSummary(row.figures) })),
    comparisons: results.comparisons.map((comparison) => ({ ...comparison, ratios: withSummary(comparison.ratios) })),
    goals: results.goals.map((goal) => ({ ...goal, ...summary(goal.ratios), met: Number.isNaN(goal.limit) ? null : summary(goal.ratios).median <= goal.limit })),
  };
  writeFileSync(new URL('./results.json', import.meta.url), `${JSON.stringify(json, null, 2)}\n`);
  const bars = results.goals.filter((goal) => !goal.notRatio).map((goal) => ({ label: goal.name, ...summary(goal.ratios), limit: goal.limit }));
  const groups = results.comparisons
    .filter((comparison) => comparison.goal)
    .map((comparison) => ({ label: comparison.scenario, bars: results.columns.filter((column) => comparison.ratios[column]?.length).map((column) => ({ target: column, ...summary(comparison.ratios[column]!) })) }));
  writeFileSync(new URL('./chart.svg', import.meta.url), chart(bars, groups, results.columns));
}
