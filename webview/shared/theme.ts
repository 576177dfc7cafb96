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
};

export function phaseColor(phase: string): [number, number, number, number] {
  const [variable, fallback] = PHASE_COLOR_VARS[phase] ?? PHASE_COLOR_VARS.other;
  return resolveColor(themeVar(variable), fallback);
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
