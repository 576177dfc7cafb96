// Entry point of the topology panel: the system's GPUs, switches and NICs with their links heat-coloured by a
// trace's utilisation, and a channel picker that overlays one ring or tree.
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import type { ChannelPath, TopologyData, TopologyState } from '../../src/protocol';
import { el } from '../shared/dom';
import { t } from '../shared/strings';
import { onThemeChange } from '../shared/theme';
import { loadState, onHostMessage, post, saveState } from '../shared/vscode-api';
import { channelsFromTrace, linkUtilisation } from './model';
import { heatColour, renderTopology } from './render';

const app = document.getElementById('app')!;
const title = el('span', { class: 'title' }, t('Topology'));
const channelSelect = el('vscode-single-select', {
  class: 'channel',
  'aria-label': t('Channel overlay'),
}) as HTMLElement & { value: string };
const legend = el('span', { class: 'legend' });
const wrap = el('div', { class: 'topology-wrap' });
const message = el('div', { class: 'message' }, t('Waiting for a topology…'));
app.append(el('div', { class: 'toolbar' }, title, legend, channelSelect), message, wrap);

interface Shown {
  data: TopologyData;
  utilisation: Map<string, number>;
  bytes: Map<string, number>;
  channels: readonly ChannelPath[];
  channel: number;
}
let shown: Shown | undefined;

function drawLegend(): void {
  legend.replaceChildren(
    ...[0, 0.25, 0.5, 0.75, 1].map((u) => {
      const swatch = el('span', { class: 'swatch' });
      swatch.style.background = heatColour(u === 0 ? 0 : u);
      return el('span', {}, swatch, u === 0 ? t('idle') : `${u * 100} %`);
    }),
  );
}

function draw(): void {
  if (!shown) return;
  const { data, utilisation, bytes, channels, channel } = shown;
  title.textContent = data.label;
  message.hidden = true;
  drawLegend();
  wrap.replaceChildren(
    renderTopology({ data, utilisation, bytes, channel: channels.find((c) => c.channel === channel) }),
  );
}

function show(data: TopologyData, channel = -1): void {
  const computed = data.trace ? linkUtilisation(data.trace, data.links) : undefined;
  const utilisation = new Map(Object.entries(data.utilisation ?? {}).filter(([, v]) => Number.isFinite(v)));
  const channels = data.channels ?? (data.trace ? channelsFromTrace(data.trace, data.links) : []);
  const current: Shown = {
    data,
    utilisation: data.utilisation ? utilisation : (computed?.utilisation ?? utilisation),
    bytes: computed?.bytes ?? new Map(),
    channels,
    channel,
  };
  shown = current;
  channelSelect.replaceChildren(
    el('vscode-option', { value: '-1' }, t('No channel overlay')),
    ...channels.map((c) =>
      el('vscode-option', { value: String(c.channel) }, t('channel {0} · {1}', c.channel, c.kind)),
    ),
  );
  channelSelect.value = String(channel);
  draw();
  // The state keeps what is needed to redraw, without the trace, which may be large.
  saveState({
    panel: 'topology',
    channel,
    data: { ...data, trace: undefined, utilisation: Object.fromEntries(current.utilisation), channels },
  });
}

channelSelect.addEventListener('change', () => {
  if (!shown) return;
  shown.channel = Number(channelSelect.value);
  draw();
  const state = loadState<TopologyState>('topology');
  if (state) saveState({ ...state, channel: shown.channel });
});

onHostMessage((msg) => {
  if (msg.type === 'topology') show(msg.data);
  else if (msg.type === 'theme') draw();
  else if (msg.type === 'error') {
    message.textContent = msg.message;
    message.className = 'message error';
    message.hidden = false;
  }
});
onThemeChange(draw);

const saved = loadState<TopologyState>('topology');
if (saved?.data) show(saved.data, saved.channel ?? -1);
post({ type: 'ready', panel: 'topology' });
