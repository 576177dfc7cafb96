// Reads NCCL_DEBUG=INFO logs (NCCL 2.12 to 2.29 seen in the wild) into facts: version, ranks and nodes, the
// GPU/NVLink/NIC topology, channels, rings and trees, NVLS, the TUNING table and the per-call algorithm/protocol
// choices. Lines from different processes may be spliced together mid-line, so every pattern is searched for
// anywhere in a line rather than anchored, and a line that matches nothing is simply skipped.
import { splitLines } from './model';
import { TopologyDumpReader, type TopologyLink } from './nccl-log-topology';

export interface TuningCell {
  readonly latencyUs: number;
  readonly busbwGBps: number;
}

export interface NcclLogFacts {
  version?: string;
  ranks?: number;
  nodes?: number;
  localRanks?: number;
  hosts: string[];
  gpuNames: string[];
  /**
   * The links of the first GRAPH topology dump, each once (e.g. NVL 240 GB/s between two GPUs), with their ends;
   * see nccl-log-topology.ts for why printed lines are not links.
   */
  topologyLinks: TopologyLink[];
  hasNvSwitch: boolean;
  graphPatterns: { pattern: number; nChannels: number; bwIntraGBps: number; bwInterGBps: number; type: string }[];
  channels?: number;
  collChannels?: number;
  nvlsChannels?: number;
  nvlsAvailable?: boolean;
  rings: string[];
  trees: string[];
  /** Transports named in `via ...` connection lines: P2P/CUMEM/read, SHM, NET/IB/1/GDRDMA, ... */
  transports: string[];
  network?: string;
  nics: { name: string; speedGbps?: number; kind?: string }[];
  nicCountHint?: number;
  gdrdma: boolean;
  env: Record<string, string>;
  /** tuning[collective][algorithm][protocol] = NCCL's own latency and bandwidth estimates. */
  tuning: Record<string, Record<string, Record<string, TuningCell>>>;
  /** Per-call choices: `AllReduce: 8388608 Bytes -> Algo RING proto SIMPLE`. */
  choices: { collective: string; bytes: number; algorithm: string; protocol: string; line: number }[];
  infoLines: number;
}

const LOG_PREFIX = /^(?:\[\d+,\d+\]<\w+>:)?([A-Za-z0-9][\w.-]*):(\d+):(\d+) \[(\d+)\] NCCL (INFO|WARN|TRACE)/;

/** A debug log, not an nccl-tests table with a stray "Launch mode" line: several NCCL lines or a version line. */
export function looksLikeNcclLog(text: string): boolean {
  const head = text.slice(0, 400_000);
  return (
    (head.match(/ NCCL (?:INFO|WARN) /g) ?? []).length >= 5 ||
    /^(?:\[\d+,\d+\]<stdout>:)?NCCL version \d/m.test(head) ||
    /NCCL INFO NCCL version/.test(head)
  );
}

