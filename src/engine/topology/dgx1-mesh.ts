// The DGX-1 (V100) hybrid cube-mesh: NVLink counts between GPU pairs as `nvidia-smi topo -m` prints them
// (hardware-facts.md §2: GPU0 has two links to GPU3 and GPU4, one to GPU1 and GPU2, none to GPU5–7).
export const DGX1_NVLINKS: readonly (readonly number[])[] = [
  [0, 1, 1, 2, 2, 0, 0, 0],
  [1, 0, 2, 1, 0, 2, 0, 0],
  [1, 2, 0, 2, 0, 0, 1, 0],
  [2, 1, 2, 0, 0, 0, 0, 1],
  [2, 0, 0, 0, 0, 1, 1, 2],
  [0, 2, 0, 0, 1, 0, 2, 1],
  [0, 0, 1, 0, 1, 2, 0, 2],
  [0, 0, 0, 1, 2, 1, 2, 0],
];

/**
 * Rings that use only NVLink, chosen greedily so that together they spread over the links, as NCCL's ring search
 * does on a cube-mesh. Each cycle is also used reversed, which loads the other direction of every link.
 */
export function meshRingOrders(gpus: number, links: readonly (readonly number[])[]): number[][] {
  const cycles: number[][] = [];
  const path = [0];
  const used = new Array<boolean>(gpus).fill(false);
  used[0] = true;
  const search = (): void => {
    if (cycles.length >= 64) return;
    const last = path[path.length - 1];
    if (path.length === gpus) {
      if (links[last][0] > 0 && (gpus < 3 || path[1] < path[gpus - 1])) cycles.push([...path]);
      return;
    }
    for (let next = 1; next < gpus; next++) {
      if (used[next] || links[last][next] === 0) continue;
      used[next] = true;
      path.push(next);
      search();
      path.pop();
      used[next] = false;
    }
  };
  search();
  if (cycles.length === 0) return [];
  const load = links.map((row) => row.map(() => 0));
  const chosen: number[][] = [];
  for (let pick = 0; pick < Math.min(3, cycles.length); pick++) {
    let best = cycles[0];
    let bestScore = Infinity;
    for (const cycle of cycles) {
      let score = 0;
      for (let i = 0; i < gpus; i++) {
        const a = cycle[i];
        const b = cycle[(i + 1) % gpus];
        score = Math.max(score, (load[a][b] + 1) / links[a][b]);
      }
      if (score < bestScore) {
        bestScore = score;
        best = cycle;
      }
    }
    for (let i = 0; i < gpus; i++) {
      const a = best[i];
      const b = best[(i + 1) % gpus];
      load[a][b]++;
      load[b][a]++;
    }
    chosen.push(best);
  }
  return chosen.flatMap((cycle) => [cycle, [cycle[0], ...cycle.slice(1).reverse()]]);
}
