// A binary min-heap of (share, resource) pairs for progressive filling. Entries are never updated in place: a
// resource whose share changes gets a new entry, and the solver discards an entry whose share is no longer the
// resource's current one. Ties order by resource id, which is the order a scan from id 0 upwards would pick.

export class ShareHeap {
  private shares = new Float64Array(64);
  private ids = new Int32Array(64);
  private size = 0;

  get length(): number {
    return this.size;
  }

  clear(): void {
    this.size = 0;
  }

  push(share: number, id: number): void {
    if (this.size === this.shares.length) {
      const shares = new Float64Array(this.size * 2);
      shares.set(this.shares);
      this.shares = shares;
      const ids = new Int32Array(this.size * 2);
      ids.set(this.ids);
      this.ids = ids;
    }
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(share, id, this.shares[parent], this.ids[parent])) break;
      this.shares[i] = this.shares[parent];
      this.ids[i] = this.ids[parent];
      i = parent;
    }
    this.shares[i] = share;
    this.ids[i] = id;
  }

  /** Share of the smallest entry (call only when length > 0). */
  topShare(): number {
    return this.shares[0];
  }

  /** Resource of the smallest entry (call only when length > 0). */
  topId(): number {
    return this.ids[0];
  }

  pop(): void {
    const last = --this.size;
    if (last === 0) return;
    const share = this.shares[last];
    const id = this.ids[last];
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= last) break;
      if (
        child + 1 < last &&
        this.before(this.shares[child + 1], this.ids[child + 1], this.shares[child], this.ids[child])
      )
        child++;
      if (!this.before(this.shares[child], this.ids[child], share, id)) break;
      this.shares[i] = this.shares[child];
      this.ids[i] = this.ids[child];
      i = child;
    }
    this.shares[i] = share;
    this.ids[i] = id;
  }

  private before(shareA: number, idA: number, shareB: number, idB: number): boolean {
    return shareA < shareB || (shareA === shareB && idA < idB);
  }
}
