/**
 * The bench's SVG chart: the goals' ratios (median bar, min–max whisker, goal tick) and, below,
 * each target against the hand-written loop in the scenarios where this runner is compared with
 * its peers (log scale: the peers' ratios go from about 1 to over 100).
 */
export interface Bar {
  label: string;
  median: number;
  min: number;
  max: number;
  limit: number;
}
/** One scenario of the comparison: a bar per target. */
export interface Group {
  label: string;
  bars: Array<{ target: string; median: number; min: number; max: number }>;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const labelWidth = 470;
const plotWidth = 380;
const width = labelWidth + plotWidth + 30;
const rowHeight = 26;
const top = 40;

function goalsPanel(bars: Bar[]): { parts: string[]; height: number } {
  const height = top + bars.length * rowHeight + 40;
  const scaleMax = Math.max(2, ...bars.map((bar) => bar.max), ...bars.map((bar) => (Number.isNaN(bar.limit) ? 0 : bar.limit)));
  const x = (value: number) => labelWidth + (value / scaleMax) * plotWidth;
  const parts = [`<text x="10" y="22" font-size="14" font-weight="bold">tool-runner bench: ratios (1 = baseline; blue = ours, grey = SDK reference; red tick = goal)</text>`];
  bars.forEach((bar, i) => {
    const y = top + i * rowHeight;
    const reference = Number.isNaN(bar.limit);
    const met = reference || bar.median <= bar.limit;
    const fill = reference ? '#9aa0a6' : met ? '#1a73e8' : '#d93025';
    parts.push(`<text x="${labelWidth - 8}" y="${y + 15}" text-anchor="end">${escape(bar.label)}</text>`);
    parts.push(`<rect x="${labelWidth}" y="${y + 4}" width="${Math.max(1, x(bar.median) - labelWidth)}" height="16" fill="${fill}"/>`);
    parts.push(`<line x1="${x(bar.min)}" x2="${x(bar.max)}" y1="${y + 12}" y2="${y + 12}" stroke="black"/>`);
    if (!reference) parts.push(`<line x1="${x(bar.limit)}" x2="${x(bar.limit)}" y1="${y + 1}" y2="${y + 23}" stroke="#d93025" stroke-width="2"/>`);
    parts.push(`<text x="${x(bar.max) + 4}" y="${y + 15}">${bar.median.toFixed(2)}</text>`);
  });
  const axisY = top + bars.length * rowHeight + 8;
  parts.push(`<line x1="${labelWidth}" x2="${labelWidth + plotWidth}" y1="${axisY}" y2="${axisY}" stroke="black"/>`);
  for (let tick = 0; tick <= scaleMax; tick += 0.5) {
    parts.push(`<text x="${x(tick)}" y="${axisY + 16}" text-anchor="middle">${tick}</text>`);
  }
  return { parts, height };
}

const COLOURS = ['#1a73e8', '#9aa0a6', '#e8710a', '#188038', '#a142f4', '#d01884', '#12b5cb', '#5f6368'];

function peersPanel(groups: Group[], columns: string[]): { parts: string[]; height: number } {
  const barHeight = 12;
  const groupHeight = (group: Group) => group.bars.length * barHeight + 14;
  const scaleMax = 10 ** Math.ceil(Math.log10(Math.max(10, ...groups.flatMap((group) => group.bars.map((bar) => bar.max)))));
  const scaleMin = 0.5;
  const x = (value: number) => labelWidth + (Math.log10(Math.max(scaleMin, value) / scaleMin) / Math.log10(scaleMax / scaleMin)) * plotWidth;
  const colour = (target: string) => COLOURS[columns.indexOf(target) % COLOURS.length]!;
  const parts = [`<text x="10" y="22" font-size="14" font-weight="bold">Against the peers: each target ÷ its hand-written loop (log scale; median, min–max)</text>`];
  columns.forEach((column, i) => {
    parts.push(`<rect x="${10 + i * 140}" y="30" width="10" height="10" fill="${colour(column)}"/>`, `<text x="${24 + i * 140}" y="39">${escape(column)}</text>`);
  });
  let y = top + 16;
  for (const group of groups) {
    parts.push(`<text x="${labelWidth - 8}" y="${y + (group.bars.length * barHeight) / 2 + 4}" text-anchor="end">${escape(group.label)}</text>`);
    group.bars.forEach((bar, i) => {
      const barY = y + i * barHeight;
      parts.push(`<rect x="${labelWidth}" y="${barY + 1}" width="${Math.max(1, x(bar.median) - labelWidth)}" height="${barHeight - 2}" fill="${colour(bar.target)}"/>`);
      parts.push(`<line x1="${x(bar.min)}" x2="${x(bar.max)}" y1="${barY + barHeight / 2}" y2="${barY + barHeight / 2}" stroke="black"/>`);
      parts.push(`<text x="${x(bar.max) + 4}" y="${barY + barHeight - 2}" font-size="10">${bar.median.toFixed(bar.median < 10 ? 2 : 0)}</text>`);
    });
    y += groupHeight(group);
  }
  const axisY = y + 4;
  parts.push(`<line x1="${labelWidth}" x2="${labelWidth + plotWidth}" y1="${axisY}" y2="${axisY}" stroke="black"/>`);
  parts.push(`<line x1="${x(1)}" x2="${x(1)}" y1="${top + 16}" y2="${axisY}" stroke="#5f6368" stroke-dasharray="3,3"/>`);
  for (let tick = 1; tick <= scaleMax; tick *= 10) parts.push(`<text x="${x(tick)}" y="${axisY + 16}" text-anchor="middle">${tick}</text>`);
  return { parts, height: axisY + 30 };
}

/** The chart: the goals, then the peers (when there are any). */
export function chart(bars: Bar[], groups: Group[] = [], columns: string[] = []): string {
  const panels = [goalsPanel(bars), ...(groups.length ? [peersPanel(groups, columns)] : [])];
  const height = panels.reduce((sum, panel) => sum + panel.height, 0);
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`, `<rect width="100%" height="100%" fill="white"/>`];
  let offset = 0;
  for (const panel of panels) {
    parts.push(`<g transform="translate(0,${offset})">`, ...panel.parts, '</g>');
    offset += panel.height;
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
