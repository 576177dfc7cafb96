// Which versions of a Python package a workspace states it runs with. A library's contract (what transformers'
// Trainer does to the loss a subclass returns) changed between releases, so a claim about a subclass is a proof
// only for the versions the workspace allows: the pins of requirements*.txt, setup.py, setup.cfg, pyproject.toml
// and `require_version("transformers>=…")` calls. A specifier set is judged against the package's known releases,
// so "does the allowed range meet the releases 4.48.0 to 4.53.x" is a finite question with an exact answer.

/** A release as numbers: `4.46.0` is [4, 46, 0]. Pre-release and local suffixes are dropped. */
export type Version = readonly number[];

export function parseVersion(text: string): Version | undefined {
  const m = /^v?(\d+(?:\.\d+)*)/.exec(text.trim());
  return m ? m[1].split('.').map(Number) : undefined;
}

export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export function formatVersion(v: Version): string {
  return v.join('.');
}

/** One clause of a PEP 440 specifier (`>=4.46.0`, `!=4.46.*`, `~=4.48`), or Poetry's `^4.40`. */
interface Clause {
  readonly op: string;
  readonly version: Version;
  readonly wildcard: boolean;
}

/** The clauses of a specifier such as `>=4.41.2,<=4.46.0,!=4.46.*`; undefined when one does not read. */
export function parseSpecifier(text: string): Clause[] | undefined {
  const clauses: Clause[] = [];
  for (const raw of text.split(',')) {
    const part = raw.trim();
    if (part === '' || part === '*') continue;
    const m = /^(===|==|!=|<=|>=|~=|<|>|\^|~)?\s*v?(\d+(?:\.\d+)*)(\.\*)?\s*$/.exec(part);
    if (!m) return undefined;
    clauses.push({ op: m[1] ?? '==', version: m[2].split('.').map(Number), wildcard: m[3] !== undefined });
  }
  return clauses;
}

function prefixMatches(v: Version, prefix: Version): boolean {
  return prefix.every((p, i) => (v[i] ?? 0) === p);
}

function satisfiesClause(v: Version, c: Clause): boolean {
  const cmp = compareVersions(v, c.version);
  switch (c.op) {
    case '==':
    case '===':
      return c.wildcard ? prefixMatches(v, c.version) : cmp === 0;
    case '!=':
      return c.wildcard ? !prefixMatches(v, c.version) : cmp !== 0;
    case '<=':
      return cmp <= 0;
    case '>=':
      return cmp >= 0;
    case '<':
      return cmp < 0;
    case '>':
      return cmp > 0;
    case '~=': {
      // `~=4.48.1` is `>=4.48.1, ==4.48.*`; `~=4.48` is `>=4.48, ==4.*`.
      const prefix = c.version.slice(0, Math.max(1, c.version.length - 1));
      return cmp >= 0 && prefixMatches(v, prefix);
    }
    case '^': {
      // Poetry: `^4.40` allows 4.40 up to, not including, 5.0.
      const major = c.version.findIndex((n) => n !== 0);
      const prefix = c.version.slice(0, major < 0 ? c.version.length : major + 1);
      return cmp >= 0 && prefixMatches(v, prefix);
    }
    case '~': {
      // Poetry: `~4.40.1` allows 4.40.x from 4.40.1; `~4` allows 4.x.
      const prefix = c.version.slice(0, Math.min(2, c.version.length));
      return cmp >= 0 && prefixMatches(v, prefix);
    }
    default:
      return false;
  }
}

/** Whether a clause caps the range from above, so that the newest allowed release is known. */
function boundsAbove(c: Clause): boolean {
  return ['==', '===', '<=', '<', '~=', '^', '~'].includes(c.op);
}

/** A stated requirement on a package, and where it was stated (for the finding's related locations). */
export interface Pin {
  readonly package: string;
  readonly specifier: string;
  readonly clauses: readonly Clause[];
  /** The file that states it, as the program names it, and the 0-based line. */
  readonly file: string;
  readonly line: number;
}

/** The releases a set of pins allows, among `releases`; `bounded` when some pin caps the range from above. */
export function allowedReleases(
  pins: readonly Pin[],
  releases: readonly Version[],
): { allowed: Version[]; bounded: boolean } {
  const allowed = releases.filter((v) => pins.every((p) => p.clauses.every((c) => satisfiesClause(v, c))));
  return { allowed, bounded: pins.some((p) => p.clauses.some(boundsAbove)) };
}

const REQUIREMENT = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(\(?\s*(?:===|==|!=|<=|>=|~=|<|>)[^;#]*)?/;

/**
 * The pins of `name` in a manifest's text: requirements*.txt lines, quoted requirement strings (setup.py,
 * pyproject.toml's PEP 621 lists, `require_version("…")`), setup.cfg's indented `install_requires` lines, and
 * Poetry's `name = "^4.40"` tables. A requirement without a version states nothing and gives no pin.
 */
export function pinsInText(file: string, text: string, name: string): Pin[] {
  const out: Pin[] = [];
  const lower = name.toLowerCase();
  const lines = text.split('\n');
  const add = (requirement: string, line: number): void => {
    const m = REQUIREMENT.exec(requirement.trim());
    if (!m || m[1].toLowerCase().replace(/_/g, '-') !== lower || !m[2]) return;
    const specifier = m[2].replace(/[()\s]/g, '');
    const clauses = parseSpecifier(specifier);
    if (clauses && clauses.length > 0) out.push({ package: lower, specifier, clauses, file, line });
  };
  lines.forEach((line, i) => {
    if (!line.toLowerCase().includes(lower)) return;
    const code = line.replace(/(^|\s)#.*$/, '');
    const quoted = [...code.matchAll(/["']([^"'\n]+)["']/g)].map((m) => m[1]);
    const poetry = new RegExp(`^\\s*["']?${lower}["']?\\s*=\\s*["']([^"']+)["']`, 'i').exec(code);
    if (poetry) {
      const clauses = parseSpecifier(poetry[1].replace(/\s/g, ''));
      if (clauses && clauses.length > 0)
        out.push({ package: lower, specifier: poetry[1].trim(), clauses, file, line: i });
      return;
    }
    // A requirements line starts with the name (its environment marker may quote a version); a setup.py,
    // pyproject.toml or require_version line quotes the requirement.
    add(code, i);
    for (const q of quoted) add(q, i);
  });
  return out;
}

/** Manifest files whose requirements apply to the Python files in their folder and below. */
export function isManifest(path: string): boolean {
  const file = path.split('/').pop() ?? '';
  return /^requirements[\w.-]*\.txt$/i.test(file) || file === 'setup.cfg' || file === 'pyproject.toml';
}

/** Whether every release the pins allow is `floor` or newer: some clause bounds the range from below at it. */
export function allowsOnlyFrom(pins: readonly Pin[], floor: Version): boolean {
  const fromBelow = ['>=', '>', '==', '===', '~=', '^', '~'];
  return pins.some((p) => p.clauses.some((c) => fromBelow.includes(c.op) && compareVersions(c.version, floor) >= 0));
}
