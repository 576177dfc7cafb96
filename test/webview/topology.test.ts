// The topology bundle in headless Chromium: a simulated DGX H100 pair with a ring trace draws every vertex and
// link, colours the links the ring used by utilisation, overlays a channel, and shows labels as text.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  channelPaths,
  presetSystem,
  resolveSystem,
  simulateCollective,
  asBytes,
  asGBps,
  asMicros,
} from '../../src/engine/index';
import type { TopologyData } from '../../src/protocol';
import { linkUtilisation, undirectedLinks } from '../../webview/topology/model';
import { chromiumMissing, openPanel, type PanelPage } from './harness';
declare const window: any;
declare const document: any;

const skip = chromiumMissing();
let panel: PanelPage;

function topology(): TopologyData {
  const spec = presetSystem('dgx-h100', { nodes: 2 })!;
  const system = resolveSystem(spec);
  const trace = simulateCollective(spec, { bytes: asBytes(64 * 2 ** 20), algorithm: 'ring', trace: true }).trace!;
  return { label: system.label, vertices: system.topology.vertices, links: system.topology.links, trace };
}

before(async () => {
  if (skip) return;
  panel = await openPanel('topology');
});
after(async () => {
  await panel?.close();
});

test('every vertex and link draws, and the links the ring used are heat-coloured', { skip }, async () => {
  const data = topology();
  await panel.send({ type: 'topology', data });
  await panel.page.waitForSelector('svg.topology');
  const counts = await panel.page.evaluate(() => ({
    vertices: document.querySelectorAll('g.vertex').length,
    links: document.querySelectorAll('g.links line').length,
    busy: [...document.querySelectorAll('g.links line')]
      .filter((l: any) => Number(l.getAttribute('data-utilisation')) > 0)
      .map((l: any) => l.getAttribute('data-link')),
    colours: new Set([...document.querySelectorAll('g.links line')].map((l: any) => l.getAttribute('stroke'))).size,
    title: document.querySelector('.toolbar .title').textContent,
  }));
  assert.equal(counts.vertices, data.vertices.length);
  const expected = linkUtilisation(data.trace!, data.links);
  const pairs = undirectedLinks(data.links, expected.utilisation);
  assert.equal(counts.links, pairs.length);
  const busyPairs = pairs
    .filter((p) => p.utilisation > 0)
    .map((p) => p.links.map((l) => l.id).join(' '))
    .sort();
  assert.ok(busyPairs.length >= 8, `the ring used at least 8 link pairs (${busyPairs.length})`);
  assert.deepEqual(counts.busy.sort(), busyPairs);
  assert.ok(counts.colours >= 2, 'idle and busy links differ in colour');
  assert.equal(counts.title, data.label);
  assert.deepEqual(panel.errors(), []);
  assert.deepEqual(await panel.cspViolations(), []);
});

test('choosing a channel overlays the links that channel used', { skip }, async () => {
  const options = await panel.page.$$eval('vscode-option', (els: any[]) => els.map((e) => e.textContent));
  assert.equal(options[0], 'No channel overlay');
  assert.ok(options.length >= 2, `channels offered: ${options.join(', ')}`);
  await panel.page.evaluate(() => {
    const select = document.querySelector('vscode-single-select');
    select.value = '0';
    select.dispatchEvent(new Event('change'));
  });
  await panel.page.waitForSelector('g.channel-overlay[data-channel="0"]');
  const arrows = await panel.page.$$eval('g.channel-overlay line', (els: any[]) => els.length);
  assert.ok(arrows >= 2, `channel 0 draws ${arrows} arrows`);
  const state = await panel.page.evaluate(() => window.__state);
  assert.equal(state.channel, 0);
  assert.equal(state.data.trace, undefined, 'the state leaves the trace out');
});

test(
  'channels from the engine: one option per channel, and choosing a tree channel draws its parent → child edges',
  { skip },
  async () => {
    const spec = presetSystem('dgx-a100', { nodes: 2 })!;
    const system = resolveSystem(spec);
    const channels = channelPaths(system, { bytes: asBytes(25 * 2 ** 20), algorithm: 'tree' });
    assert.ok(channels.length >= 2);
    await panel.send({
      type: 'topology',
      data: { label: system.label, vertices: system.topology.vertices, links: system.topology.links, channels },
    });
    await panel.page.waitForFunction(
      (n: number) => document.querySelectorAll('vscode-option').length === n + 1,
      channels.length,
    );
    const options = await panel.page.$$eval('vscode-option', (els: any[]) => els.map((e) => e.textContent));
    assert.deepEqual(
      options.slice(1),
      channels.map((c) => `channel ${c.channel} · tree`),
    );
    assert.equal(
      await panel.page.$$eval('g.channel-overlay', (els: any[]) => els.length),
      0,
      'no overlay until a channel is chosen',
    );
    await panel.page.evaluate(() => {
      const select = document.querySelector('vscode-single-select');
      select.value = '1';
      select.dispatchEvent(new Event('change'));
    });
    await panel.page.waitForSelector('g.channel-overlay[data-channel="1"]');
    const drawn = await panel.page.$$eval('g.channel-overlay line', (els: any[]) =>
      els.map((e) => e.textContent).sort(),
    );
    // 16 GPUs in one spanning tree: 15 edges, each an arrow titled with its parent and child.
    assert.equal(drawn.length, system.ranks - 1);
    assert.deepEqual(drawn, channels[1].edges.map(([a, b]) => `channel 1: ${a} → ${b}`).sort());
    const state = await panel.page.evaluate(() => window.__state);
    assert.equal(state.channel, 1);
    assert.equal(state.data.channels.length, channels.length, 'the saved state keeps the channels');
    assert.deepEqual(panel.errors(), []);
  },
);

test('vertex labels holding markup show as text', { skip }, async () => {
  const payload = '<img src=x onerror="window.__pwned=1">';
  await panel.send({
    type: 'topology',
    data: {
      label: payload,
      vertices: [
        { id: 'g0', kind: 'gpu', label: payload, node: 0 },
        { id: 'g1', kind: 'gpu', label: 'GPU 1', node: 0 },
      ],
      links: [{ id: 'g0->g1', from: 'g0', to: 'g1', GBps: asGBps(100), latencyUs: asMicros(1), kind: 'nvlink' }],
      utilisation: { 'g0->g1': 0.5 },
    },
  });
  await panel.page.waitForFunction(() => document.querySelectorAll('g.vertex').length === 2);
  const result = await panel.page.evaluate(() => ({
    images: document.querySelectorAll('img, svg image').length,
    pwned: window.__pwned,
    text: document.querySelector('g.vertex text').textContent,
  }));
  assert.deepEqual(result, { images: 0, pwned: undefined, text: payload });
});
