// Draws a topology as SVG built with DOM calls (no markup strings): node frames, links heat-coloured by
// utilisation, vertices by kind, and an optional overlay of one channel's ring or tree.
import { formatBytes, asBytes } from '../../src/engine/index';
import type { ChannelPath, TopologyData, TopologyLink, TopologyVertex } from '../../src/protocol';
import { cssRgba, mix, readableColor, resolveColor, themeVar } from '../shared/theme';
import { layoutTopology, undirectedLinks, type Point } from './model';
import { t } from '../shared/strings';

const SVG = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number> = {},
  title?: string,
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  if (title !== undefined) {
    const tooltip = document.createElementNS(SVG, 'title');
    tooltip.textContent = title;
    element.append(tooltip);
  }
  return element;
}

/** Utilisation 0 → green, 0.5 → yellow, 1 → red, from the theme's chart colours; unused links are faint grey. */
export function heatColour(utilisation: number): string {
  if (!(utilisation > 0)) return cssRgba(resolveColor(themeVar('--vscode-charts-lines'), '#808080'), 0.45);
  const green = readableColor(resolveColor(themeVar('--vscode-charts-green'), '#89d185'));
  const yellow = readableColor(resolveColor(themeVar('--vscode-charts-yellow'), '#cca700'));
  const red = readableColor(resolveColor(themeVar('--vscode-charts-red'), '#f14c4c'));
  const u = Math.min(1, utilisation);
  return cssRgba(u < 0.5 ? mix(green, yellow, u / 0.5) : mix(yellow, red, (u - 0.5) / 0.5), 1);
}

const VERTEX_SIZE: Readonly<Record<TopologyVertex['kind'], [number, number]>> = {
  gpu: [34, 22],
  switch: [120, 18],
  'pcie-switch': [40, 14],
  cpu: [40, 16],
  host: [40, 16],
  nic: [22, 12],
};
const VERTEX_COLOUR_VAR: Readonly<Record<TopologyVertex['kind'], [string, string]>> = {
  gpu: ['--vscode-charts-blue', '#3794ff'],
  switch: ['--vscode-charts-purple', '#b180d7'],
  'pcie-switch': ['--vscode-charts-foreground', '#cccccc'],
  cpu: ['--vscode-charts-foreground', '#cccccc'],
  host: ['--vscode-charts-foreground', '#cccccc'],
  nic: ['--vscode-charts-orange', '#d18616'],
};

function shortLabel(label: string): string {
  const parts = label.split('·');
  return parts[parts.length - 1].trim();
}

function linkTitle(pair: { links: TopologyLink[]; utilisation: number }, bytes: ReadonlyMap<string, number>): string {
  return pair.links
    .map(
      (l) =>
        `${l.id} · ${l.kind} · ${l.GBps} GB/s · ${t('{0} % busy', (100 * pair.utilisation).toFixed(0))}${bytes.get(l.id) ? ` · ${formatBytes(asBytes(bytes.get(l.id)!))}` : ''}`,
    )
    .join('\n');
}

export interface RenderInput {
  readonly data: TopologyData;
  readonly utilisation: ReadonlyMap<string, number>;
  readonly bytes: ReadonlyMap<string, number>;
  readonly channel?: ChannelPath;
}

