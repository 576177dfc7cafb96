// Reads the GRAPH topology dump of an NCCL_DEBUG log (`=== System : maxBw … ===` up to a line of `=`) into links
// between named nodes. NCCL prints the dump as a tree from each CPU (ncclTopoPrintRec in src/graph/topo.cc): it
// follows PCI links down and prints every other link (NVL, SYS, NET, C2C) from the node it leaves, so a link
// between two GPUs or two CPUs is printed once from each end, and every rank of a process prints the whole dump
// again. Counting printed lines therefore doubles links and multiplies them by the ranks: a link is kept once, by its
// kind and its two ends, and only the first dump of the log is read (one node's view; the nodes of a job are
// normally alike, and a log that holds several hosts' dumps says so in its host list).

/** A link of the topology dump; `from` and `to` are NCCL's node names (`GPU/81000`, `CPU/0`, `NET/1`). */
export interface TopologyLink {
  readonly kind: string;
  readonly GBps: number;
  readonly from?: string;
  readonly to?: string;
}

/**
 * NCCL's LOC_BW (5000 GB/s in every release): the bandwidth it gives a node's path to itself, and also the
 * inter-CPU (SYS) link of a CPU it has no figure for, e.g. AMD x86 before NCCL 2.19 added AMD_BW (16 GB/s). A SYS
 * link at this value is a placeholder, not a measured or modelled bandwidth.
 */
export const NCCL_LOC_BW_GBps = 5000;

const LINK = /^(\s*)\+ (NVL|PCI|NET|SYS|NVB|C2C)\[(\d+(?:\.\d+)?)\] - (\S+)/;
const ROOT = /^([A-Z]+\/[\w-]+) \(/;

export class TopologyDumpReader {
  private state: 'before' | 'inside' | 'done' = 'before';
  /** The node each column of the dump's tree names: a link printed at column c leaves the node that starts there. */
  private readonly nodeAtColumn = new Map<number, string>();
  private readonly seen = new Set<string>();
  readonly links: TopologyLink[] = [];

  /** Reads one line of the log; lines outside the first dump are ignored. */
  read(line: string): void {
    if (this.state === 'done') return;
    if (this.state === 'before') {
      if (/=== System : /.test(line)) this.state = 'inside';
      return;
    }
    const at = line.indexOf('NCCL INFO ');
    if (at < 0) return;
    const message = line.slice(at + 'NCCL INFO '.length);
    if (/^=+\s*$/.test(message)) {
      this.state = 'done';
      return;
    }
    const root = ROOT.exec(message);
    if (root) {
      this.nodeAtColumn.clear();
      this.nodeAtColumn.set(0, root[1]);
      return;
    }
    const link = LINK.exec(message);
    if (!link) return;
    const column = link[1].length;
    const from = this.nodeAtColumn.get(column);
    const to = link[4];
    this.nodeAtColumn.set(link[0].length - to.length, to);
    const kind = link[2];
    const key = `${kind} ${[from ?? '?', to].sort().join(' ')}`;
    if (from !== undefined && this.seen.has(key)) return;
    this.seen.add(key);
    this.links.push({ kind, GBps: Number(link[3]), ...(from !== undefined ? { from } : {}), to });
  }
}
