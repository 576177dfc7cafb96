// Did-you-mean for mistyped commands and flags: the known name nearest to what was typed, by edit distance, or
// the one it is a prefix of (`--min` for `--min-bytes`).

/** Levenshtein distance: insertions, deletions and substitutions each cost one. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}

/**
 * The known names the typed one most likely meant, best first, or none when none is close: the nearest within a
 * third of the name's length (at least one edit, at most three), else the names that contain what was typed
 * (`--min` for `--min-bytes`; `--byte` for both `--min-bytes` and `--max-bytes`), at most three.
 */
export function nearestNames(typed: string, known: readonly string[]): string[] {
  const lower = typed.toLowerCase();
  const allowed = Math.min(3, Math.max(1, Math.floor(lower.length / 3)));
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(lower, name.toLowerCase());
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  if (best) return [best.name];
  if (lower.length < 3) return [];
  const containing = known.filter((name) => name.toLowerCase().includes(lower));
  return containing.length <= 3 ? containing : [];
}

/** `did you mean --bytes?` (or `--min-bytes or --max-bytes?`), or undefined when no known name is close. */
export function suggestion(typed: string, known: readonly string[], prefix = ''): string | undefined {
  const names = nearestNames(typed, known).map((name) => `${prefix}${name}`);
  if (names.length === 0) return undefined;
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  return `did you mean ${list}?`;
}
