// Reads VS Code's theme colours from the CSS variables it sets on the page, resolved to packed RGBA so the
// canvas renderers can write pixels directly, and tells the panels when the theme changes.

const resolved = new Map<string, [number, number, number, number]>();

/**
 * Resolves any CSS colour (name, hex, rgb()) to [r, g, b, a] by drawing it on a 1×1 canvas. The result depends
 * only on the strings given, so it is cached: renderers call this for every link and lane.
 */
export function resolveColor(css: string, fallback: string): [number, number, number, number] {
  const key = `${css}\u0000${fallback}`;
  const cached = resolved.get(key);
  if (cached) return [...cached];
  const value = drawColor(css, fallback);
  resolved.set(key, value);
  return [...value];
}

function drawColor(css: string, fallback: string): [number, number, number, number] {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
  ctx.fillStyle = fallback;
  ctx.fillStyle = css || fallback;
  ctx.fillRect(0, 0, 1, 1);
  const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;
  return [r, g, b, a];
}

/** The value of a theme variable such as --vscode-charts-blue, or '' when the theme does not define it. */
export function themeVar(name: string): string {
  return (
    getComputedStyle(document.documentElement).getPropertyValue(name).trim() ||
    getComputedStyle(document.body).getPropertyValue(name).trim()
  );
}

/** Packs a colour into the little-endian ABGR word an ImageData's Uint32Array view expects. */
export function packRgba([r, g, b, a]: readonly number[]): number {
  return ((a << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

export function cssRgba([r, g, b, a]: readonly number[], alpha = a / 255): string {
  return `rgba(${r}, ${g}, ${b}, ${alpha.toFixed(3)})`;
}

/** Mixes two colours, t = 0 gives `from`, for stripes and dimmed spans derived from the theme. */
export function mix(from: readonly number[], to: readonly number[], t: number): [number, number, number, number] {
  return [0, 1, 2, 3].map((i) => Math.round(from[i] + (to[i] - from[i]) * t)) as [number, number, number, number];
}

/** The phase palette: each phase maps to one of VS Code's chart colours. */
export const PHASE_COLOR_VARS: Readonly<Record<string, readonly [string, string]>> = {
  exchange: ['--vscode-charts-blue', '#3794ff'],
  reduce: ['--vscode-charts-orange', '#d18616'],
  broadcast: ['--vscode-charts-green', '#89d185'],
  compute: ['--vscode-charts-purple', '#b180d7'],
  collective: ['--vscode-charts-yellow', '#cca700'],
  optimizer: ['--vscode-charts-red', '#f14c4c'],
  other: ['--vscode-charts-foreground', '#cccccc'],
  // Not a phase: backward compute, so forward and backward passes read apart (VS Code has no eighth chart colour).
  backward: ['--vscode-terminal-ansiCyan', '#11a8cd'],
};

/** The phase's theme colour, made readable against the editor background (readableColor). */
export function phaseColor(phase: string): [number, number, number, number] {
  const [variable, fallback] = PHASE_COLOR_VARS[phase] ?? PHASE_COLOR_VARS.other;
  return readableColor(resolveColor(themeVar(variable), fallback));
}

/** Least contrast a series colour (a span, a line, a link) keeps against the background: WCAG's 3:1 for graphics. */
export const MIN_GRAPHIC_CONTRAST = 3;

/** WCAG relative luminance of an sRGB colour. */
export function luminance([r, g, b]: readonly number[]): number {
  const linear = (c: number): number => {
    const v = c / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** WCAG contrast ratio of two colours, from 1 (the same) to 21 (black on white). */
export function contrastRatio(a: readonly number[], b: readonly number[]): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
}

/**
 * The colour itself, opaque, when it keeps `minRatio` against `background` (the editor's, by default), else the same
 * hue darkened (on a light background) or lightened (on a dark one) just enough. Theme palettes are made for text on
 * their own background, not for thin lines: Light+'s yellow and orange are faint on white. A translucent theme colour
 * is taken at full opacity: Light and Dark Modern set no charts.orange, which VS Code then takes from the find-match
 * highlight, #EA5C0055, and a third of that orange was a faint peach on white and a dim brown on the dark theme.
 */
export function readableColor(
  colour: readonly number[],
  background: readonly number[] = resolveColor(themeVar('--vscode-editor-background'), '#1e1e1e'),
  minRatio = MIN_GRAPHIC_CONTRAST,
): [number, number, number, number] {
  const opaque = [colour[0], colour[1], colour[2], 255];
  const toward = luminance(background) > 0.5 ? [0, 0, 0, 255] : [255, 255, 255, 255];
  let result = opaque as [number, number, number, number];
  for (let t = 0.05; contrastRatio(result, background) < minRatio && t <= 1.0001; t += 0.05)
    result = mix(opaque, toward, t);
  return result;
}

/** Calls back when VS Code swaps the theme (it rewrites the body class and the root style attribute). */
export function onThemeChange(callback: () => void): void {
  let pending = false;
  const observer = new MutationObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      callback();
    });
  });
  observer.observe(document.body, { attributes: true, attributeFilter: ['class'] });
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
}
