// The size one Python call site moves, decided once and used by the lens, the Profile command and the panel
// title alike. A raw collective moves its tensor: when the code shows what the tensor is (a loss, a
// `torch.tensor([..])`, a `torch.zeros(1024)`), that is its size; a DDP-style wrapper moves buckets of
// bucket_cap_mb; anything else is the configured default, and the answer says it was assumed.
import { codeOnlyLines, type PythonLensSite } from './lens-sites';
import { l10n } from './l10n';

export type CallSizeSource = 'tensor' | 'bucket' | 'default';

export interface CallSize {
  readonly bytes: number;
  readonly source: CallSizeSource;
  /** How the size was found, as a sentence fragment: "loss = criterion(...) on line 12 is a 0-d fp32 tensor". */
  readonly why: string;
}

const MiB = 1024 * 1024;

/** torch dtype names (and their aliases) to short names; a tensor's bytes are its elements times DTYPE_BYTES. */
type Dtype = 'fp32' | 'fp16' | 'bf16' | 'fp64' | 'int32' | 'int64' | 'int8' | 'uint8';
const TORCH_DTYPES: Readonly<Record<string, Dtype>> = {
  float32: 'fp32',
  float: 'fp32',
  float16: 'fp16',
  half: 'fp16',
  bfloat16: 'bf16',
  float64: 'fp64',
  double: 'fp64',
  int32: 'int32',
  int: 'int32',
  int64: 'int64',
  long: 'int64',
  int8: 'int8',
  uint8: 'uint8',
};
const DTYPE_BYTES: Readonly<Record<Dtype, number>> = {
  fp32: 4,
  fp16: 2,
  bf16: 2,
  fp64: 8,
  int32: 4,
  int64: 8,
  int8: 1,
  uint8: 1,
};

/** How far back an assignment is looked for, and how many names are followed (`a = b`, `b = loss.detach()`). */
const ASSIGNMENT_LOOKBACK_LINES = 400;
const MAX_NAME_HOPS = 4;

/**
 * The size of the call at `site`. `defaultBytes` is collectiveProfiler.defaultBucketMB; `text` is the whole file,
 * so the assignments above a call and the file's bucket_cap_mb can be read.
 */
export function callSize(
  text: string,
  sites: readonly PythonLensSite[],
  site: PythonLensSite | undefined,
  defaultBytes: number,
): CallSize {
  if (site && (site.kind === 'collective' || site.kind === 'jax')) {
    const tensor = tensorBytesAt(codeOnlyLines(text), site);
    if (tensor) return { bytes: tensor.bytes, source: 'tensor', why: tensor.why };
    return {
      bytes: defaultBytes,
      source: 'default',
      why: l10n.t("the tensor's size is not in the code, so collectiveProfiler.defaultBucketMB is assumed"),
    };
  }
  const fromCall = site?.bucketCapMb;
  // A `bucket_cap_mb = 50` of its own (a variable or a config entry the wrapper reads) speaks for the file; one
  // given to another wrapper's call is that call's.
  const wrapperLines = new Set(sites.filter((s) => s.kind !== 'bucket' && s !== site).map((s) => s.line));
  const fromFile = sites.find(
    (s) => s.kind === 'bucket' && s.bucketCapMb !== undefined && !wrapperLines.has(s.line),
  )?.bucketCapMb;
  const mb = fromCall ?? fromFile;
  if (mb !== undefined)
    return { bytes: Math.round(mb * MiB), source: 'bucket', why: l10n.t('bucket_cap_mb={0} from the code', mb) };
  return {
    bytes: defaultBytes,
    source: 'default',
    why: l10n.t('no bucket_cap_mb in the code, so collectiveProfiler.defaultBucketMB is assumed'),
  };
}

/** The bytes of the tensor a collective call passes, when the code says; undefined when it does not. */
export function tensorBytesAt(
  lines: readonly string[],
  site: PythonLensSite,
): { bytes: number; why: string } | undefined {
  const args = callArguments(lines, site.line, site.endColumn);
  const first = args.find((a) => !/^\w+\s*=/.test(a) || /^tensor\s*=/.test(a))?.replace(/^tensor\s*=\s*/, '');
  if (!first) return undefined;
  return sizeOfExpression(lines, first, site.line, 0);
}

function sizeOfExpression(
  lines: readonly string[],
  raw: string,
  line: number,
  hops: number,
): { bytes: number; why: string } | undefined {
  let expression = raw.trim();
  let dtype: Dtype | undefined;
  // Views and copies keep the size; a cast changes the element size.
  for (;;) {
    const m = /^(.*)\.(detach|clone|contiguous|cuda|cpu|to|float|half|double|bfloat16|long|int)\(([^()]*)\)$/s.exec(
      expression,
    );
    if (!m) break;
    expression = m[1].trim();
    const cast = m[2] === 'to' ? /torch\.(\w+)/.exec(m[3])?.[1] : m[2];
    if (cast && TORCH_DTYPES[cast] && dtype === undefined) dtype = TORCH_DTYPES[cast];
  }
  const literal = literalTensor(expression);
  if (literal) {
    const d = dtype ?? literal.dtype;
    return {
      bytes: literal.elements * DTYPE_BYTES[d],
      why:
        literal.elements === 1
          ? l10n.t('{0} holds 1 {1} element', raw.trim(), d)
          : l10n.t('{0} holds {1} {2} elements', raw.trim(), literal.elements, d),
    };
  }
  if (isScalarExpression(expression)) {
    const d = dtype ?? 'fp32';
    return { bytes: DTYPE_BYTES[d], why: l10n.t('{0} is a 0-d {1} tensor (a reduced value)', raw.trim(), d) };
  }
  if (/^[A-Za-z_]\w*$/.test(expression) && hops < MAX_NAME_HOPS) {
    const assigned = lastAssignment(lines, expression, line);
    if (!assigned) return undefined;
    const inner = sizeOfExpression(lines, assigned.expression, assigned.line, hops + 1);
    if (!inner) return undefined;
    const bytes = dtype ? (inner.bytes / DTYPE_BYTES.fp32) * DTYPE_BYTES[dtype] : inner.bytes;
    return {
      bytes,
      why: l10n.t(
        '{0} = {1} on line {2}: {3}',
        expression,
        abbreviate(assigned.expression),
        assigned.line + 1,
        inner.why,
      ),
    };
  }
  return undefined;
}

