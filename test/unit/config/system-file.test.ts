// System files: the shipped examples parse and round-trip, the schema matches the SystemSpec type, and every
// kind of mistake comes back as a ConfigError with the line and column of the culprit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import {
  GPU_CATALOGUE,
  type IntraNodeFabric,
  type NetworkSpec,
  type NicSpec,
  type SystemOverrides,
  type SystemSpec,
} from '../../../src/engine/index';
import { ConfigError } from '../../../src/config/positioned';
import { loadSystemFile, parseSystemFile, SYSTEM_SCHEMA } from '../../../src/config/system-file';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const EXAMPLES = join(ROOT, 'examples', 'systems');

function rejection(text: string, fileName = 'bad.yaml'): ConfigError {
  try {
    parseSystemFile(text, fileName);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${fileName} to be rejected:\n${text}`);
}

const GOOD = [
  'gpu: H100-SXM',
  'nodes: 2',
  'gpusPerNode: 8',
  'intraNode: nvswitch',
  'nic:',
  '  gbps: 400',
  '  perNode: 8',
  '',
].join('\n');

test('every example system file parses, resolves, and round-trips through YAML and JSON', () => {
  const files = readdirSync(EXAMPLES).filter((f) => /\.(ya?ml|json)$/.test(f));
  assert.ok(files.length >= 4, `expected the shipped examples, found ${files.join(', ')}`);
  for (const file of files) {
    const { spec, system } = loadSystemFile(readFileSync(join(EXAMPLES, file), 'utf8'), file);
    assert.equal(system.ranks, spec.nodes * spec.gpusPerNode, file);
    assert.ok(!('$schema' in spec), `${file}: $schema must not leak into the spec`);
    assert.deepEqual(parseSystemFile(stringify(spec), 'again.yaml'), spec, `${file} through YAML`);
    assert.deepEqual(parseSystemFile(JSON.stringify(spec, null, 2), 'again.json'), spec, `${file} through JSON`);
  }
});

test('the YAML and JSON versions of the same machine give the same spec', () => {
  const fromYaml = parseSystemFile(readFileSync(join(EXAMPLES, 'dgx-h100-2node.yaml'), 'utf8'), 'dgx-h100-2node.yaml');
  const fromJson = parseSystemFile(readFileSync(join(EXAMPLES, 'dgx-h100-2node.json'), 'utf8'), 'dgx-h100-2node.json');
  assert.deepEqual(fromYaml, fromJson);
  assert.equal(fromYaml.gpu, 'H100-SXM');
  assert.deepEqual(fromYaml.nic, { gbps: 400, perNode: 8 });
});

test('GPU names are case-insensitive', () => {
  assert.equal(parseSystemFile(GOOD.replace('H100-SXM', 'h100-sxm'), 'lower.yaml').gpu, 'h100-sxm');
});

test('a missing field is reported with its line and column', () => {
  const error = rejection(GOOD.replace('gpusPerNode: 8\n', ''));
  assert.equal(error.toString(), "bad.yaml:1:1: missing required key 'gpusPerNode'");
  const nic = rejection(GOOD.replace('  perNode: 8\n', ''));
  assert.equal(nic.toString(), "bad.yaml:6:3: missing required key 'perNode' in nic");
});

test('a negative bandwidth is reported at the value', () => {
  const error = rejection(GOOD + 'overrides:\n  nvlinkGBpsPerLink: -20\n');
  assert.equal(error.toString(), 'bad.yaml:9:22: overrides.nvlinkGBpsPerLink: must be greater than 0 (got -20)');
  assert.equal(
    rejection(GOOD.replace('gbps: 400', 'gbps: 0')).toString(),
    'bad.yaml:6:9: nic.gbps: must be greater than 0 (got 0)',
  );
});

test("ncclVersion picks the release's tuner, and a malformed one is reported at the value", () => {
  const { system } = loadSystemFile(GOOD + 'ncclVersion: "2.26.2"\n', 'good.yaml');
  assert.deepEqual([system.tuner.tables, system.tuner.version], ['2.27', '2.26.2']);
  const error = rejection(GOOD + 'ncclVersion: latest\n');
  assert.match(error.toString(), /^bad\.yaml:8:14: ncclVersion: /);
});

test('an unknown GPU is reported at the value with a suggestion and the catalogue', () => {
  const error = rejection(GOOD.replace('H100-SXM', 'H100-SMX'));
  assert.equal(error.line, 1);
  assert.equal(error.column, 6);
  assert.match(error.message, /^gpu: unknown GPU 'H100-SMX' \(did you mean 'H100-SXM'\?\); known GPUs: /);
  for (const gpu of GPU_CATALOGUE) assert.ok(error.message.includes(gpu.name), `catalogue name ${gpu.name} listed`);
});

test('a non-integer node count is reported at the value', () => {
  assert.equal(
    rejection(GOOD.replace('nodes: 2', 'nodes: 2.5')).toString(),
    'bad.yaml:2:8: nodes: must be an integer (got 2.5)',
  );
  assert.equal(
    rejection(GOOD.replace('nodes: 2', 'nodes: two')).toString(),
    "bad.yaml:2:8: nodes: must be an integer (got 'two')",
  );
  assert.equal(
    rejection(GOOD.replace('nodes: 2', 'nodes: 0')).toString(),
    'bad.yaml:2:8: nodes: must be at least 1 (got 0)',
  );
});

test('malformed YAML and JSON are reported with a position', () => {
  const yaml = rejection('gpu: H100-SXM\nnodes: [2\ngpusPerNode: 8\n');
  assert.match(yaml.toString(), /^bad\.yaml:\d+:\d+: invalid YAML: /);
  assert.ok(yaml.line >= 2);
  const json = rejection('{\n  "gpu": "H100-SXM",\n  "nodes": 2\n  "gpusPerNode": 8\n}', 'bad.json');
  assert.equal(json.toString(), "bad.json:4:3: invalid JSON: expected ',' or '}' but found '\"'");
});

test('typos in keys and fabric names get a did-you-mean', () => {
  assert.equal(
    rejection(GOOD.replace('gpusPerNode', 'gpusPerNod')).toString(),
    "bad.yaml:3:1: unknown key 'gpusPerNod' (did you mean 'gpusPerNode'?)",
  );
  assert.match(
    rejection(GOOD.replace('intraNode: nvswitch', 'intraNode: nvswich')).toString(),
    /^bad\.yaml:4:12: intraNode: must be one of .*\(did you mean 'nvswitch'\?\)$/,
  );
});

test('several nodes without a network are refused at the node count', () => {
  const error = rejection(GOOD.split('nic:')[0]);
  assert.equal(error.line, 2);
  assert.match(error.message, /needs? a 'nic' section/);
});

test('the schema lists exactly the SystemSpec keys, fabrics and override names', () => {
  const schema = SYSTEM_SCHEMA as {
    required: string[];
    properties: Record<string, { enum?: unknown[]; properties?: Record<string, unknown>; examples?: string[] }>;
  };
  // These records fail to compile when a key is added to or removed from the TypeScript types.
  const specKeys: Record<keyof SystemSpec, true> = {
    name: true,
    gpu: true,
    nodes: true,
    gpusPerNode: true,
    gpusPerProcess: true,
    intraNode: true,
    nvls: true,
    p2p: true,
    p2pLevel: true,
    cpuVendor: true,
    pcieGen: true,
    gpusPerSocket: true,
    gpusPerPcieSwitch: true,
    nic: true,
    network: true,
    ncclVersion: true,
    overrides: true,
  };
  const fabrics: Record<IntraNodeFabric, true> = {
    nvswitch: true,
    'nvlink-mesh': true,
    'nvlink-bridge': true,
    pcie: true,
    'uniform-ring': true,
  };
  const nicKeys: Record<keyof NicSpec, true> = {
    gbps: true,
    perNode: true,
    latencyUs: true,
    path: true,
    gdrLevel: true,
  };
  const networkKeys: Record<keyof NetworkSpec, true> = {
    nodesPerLeaf: true,
    oversubscription: true,
    switchLatencyUs: true,
    sharp: true,
  };
  const overrideKeys: Record<keyof SystemOverrides, true> = {
    nvlinkGBpsPerLink: true,
    nvlinkLinks: true,
    pcieGBps: true,
    interSocketGBps: true,
    nicGBps: true,
    hbmGBps: true,
    linkGBps: true,
    nvlinkLatencyUs: true,
    pcieLatencyUs: true,
    nicLatencyUs: true,
    linkLatencyUs: true,
    launchUs: true,
  };
  assert.deepEqual(
    Object.keys(schema.properties)
      .filter((k) => k !== '$schema')
      .sort(),
    Object.keys(specKeys).sort(),
  );
  assert.deepEqual([...(schema.properties.intraNode.enum ?? [])].sort(), Object.keys(fabrics).sort());
  assert.deepEqual(Object.keys(schema.properties.nic.properties ?? {}).sort(), Object.keys(nicKeys).sort());
  assert.deepEqual(Object.keys(schema.properties.overrides.properties ?? {}).sort(), Object.keys(overrideKeys).sort());
  assert.deepEqual(Object.keys(schema.properties.network.properties ?? {}).sort(), Object.keys(networkKeys).sort());
  assert.deepEqual(schema.required.sort(), ['gpu', 'gpusPerNode', 'intraNode', 'nodes']);
  assert.deepEqual([...(schema.properties.gpu.examples ?? [])].sort(), GPU_CATALOGUE.map((g) => g.name).sort());
});

test('network keys are checked at their values and reach the leaf/spine links', () => {
  assert.match(
    rejection(GOOD + 'network:\n  oversubscription: 0.5\n').toString(),
    /^bad\.yaml:9:21: network\.oversubscription: must be at least 1 \(got 0\.5\)$/,
  );
  assert.match(rejection(GOOD + 'network:\n  nodesPerLeaf: 0\n').toString(), /^bad\.yaml:9:17: network\.nodesPerLeaf/);
  assert.match(
    rejection(GOOD + 'network:\n  switchLatencyUs: -1\n').toString(),
    /^bad\.yaml:9:20: network\.switchLatencyUs/,
  );
  assert.match(rejection(GOOD + 'network:\n  spineGBps: 1\n').toString(), /spineGBps/);
  const { system } = loadSystemFile(GOOD + 'network:\n  oversubscription: 4\n  switchLatencyUs: 0.7\n', 'ok.yaml');
  const uplinks = system.topology.links.filter((l) => l.from.startsWith('rail') && l.to === 'spine');
  assert.equal(uplinks.length, 8);
  for (const link of uplinks) {
    assert.equal(link.latencyUs, 0.7);
    // Two nodes' NICs under the leaf, a quarter of their bandwidth up to the spine.
    assert.ok(Math.abs(link.GBps - (2 * 50 * 0.99) / 4) < 1e-9, String(link.GBps));
  }
});

test('a node may have more NICs than GPUs: each GPU gets its share on its PCIe switch', () => {
  const { system } = loadSystemFile(GOOD.replace('perNode: 8', 'perNode: 16'), 'ok.yaml');
  assert.equal(system.fabric.nicsPerNode, 16);
  assert.deepEqual(system.fabric.gpuNics[3], [6, 7]);
  assert.equal(system.fabric.nicGpu[7], 3);
  const shared = loadSystemFile(GOOD.replace('perNode: 8', 'perNode: 2'), 'ok.yaml').system;
  assert.deepEqual(
    shared.fabric.gpuNics.map((nics) => nics[0]),
    [0, 0, 0, 0, 1, 1, 1, 1],
  );
});
