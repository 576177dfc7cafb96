// A component that is uniform but for a few slower flows, solved on those flows alone. An edited rail's tree is
// one component of tens of thousands of flows (every node's send and receive links tie its tree edges together),
// and one degraded link leaves all of them but the few crossing it at the unedited rail's level: they finish
// together, and the slow flows go on alone. Progressive filling over the whole component spends its time on flows
// whose rate is known; here they are checked in linear passes and stood for by one flow held at their level.
//
// Exactness (bit for bit, not only in real arithmetic). Let each flow's level be min(ceiling, smallest capacity /
// demand on its path), L the largest level, the bulk the flows at L and the low flows the others. Resources carry
// bulk flows only, low flows only, or both (mixed). The reduced set is: a flow of zero bytes crossing the low
// flows' resources in the component's order of first use (it moves nothing; it gives those resources the local
// order, hence the ties, they have in the component), the low flows in their order, and one flow of the bulk's size
// whose ceiling is L. Then, under the checks below, runFlows on the component and on the reduced set take the same
// steps and give every low flow the same finish, and every bulk flow finishes with the stand-in:
//
// - Below the threshold T (every low flow's first rate lies under it), both fillings pick the same resources in
//   the same order: low-only resources carry the same flows in both; a bulk-only resource is never below L (its
//   share is capacity / demand ≥ L until a bulk flow freezes) and the bulk's ceilings are at least L; a mixed
//   resource starts at a share ≥ L and only rises while low flows leave it below that share, so in exact
//   arithmetic it stays ≥ L, and its rounding (exact demands on the use grid, one rounding of the capacity per
//   subtraction) keeps it above L × (1 − slack) ≥ T. The stand-in crosses nothing and holds at L by its ceiling.
// - Above T, the component freezes its bulk at exactly L: every bulk flow crosses a bulk-only resource that is
//   tight at L with exact subtractions, or has a ceiling of L (uniform-level.ts's checks, the same ones), and every
//   mixed resource, left with the bulk's demand once its low flows are frozen, is above L by more than its rounding.
// - The first step is the smallest remaining / rate: the bulk's bytes / L (the stand-in's) or a low flow's (the
//   same in both). Each bulk flow then finishes with the stand-in; a low flow that finished earlier is refused
//   (the bulk would be refilled without it). Afterwards only low flows move, on the same resources with the same
//   demands, capacities and local order in both: the later fillings and steps are the same arithmetic.
import { runFlows, allocateFlowSet, type FlowSet, type RoundResult } from './maxmin';
import { MAX_GRID_DEMAND, USE_GRID, resourceAtLevel } from './uniform-level';
import { roundStructure } from './uniform-round';

/** Resources by the flows they carry: bulk flows only, low flows only, or both. */
const BULK = 1;
const LOW = 2;
const MIXED = BULK | LOW;

/**
 * The component's result from its low flows and one stand-in for its bulk, or undefined when the checks above do
 * not hold (the caller then runs the filling over every flow). `scratch` covers every resource id and holds 0
 * everywhere (a local id + 1 while in use); it is left that way.
 */
