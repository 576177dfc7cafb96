// Alias groups (a union-find over tensor keys) and the names that say a tensor holds gradients.

/** Names that mention gradients but hold statistics of them (norms, overflow flags, counts). */
export const NOT_GRADIENT =
  /norms?(_|$)|_norm|nan\b|inf\b|overflow|(^|_)scale(_|$)|scaler|count|stats?(_|$)|statistic|metric|(^|_)acc(_|$)|accuracy|_sq\b|squared|finite|flag|(^|_)steps?(_|$)|(^|_)iters?(_|$)|loss|reward/i;
/** `grads`, `flat_grads`, `g`, and the short names MPI-era optimizers use (`localg`, `globalg`). */
export function isGradientName(name: string): boolean {
  return (
    (/grad/i.test(name) && !NOT_GRADIENT.test(name)) ||
    /^(g|localg|globalg|local_g|global_g|flat_g|g_flat|dg|dw)$/.test(name)
  );
}

/** Groups of keys that name the same tensors; `members` lists a group for the gradient-name check. */
export class UnionFind {
  private readonly parent = new Map<string, string>();
  find(key: string): string {
    let k = key;
    for (let p = this.parent.get(k); p !== undefined && p !== k; p = this.parent.get(k)) k = p;
    if (k !== key) this.parent.set(key, k);
    return k;
  }
  union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(rb, ra);
  }
  members(key: string): string[] {
    const root = this.find(key);
    // The root is listed too: it has no parent entry when it was never joined under another key.
    const out = root === key ? [key] : [key, root];
    for (const k of this.parent.keys()) if (k !== key && k !== root && this.find(k) === root) out.push(k);
    return out;
  }
}
