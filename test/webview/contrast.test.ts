// Colours keep contrast in light and dark themes: every series colour the timeline and the charts draw with has a
// WCAG contrast ratio of at least 3:1 against the editor background (Light+'s yellow and orange are fainter as
// VS Code gives them). The ratio is computed here, independently of the panels' own code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DARK_THEME, chromiumMissing, openPanel, rgb } from './harness';
import { handBuiltTrace } from './fixtures';
import type { ChartsData } from '../../src/protocol';
// Callbacks passed to page.evaluate run in the browser; these names exist there, not in Node's typings.
declare const window: any;
declare const requestAnimationFrame: any;

const skip = chromiumMissing();

/** VS Code's Light+ theme, as its webviews see it. */
const LIGHT_THEME: Readonly<Record<string, string>> = {
  ...DARK_THEME,
  '--vscode-foreground': '#616161',
  '--vscode-descriptionForeground': '#717171',
  '--vscode-editor-background': '#ffffff',
  '--vscode-charts-blue': '#1a85ff',
  '--vscode-charts-orange': '#d18616',
  '--vscode-charts-green': '#388a34',
  '--vscode-charts-purple': '#652d90',
  '--vscode-charts-yellow': '#bf8803',
  '--vscode-charts-red': '#e51400',
  '--vscode-charts-foreground': '#616161',
  '--vscode-charts-lines': '#61616180',
  '--vscode-terminal-ansiCyan': '#0598bc',
  '--vscode-focusBorder': '#0090f1',
  '--vscode-editor-selectionBackground': '#add6ff',
};

/**
 * VS Code 1.139's Light Modern and Dark Modern as their webviews see them: neither theme sets charts.orange, which
 * VS Code then takes from editor.findMatchHighlightBackground, a translucent #EA5C0055. Drawn as given, it was the
 * faint peach of the reduce phase and the ring line on white (about 1.5:1) and a dim brown on the dark background.
 */
const LIGHT_MODERN: Readonly<Record<string, string>> = {
  ...LIGHT_THEME,
  '--vscode-foreground': '#3b3b3b',
  '--vscode-charts-orange': '#ea5c0055',
  '--vscode-charts-blue': '#005fb8',
};
const DARK_MODERN: Readonly<Record<string, string>> = {
  ...DARK_THEME,
  '--vscode-editor-background': '#1f1f1f',
  '--vscode-charts-orange': '#ea5c0055',
};

function luminance([r, g, b]: readonly number[]): number {
  const channel = (c: number): number => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}
function contrast(a: readonly number[], b: readonly number[]): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
/**
 * "rgba(1, 2, 3, 0.5)" or "rgb(1, 2, 3)" or "#010203" → [1, 2, 3] as drawn over `background`: a translucent colour
 * is composited first, since what the eye compares is the mixed pixel, not the colour's own channels.
 */
function parse(css: string, background: readonly number[]): number[] {
  if (css.startsWith('#')) return rgb(css);
  const [r, g, b, a = 1] = (css.match(/\d+(\.\d+)?/g) ?? []).map(Number);
  return [r, g, b].map((c, i) => a * c + (1 - a) * background[i]);
}

const CHARTS: ChartsData = {
  title: 'contrast',
  sweeps: ['auto', 'ring', 'tree', 'nvls', 'collnet', 'pat'].map((label, i) => ({
    label,
    rows: [1, 2, 3].map((k) => ({
      bytes: k * 2 ** 20,
      timeUs: 10 * k + i,
      algbwGBps: 10 + i,
      busbwGBps: 20 + i,
      algorithm: 'ring',
      protocol: 'Simple',
    })),
  })) as unknown as ChartsData['sweeps'],
};

for (const [name, kind, theme] of [
  ['light', 'light', LIGHT_THEME],
  ['dark', 'dark', DARK_THEME],
  ['Light Modern', 'light', LIGHT_MODERN],
  ['Dark Modern', 'dark', DARK_MODERN],
] as const) {
  const background = rgb(theme['--vscode-editor-background']);

  test(`${name} theme: every timeline colour keeps 3:1 against the background`, { skip }, async () => {
    const panel = await openPanel('timeline', { width: 900, height: 500 }, theme);
    try {
      // As the host does on "ready" (panel-wiring.ts): the theme first, then the trace.
      await panel.send({ type: 'theme', kind });
      await panel.send({ type: 'trace', trace: handBuiltTrace(), source: { uri: 'untitled:c', label: 'c' } });
      await panel.page.waitForFunction(() => window.collectiveProfilerTimeline.view.model !== undefined);
      // The theme observer redraws on the frame after the theme variables change.
      await panel.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
      const colours = (await panel.page.evaluate(() => {
        const { view } = window.collectiveProfilerTimeline;
        return Array.from({ length: 8 }, (_, key) => view.phaseCss(key));
      })) as string[];
      for (const [key, css] of colours.entries()) {
        const ratio = contrast(parse(css, background), background);
        assert.ok(ratio >= 3, `colour key ${key} ${css} has ${ratio.toFixed(2)}:1`);
      }
    } finally {
      await panel.close();
    }
  });

  test(`${name} theme: every chart series keeps 3:1 against the background`, { skip }, async () => {
    const panel = await openPanel('charts', { width: 900, height: 700 }, theme);
    try {
      await panel.send({ type: 'theme', kind });
      await panel.send({ type: 'charts', data: CHARTS });
      await panel.page.waitForSelector('section.card[data-chart="busbw"]');
      const colours = (await panel.page.evaluate(() => {
        const out: string[] = [];
        for (const chart of window.collectiveProfilerCharts.charts.values())
          for (const d of chart.data.datasets) out.push(String(d.borderColor));
        return out;
      })) as string[];
      assert.ok(colours.length >= 6, `${colours.length} series`);
      for (const css of colours) {
        const ratio = contrast(parse(css, background), background);
        assert.ok(ratio >= 3, `series ${css} has ${ratio.toFixed(2)}:1`);
      }
    } finally {
      await panel.close();
    }
  });
}

test("the check can fail: Light+'s own orange is under 3:1 on white (2.94:1)", () => {
  assert.ok(contrast(rgb(LIGHT_THEME['--vscode-charts-orange']), rgb('#ffffff')) < 3);
});
