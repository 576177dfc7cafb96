// The micro-batch count of a callback schedule (callback-schedule.ts): the backward passes its loops run add up to one
// name K that is a micro-batch count or is read from a setting named as one, and every name a loop subtracts from K
// is bounded by K. Apart from the contract's index because it reads one function's tree and nothing of the program.
import { ACCUMULATION_NAME } from '../accumulation-syntax';
import { child, type PyNode } from '../tree';
import { visitBody } from './callback-files';
import { rangeCount, type Counted, type Located } from './callback-counts';
import { compact } from './loss-scaler-classes';

/** The count adds up to one name K, a micro-batch count, and every name the loops subtract from it is at most K. */
export function microBatchCount(
  fn: Located,
  counted: Counted,
  assigned: Map<string, PyNode[]>,
): { name: string; setting: string } | undefined {
  const terms = [...counted.count];
  if (terms.length !== 1 || terms[0][1] !== 1 || !/^\w+(\.\w+)*$/.test(terms[0][0])) return undefined;
  const name = terms[0][0];
  const { source } = fn.file;
  const at = assigned.get(name) ?? [];
  // K is named as a micro-batch count, or read from a setting that is (`micro = args.num_microbatches`).
  const right = at.length === 1 ? compact(source, child(at[0], 'right') ?? at[0]) : name;
  const setting = /^\w+(\.\w+)*$/.test(right) && ACCUMULATION_NAME.test(right.split('.').pop()!) ? right : name;
  if (at.length > 1 || !ACCUMULATION_NAME.test(setting.split('.').pop()!)) return undefined;
  let bounded = true;
  visitBody(fn.def, (n) => {
    const times = n.type === 'for_statement' ? rangeCount(child(n, 'right') ?? n, source) : undefined;
    for (const [term, c] of times ?? []) {
      if (c >= 0 || term === '') continue;
      const last = (assigned.get(term) ?? []).sort((a, b) => a.start - b.start).pop();
      const right = last && child(last, 'right');
      const text = right ? compact(source, right) : '';
      // `w = min(w, K)` or `w = K`: the loop of K − w runs, and the passes add up to K.
      const bound = text === name || new RegExp(`^min\\(.*\\b${name}\\b.*\\)$`).test(text);
      bounded &&= bound && last!.end < n.start;
    }
    return bounded;
  });
  return bounded ? { name, setting } : undefined;
}
