import { writeFileSync } from 'node:fs';
import { launchChromium } from '../../test/harness/browser.ts';

/**
 * A scatter plot with lines, as SVG drawn here and rendered to PNG by headless Chromium (no
 * plotting library: one chart, a few series). Used for the turn policy's trade-off curve
 * (docs/turn-policy-tradeoff.png).
 */
export interface Series {
  name: string;
  colour: string;
  points: Array<{ x: number; y: number; label: string; marked?: boolean }>;
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Dashed guide lines, e.g. an aim. */
  guides?: Array<{ axis: 'x' | 'y'; at: number; label: string }>;
}

const W = 900;
const H = 560;
const M = { left: 80, right: 30, top: 50, bottom: 70 };

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function niceMax(v: number): number {
  const step = 10 ** Math.floor(Math.log10(Math.max(v, 1)));
  return Math.ceil(v / step) * step;
}

export function chartSvg(chart: Chart): string {
  const all = chart.series.flatMap((s) => s.points);
  const xMax = niceMax(Math.max(...all.map((p) => p.x), ...(chart.guides ?? []).filter((g) => g.axis === 'x').map((g) => g.at)) * 1.05);
  const yMax = Math.max(4, niceMax(Math.max(...all.map((p) => p.y)) * 1.1));
  const px = (x: number) => M.left + (x / xMax) * (W - M.left - M.right);
  const py = (y: number) => H - M.bottom - (y / yMax) * (H - M.top - M.bottom);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="13">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="28" text-anchor="middle" font-size="16">${esc(chart.title)}</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const x = (xMax / 5) * i;
    const y = (yMax / 5) * i;
    out.push(`<line x1="${px(x)}" y1="${py(0)}" x2="${px(x)}" y2="${py(yMax)}" stroke="#eee"/>`);
    out.push(`<text x="${px(x)}" y="${py(0) + 18}" text-anchor="middle">${Math.round(x)}</text>`);
    out.push(`<line x1="${px(0)}" y1="${py(y)}" x2="${px(xMax)}" y2="${py(y)}" stroke="#eee"/>`);
    out.push(`<text x="${px(0) - 8}" y="${py(y) + 4}" text-anchor="end">${Math.round(y * 10) / 10}</text>`);
  }
  out.push(`<line x1="${px(0)}" y1="${py(0)}" x2="${px(xMax)}" y2="${py(0)}" stroke="black"/>`);
  out.push(`<line x1="${px(0)}" y1="${py(0)}" x2="${px(0)}" y2="${py(yMax)}" stroke="black"/>`);
  out.push(`<text x="${(px(0) + px(xMax)) / 2}" y="${H - 22}" text-anchor="middle">${esc(chart.xLabel)}</text>`);
  out.push(`<text transform="translate(22 ${(py(0) + py(yMax)) / 2}) rotate(-90)" text-anchor="middle">${esc(chart.yLabel)}</text>`);
  for (const g of chart.guides ?? []) {
    const [x1, y1, x2, y2] = g.axis === 'x' ? [px(g.at), py(0), px(g.at), py(yMax)] : [px(0), py(g.at), px(xMax), py(g.at)];
    out.push(`<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="#999" stroke-dasharray="6 4"/>`);
    out.push(`<text x="${x1 + 4}" y="${Math.min(y1, y2) + 14}" fill="#666">${esc(g.label)}</text>`);
  }
  chart.series.forEach((s, i) => {
    const pts = [...s.points].sort((a, b) => a.x - b.x);
    out.push(`<polyline fill="none" stroke="${s.colour}" stroke-width="2" points="${pts.map((p) => `${px(p.x)},${py(p.y)}`).join(' ')}"/>`);
    for (const p of pts) {
      out.push(
        `<circle cx="${px(p.x)}" cy="${py(p.y)}" r="${p.marked ? 7 : 4}" fill="${p.marked ? 'white' : s.colour}" stroke="${s.colour}" stroke-width="2"/>`,
      );
      out.push(`<text x="${px(p.x) + 6}" y="${py(p.y) - 8 - i * 12}" fill="${s.colour}" font-size="11">${esc(p.label)}</text>`);
    }
    out.push(`<rect x="${M.left + 20}" y="${M.top + i * 22}" width="14" height="14" fill="${s.colour}"/>`);
    out.push(`<text x="${M.left + 40}" y="${M.top + 12 + i * 22}">${esc(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}

/** Renders the chart to a PNG file (headless Chromium). */
export async function writeChartPng(chart: Chart, file: string): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: W, height: H });
    await page.setContent(`<html><body style="margin:0">${chartSvg(chart)}</body></html>`);
    writeFileSync(file, await page.screenshot({ clip: { x: 0, y: 0, width: W, height: H } }));
  } finally {
    await browser.close();
  }
}