export function renderTopology(input: RenderInput): SVGSVGElement {
  const { data } = input;
  const layout = layoutTopology(data.vertices);
  const root = svg('svg', {
    class: 'topology',
    viewBox: `0 0 ${layout.width} ${layout.height}`,
    preserveAspectRatio: 'xMidYMid meet',
    role: 'img',
  });
  root.setAttribute('aria-label', data.label);
  const foreground = cssRgba(resolveColor(themeVar('--vscode-foreground'), '#cccccc'));
  const muted = cssRgba(resolveColor(themeVar('--vscode-descriptionForeground'), '#9d9d9d'));
  const background = cssRgba(resolveColor(themeVar('--vscode-editor-background'), '#1e1e1e'));
  const highlight = cssRgba(readableColor(resolveColor(themeVar('--vscode-focusBorder'), '#007fd4')));
  const defs = svg('defs');
  const marker = svg('marker', {
    id: 'arrow',
    viewBox: '0 0 10 10',
    refX: 9,
    refY: 5,
    markerWidth: 6,
    markerHeight: 6,
    orient: 'auto-start-reverse',
  });
  marker.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: highlight }));
  defs.append(marker);
  root.append(defs);

  const frames = svg('g', { class: 'nodes' });
  for (const box of layout.nodes) {
    frames.append(
      svg('rect', {
        x: box.x,
        y: box.y,
        width: box.width,
        height: box.height,
        rx: 6,
        fill: 'none',
        stroke: muted,
        'stroke-opacity': 0.5,
      }),
    );
    const caption = svg('text', { x: box.x + 8, y: box.y + 14, fill: muted, 'font-size': 11 });
    caption.textContent = t('node {0}', box.node);
    frames.append(caption);
  }
  root.append(frames);

  const at = (id: string): Point | undefined => layout.positions.get(id);
  const links = svg('g', { class: 'links' });
  for (const pair of undirectedLinks(data.links, input.utilisation)) {
    const a = at(pair.a);
    const b = at(pair.b);
    if (!a || !b) continue;
    const GBps = Math.max(...pair.links.map((l) => l.GBps));
    links.append(
      svg(
        'line',
        {
          x1: a.x,
          y1: a.y,
          x2: b.x,
          y2: b.y,
          stroke: heatColour(pair.utilisation),
          'stroke-width': 1 + Math.log10(1 + GBps),
          'data-link': pair.links.map((l) => l.id).join(' '),
          'data-utilisation': pair.utilisation.toFixed(3),
        },
        linkTitle(pair, input.bytes),
      ),
    );
  }
  root.append(links);

  if (input.channel) {
    const overlay = svg('g', { class: 'channel-overlay', 'data-channel': input.channel.channel });
    const edges =
      input.channel.edges ?? input.channel.vertices.map((v, i, all) => [v, all[(i + 1) % all.length]] as const);
    for (const [from, to] of edges) {
      const a = at(from);
      const b = at(to);
      if (!a || !b || from === to) continue;
      // Offset each direction sideways so a pair's two directions stay distinguishable.
      const dx = b.x - a.x;
      const dy = b.y - a.y;
      const length = Math.hypot(dx, dy) || 1;
      const ox = (-dy / length) * 4;
      const oy = (dx / length) * 4;
      overlay.append(
        svg(
          'line',
          {
            x1: a.x + ox,
            y1: a.y + oy,
            x2: b.x + ox - (dx / length) * 12,
            y2: b.y + oy - (dy / length) * 12,
            stroke: highlight,
            'stroke-width': 2,
            'marker-end': 'url(#arrow)',
            'stroke-dasharray': '5 3',
          },
          t('channel {0}: {1} → {2}', input.channel.channel, from, to),
        ),
      );
    }
    root.append(overlay);
  }

  const vertices = svg('g', { class: 'vertices' });
  for (const vertex of data.vertices) {
    const p = at(vertex.id);
    if (!p) continue;
    const [fullWidth, h] = VERTEX_SIZE[vertex.kind] ?? [30, 16];
    const w = vertex.node < 0 ? Math.min(fullWidth, layout.fabricSpacing - 8) : fullWidth;
    const [variable, fallback] = VERTEX_COLOUR_VAR[vertex.kind] ?? VERTEX_COLOUR_VAR.cpu;
    const group = svg(
      'g',
      { class: `vertex ${vertex.kind}`, 'data-vertex': vertex.id },
      `${vertex.label} (${vertex.kind})`,
    );
    group.append(
      svg('rect', {
        x: p.x - w / 2,
        y: p.y - h / 2,
        width: w,
        height: h,
        rx: 3,
        fill: background,
        stroke: cssRgba(readableColor(resolveColor(themeVar(variable), fallback))),
        'stroke-width': 1.5,
      }),
    );
    if (vertex.kind === 'gpu' || vertex.kind === 'switch') {
      const text = svg('text', { x: p.x, y: p.y + 4, fill: foreground, 'font-size': 9, 'text-anchor': 'middle' });
      text.textContent = shortLabel(vertex.label);
      group.append(text);
    }
    vertices.append(group);
  }
  root.append(vertices);
  return root;
}
