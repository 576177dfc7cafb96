// Turns the facts of an NCCL_DEBUG log into a system file the simulator accepts. Logs rarely name the GPU, so
// the model comes from nccl-tests' device lines when present, else from the caller, else a stated assumption.
import { gpuFromDescription, isNcclVersion, type IntraNodeFabric, type SystemSpec } from '../../engine/index';
import type { NcclLogFacts } from './nccl-log';
import { LIMITS, limitProblem } from '../../config/limits';

export interface SystemFromLog {
  readonly system: SystemSpec;
  /** Everything guessed rather than read, said in words so the user can correct it. */
  readonly assumptions: string[];
}

/** Builds a SystemSpec from log facts; `gpu` (a catalogue name) overrides what the log says. */
export function systemFromNcclLog(
  facts: NcclLogFacts,
  options: { gpu?: string; fileName?: string } = {},
): SystemFromLog {
  const assumptions: string[] = [];
  let gpu = options.gpu;
  if (!gpu) {
    const named = facts.gpuNames.map(gpuFromDescription).find((g) => g !== undefined);
    if (named) gpu = named;
    else {
      gpu = facts.topologyLinks.some((l) => l.kind === 'NVL') || facts.hasNvSwitch ? 'A100-SXM' : 'A100-PCIe';
      assumptions.push(
        facts.gpuNames.length > 0
          ? `GPU "${facts.gpuNames[0]}" is not in the catalogue; assumed ${gpu}`
          : `the log does not name the GPU; assumed ${gpu} (pass --gpu to set it)`,
      );
    }
  }
  // Counts past the limits (docs/limits.md) are corrupt lines, not machines: they are dropped with a note, so the
  // system written is one that simulate accepts.
  const plausible = (
    value: number | undefined,
    limit: 'ranks' | 'nodes' | 'gpusPerNode',
    what: string,
  ): number | undefined => {
    if (value === undefined || limitProblem(limit, what, value) === undefined) return value;
    assumptions.push(`${limitProblem(limit, what, value)}; ignored as corrupt`);
    return undefined;
  };
  const ranks =
    plausible(facts.ranks, 'ranks', 'nRanks') ?? Math.max(1, Math.min(facts.gpuNames.length, LIMITS.ranks.max));
  let nodes =
    plausible(facts.nodes, 'nodes', 'nodes') ??
    (facts.hosts.length > 0 ? Math.min(facts.hosts.length, LIMITS.nodes.max) : 1);
  if (ranks % nodes !== 0) {
    assumptions.push(`${ranks} ranks do not divide over ${nodes} hosts; assumed one node`);
    nodes = 1;
  }
  const gpusPerNode =
    plausible(facts.localRanks, 'gpusPerNode', 'localRanks') ??
    Math.min(Math.max(1, Math.round(ranks / nodes)), LIMITS.gpusPerNode.max);
  const p2pDisabled = facts.env.NCCL_P2P_DISABLE === '1';
  const usesP2p = facts.transports.some((t) => /^P2P/.test(t));
  const nvlinkSeen = facts.topologyLinks.some((l) => l.kind === 'NVL');
  let intraNode: IntraNodeFabric;
  if (facts.hasNvSwitch) intraNode = 'nvswitch';
  else if (nvlinkSeen) intraNode = gpusPerNode <= 2 ? 'nvlink-bridge' : 'nvlink-mesh';
  else if (usesP2p && /SXM|H200|B200|GB200/.test(gpu)) {
    intraNode = gpusPerNode >= 8 ? 'nvswitch' : 'nvlink-mesh';
    assumptions.push(`intra-node fabric read as ${intraNode} from P2P transports on ${gpu}`);
  } else intraNode = 'pcie';
  const spec: SystemSpec = {
    name: `from NCCL log${options.fileName ? ` ${options.fileName.split(/[\\/]/).pop()}` : ''}`,
    gpu,
    nodes,
    gpusPerNode,
    intraNode,
    ...(facts.nvlsAvailable !== undefined || facts.nvlsChannels !== undefined
      ? { nvls: Boolean(facts.nvlsAvailable) || (facts.nvlsChannels ?? 0) > 0 }
      : {}),
    ...(intraNode === 'pcie' ? { p2p: !p2pDisabled } : {}),
    ...(nodes > 1 ? { nic: nicSpec(facts, assumptions) } : {}),
    // The release that wrote the log is the one whose choices the model should follow ("2.27.7+cuda13.0" → 2.27.7).
    ...(isNcclVersion(facts.version) ? { ncclVersion: facts.version.replace(/\+.*$/, '') } : {}),
  };
  return { system: spec, assumptions };
}

function nicSpec(facts: NcclLogFacts, assumptions: string[]): NonNullable<SystemSpec['nic']> {
  const speeds = facts.nics.map((n) => n.speedGbps).filter((s): s is number => s !== undefined && s > 0);
  const netLink = facts.topologyLinks.find((l) => l.kind === 'NET');
  let gbps = speeds.length > 0 ? Math.max(...speeds) : netLink ? netLink.GBps * 8 : undefined;
  if (gbps === undefined) {
    gbps = /efa|libfabric/i.test(facts.network ?? '') ? 100 : 200;
    assumptions.push(`the log gives no NIC speed; assumed ${gbps} Gb/s for ${facts.network ?? 'the network'}`);
  }
  const perNode = Math.max(1, facts.nics.length || facts.nicCountHint || 1);
  return { gbps, perNode, ...nicPath(facts, assumptions) };
}

const NIC_PATHS = ['PIX', 'PXB', 'PHB', 'SYS'] as const;
/** NCCL_NET_GDR_LEVEL's legacy numbers, as paths.cc reads them (levelsOldToNew). */
const GDR_LEVELS = ['LOC', 'PIX', 'PXB', 'PHB', 'SYS'] as const;

/**
 * The GPU-to-NIC path type NCCL's graph search printed ("Pattern 4, …, type NVL/PIX": intra/inter; the ring's graph
 * first), and NCCL_NET_GDR_LEVEL when the log echoes it: what NCCL's LL128 rule reads (engine ll128-rule.ts).
 */
function nicPath(
  facts: NcclLogFacts,
  assumptions: string[],
): Pick<NonNullable<SystemSpec['nic']>, 'path' | 'gdrLevel'> {
  const found = [...facts.graphPatterns]
    .filter((g) => g.nChannels > 0)
    .sort((a, b) => Number(b.pattern === 4) - Number(a.pattern === 4))[0];
  const inter = found?.type.split('/')[1];
  const out: { path?: (typeof NIC_PATHS)[number]; gdrLevel?: (typeof GDR_LEVELS)[number] } = {};
  if (inter !== undefined) {
    const path = NIC_PATHS.find((p) => p === inter);
    if (path) out.path = path;
    else assumptions.push(`NCCL's graph reached the NICs over ${inter}, which nic.path does not describe; left at PIX`);
  }
  const level = facts.env.NCCL_NET_GDR_LEVEL;
  if (level !== undefined) {
    const byName = GDR_LEVELS.find((l) => l === level.toUpperCase());
    const byNumber = /^\d+$/.test(level) ? GDR_LEVELS[Math.min(Number(level), GDR_LEVELS.length - 1)] : undefined;
    if (byName ?? byNumber) out.gdrLevel = byName ?? byNumber;
  }
  return out;
}
