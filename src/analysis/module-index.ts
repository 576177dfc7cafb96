// Resolves a Python import to one file of the program (program.ts) by the file paths alone.

/**
 * Python module names of the program's files: `pkg/utils/dist.py` is `pkg.utils.dist`, and also `utils.dist` and
 * `dist` when the tree is checked from inside the package. An import resolves to the one file whose path ends with
 * the dotted name; relative imports (`from .dist import f`) resolve against the importing file's folder.
 */
export class ModuleIndex {
  private readonly byLastName = new Map<string, Set<string>>();

  add(path: string): void {
    const key = lastName(path);
    const set = this.byLastName.get(key) ?? new Set<string>();
    this.byLastName.set(key, set.add(path));
  }

  remove(path: string): void {
    this.byLastName.get(lastName(path))?.delete(path);
  }

  resolve(from: string, dotted: string): string | undefined {
    if (dotted.startsWith('.')) {
      const dots = /^\.+/.exec(dotted)![0].length;
      let dir = from.split('/').slice(0, -1);
      dir = dir.slice(0, Math.max(0, dir.length - (dots - 1)));
      const rest = dotted
        .slice(dots)
        .split('.')
        .filter((p) => p !== '');
      const base = [...dir, ...rest].join('/');
      return [`${base}.py`, `${base}/__init__.py`].find((p) => this.byLastName.get(lastName(p))?.has(p));
    }
    const parts = dotted.split('.');
    const candidates = [...(this.byLastName.get(parts[parts.length - 1]) ?? [])].filter((p) =>
      endsWithModule(p, parts),
    );
    if (candidates.length <= 1) return candidates[0];
    // Several files end with the name (two `utils/dist.py`): the one nearest the importing file, if only one is.
    const shared = (p: string) => commonPrefix(p.split('/'), from.split('/'));
    const best = Math.max(...candidates.map(shared));
    const nearest = candidates.filter((p) => shared(p) === best);
    return nearest.length === 1 ? nearest[0] : undefined;
  }
}

/** `a/b/c.py` and `a/b/c/__init__.py` are both module `c` of package `a.b`. */
function lastName(path: string): string {
  const parts = path.split('/');
  const file = parts[parts.length - 1];
  return file === '__init__.py' ? (parts[parts.length - 2] ?? '') : file.replace(/\.py$/, '');
}

function endsWithModule(path: string, parts: readonly string[]): boolean {
  const segments = path
    .replace(/\/__init__\.py$/, '')
    .replace(/\.py$/, '')
    .split('/');
  if (segments.length < parts.length) return false;
  return parts.every((p, i) => segments[segments.length - parts.length + i] === p);
}

function commonPrefix(a: readonly string[], b: readonly string[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