export function parseNcclLogFacts(text: string): NcclLogFacts {
  const facts: NcclLogFacts = {
    hosts: [],
    gpuNames: [],
    topologyLinks: [],
    hasNvSwitch: false,
    graphPatterns: [],
    rings: [],
    trees: [],
    transports: [],
    nics: [],
    gdrdma: false,
    env: {},
    tuning: {},
    choices: [],
    infoLines: 0,
  };
  // Spliced lines produce fake host names once or twice; real hosts print many lines each.
  const hosts = new Map<string, number>();
  const gpuNames = new Set<string>();
  const transports = new Set<string>();
  let tuningGroup: { algorithms: string[]; protocols: string[] } | undefined;
  const dump = new TopologyDumpReader();
  // Link lines outside a recognised dump (a format not seen yet): kept as printed, without their ends.
  const looseLinks: TopologyLink[] = [];
  const lines = splitLines(text);
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    const prefix = LOG_PREFIX.exec(line);
    if (prefix) {
      facts.infoLines++;
      hosts.set(prefix[1], (hosts.get(prefix[1]) ?? 0) + 1);
    }
    let m: RegExpExecArray | null;
    if ((m = /NCCL version (\d+\.\d+\.\d+)(\S*)/.exec(line))) facts.version ??= m[1] + m[2];
    if (
      (m = /#\s+Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.*?)\s*$/.exec(
        line,
      ))
    ) {
      hosts.set(m[1], (hosts.get(m[1]) ?? 0) + 3);
      gpuNames.add(m[2]);
    }
    if ((m = /rank \d+ nRanks (\d+) nNodes (\d+) localRanks (\d+)/.exec(line))) {
      facts.ranks = Number(m[1]);
      facts.nodes = Number(m[2]);
      facts.localRanks = Number(m[3]);
    } else if ((m = /\bn[Rr]anks[ =](\d+)/.exec(line))) facts.ranks ??= Number(m[1]);
    if ((m = /(NCCL_\w+) set by environment to (\S+)/.exec(line))) facts.env[m[1]] = m[2].replace(/\.$/, '');
    dump.read(line);
    if ((m = /\b(NVL|PCI|NET|SYS|NVB|C2C)\[(\d+(?:\.\d+)?)\]/.exec(line)))
      looseLinks.push({ kind: m[1], GBps: Number(m[2]) });
    if (/\bNVS\/|\+ NVL\[[\d.]+\] - NVS/.test(line)) facts.hasNvSwitch = true;
    if (
      (m = /Pattern (\d+), crossNic \d+, nChannels (\d+), (?:bw|speed) ([\d.]+)\/([\d.]+), type (\S+?),/.exec(line))
    ) {
      facts.graphPatterns.push({
        pattern: Number(m[1]),
        nChannels: Number(m[2]),
        bwIntraGBps: Number(m[3]),
        bwInterGBps: Number(m[4]),
        type: m[5],
      });
    }
    if ((m = /Channel (\d+)\/(\d+) :((?:\s+\d+)+)\s*$/.exec(line)) && Number(m[2]) > 0)
      facts.channels = Math.max(facts.channels ?? 0, Number(m[2]));
    if ((m = /(\d+) coll channels, (?:(\d+) collnet channels, )?(\d+) nvls channels/.exec(line))) {
      facts.collChannels = Number(m[1]);
      facts.nvlsChannels = Number(m[3]);
    }
    if (/NVLS multicast support is available/.test(line)) facts.nvlsAvailable = true;
    if (/NVLS multicast support is not available/.test(line)) facts.nvlsAvailable ??= false;
    if ((m = /Ring (\d+) : ([\d ->]+\d)/.exec(line)) && facts.rings.length < 64)
      facts.rings.push(`${m[1]}: ${m[2].trim()}`);
    if ((m = /Trees ((?:\[\d+\] \S+\s*)+)/.exec(line)) && facts.trees.length < 64) facts.trees.push(m[1].trim());
    if ((m = / via ([A-Za-z0-9][\w/ .-]{0,60}?)\s*$/.exec(line))) {
      transports.add(m[1]);
      if (/GDRDMA/.test(m[1])) facts.gdrdma = true;
    }
    if ((m = /Using network (.+?)\s*$/.exec(line))) facts.network = m[1];
    if ((m = /NET\/IB\s*:\s*Using((?: \[\d+\]\S+)+)/.exec(line))) {
      for (const dev of m[1].trim().split(/\s+/)) {
        const d = /\[\d+\]([^:]+):\d+\/(\S+)/.exec(dev);
        if (d && !facts.nics.some((n) => n.name === d[1])) facts.nics.push({ name: d[1], kind: d[2] });
      }
    }
    if ((m = /NET\/IB: \[\d+\] ([^:\s]+):\S+ .*?speed=(\d+)/.exec(line))) {
      const speedGbps = Number(m[2]) / 1000;
      const nic = facts.nics.find((n) => n.name === m![1]);
      if (nic) nic.speedGbps = speedGbps;
      else facts.nics.push({ name: m[1], speedGbps });
    }
    if ((m = /Selected Provider is (\S+) \(found (\d+) nics\)/.exec(line))) {
      facts.network ??= m[1];
      facts.nicCountHint = Math.max(facts.nicCountHint ?? 0, Number(m[2]));
    }
    if ((m = /(\w+): (\d+) Bytes -> Algo (\S+) proto (\S+)/.exec(line))) {
      facts.choices.push({ collective: m[1], bytes: Number(m[2]), algorithm: m[3], protocol: m[4], line: index + 1 });
    }
    tuningGroup = readTuningLine(line, tuningGroup, facts);
  }
  facts.hosts = [...hosts].filter(([, n]) => n >= 3).map(([host]) => host);
  facts.gpuNames = [...gpuNames];
  facts.transports = [...transports];
  facts.topologyLinks = dump.links.length > 0 ? dump.links : looseLinks;
  return facts;
}

/** Reads the NCCL >= 2.19 tuning table: `Algorithm |` and `Protocol |` header lines, then one row per collective. */
function readTuningLine(
  line: string,
  group: { algorithms: string[]; protocols: string[] } | undefined,
  facts: NcclLogFacts,
): { algorithms: string[]; protocols: string[] } | undefined {
  const body = line.replace(/^.*?NCCL INFO/, '');
  const algo = /^\s*Algorithm\s*\|(.*)$/.exec(body);
  if (algo)
    return {
      algorithms: algo[1]
        .split('|')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
      protocols: [],
    };
  if (!group) return undefined;
  const proto = /^\s*Protocol\s*\|(.*)$/.exec(body);
  if (proto)
    return {
      ...group,
      protocols: proto[1]
        .split('|')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    };
  const row = /^\s*(Broadcast|Reduce|AllGather|ReduceScatter|AllReduce)\s*\|(.*)$/.exec(body);
  if (!row) return group;
  const cells = row[2]
    .split('|')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const perAlgo = 3;
  cells.forEach((cell, i) => {
    const algorithm = group.algorithms[Math.floor(i / perAlgo)];
    const protocol = group.protocols[i] ?? ['LL', 'LL128', 'Simple'][i % perAlgo];
    const value = /^([\d.]+)\/\s*([\d.]+)$/.exec(cell);
    if (!algorithm || !value) return;
    const byAlgo = (facts.tuning[row[1]] ??= {});
    (byAlgo[algorithm] ??= {})[protocol] = { latencyUs: Number(value[1]), busbwGBps: Number(value[2]) };
  });
  return group;
}
