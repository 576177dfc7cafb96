// Text scans of the callback schedule contract (callback-schedule.ts): whether a file may hold a schedule at all, and
// whether a line divides by a micro-batch setting. They read the raw text, not the tree, so that the editor, which
// asks on every edit, parses only the files that pass them; they are apart from the contract because they share
// nothing with its reading of the trees.

/**
 * A line that names the setting divides by it: a single `/` or a `div` call before the name on that line, or a line
 * that ends in an open division continued on the next (`/ (` then `mask.sum() * args.num_microbatches)`). Comments
 * are left out; `//` is an integer division of sizes, not a normalisation.
 */
export function dividesOnLine(text: string, name: RegExp): boolean {
  const lines = text.split('\n').map((l) => l.replace(/#.*$/, ''));
  const division = /(^|[^/])\/(?!\/)|\bdiv_?\(/;
  return lines.some((line, i) => {
    const at = line.search(name);
    if (at < 0) return false;
    if (division.test(line.slice(0, at))) return true;
    const previous = i > 0 ? lines[i - 1].trimEnd() : '';
    return /[(\\]$/.test(previous) && division.test(previous);
  });
}

/** A function whose parameter is called, in a file that zeroes gradients, runs backward and steps. */
export function mayHoldSchedule(text: string): boolean {
  if (!text.includes('zero_grad') || !text.includes('backward') || !/\.step\(/.test(text)) return false;
  const names = new Set<string>();
  for (const m of text.matchAll(/\bdef\s+\w+\s*\(([^)]*)\)/g)) {
    for (const part of m[1].split(',')) {
      const name = /^\s*(\w+)/.exec(part)?.[1];
      if (name && name !== 'self') names.add(name);
    }
  }
  // One pass over the text for all the parameter names (the editor asks on every edit).
  return names.size > 0 && new RegExp(`[^\\w.](?:${[...names].join('|')})\\s*\\(`).test(text);
}
