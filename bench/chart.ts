/** A small SVG bar chart of the bench's ratios: median bar, min–max whisker, goal tick. */
export interface Bar {
  label: string;
  median: number;
  min: number;
  max: number;
  limit: number;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function barChart(bars: Bar[]): string {
  const labelWidth = 470;
  const plotWidth = 380;
  const rowHeight = 26;
  const top = 40;
  const height = top + bars.length * rowHeight + 40;
  const scaleMax = Math.max(2, ...bars.map((bar) => bar.max), ...bars.map((bar) => (Number.isNaN(bar.limit) ? 0 : bar.limit)));
  const x = (value: number) => labelWidth + (value / scaleMax) * plotWidth;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + plotWidth + 30}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="14" font-weight="bold">tool-runner bench: ratios (1 = baseline; blue = ours, grey = SDK reference; red tick = goal)</text>`,
  ];
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
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
