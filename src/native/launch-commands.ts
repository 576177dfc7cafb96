// Command lines for multi-node runs: the cluster's own launcher (torchrun's rendezvous, or Slurm's srun)
// distributes the ranks; the user runs these on their cluster and imports the JSON lines rank 0 prints.

export interface ClusterLaunch {
  readonly nodes: number;
  readonly gpusPerNode: number;
  /** host:port of the rendezvous (usually the first node). */
  readonly rendezvous: string;
  readonly python?: string;
  readonly harness?: string;
  readonly sizesBytes: readonly number[];
  readonly bucketsBytes?: readonly number[];
  readonly output?: string;
  readonly jobId?: string;
}

/** Quotes a word for POSIX shells when it needs it; `$VAR` references stay expandable inside double quotes. */
export function shellQuote(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word;
  if (/^(?:[\w@%+=:,./-]|\$\{?[A-Za-z_]\w*\}?)+$/.test(word)) return `"${word}"`;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function harnessTail(launch: ClusterLaunch): string[] {
  return [
    launch.harness ?? 'collective_harness.py',
    '--backend',
    'nccl',
    '--sizes',
    launch.sizesBytes.join(','),
    ...(launch.bucketsBytes?.length ? ['--buckets', launch.bucketsBytes.join(',')] : []),
  ];
}

/** The torchrun line to run on every node (elastic rendezvous over c10d). */
export function torchrunCommand(launch: ClusterLaunch): string {
  const words = [
    launch.python ?? 'python3',
    '-m',
    'torch.distributed.run',
    `--nnodes=${launch.nodes}`,
    `--nproc_per_node=${launch.gpusPerNode}`,
    '--rdzv_backend=c10d',
    `--rdzv_endpoint=${launch.rendezvous}`,
    `--rdzv_id=${launch.jobId ?? 'collective-profiler'}`,
    ...harnessTail(launch),
  ];
  return words.map(shellQuote).join(' ') + (launch.output ? ` > ${shellQuote(launch.output)}` : '');
}

/** The srun line: Slurm starts one task per GPU and sets the env:// variables from its own. */
export function srunCommand(launch: ClusterLaunch): string {
  const [host, port = '29500'] = launch.rendezvous.split(':');
  const env = `MASTER_ADDR=${host} MASTER_PORT=${port} RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID`;
  const inner = [`${env} exec`, ...[launch.python ?? 'python3', ...harnessTail(launch)].map(shellQuote)].join(' ');
  const words = [
    'srun',
    `--nodes=${launch.nodes}`,
    `--ntasks-per-node=${launch.gpusPerNode}`,
    `--gpus-per-node=${launch.gpusPerNode}`,
    'bash',
    '-c',
    inner,
  ];
  return (
    words.map((w, i) => (i === words.length - 1 ? shellQuote(w) : w)).join(' ') +
    (launch.output ? ` > ${shellQuote(launch.output)}` : '')
  );
}
