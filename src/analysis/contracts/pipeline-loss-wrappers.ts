// The loss wrappers a pipeline schedule can be given (`loss_fn=rescale(loss_fn, n_microbatches)`): a function that
// returns a closure dividing the wrapped loss by one of its own parameters. Split from pipeline-facts.ts.
import { child, named, unparen, type PyNode, type Source } from '../tree';
import type { SourceRange } from '../types';

function text(source: Source, n: PyNode): string {
  return source.textOf(n).replace(/\s+/g, '');
}

/**
 * `def wrap(fn, k): def inner(*a, **kw): return fn(*a, **kw) / k; return inner` (or with the quotient assigned
 * first): the closure it returns divides the wrapped loss by its parameter `k`.
 */
export function readLossDivider(
  source: Source,
  def: PyNode,
  body: PyNode,
): { index: number; range: SourceRange } | undefined {
  const params = child(def, 'parameters');
  const names = (params ? named(params) : []).map((p) =>
    text(source, p.type === 'identifier' ? p : (child(p, 'name') ?? named(p)[0] ?? p)),
  );
  const statements = named(body);
  const last = statements[statements.length - 1];
  const returned = last?.type === 'return_statement' ? named(last)[0] : undefined;
  const inner = statements.find(
    (s) =>
      (s.type === 'function_definition' ? s : child(s, 'definition'))?.type === 'function_definition' &&
      returned !== undefined &&
      text(source, child(s.type === 'function_definition' ? s : child(s, 'definition')!, 'name') ?? s) ===
        text(source, returned),
  );
  const innerDef = inner?.type === 'function_definition' ? inner : inner && child(inner, 'definition');
  const innerBody = innerDef && child(innerDef, 'body');
  if (!innerBody) return undefined;
  const quotients = new Map<string, string>();
  for (const s of named(innerBody)) {
    const e = s.type === 'expression_statement' ? named(s)[0] : s;
    if (e?.type === 'assignment' && child(e, 'left')?.type === 'identifier') {
      const divisor = divisorOf(source, child(e, 'right'));
      if (divisor) quotients.set(text(source, child(e, 'left')!), divisor);
    }
    if (e?.type !== 'return_statement') continue;
    const value = named(e)[0];
    const divisor = value && (divisorOf(source, value) ?? quotients.get(text(source, value)));
    const index = divisor ? names.indexOf(divisor) : -1;
    if (index >= 0) return { index, range: source.range(value) };
  }
  return undefined;
}

function divisorOf(source: Source, e: PyNode | undefined): string | undefined {
  const v = e && unparen(e);
  if (v?.type !== 'binary_operator' || v.children.find((c) => !c.named)?.type !== '/') return undefined;
  const right = child(v, 'right');
  return right?.type === 'identifier' ? text(source, right) : undefined;
}

/** `a, list[b, c], d` → [`a`, `list[b,c]`, `d`] (the text is already without spaces). */
export function splitTopLevel(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out;
}