export function twoLevelRound(
  flows: FlowSet,
  capacityGBps: (resource: number) => number,
  scratch: Int32Array,
): RoundResult | undefined {
  const n = flows.count;
  const { bytes, capRate, start, coefficient, weight } = flows;
  const { localOf, globalOf, capacity, demand, entries, smallestUse, offGrid, own } = roundStructure(
    flows,
    capacityGBps,
    scratch,
  );
  const m = capacity.length;
  const level = new Float64Array(n);
  let top = 0;
  for (let f = 0; f < n; f++) {
    if (!(bytes[f] > 0) || offGrid[f]) return undefined;
    level[f] = Math.min(own[f], capRate[f]);
    if (!(level[f] > 0 && level[f] < Infinity)) return undefined;
    top = Math.max(top, level[f]);
  }
  let bulkBytes = NaN;
  let low = 0;
  for (let f = 0; f < n; f++) {
    if (level[f] < top) low++;
    else if (Number.isNaN(bulkBytes)) bulkBytes = bytes[f];
    else if (bytes[f] !== bulkBytes) return undefined;
  }
  // Worth it only when the low flows are few; none left is uniform-round.ts's case.
  if (low === 0 || 4 * low > n) return undefined;
  const kind = new Uint8Array(m);
  for (let f = 0; f < n; f++)
    for (let k = start[f]; k < start[f + 1]; k++) kind[localOf[k]] |= level[f] < top ? LOW : BULK;
  const tight = new Uint8Array(m);
  for (let id = 0; id < m; id++) {
    if (kind[id] === LOW) continue;
    if (demand[id] * USE_GRID >= MAX_GRID_DEMAND) return undefined;
    if (kind[id] === MIXED) continue;
    const verdict = resourceAtLevel(capacity[id], demand[id], entries[id], smallestUse[id], top);
    if (verdict < 0) return undefined;
    tight[id] = verdict;
  }
  for (let f = 0; f < n; f++) {
    if (level[f] < top || capRate[f] === top) continue;
    let held = false;
    for (let k = start[f]; k < start[f + 1] && !held; k++) held = kind[localOf[k]] === BULK && tight[localOf[k]] === 1;
    if (!held) return undefined;
  }
  const { set, lowFlows } = reducedSet(flows, level, top, bulkBytes, low, globalOf, kind);
  const firstRates = new Float64Array(set.count);
  const reduced = runFlows(set, capacityGBps, scratch, firstRates);
  const standIn = set.count - 1;
  const bulkFinish = reduced.finishUs[standIn];
  if (bulkFinish !== bulkBytes / top) return undefined;
  // Each mixed resource's rounding bound, as resourceAtLevel's for a resource above the level, doubled for the
  // sum below; every low flow's first rate must lie under every mixed resource's L × (1 − slack).
  const slack = new Float64Array(m);
  let threshold = top;
  for (let id = 0; id < m; id++) {
    if (kind[id] !== MIXED) continue;
    slack[id] = 2 * (entries[id] * (demand[id] / smallestUse[id]) + 2) * 2 ** -50;
    threshold = Math.min(threshold, top * (1 - slack[id]));
  }
  const lowUse = new Float64Array(m);
  const lowDemand = new Float64Array(m);
  for (let i = 0; i < low; i++) {
    const f = lowFlows[i];
    const rate = firstRates[i + 1];
    if (!(rate < threshold) || reduced.finishUs[i + 1] < bulkFinish) return undefined;
    for (let k = start[f]; k < start[f + 1]; k++) {
      const use = coefficient[k] * weight[f];
      lowUse[localOf[k]] += use * rate;
      lowDemand[localOf[k]] += use;
    }
  }
  // A mixed resource, once its low flows are frozen, must stay above L while the bulk freezes at L.
  for (let id = 0; id < m; id++) {
    if (kind[id] !== MIXED) continue;
    const share = (capacity[id] - lowUse[id]) / (demand[id] - lowDemand[id]);
    if (!(share * (1 - slack[id]) > top)) return undefined;
  }
  const finishUs = new Float64Array(n).fill(bulkFinish);
  for (let i = 0; i < low; i++) finishUs[lowFlows[i]] = reduced.finishUs[i + 1];
  return { durationUs: reduced.durationUs, finishUs };
}

/** The order flow, the low flows and the bulk's stand-in (see the file's comment), and which flows are low. */
function reducedSet(
  flows: FlowSet,
  level: Float64Array,
  top: number,
  bulkBytes: number,
  low: number,
  globalOf: Int32Array,
  kind: Uint8Array,
): { set: FlowSet; lowFlows: Int32Array } {
  const { start, resource, coefficient, weight, capRate, bytes } = flows;
  const lowFlows = new Int32Array(low);
  let lowEntries = 0;
  for (let f = 0, i = 0; f < flows.count; f++) {
    if (level[f] === top) continue;
    lowFlows[i++] = f;
    lowEntries += start[f + 1] - start[f];
  }
  // The low flows' resources in the component's order of first use (local ids are that order).
  const touched: number[] = [];
  for (let id = 0; id < kind.length; id++) if (kind[id] & LOW) touched.push(id);
  const set = allocateFlowSet(low + 2, touched.length + lowEntries);
  let k = 0;
  set.capRate[0] = Infinity;
  set.weight[0] = 1;
  for (const id of touched) {
    set.resource[k] = globalOf[id];
    set.coefficient[k++] = 1;
  }
  for (let i = 0; i < low; i++) {
    const f = lowFlows[i];
    set.start[i + 1] = k;
    set.bytes[i + 1] = bytes[f];
    set.weight[i + 1] = weight[f];
    set.capRate[i + 1] = capRate[f];
    for (let e = start[f]; e < start[f + 1]; e++) {
      set.resource[k] = resource[e];
      set.coefficient[k++] = coefficient[e];
    }
  }
  set.start[low + 1] = k;
  set.bytes[low + 1] = bulkBytes;
  set.weight[low + 1] = 1;
  set.capRate[low + 1] = top;
  set.start[low + 2] = k;
  return { set, lowFlows };
}