/** torch.tensor(3.0), torch.tensor([a, b]), torch.zeros(1024), torch.ones(2, 3, dtype=torch.float16), … */
function literalTensor(expression: string): { elements: number; dtype: Dtype } | undefined {
  const call = /^torch\.(tensor|as_tensor|Tensor|zeros|ones|empty|rand|randn|full)\s*\((.*)\)$/s.exec(expression);
  if (!call) return undefined;
  const args = splitTopLevel(call[2]);
  const dtypeArg = args.map((a) => /^dtype\s*=\s*torch\.(\w+)$/.exec(a)?.[1]).find((d) => d !== undefined);
  const explicit = dtypeArg ? TORCH_DTYPES[dtypeArg] : undefined;
  const positional = args.filter((a) => !/^\w+\s*=/.test(a));
  if (call[1] === 'tensor' || call[1] === 'as_tensor' || call[1] === 'Tensor') {
    const data = positional[0];
    if (data === undefined) return undefined;
    const numbers = data.match(/-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|True|False/g) ?? [];
    // Only a literal (numbers, brackets, commas) can be counted; a name inside it could be any size.
    if (/[A-Za-z_]/.test(data.replace(/True|False|\d[eE][+-]?\d/g, ''))) {
      // A bare name is a Python number (torch.tensor(x) of a scalar) only when it is a single name.
      if (/^[A-Za-z_]\w*(?:\.item\(\))?$/.test(data)) return { elements: 1, dtype: explicit ?? 'fp32' };
      if (/^\[[A-Za-z_\w\s.,()]*\]$/.test(data) && !/\[.*\[/.test(data))
        return { elements: splitTopLevel(data.slice(1, -1)).filter(Boolean).length, dtype: explicit ?? 'fp32' };
      return undefined;
    }
    if (numbers.length === 0) return undefined;
    const isFloat = /\d\.|\d[eE]/.test(data);
    return { elements: numbers.length, dtype: explicit ?? (isFloat || call[1] === 'Tensor' ? 'fp32' : 'int64') };
  }
  const dims = (call[1] === 'full' ? positional.slice(0, 1) : positional).join(',').replace(/[()[\]]/g, '');
  const values = dims
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean);
  if (values.length === 0 || !values.every((d) => /^\d+$/.test(d))) return undefined;
  return { elements: values.reduce((p, d) => p * Number(d), 1), dtype: explicit ?? 'fp32' };
}

/** A reduction to one value, or a loss: `x.mean()`, `y.sum()`, `criterion(out, target)`, `F.mse_loss(a, b)`. */
function isScalarExpression(expression: string): boolean {
  if (/\.(mean|sum|norm|max|min|prod|std|var)\(\s*\)$/.test(expression)) return true;
  const callee = /^([\w.]+)\s*\(.*\)$/s.exec(expression)?.[1];
  return callee !== undefined && /(^|\.)(\w*loss\w*|criterion)$/i.test(callee) && !/^torch\.nn\.\w+$/.test(callee);
}

/** The expression last assigned to `name` above `line` (plain `name = ...` or `name: T = ...`). */
function lastAssignment(
  lines: readonly string[],
  name: string,
  line: number,
): { expression: string; line: number } | undefined {
  const pattern = new RegExp(`^\\s*${name}\\s*(?::\\s*[\\w.\\[\\], ]+)?=(?!=)\\s*(.+)$`);
  for (let l = line - 1; l >= Math.max(0, line - ASSIGNMENT_LOOKBACK_LINES); l--) {
    const m = pattern.exec(lines[l]);
    if (!m) continue;
    let expression = m[1].trim();
    // A call continued on the next lines: follow its parentheses.
    for (let next = l + 1; depth(expression) > 0 && next < lines.length && next < l + 20; next++)
      expression += ` ${lines[next].trim()}`;
    return { expression: expression.trim(), line: l };
  }
  return undefined;
}

function depth(text: string): number {
  let d = 0;
  for (const ch of text)
    if (ch === '(' || ch === '[') d++;
    else if (ch === ')' || ch === ']') d--;
  return d;
}

/** The arguments of the call whose name ends at (line, column), split at top-level commas. */
function callArguments(lines: readonly string[], line: number, column: number): string[] {
  let text = '';
  let d = 0;
  let started = false;
  for (let l = line; l < Math.min(lines.length, line + 40); l++) {
    const s = l === line ? lines[l].slice(column) : ` ${lines[l]}`;
    for (const ch of s) {
      if (ch === '(' || ch === '[' || ch === '{') {
        if (started || ch !== '(') text += ch;
        else started = true;
        d++;
      } else if (ch === ')' || ch === ']' || ch === '}') {
        d--;
        if (d === 0 && started) return splitTopLevel(text);
        text += ch;
      } else if (started) text += ch;
    }
  }
  return [];
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let d = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(' || ch === '[' || ch === '{') d++;
    if (ch === ')' || ch === ']' || ch === '}') d--;
    if (ch === ',' && d === 0) {
      parts.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

function abbreviate(expression: string): string {
  return expression.length > 40 ? `${expression.slice(0, 37)}…` : expression;
}
