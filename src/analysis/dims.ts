// The symbolic size of a process group, shared by the group-size reader (group-sizes.ts) and the constructor
// requests that carry sizes between files (constructor-request.ts).

/** Exponents of named parallel dimensions: {dp: 1, sp: 1} is dp × sp ranks. */
export type Dims = ReadonlyMap<string, number>;

export function dimsKey(dims: Dims): string {
  return [...dims]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([d, e]) => `${d}^${e}`)
    .join('*');
}
