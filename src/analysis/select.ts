// Chooses which top-level statements to copy out of the WebAssembly tree. Copying costs about a microsecond per
// node, so a 3,000-line script with many model and data classes would spend most of the time budget on code
// that cannot matter. A statement is kept when its text mentions a collective, a world size, a backward pass or
// a learning rate, or when it defines a function a kept statement calls (and the other way round).
const RELEVANT = /all_reduce|allreduce|Allreduce|reduce\(|psum|pmean|DistributedOptimizer|DistributedGradientTape|DistributedDataParallel|\bDDP\b|FullyShardedDataParallel|\bFSDP\b|fully_shard|deepspeed|accelerat|strategy|backward|autograd|value_and_grad|\bgrad\(|gradient\(|apply_gradients|ReduceOp|gloo|world_size|get_world_size|\bhvd\b|horovod|per_node|device_count|local_size|Get_size|num_replicas|spawn|\.grad\b|\blr\b|learning_rate|^\s*(import|from)\s/m;

export interface Unit {
  readonly start: number;
  readonly end: number;
  /** Names this unit defines (a def or class name), for the call-graph closure. */
  readonly defines?: string;
}

export function selectUnits(text: string, units: readonly Unit[]): boolean[] {
  const keep = units.map((u) => RELEVANT.test(text.slice(u.start, u.end)));
  for (let round = 0; round < 3; round++) {
    let changed = false;
    const keptText = units.filter((_, i) => keep[i]).map((u) => text.slice(u.start, u.end)).join('\n');
    const keptNames = units.filter((u, i) => keep[i] && u.defines).map((u) => u.defines!);
    units.forEach((u, i) => {
      if (keep[i]) return;
      const body = text.slice(u.start, u.end);
      if ((u.defines && new RegExp(`\\b${u.defines}\\s*\\(`).test(keptText)) || keptNames.some((n) => body.includes(`${n}(`))) {
        keep[i] = true;
        changed = true;
      }
    });
    if (!changed) break;
  }
  return keep;
}
