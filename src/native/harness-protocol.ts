// The JSON lines the harness prints (harness/collective_harness.py), as types and a tolerant line reader.

export interface HarnessEnv {
  readonly type: 'env';
  readonly python: string;
  readonly torch: string;
  readonly backend: string;
  readonly worldSize?: number;
  readonly gpuCount: number;
  readonly ncclVersion: string | null;
  readonly features?: Record<string, unknown>;
  readonly clockOffsetsUs?: number[];
}

export interface HarnessResult {
  readonly type: 'result';
  /** fused | reduce_scatter+all_gather | ring | tree */
  readonly kind: string;
  readonly label: 'size' | 'bucket';
  readonly bytes: number;
  readonly timeUs?: number;
  readonly algbwGBps?: number;
  readonly busbwGBps?: number;
  readonly verified?: { readonly sum: boolean; readonly avg?: boolean; readonly avgMethod?: string };
  /** Set when the backend lacks the collective, with its own words. */
  readonly unsupported?: string;
}

export interface HarnessSpan {
  readonly type: 'span';
  readonly algorithm: 'ring' | 'tree';
  readonly label: string;
  readonly messageBytes: number;
  readonly bytes: number;
  readonly rank: number;
  readonly phase: 'exchange' | 'reduce' | 'broadcast';
  readonly step: number;
  readonly startUs: number;
  readonly endUs: number;
  readonly sendTo: number;
  readonly recvFrom: number;
}

export interface HarnessProgress {
  readonly type: 'progress';
  readonly done: number;
  readonly total: number;
  readonly label?: string;
  readonly bytes?: number;
}

export interface HarnessError {
  readonly type: 'error';
  readonly kind: string;
  readonly rank?: number;
  readonly message: string;
}

export type HarnessLine =
  HarnessEnv | HarnessResult | HarnessSpan | HarnessProgress | HarnessError | { readonly type: 'done' };

const finite = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const optionalFinite = (v: unknown): boolean => v === undefined || finite(v);
const text = (v: unknown): boolean => typeof v === 'string';

/**
 * Whether a line has the fields its type promises. A saved run is a file a user may have edited or truncated, and
 * its numbers go straight into measurements and trace spans, so a line with a wrong type is dropped like chatter.
 */
function wellFormed(v: Record<string, unknown>): boolean {
  switch (v.type) {
    case 'env':
      return (
        text(v.python) &&
        text(v.torch) &&
        text(v.backend) &&
        optionalFinite(v.gpuCount) &&
        (v.worldSize === undefined || (Number.isInteger(v.worldSize) && (v.worldSize as number) >= 1))
      );
    case 'result':
      return (
        text(v.kind) &&
        finite(v.bytes) &&
        (v.bytes as number) >= 0 &&
        optionalFinite(v.timeUs) &&
        optionalFinite(v.algbwGBps) &&
        optionalFinite(v.busbwGBps) &&
        (v.unsupported === undefined || text(v.unsupported)) &&
        (v.verified === undefined || (typeof v.verified === 'object' && v.verified !== null))
      );
    case 'span':
      return (
        (v.algorithm === 'ring' || v.algorithm === 'tree') &&
        (v.phase === 'exchange' || v.phase === 'reduce' || v.phase === 'broadcast') &&
        ['messageBytes', 'bytes', 'rank', 'step', 'startUs', 'endUs', 'sendTo', 'recvFrom'].every((k) =>
          finite(v[k]),
        ) &&
        (v.bytes as number) >= 0
      );
    case 'progress':
    case 'error':
    case 'done':
      return true;
    default:
      return false;
  }
}

/** Parses one stdout line; anything that is not a JSON object with a known type (library chatter) gives undefined. */
export function parseHarnessLine(line: string): HarnessLine | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    return wellFormed(value) ? (value as unknown as HarnessLine) : undefined;
  } catch {
    return undefined;
  }
}

/** What a run produced, whether live from the runner or read back from rank 0's saved JSON lines. */
export interface HarnessRun {
  readonly env: HarnessEnv;
  readonly results: readonly HarnessResult[];
  readonly spans: readonly HarnessSpan[];
}

/** Reads rank 0's saved output (a multi-node run's `> collective-run.jsonl`) back into a run. */
export function parseHarnessOutput(text: string): HarnessRun | undefined {
  const lines = text
    .split('\n')
    .map(parseHarnessLine)
    .filter((l): l is HarnessLine => l !== undefined);
  const env = lines.find((l): l is HarnessEnv => l.type === 'env');
  if (!env) return undefined;
  return {
    env,
    results: lines.filter((l): l is HarnessResult => l.type === 'result'),
    spans: lines.filter((l): l is HarnessSpan => l.type === 'span'),
  };
}
